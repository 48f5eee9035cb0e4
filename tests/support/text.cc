#include "text.h"

#include <sstream>

namespace btfslim::test {

std::string command_line(const std::vector<std::string>& args) {
  std::string s = "btfslim";
  for (const auto& a : args) s += " " + a;
  return s;
}

std::string not_text(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const auto at = [&] { return " at byte " + std::to_string(i) + ": ..." + s.substr(i > 20 ? i - 20 : 0, 40); };
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return "control byte " + std::to_string(c) + at();
      ++i;
      continue;
    }
    const std::size_t n = c >= 0xf5 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || i + n > s.size()) return "ill-formed UTF-8" + at();
    char32_t cp = c & (0xff >> (n + 1));
    for (std::size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return "ill-formed UTF-8" + at();
      cp = (cp << 6) | (b & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
      return "ill-formed UTF-8" + at();
    if (cp <= 0x9f || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
        (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff)
      return "invisible code point" + at();
    i += n;
  }
  return "";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string with_commas(std::uintmax_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string first_difference(const std::string& ours, const std::string& theirs, const std::string& theirs_label) {
  if (ours == theirs) return "";
  std::istringstream a(ours), b(theirs);
  std::string la, lb;
  const std::string pad(theirs_label.size() > 4 ? theirs_label.size() - 4 : 0, ' ');
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "the texts differ only in their final newline";
    if (!more_a || !more_b || la != lb)
      return "line " + std::to_string(line) + ":\n  ours: " + pad + (more_a ? la : "<end>") + "\n  " + theirs_label +
             ": " + (more_b ? lb : "<end>");
  }
}

std::string file_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace btfslim::test
