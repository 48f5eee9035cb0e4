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

// Tables: the width of a column of names. With no limit (a pipe without COLUMNS) it is the longest name
// plus a blank, so nothing is cut; else what the limit leaves after `other_columns`, at least
// `narrowest` and at most what the longest name needs. The name column is the one that gives way.
std::size_t name_column_width(std::size_t longest, std::size_t other_columns, std::size_t narrowest,
                              std::size_t limit);
// The display width of `s`: its UTF-8 characters (names are escaped, so none is a control).
std::size_t display_width(std::string_view s);
// The longest prefix of `s` that is at most `width` characters wide and ends where a character does.
std::string_view prefix_of_width(std::string_view s, std::size_t width);
// `s` cut to leave at least one blank in a column `width` wide, the cut marked with "…"; unchanged when
// it fits.
std::string fit_to_column(std::string_view s, std::size_t width);

enum class Colour { Bold, Red, Yellow, Green, Dim };

// `text` between the SGR sequences for `colour` and reset when `on`; `text` unchanged otherwise.
std::string paint(std::string_view text, Colour colour, bool on);

// The prefix of every error line, "btfslim: ", in bold red when stderr is a terminal that takes colour.
std::string error_prefix();

}  // namespace btfslim
