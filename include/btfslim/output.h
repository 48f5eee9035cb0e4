// Writing results: a buffered writer for stdout, a streaming JSON writer, human-readable sizes.
#pragma once

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace btfslim {

// Collects output and writes it to a file descriptor in large chunks. A write error (disk full, a
// file-size limit, a closed pipe when SIGPIPE is ignored) is an InputError naming `name`, with the
// file's path when the descriptor is a regular file: "stdout (/tmp/out.txt)". Such a file is first cut
// back to where this process began writing to it, unless it is open for appending (see output.cc).
class OutputBuffer {
 public:
  explicit OutputBuffer(int fd = 1, std::string name = "stdout");
  // Output kept in memory up to `keep` bytes, then written to the descriptor `open_late` returns (a
  // spool's temporary file: made only for output that needs one).
  OutputBuffer(std::function<int()> open_late, std::string name, std::size_t keep);
  ~OutputBuffer();  // flushes; errors at this point are ignored: every command calls flush() to see them
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  // Formats into the buffer itself (an appender: no intermediate buffer). `format` is a checked format
  // string, or one compiled with FMT_COMPILE for the per-type lines of large outputs, which then skip
  // parsing the format at run time.
  template <typename... Args>
  void print(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(fmt::appender(buf_), format, std::forward<Args>(args)...);
    if (buf_.size() >= kFlushAt) flush();
  }
  template <typename Compiled, typename... Args>
    requires fmt::detail::is_compiled_string<Compiled>::value
  void print(const Compiled& format, Args&&... args) {
    fmt::format_to(fmt::appender(buf_), format, std::forward<Args>(args)...);
    if (buf_.size() >= kFlushAt) flush();
  }
  void write(std::string_view s) {
    buf_.append(s.data(), s.data() + s.size());
    if (buf_.size() >= kFlushAt) flush();
  }
  void put(char c) {
    buf_.push_back(c);
    if (buf_.size() >= kFlushAt) flush();
  }
  fmt::memory_buffer& buffer() { return buf_; }
  void flush_if_needed() {
    if (buf_.size() >= kFlushAt) flush();
  }
  void flush();
  // The descriptor written to; -1 while the output is kept in memory (open_late).
  int fd() const { return fd_; }

 private:
  [[noreturn]] void fail_write(int error);

  static constexpr std::size_t kFlushAt = 1 << 16;
  int fd_;
  std::string name_;
  fmt::memory_buffer buf_;
  std::function<int()> open_late_;
  std::size_t keep_ = 0;
};

// What stdio and iostreams print (help, --version) fails as an OutputBuffer's write does: note_output
// _start(fd) before anything is written to `fd`, and fail_output() on a failed write cuts a regular file
// back to that offset and throws the InputError naming it ("stdout (/tmp/out.txt): write error: ...").
void note_output_start(int fd);
[[noreturn]] void fail_output(int fd, const std::string& name, int error);

// Writes JSON as it goes: no document is built in memory, so 126k types cost nothing to print.
// Keys and values are escaped; nesting is tracked only to place commas.
// Output to copy out later, after what has to come first (spool.cc): kept in memory up to 1 MiB, then
// in an unnamed temporary file ($TMPDIR, else /tmp). Write errors name the file; it is gone when the
// process ends.
class Spool {
 public:
  Spool();
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  OutputBuffer& out() { return out_; }
  // Appends everything written so far to `to`.
  void copy_to(OutputBuffer& to);

 private:
  static constexpr std::size_t kKeep = std::size_t{1} << 20;
  std::string dir_;
  OutputBuffer out_;
};

class JsonWriter {
 public:
  explicit JsonWriter(OutputBuffer& out) : out_(out) {}
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view k);
  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(std::uint64_t v);
  void value(std::int64_t v);
  void value(std::uint32_t v) { value(std::uint64_t{v}); }
  void value(std::int32_t v) { value(std::int64_t{v}); }
  void value(double v);
  void value(bool v);
  void value(std::nullptr_t);  // null: a key that does not apply here
  template <typename T>
  void field(std::string_view k, const T& v) {
    key(k);
    value(v);
  }
  // The next bytes written to the buffer directly are one whole value (JSON written before, e.g. a
  // spooled array): separates it from the item before.
  void value_follows() { separate(); }
  // Ends the document with a newline.
  void finish() { out_.put('\n'); }

 private:
  void separate();
  OutputBuffer& out_;
  std::vector<bool> has_items_;  // per open container: whether a comma is needed before the next item
  bool after_key_ = false;
};

// Appends `s` to `out` as a JSON string literal, quotes included.
void append_json_string(fmt::memory_buffer& out, std::string_view s);

// A CSV field (RFC 4180) for a name from an input: escaped (btfslim/escape.h), then quoted when it holds
// a comma or a quote, quotes doubled. A field never holds a line break, so every record is one line.
std::string csv_field(std::string_view name);
// The same for display text whose names are escaped already (a diff row's spelt type): quoted only.
std::string csv_quoted(std::string_view text);

// "5.26 MiB", "812 B": binary units, three significant digits.
std::string human_size(double bytes);

}  // namespace btfslim

namespace btfslim {

// Rounds `parts` to whole numbers that add up to exactly `total` (largest remainder), so that a table
// of rounded fractions still sums to its TOTAL row.
std::vector<std::uint64_t> round_to_total(const std::vector<double>& parts, std::uint64_t total);

// 100 * part / whole, 0 for an empty whole.
inline double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

// 1234567 -> "1,234,567"
std::string with_commas(std::uint64_t n);

}  // namespace btfslim

namespace btfslim {

// Writes `bytes` to `path` through a temporary file in the same directory that is renamed into place
// only once complete; "-" means stdout. On any failure the temporary is removed, an existing file at
// `path` is left as it was, and an InputError names `path`.
void write_file_atomically(const std::string& path, std::string_view bytes);
// The same for a file made of `pieces`, written one after the other (a patched copy of a large file
// without a copy of it in memory).
void write_file_atomically(const std::string& path, std::span<const std::string_view> pieces);

// Refuses, before any work, an output file that could not be written: its directory is missing or not
// writable, or it is a directory. "-" (stdout) and "" (none) pass.
void check_output_file(const std::string& path, std::string_view option);

// A directory of outputs written whole or not at all: files go into a new directory beside `target`
// (.NAME.btfslim-XXXXXX), which takes target's place only at commit(); an existing target directory is
// then replaced. Dropped without commit() (an error on the way), the new directory is removed and
// target is as it was. The constructor refuses a target that is a file, or whose parent is missing.
class StagedDirectory {
 public:
  explicit StagedDirectory(const std::string& target);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;
  // Where to write what goes to target/NAME: path() + "/NAME".
  const std::string& path() const { return staging_; }
  void commit();

 private:
  std::string target_, staging_;
  bool committed_ = false;
};

}  // namespace btfslim
