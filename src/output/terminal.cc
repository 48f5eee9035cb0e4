// Colour and width decisions for output streams (see terminal.h for the rules).
#include "btfslim/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace btfslim {

bool colour_enabled(int fd) {
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour && *no_colour) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return ::isatty(fd) == 1;
}

std::size_t terminal_columns(int fd) {
  if (const char* columns = std::getenv("COLUMNS")) {
    std::size_t n = 0;
    const char* end = columns + std::strlen(columns);
    const auto [p, ec] = std::from_chars(columns, end, n);
    if (ec == std::errc() && p == end && n > 0) return n;
  }
  winsize ws{};
  if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

std::size_t name_column_width(std::size_t longest, std::size_t other_columns, std::size_t narrowest,
                              std::size_t limit) {
  const std::size_t wanted = longest + 1;
  if (limit == 0) return wanted;
  const std::size_t left = limit > other_columns ? limit - other_columns : 0;
  return std::min(wanted, std::max(left, narrowest));
}

std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

std::string_view prefix_of_width(std::string_view s, std::size_t width) {
  std::size_t i = 0;
  for (; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80 && width-- == 0) break;
  return s.substr(0, i);
}

std::string fit_to_column(std::string_view s, std::size_t width) {
  if (width == 0 || display_width(s) < width) return std::string(s);
  // Keep width - 2 characters, then the ellipsis, then the blank the column needs.
  std::size_t keep = width >= 2 ? width - 2 : 0, i = 0;
  for (; i < s.size() && keep > 0; ++i) {
    if (i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xc0) == 0x80) continue;
    --keep;
  }
  return std::string(s.substr(0, i)) + "\u2026";
}

std::string paint(std::string_view text, Colour colour, bool on) {
  if (!on) return std::string(text);
  std::string_view sgr;
  switch (colour) {
    case Colour::Bold: sgr = "\x1b[1m"; break;
    case Colour::Red: sgr = "\x1b[1;31m"; break;
    case Colour::Yellow: sgr = "\x1b[33m"; break;
    case Colour::Green: sgr = "\x1b[32m"; break;
    case Colour::Dim: sgr = "\x1b[2m"; break;
  }
  std::string s(sgr);
  s.append(text);
  s.append("\x1b[0m");
  return s;
}

std::string error_prefix() { return paint("btfslim:", Colour::Red, colour_enabled(STDERR_FILENO)) + " "; }

}  // namespace btfslim
