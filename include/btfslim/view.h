// A report's view described once, printed three ways: as a table for people, as CSV and as JSON.
//
// A view is its columns and a way to produce its rows. A column says once how it is headed in the table
// and keyed in CSV and JSON, and how a value shows: a count as 1,234 in the table, a size as 5.26 MiB;
// both as plain numbers in CSV and JSON. A column that only the table has (a label made of id and name,
// a share in percent) has no key; one that only scripts want (an id) has no heading. So every view has
// every format by construction, with the same rows in each (bloaty's one roll-up, several printers).
//
// Rows are made one at a time into a fixed array of cells, so printing 100,000 rows allocates nothing
// per row beyond what a row's own text needs. The rows a table or CSV ends in (what no row names, the
// TOTAL) are the document's own fields in JSON, so JSON lists only items and folded rows.
#pragma once

#include "btfslim/output.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

namespace btfslim {

// How a column's values show.
enum class Show : std::uint8_t {
  Label,    // the table's first column, left-aligned, as wide as the terminal allows (text)
  Text,     // text (a kind, a label), aligned to the column's width
  Count,    // a number of things: "1,234" in the table, an integer in CSV and JSON
  Bytes,    // a size: "5.26 MiB" in the table, a whole number in CSV, the number itself in JSON
  Percent,  // a share: "12.3%" in the table only
  List,     // names separated by blanks: as they are in the table and CSV, an array of strings in JSON
};

// A value of one row in one column. Numbers are doubles (exact for integers below 2^53). A value that
// differs by format says so: a share of the strings is a fraction in JSON, a whole number rounded so that
// the column adds up in CSV (in_csv), and whichever the table's figure was always made from.
struct Cell {
  enum class Is : std::uint8_t { Empty, Missing, Text, Number };
  Is is = Is::Empty;
  bool integer = false;        // JSON: written as an integer
  bool blank_if_zero = false;  // table: a 0 shows as nothing
  std::string_view text;
  double value = 0;  // the table's and JSON's
  double csv = 0;    // CSV's whole number
  double json = 0;

  static Cell empty() { return {}; }
  // Not computed for this row: "-" in the table, nothing in CSV, no key in JSON.
  static Cell missing() {
    Cell c;
    c.is = Is::Missing;
    return c;
  }
  static Cell of(std::string_view s) { return {Is::Text, false, false, s}; }
  static Cell count(std::uint64_t n) {
    const double d = static_cast<double>(n);
    return {Is::Number, true, false, {}, d, d, d};
  }
  static Cell number(double v) { return {Is::Number, false, false, {}, v, v, v}; }
  Cell& in_csv(double whole) { return csv = whole, *this; }
  Cell& in_json(double v) { return json = v, integer = false, *this; }
  Cell& blank_zero() { return blank_if_zero = true, *this; }
};

struct Column {
  std::string_view heading;  // the table's; "": a column the table leaves out
  std::string_view key;      // CSV's header field and JSON's key; "": a column only the table has
  Show show = Show::Text;
  int width = 0;             // the table's, right-aligned (negative: left-aligned); 0 for the Label
  bool names = false;        // text cells hold names from an input: escaped in the table and CSV
  bool in_csv = true;        // false: a detail only JSON has (CSV keeps the columns it always had)
};

// What a row is: an item (JSON: an object in the view's array), rows folded into one ("[N others]";
// JSON: an object in "folded", its label under "label"), or a row that sums up ("[header]", "TOTAL"), which
// the table and CSV end in and JSON gives as the document's fields.
enum class RowIs : std::uint8_t { Item, Folded, Summary };

struct View {
  std::span<const Column> columns;
  std::size_t rows = 0;
  // Fills `cells` (one per column) for row `i`; the text it points to lives until the next call.
  std::function<RowIs(std::size_t i, std::span<Cell> cells)> row;
  // The table's Label column: at least this many characters wide before the terminal is asked, and
  // never narrower than `min_label_width` (0: the terminal decides).
  std::size_t min_label_chars = 0;
  std::size_t min_label_width = 0;
  std::size_t narrowest_label = 24;  // what a narrow terminal leaves it at least
};

constexpr std::size_t kMaxColumns = 16;

// The table: a heading line, then one line per row. Prints nothing before the heading.
void print_table(const View& view, OutputBuffer& out);
// CSV: the header, then one record per row (Summary rows included).
void print_csv(const View& view, OutputBuffer& out);
// JSON, inside an open object: `key`: [an object per item row], or [an object per folded row] (whose
// names column is "label"). A null view: an empty array (a view the command was not asked for).
void print_json_items(const View* view, JsonWriter& w, std::string_view key);
void print_json_folded(const View* view, JsonWriter& w, std::string_view key);

}  // namespace btfslim
