// The buffered stdout writer, the streaming JSON writer and size formatting.
#include "btfslim/csv.h"
#include "btfslim/error.h"
#include "btfslim/escape.h"
#include "btfslim/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

namespace btfslim {

namespace {

bool check_failed = false;  // report_check_failed()

// Where this process began writing to `fd`: its offset when the first buffer for it was made (a
// command may make several for stdout, one after another), or -1 when a failed output is not to be
// cut off there: not a regular file, or one open for appending, which other writers may have appended
// to since.
std::int64_t write_start(int fd) {
  static std::mutex mutex;
  static std::map<int, std::int64_t> starts;
  const std::scoped_lock lock(mutex);
  const auto [it, added] = starts.try_emplace(fd, -1);
  if (added) {
    struct stat st {};
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0 && !(flags & O_APPEND) && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
      it->second = ::lseek(fd, 0, SEEK_CUR);
  }
  return it->second;
}

}  // namespace

void report_check_failed() { check_failed = true; }
bool check_failed_reported() { return check_failed; }

// The buffer takes its size at once: grown from fmt's inline 500 bytes by halves it took thirteen
// allocations and 290 KB on the way to a flush (check's table of an agent, valgrind).
OutputBuffer::OutputBuffer(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  note_output_start(fd);
  buf_.reserve(kFlushAt + kFlushAt / 4);
}

OutputBuffer::OutputBuffer(std::function<int()> open_late, std::string name, std::size_t keep)
    : fd_(-1), name_(std::move(name)), open_late_(std::move(open_late)), keep_(keep) {}

void note_output_start(int fd) { (void)write_start(fd); }

OutputBuffer::~OutputBuffer() {
  if (fd_ < 0) return;  // kept in memory: nothing was asked to be written
  try {
    flush();
  } catch (...) {
  }
}

void OutputBuffer::flush() {
  if (fd_ < 0) {
    if (buf_.size() < keep_) return;
    fd_ = open_late_();
    note_output_start(fd_);
  }
  const char* p = buf_.data();
  std::size_t left = buf_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_write(errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  buf_.clear();
}

// A write failed (a full disk, a file-size limit). When the output is a regular file, `btfslim dump >
// FILE` for instance, what was written of it is cut off, back to where this process began, so that the
// file is left as the shell made it (empty, or with what an earlier command of a script wrote) and not
// holding the first part of an output that a later step could take for the whole. The offset goes back
// there too: an error line to the same file (2>&1) then follows what the file held.
void fail_output(int fd, const std::string& name, int error) {
  std::string subject = name;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char path[4096];
    const ssize_t n = ::readlink(fmt::format("/proc/self/fd/{}", fd).c_str(), path, sizeof path);
    // An unnamed file (a spool's) has no path to show.
    if (const std::string_view shown(path, n > 0 ? static_cast<std::size_t>(n) : 0); n > 0 && !shown.ends_with(" (deleted)"))
      subject += fmt::format(" ({})", shown);
  }
  if (const std::int64_t start = write_start(fd); start >= 0 && ::ftruncate(fd, start) == 0) ::lseek(fd, start, SEEK_SET);
  fail(subject, "write error: {}", std::strerror(error));
}

void OutputBuffer::fail_write(int error) {
  buf_.clear();
  fail_output(fd_, name_, error);
}

namespace {

void append_json_code_unit(fmt::memory_buffer& out, char32_t unit) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char e[] = {'\\', 'u', kHex[(unit >> 12) & 15], kHex[(unit >> 8) & 15], kHex[(unit >> 4) & 15], kHex[unit & 15]};
  out.append(e, e + sizeof e);
}

}  // namespace

// BTF strings are bytes, not necessarily UTF-8, and the document must be valid JSON whatever they hold:
// well-formed UTF-8 goes as it is (a file name in another script reads back the same), control bytes,
// DEL and invisible code points as \uXXXX (a surrogate pair past U+FFFF), which read back the same, and
// each byte of ill-formed UTF-8 as the code point of that byte.
void append_json_string(fmt::memory_buffer& out, std::string_view s) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    switch (c) {
      case '\n': out.append(std::string_view("\\n")); ++i; continue;
      case '\t': out.append(std::string_view("\\t")); ++i; continue;
      case '\r': out.append(std::string_view("\\r")); ++i; continue;
      default: break;
    }
    char32_t cp = 0;
    const std::size_t n = c >= 0x80 ? utf8_sequence(s, i, cp) : 0;
    if (n == 0) {
      append_json_code_unit(out, c);
      ++i;
    } else if (!invisible(cp)) {
      out.append(s.data() + i, s.data() + i + n);
      i += n;
    } else if (cp <= 0xffff) {
      append_json_code_unit(out, cp);
      i += n;
    } else {
      append_json_code_unit(out, 0xd800 + ((cp - 0x10000) >> 10));
      append_json_code_unit(out, 0xdc00 + ((cp - 0x10000) & 0x3ff));
      i += n;
    }
  }
  out.push_back('"');
}

std::string csv_quoted(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

std::string csv_field(std::string_view name) { return csv_quoted(CsvWriter::name(name)); }

std::string CsvWriter::name(std::string_view s) { return is_plain(s) ? std::string(s) : escape(s); }

CsvWriter::CsvWriter(OutputBuffer& out, std::initializer_list<std::string_view> header)
    : out_(out), columns_(header.size()) {
  record(header);
}

void CsvWriter::row(std::initializer_list<std::string_view> fields) {
  if (fields.size() != columns_)
    throw std::logic_error(fmt::format("a CSV row of {} fields under a header of {}", fields.size(), columns_));
  record(fields);
}

void CsvWriter::record(std::initializer_list<std::string_view> fields) {
  bool first = true;
  for (const std::string_view f : fields) {
    if (!first) out_.put(',');
    first = false;
    if (f.find_first_of(",\"\r\n") == std::string_view::npos)
      out_.write(f);
    else
      out_.write(csv_quoted(f));
  }
  out_.put('\n');  // LF line ends, as the rest of btfslim's output (RFC 4180 readers take both)
}

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_items_.empty()) {
    if (has_items_.back()) out_.put(',');
    has_items_.back() = true;
  }
}

void JsonWriter::begin_object() {
  separate();
  out_.put('{');
  has_items_.push_back(false);
}
void JsonWriter::end_object() {
  has_items_.pop_back();
  out_.put('}');
}
void JsonWriter::begin_array() {
  separate();
  out_.put('[');
  has_items_.push_back(false);
}
void JsonWriter::end_array() {
  has_items_.pop_back();
  out_.put(']');
}
void JsonWriter::key(std::string_view k) {
  separate();
  append_json_string(out_.buffer(), k);
  out_.put(':');
  after_key_ = true;
}
void JsonWriter::value(std::string_view s) {
  separate();
  append_json_string(out_.buffer(), s);
  out_.flush_if_needed();
}
void JsonWriter::value(std::uint64_t v) {
  separate();
  out_.print("{}", v);
}
void JsonWriter::value(std::int64_t v) {
  separate();
  out_.print("{}", v);
}
void JsonWriter::value(double v) {
  separate();
  if (std::isfinite(v))
    out_.print("{}", v);
  else
    out_.write("null");
}
void JsonWriter::value(bool v) {
  separate();
  out_.write(v ? "true" : "false");
}
void JsonWriter::value(std::nullptr_t) {
  separate();
  out_.write("null");
}

std::string human_size(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  const bool negative = bytes < 0;
  double v = std::fabs(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  std::string s;
  if (unit == 0)
    s = fmt::format("{:.0f} B", v);
  else if (v < 10)
    s = fmt::format("{:.2f} {}", v, kUnits[unit]);
  else if (v < 100)
    s = fmt::format("{:.1f} {}", v, kUnits[unit]);
  else
    s = fmt::format("{:.0f} {}", v, kUnits[unit]);
  return negative ? "-" + s : s;
}

}  // namespace btfslim

namespace btfslim {

std::vector<std::uint64_t> round_to_total(const std::vector<double>& parts, std::uint64_t total) {
  std::vector<std::uint64_t> out(parts.size());
  std::vector<std::pair<double, std::size_t>> remainders;
  remainders.reserve(parts.size());
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const double whole = std::floor(parts[i]);
    out[i] = static_cast<std::uint64_t>(whole);
    sum += out[i];
    remainders.emplace_back(parts[i] - whole, i);
  }
  // Ties go to the earlier part so that the result does not depend on sort stability.
  std::sort(remainders.begin(), remainders.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (std::size_t k = 0; sum < total && k < remainders.size(); ++k, ++sum) ++out[remainders[k].second];
  return out;
}

std::string with_commas(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace btfslim
