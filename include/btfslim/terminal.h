// What the terminal an output stream goes to can show: colour, and how wide a table may be.
//
// Data goes to stdout and errors to stderr whatever the terminal; these only decide decoration. Colour
// is for people, so it is off whenever the stream is not a terminal (a pipe, a file, a test) and
// whenever NO_COLOR is set (https://no-color.org). Widths come from COLUMNS when the user sets it,
// else from the terminal; a pipe gets the full width so that nothing a script reads is cut.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace btfslim {

// True when `fd` is a terminal, NO_COLOR is unset or empty, and TERM is not "dumb".
bool colour_enabled(int fd);

// The width output to `fd` should fit: COLUMNS when it holds a positive number, else the terminal's
// width when `fd` is a terminal, else 0 (no limit).
std::size_t terminal_columns(int fd);

enum class Colour { Bold, Red, Yellow, Green, Dim };

// `text` between the SGR sequences for `colour` and reset when `on`; `text` unchanged otherwise.
std::string paint(std::string_view text, Colour colour, bool on);

// The prefix of every error line, "btfslim: ", in bold red when stderr is a terminal that takes colour.
std::string error_prefix();

}  // namespace btfslim
