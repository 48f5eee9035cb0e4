// Escaping text from inputs for printing (btfslim/escape.h says what and why).
#include "btfslim/escape.h"

#include <cstdint>
#include <cstring>

namespace btfslim {

std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& cp) {
  const auto lead = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    n = 2;
    cp = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    n = 3;
    cp = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    n = 4;
    cp = lead & 0x07;
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) return 0;
  if (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) return 0;
  return n;
}

bool invisible(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) ||      // C1 controls
         cp == 0xad || cp == 0x61c || cp == 0x180e ||  // soft hyphen, Arabic letter mark, Mongolian vowel separator
         (cp >= 0x200b && cp <= 0x200f) ||  // zero-width space, joiners, LRM, RLM
         (cp >= 0x2028 && cp <= 0x202e) ||  // line and paragraph separators, bidirectional embeddings and overrides
         (cp >= 0x2060 && cp <= 0x206f) ||  // word joiner, invisible operators, bidirectional isolates
         cp == 0xfeff ||                    // byte order mark
         (cp >= 0xfff9 && cp <= 0xfffb) ||  // interlinear annotation
         (cp >= 0xe0000 && cp <= 0xe007f);  // tags
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_byte(std::string& out, unsigned char c) {
  const char e[] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
  out.append(e, sizeof e);
}

void append_code_point(std::string& out, char32_t cp) {
  if (cp <= 0xffff) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
  } else {
    out += "\\U";
    for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
  }
}

void append(std::string& out, std::string_view s, bool backslashes) {
  out.reserve(out.size() + s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      // A run of printable ASCII at once.
      std::size_t end = i + 1;
      while (end < s.size() && static_cast<unsigned char>(s[end]) >= 0x20 && static_cast<unsigned char>(s[end]) < 0x7f &&
             !(s[end] == '\\' && backslashes))
        ++end;
      if (c == '\\' && backslashes) out += '\\';
      out.append(s.data() + i, end - i);
      i = end;
      continue;
    }
    if (c < 0x80) {
      if (c == '\n')
        out += "\\n";
      else if (c == '\t')
        out += "\\t";
      else if (c == '\r')
        out += "\\r";
      else
        append_byte(out, c);
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(s, i, cp);
    if (n == 0) {
      append_byte(out, c);
      ++i;
    } else {
      if (invisible(cp))
        append_code_point(out, cp);
      else
        out.append(s.data() + i, n);
      i += n;
    }
  }
}

}  // namespace

// Every name of every type a dump prints passes through here, so eight bytes are tested at once: a word
// holds a byte below 0x20 when (x - 0x20..20) & ~x & 0x80..80 is not zero, a byte equal to b when x ^ b..b
// holds a zero byte, and a byte of 0x80 or more shows in x & 0x80..80.
bool is_plain(std::string_view s) {
  constexpr std::uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    const std::uint64_t del = x ^ (0x7f * kOnes), backslash = x ^ ('\\' * kOnes);
    const std::uint64_t bad = (x | ((x - 0x20 * kOnes) & ~x) | ((del - kOnes) & ~del) | ((backslash - kOnes) & ~backslash)) & kHighs;
    if (bad) return false;
  }
  for (; n > 0; ++p, --n) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c >= 0x7f || c == '\\') return false;
  }
  return true;
}

// As is_plain(), NUL bytes allowed. On a word without high bits no byte carries into the next when
// 0x7f or 0x60 is added, so x + 0x7f..7f has a byte's high bit set when that byte is at least 1, and
// x + 0x60..60 when it is at least 0x20: a byte with the first and not the second is a control byte.
bool all_plain(std::span<const std::uint8_t> strings) {
  constexpr std::uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  const std::uint8_t* p = strings.data();
  std::size_t n = strings.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    if (x & kHighs) return false;
    const std::uint64_t control = (x + 0x7f * kOnes) & ~(x + 0x60 * kOnes);
    const std::uint64_t del = x ^ (0x7f * kOnes), backslash = x ^ ('\\' * kOnes);
    if ((control | ((del - kOnes) & ~del) | ((backslash - kOnes) & ~backslash)) & kHighs) return false;
  }
  for (; n > 0; ++p, --n)
    if (*p != 0 && (*p < 0x20 || *p >= 0x7f || *p == '\\')) return false;
  return true;
}

void append_escaped(std::string& out, std::string_view s) { append(out, s, true); }

std::string escape(std::string_view s) {
  std::string out;
  append(out, s, true);
  return out;
}

std::string escape_controls(std::string_view s) {
  std::string out;
  append(out, s, false);
  return out;
}

}  // namespace btfslim
