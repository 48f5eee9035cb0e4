// The three printers of a View (view.h): table, CSV, JSON.
#include "btfslim/view.h"

#include "btfslim/csv.h"
#include "btfslim/escape.h"
#include "btfslim/terminal.h"

#include <unistd.h>

#include <array>
#include <cmath>

namespace btfslim {
namespace {

using Cells = std::array<Cell, kMaxColumns>;

std::span<Cell> cells_for(const View& v, Cells& cells) {
  if (v.columns.size() > kMaxColumns) throw std::logic_error("a view of more columns than kMaxColumns");
  return {cells.data(), v.columns.size()};
}

// Appends `s` as a CSV field: escaped when it holds input names, quoted when it needs to be.
void csv_text(OutputBuffer& out, std::string_view s, bool names) {
  if (names && !s.empty()) {
    const std::string n = CsvWriter::name(s);
    if (n.find_first_of(",\"\r\n") == std::string::npos)
      out.write(n);
    else
      out.write(csv_quoted(n));
    return;
  }
  if (s.find_first_of(",\"\r\n") == std::string_view::npos)
    out.write(s);
  else
    out.write(csv_quoted(s));
}

// The table's text of a cell, but for the Percent column (printed with its % sign by print_table).
std::string table_text(const Column& c, const Cell& cell) {
  switch (cell.is) {
    case Cell::Is::Empty:
      return {};
    case Cell::Is::Missing:
      return "-";
    case Cell::Is::Text:
      return c.names ? escape(cell.text) : std::string(cell.text);
    case Cell::Is::Number:
      break;
  }
  if (cell.blank_if_zero && cell.value == 0) return {};
  if (c.show == Show::Count) return with_commas(static_cast<std::uint64_t>(cell.value));
  if (c.show == Show::Bytes) return human_size(cell.value);
  return fmt::format("{}", cell.value);
}

}  // namespace

void print_table(const View& v, OutputBuffer& out) {
  Cells storage;
  const std::span<Cell> cells = cells_for(v, storage);
  std::size_t label = v.columns.size(), others = 0;
  for (std::size_t c = 0; c < v.columns.size(); ++c) {
    const Column& col = v.columns[c];
    if (col.heading.empty()) continue;
    if (col.show == Show::Label)
      label = c;
    else
      others += static_cast<std::size_t>(std::abs(col.width));
  }
  std::size_t width = 0;
  if (label < v.columns.size()) {
    std::size_t longest = std::max(v.min_label_chars, display_width(v.columns[label].heading));
    for (std::size_t i = 0; i < v.rows; ++i) {
      v.row(i, cells);
      longest = std::max(longest, display_width(table_text(v.columns[label], cells[label])));
    }
    width = std::max(name_column_width(longest, others, v.narrowest_label, terminal_columns(STDOUT_FILENO)), v.min_label_width);
  }
  auto pad = [&](const Column& col, std::string_view text) {
    if (col.show == Show::Label)
      out.print("{:<{}}", fit_to_column(text, width), width);
    else if (col.width < 0)
      out.print("{:<{}}", text, -col.width);
    else
      out.print("{:>{}}", text, col.width);
  };
  for (const Column& col : v.columns)
    if (!col.heading.empty()) pad(col, col.heading);
  out.put('\n');
  for (std::size_t i = 0; i < v.rows; ++i) {
    v.row(i, cells);
    for (std::size_t c = 0; c < v.columns.size(); ++c) {
      const Column& col = v.columns[c];
      if (col.heading.empty()) continue;
      if (col.show == Show::Percent && cells[c].is == Cell::Is::Number)
        out.print("{:>{}.1f}%", cells[c].value, col.width - 1);
      else
        pad(col, table_text(col, cells[c]));
    }
    out.put('\n');
  }
}

void print_csv(const View& v, OutputBuffer& out) {
  Cells storage;
  const std::span<Cell> cells = cells_for(v, storage);
  bool first = true;
  for (const Column& col : v.columns) {
    if (col.key.empty() || !col.in_csv) continue;
    if (!first) out.put(',');
    first = false;
    out.write(col.key);
  }
  out.put('\n');
  for (std::size_t i = 0; i < v.rows; ++i) {
    v.row(i, cells);
    first = true;
    for (std::size_t c = 0; c < v.columns.size(); ++c) {
      const Column& col = v.columns[c];
      if (col.key.empty() || !col.in_csv) continue;
      if (!first) out.put(',');
      first = false;
      const Cell& cell = cells[c];
      if (cell.is == Cell::Is::Text)
        csv_text(out, cell.text, col.names);
      else if (cell.is == Cell::Is::Number)
        out.print("{:.0f}", cell.csv);
    }
    out.put('\n');
  }
}

namespace {

void json_rows(const View* v, JsonWriter& w, std::string_view key, RowIs which) {
  w.key(key);
  w.begin_array();
  if (v) {
    Cells storage;
    const std::span<Cell> cells = cells_for(*v, storage);
    for (std::size_t i = 0; i < v->rows; ++i) {
      if (v->row(i, cells) != which) continue;
      w.begin_object();
      for (std::size_t c = 0; c < v->columns.size(); ++c) {
        const Column& col = v->columns[c];
        const Cell& cell = cells[c];
        if (col.key.empty() || cell.is == Cell::Is::Empty || cell.is == Cell::Is::Missing) continue;
        // A folded row's text in the names column is its label ("[12 others]"), not a name.
        w.key(which == RowIs::Folded && cell.is == Cell::Is::Text && col.names ? std::string_view("label") : col.key);
        if (cell.is == Cell::Is::Text && col.show == Show::List) {
          w.begin_array();
          for (std::string_view rest = cell.text; !rest.empty();) {
            const std::size_t blank = std::min(rest.find(' '), rest.size());
            if (blank) w.value(rest.substr(0, blank));
            rest.remove_prefix(std::min(blank + 1, rest.size()));
          }
          w.end_array();
        } else if (cell.is == Cell::Is::Text) {
          w.value(cell.text);
        } else if (cell.integer) {
          w.value(static_cast<std::uint64_t>(cell.json));
        } else {
          w.value(cell.json);
        }
      }
      w.end_object();
    }
  }
  w.end_array();
}

}  // namespace

void print_json_items(const View* v, JsonWriter& w, std::string_view key) { json_rows(v, w, key, RowIs::Item); }
void print_json_folded(const View* v, JsonWriter& w, std::string_view key) { json_rows(v, w, key, RowIs::Folded); }

}  // namespace btfslim
