// Writing CSV (RFC 4180): every CSV btfslim writes goes through CsvWriter, so that every record is one
// line with as many fields as the header. A field holding a comma, a quote, CR or LF is quoted, quotes
// doubled (csv_quoted in output.h, which the older writers call field by field).
#pragma once

#include "btfslim/output.h"

#include <initializer_list>
#include <string>
#include <string_view>

namespace btfslim {

// The header first, then rows with exactly as many fields (a row of another width is a bug:
// std::logic_error). Fields are display text; pass names from inputs through name() so that they are
// escaped (btfslim/escape.h: no control bytes, so never a line break).
class CsvWriter {
 public:
  CsvWriter(OutputBuffer& out, std::initializer_list<std::string_view> header);
  void row(std::initializer_list<std::string_view> fields);
  // A name from an input, escaped for CSV (the quoting is row()'s).
  static std::string name(std::string_view s);

 private:
  void record(std::initializer_list<std::string_view> fields);
  OutputBuffer& out_;
  std::size_t columns_;
};

}  // namespace btfslim
