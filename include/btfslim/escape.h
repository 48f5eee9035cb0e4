// Text from inputs, made safe to print.
//
// A BTF name, an ELF section name, a file name, a TOML string: bytes btfslim did not choose. A line
// break in one would split an error into two lines (and a script reading them would see a second error),
// a terminal escape would recolour or rewrite the screen, a bidirectional override would show a reader
// other text than is there. So text from inputs is printed escaped, C-style, as bpftool and readelf show
// odd names:
//   - printable ASCII as is, but a backslash as \\ (so that an escape is never ambiguous);
//   - \n, \t and \r so, every other control byte and DEL as \xNN;
//   - well-formed UTF-8 as is (a file named in another script stays readable), except the code points
//     that are invisible or reorder text: C1 controls, zero-width characters, line and paragraph
//     separators, bidirectional embeddings, overrides and isolates, the BOM, as \uXXXX;
//   - every byte of ill-formed UTF-8 as \xNN.
// Escaped text holds no byte below 0x20 and is valid UTF-8. Text that needs no escaping (every real
// kernel's names) is found so by one pass over its bytes and printed as it is, without a copy.
//
// Who escapes: a name is escaped where it is printed as text (esc(name) as a format argument); a display
// string composed for people (an accessor path, a reason, a type summary) escapes its names as it is
// composed and is then printed as it is, in text and JSON alike. JSON strings of raw names are escaped
// by JSON's own rules instead (append_json_string: well-formed UTF-8 as is, invisible code points and
// control bytes as \uXXXX, each byte of ill-formed UTF-8 as the code point of that byte, \u00NN, which
// is the one loss: JSON strings are Unicode, not bytes). An InputError escapes its subject (a file or option
// name) and, as a last guard, any control byte left in its problem, so an error is always one line.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace btfslim {

// True when `s` prints as it is: nothing in it needs escaping.
bool is_plain(std::string_view s);
// True when every string of a BTF string section (NUL-separated) prints as it is: one pass that a
// printer of many names (a dump of every type) makes instead of testing each name.
bool all_plain(std::span<const std::uint8_t> string_section);

// The length of the well-formed UTF-8 sequence at s[i] (2 to 4 bytes) and its code point, or 0 when
// the bytes there are not one: a stray continuation byte, a truncated sequence, an overlong form, a
// surrogate or a code point past U+10FFFF (RFC 3629).
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& cp);
// Code points that print as nothing or change how the text around them is shown.
bool invisible(char32_t cp);

// `s` escaped as above.
std::string escape(std::string_view s);
void append_escaped(std::string& out, std::string_view s);

// `s` with control bytes, ill-formed UTF-8 and invisible code points escaped but backslashes left as
// they are: for a line whose names were escaped already (an escape is not escaped twice), made one line.
std::string escape_controls(std::string_view s);

// A format argument printed escaped: fmt::format("'{}'", esc(name)). Width and alignment apply to the
// escaped text.
struct Escaped {
  std::string_view text;
};
constexpr Escaped esc(std::string_view s) { return Escaped{s}; }

}  // namespace btfslim

template <>
struct fmt::formatter<btfslim::Escaped> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const btfslim::Escaped& e, FormatContext& ctx) const -> decltype(ctx.out()) {
    if (btfslim::is_plain(e.text)) return fmt::formatter<std::string_view>::format(e.text, ctx);
    const std::string escaped = btfslim::escape(e.text);
    return fmt::formatter<std::string_view>::format(escaped, ctx);
  }
};
