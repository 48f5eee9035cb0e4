#include "text.h"

#include <sstream>

namespace btfslim::test {

std::string command_line(const std::vector<std::string>& args) {
  std::string s = "btfslim";
  for (const auto& a : args) s += " " + a;
  return s;
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

}  // namespace btfslim::test
