// The table of `btfslim check` on several kernels: a matrix of objects by kernels, then what fails where.
//
// Objects are rows, as there may be hundreds, and kernels columns, folded into blocks that fit the
// terminal (COLUMNS), each block with the object column; in a pipe, one block however wide. What fails is
// listed after the matrix, one row per failure with the accessor last, so that a long one pushes nothing
// out of line. The rows are the report's only memory of an object once it is done: its cells here, the
// text of its failures in a Spool.
#include "check_parts.h"
#include "btfslim/terminal.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>

namespace btfslim {
namespace {

std::string cell_text(const MatrixCell& c) {
  if (c.nothing) return "-";
  return c.failing == 0 ? "ok" : fmt::format("{} failing", c.failing);
}

}  // namespace

MatrixTable::MatrixTable(std::vector<std::string> kernels) : kernels_(std::move(kernels)) {}

void MatrixTable::object(const CheckRun& run, std::size_t o, std::size_t g, const std::string& shown,
                         std::vector<MatrixCell> cells) {
  for (std::size_t t = 0; t < kernels_.size(); ++t) {
    const std::vector<FailureRow> failing = failure_rows(run, o, t);
    if (failing.empty()) continue;
    failures_.out().print("\n{} on {}:\n", shown, kernels_[t]);
    print_failure_rows(failing, failures_.out());
  }
  rows_.push_back({g, std::move(cells)});
}

void MatrixTable::print(std::span<const std::string> objects, OutputBuffer& out) {
  const std::size_t kernels = kernels_.size();
  // Column widths: the names, and the cells below them.
  std::size_t ow = 6;
  for (const Row& row : rows_) ow = std::max(ow, objects[row.object].size());
  std::vector<std::size_t> widths(kernels);
  for (std::size_t t = 0; t < kernels; ++t) {
    widths[t] = std::max<std::size_t>(kernels_[t].size(), 2);
    for (const Row& row : rows_) widths[t] = std::max(widths[t], cell_text(row.cells[t]).size());
  }
  // Kernel columns in blocks that fit the terminal (COLUMNS), each block with the object column; in
  // a pipe, one block however wide.
  const std::size_t columns = terminal_columns(STDOUT_FILENO);
  std::vector<std::pair<std::size_t, std::size_t>> blocks;  // [first, end) of kernel columns
  for (std::size_t t = 0; t < kernels;) {
    std::size_t end = t + 1, width = ow + 2 + widths[t];
    while (end < kernels && (columns == 0 || width + 2 + widths[end] <= columns)) width += 2 + widths[end++];
    blocks.push_back({t, end});
    t = end;
  }
  if (!rows_.empty())
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (b) out.put('\n');
      const auto [first, end] = blocks[b];
      out.print("{:<{}}", "OBJECT", ow);
      for (std::size_t t = first; t < end; ++t) out.print("  {:<{}}", kernels_[t], t + 1 == end ? 0 : widths[t]);
      out.put('\n');
      for (const Row& row : rows_) {
        out.print("{:<{}}", objects[row.object], ow);
        for (std::size_t t = first; t < end; ++t)
          out.print("  {:<{}}", cell_text(row.cells[t]), t + 1 == end ? 0 : widths[t]);
        out.put('\n');
      }
    }
  // What fails where.
  failures_.copy_to(out);
  if (!rows_.empty()) out.put('\n');
}

}  // namespace btfslim
