// The table of `btfslim check` on several kernels: a matrix of objects by kernels, a legend of the
// kernels' files, then what fails where.
//
// Objects are rows, as there may be hundreds, and kernels columns, each headed by the kernel's short
// name (paths.h: its release where no other kernel has that release, as btfhub names its archives),
// folded into blocks that fit the terminal (COLUMNS), each block with the object column; in a pipe, one
// block however wide. A kernel named by something other than a suffix of its path (a release, not a
// file name) has its file given in a legend below the matrix.
//
// What fails is listed after the legend, object by object, one row per failure with the accessor last,
// so that a long one pushes nothing out of line. A btfhub tree holds many builds of one kernel, on which
// an object fails alike: a failure is listed once, under the kernels it fails on ("OBJ fails on 3 of 6
// kernels: ..."), failures that fail on the same kernels under one heading, in the order they first
// appear. Two failures are alike when every field is (program, instruction, kind, verdict, accessor and
// reason): a reason that names a kernel's type id differs from kernel to kernel, and is listed per kernel.
//
// The rows are the report's only memory of an object once it is done: its cells here, the text of its
// failures in a Spool.
#include "check_parts.h"
#include "btfslim/terminal.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace btfslim {
namespace {

std::string cell_text(const MatrixCell& c) {
  if (c.nothing) return "-";
  if (c.failing == 0 && c.not_counted) return fmt::format("ok ({} not counted)", c.not_counted);
  return c.failing == 0 ? "ok" : fmt::format("{} failing", c.failing);
}

}  // namespace

std::vector<FailureGroup> failure_groups(const CheckRun& run, std::size_t o) {
  // Each distinct failure with the kernels it fails on, in the order they first appear. A row is told
  // apart by its fields and, should one kernel list the same row twice, by which of them it is.
  struct Failure {
    FailureRow row;
    std::vector<std::size_t> kernels;
  };
  std::vector<Failure> failures;
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t t = 0; t < run.targets.size(); ++t) {
    std::unordered_map<std::string, std::size_t> repeats;
    for (FailureRow& row : failure_rows(run, o, t)) {
      std::string key;
      for (const std::string* field : {&row.owner, &row.where, &row.kind, &row.verdict, &row.subject, &row.reason}) {
        key += *field;
        key += '\0';
      }
      key += std::to_string(repeats[key]++);
      const auto [it, fresh] = seen.try_emplace(std::move(key), failures.size());
      if (fresh) failures.push_back({std::move(row), {}});
      failures[it->second].kernels.push_back(t);
    }
  }
  std::vector<FailureGroup> groups;
  std::map<std::vector<std::size_t>, std::size_t> group_of;  // kernels -> their group
  for (Failure& f : failures) {
    const auto [it, fresh] = group_of.try_emplace(f.kernels, groups.size());
    if (fresh) groups.push_back({std::move(f.kernels), {}});
    groups[it->second].rows.push_back(std::move(f.row));
  }
  return groups;
}

std::string kernels_phrase(std::span<const std::size_t> kernels, std::span<const std::string> names) {
  const std::size_t n = kernels.size(), of = names.size();
  if (of == 1) return names[0];
  if (n == of) return of == 2 ? "both kernels" : fmt::format("all {} kernels", of);
  std::string s = fmt::format("{} of {} kernels: ", n, of);
  // The kernels it does not fail on, where they are fewer to read.
  const bool but = of - n < n;
  if (but) s += "all but ";
  bool first = true;
  auto name = [&](std::size_t t) {
    if (!first) s += ", ";
    first = false;
    s += names[t];
  };
  if (!but) {
    for (const std::size_t t : kernels) name(t);
    return s;
  }
  for (std::size_t t = 0, k = 0; t < of; ++t) {
    if (k < n && kernels[k] == t)
      ++k;
    else
      name(t);
  }
  return s;
}

MatrixTable::MatrixTable(std::vector<std::string> kernels, std::vector<std::pair<std::string, std::string>> legend)
    : kernels_(std::move(kernels)), legend_(std::move(legend)) {}

void MatrixTable::object(const CheckRun& run, std::size_t o, std::size_t g, const std::string& shown,
                         std::vector<MatrixCell> cells) {
  for (const FailureGroup& group : failure_groups(run, o)) {
    // Failures only in optional programs or unused alternatives (the rows say which) fail nothing.
    const bool counted = std::any_of(group.rows.begin(), group.rows.end(), [](const FailureRow& r) { return r.counted; });
    failures_.out().print("\n{} fails on {}{}\n", shown, kernels_phrase(group.kernels, kernels_),
                          counted ? "" : " (not counted: optional programs or unused alternatives)");
    print_failure_rows(group.rows, failures_.out());
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
  if (rows_.empty()) return;
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
  // Which file each kernel named by its release is.
  if (!legend_.empty()) {
    std::size_t kw = 6;
    for (const auto& [name, file] : legend_) kw = std::max(kw, name.size());
    out.print("\n{:<{}}  FILE\n", "KERNEL", kw);
    for (const auto& [name, file] : legend_) out.print("{:<{}}  {}\n", name, kw, file);
  }
  // What fails where.
  failures_.copy_to(out);
  out.put('\n');
}

}  // namespace btfslim
