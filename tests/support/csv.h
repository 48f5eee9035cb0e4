// Reading CSV in tests: an RFC 4180 parser written apart from btfslim's writer, so that the two check
// each other.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace btfslim::test {

// The records of a CSV text, each a list of fields: quoted fields may hold commas, quotes (doubled) and
// line breaks; records end in LF or CRLF. Throws std::runtime_error on a malformed text (a quote inside
// an unquoted field, text after a closing quote, an unclosed quote).
inline std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
      continue;
    }
    if (c == '"') {
      if (!field.empty() || was_quoted) throw std::runtime_error("CSV: a quote inside an unquoted field");
      quoted = was_quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      if (c == '\r') ++i;
      record.push_back(std::move(field));
      records.push_back(std::move(record));
      field.clear();
      record.clear();
      was_quoted = false;
    } else {
      if (was_quoted) throw std::runtime_error("CSV: text after a closing quote");
      field += c;
    }
  }
  if (quoted) throw std::runtime_error("CSV: an unclosed quote");
  if (!field.empty() || !record.empty() || was_quoted) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace btfslim::test
