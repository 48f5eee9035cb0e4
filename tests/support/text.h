// Text helpers the end-to-end tests share: reading a command's output, spelling what it prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace btfslim::test {

// "btfslim ARG ARG...", for naming the command a check ran in its message.
std::string command_line(const std::vector<std::string>& args);
// The lines of a text, without their newlines.
std::vector<std::string> lines_of(const std::string& text);
// The whitespace-separated words of a line.
std::vector<std::string> words_of(const std::string& line);
// How many times `what` stands in `text`, not overlapping.
std::size_t count_of(const std::string& text, const std::string& what);

// 1234567 -> "1,234,567", as btfslim prints counts and sizes.
std::string with_commas(std::uintmax_t n);
// "" when the texts are equal, else the first line where they differ, ours against `theirs_label`'s.
std::string first_difference(const std::string& ours, const std::string& theirs,
                             const std::string& theirs_label = "expected");
// What follows the last '/' of a path.
std::string file_name(const std::string& path);
// "" when `s` is what btfslim may print: valid UTF-8 without control bytes (line feed and tab aside),
// DEL, or invisible code points (C1 controls, bidirectional overrides and isolates, zero-width
// characters, line separators, the BOM); else what is wrong and where. Written apart from btfslim's own
// escaping (src/output/escape.cc), so that the two check each other.
std::string not_text(const std::string& s);

}  // namespace btfslim::test
