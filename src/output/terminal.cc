// Colour and width decisions for output streams (see terminal.h for the rules).
#include "btfslim/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

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
