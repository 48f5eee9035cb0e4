// Escaping for CI formats (ci_text.h), shared by budget's and check's reports, and the step summary.
#include "btfslim/ci_text.h"
#include "btfslim/error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace btfslim {

std::string github_data(std::string_view s) {
  std::string o;
  for (const char c : s) {
    if (c == '%') o += "%25";
    else if (c == '\r') o += "%0D";
    else if (c == '\n') o += "%0A";
    else o += c;
  }
  return o;
}

std::string github_property(std::string_view s) {
  std::string o;
  for (const char c : github_data(s)) {
    if (c == ':') o += "%3A";
    else if (c == ',') o += "%2C";
    else o += c;
  }
  return o;
}

std::string xml_text(std::string_view s) {
  std::string o;
  for (const char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      case '\t': o += "&#9;"; break;
      case '\n': o += "&#10;"; break;
      case '\r': o += "&#13;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          o += "\xef\xbf\xbd";
        else
          o += c;
    }
  }
  return o;
}

// A Markdown table cell: no line breaks, and the characters that would end the cell or start markup
// escaped.
std::string markdown_cell(std::string_view s) {
  std::string o;
  for (const char c : s) {
    if (c == '\n' || c == '\r') {
      o += ' ';
    } else if (c == '&') {
      o += "&amp;";
    } else if (c == '<') {
      o += "&lt;";
    } else if (c == '>') {
      o += "&gt;";
    } else {
      if (std::string_view("\\`*_[]|#~").find(c) != std::string_view::npos) o += '\\';
      o += c;
    }
  }
  return o;
}

// An append that fails is undone: the file is cut back to the size it had, or removed when this made it.
void append_step_summary(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  const bool created = fd < 0 && errno == ENOENT &&
                       (fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) >= 0;
  if (fd < 0) fail(path, "cannot append the step summary: {}", std::strerror(errno));
  struct stat st {};
  const bool sized = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  int error = 0;
  for (std::string_view rest = text; !rest.empty() && error == 0;) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n > 0)
      rest.remove_prefix(static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      error = n == 0 ? EIO : errno;
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0) return;
  if (created)
    ::unlink(path.c_str());
  else if (sized)
    (void)::truncate(path.c_str(), st.st_size);
  fail(path, "cannot append the step summary: {}", std::strerror(error));
}

}  // namespace btfslim
