// What the printers of `btfslim check` share (check_report.cc, check_matrix.cc, check_json.cc): where a
// relocation is, what an object gives on a kernel as a matrix cell and as rows of failures, and its JSON.
#pragma once

#include "btfslim/check.h"
#include "btfslim/output.h"

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace btfslim {

// Where a relocation is: its section, its program (the function holding the instruction, else the
// section), and its instruction's index in that program.
struct Where {
  std::string_view section, program;
  std::uint64_t insn_idx;
};
Where where(const BpfObject& obj, const CoreRelocation& r);

// "no .BTF.ext: nothing to relocate", "no CO-RE relocations", or "".
std::string_view nothing_to_do(const BpfObject& obj);

// JSON of object `o` (check_json.cc): what does not depend on the kernel, then one result per kernel
// for the object, each relocation and each kernel reference.
void json_object(JsonWriter& j, const CheckRun& run, std::size_t o);

// What object `o` gives on target `t`, as a matrix cell says it.
struct MatrixCell {
  bool nothing = false;  // nothing to relocate and no kernel reference decided: "-"
  std::size_t failing = 0;  // that count: failing_relocations + failing_kernel_refs - not_counted
  std::size_t failing_relocations = 0, failing_kernel_refs = 0;
  std::size_t not_counted = 0;  // failures in optional programs or unused alternatives (check_programs.cc)
};
MatrixCell matrix_cell(const CheckRun& run, std::size_t o, std::size_t t);

// "1 object", "2 objects".
std::string plural(std::size_t n, std::string_view noun);

// The failing relocations of object `o` on target `t`, then its failing kernel references.
std::vector<FailureRow> failure_rows(const CheckRun& run, std::size_t o, std::size_t t);
// "prog insn #12 byte_off POISONED struct task_struct.x: reason", for formats of one line per failure.
std::string failure_sentence(const FailureRow& row);
// Rows aligned in columns, the subject last and the reason on a line of its own below.
void print_failure_rows(const std::vector<FailureRow>& rows, OutputBuffer& out);

// The failures of object `o` on every kernel of `run`, each once, grouped by the kernels they fail on
// (check_matrix.cc says when two are alike): groups in the order their failures first appear, rows in
// the order failure_rows() gives them.
struct FailureGroup {
  std::vector<std::size_t> kernels;  // ascending
  std::vector<FailureRow> rows;
};
std::vector<FailureGroup> failure_groups(const CheckRun& run, std::size_t o);
// Which of the kernels named `names` `kernels` are: "3 of 6 kernels: a, b, c", "5 of 6 kernels: all but
// f", "all 6 kernels", "both kernels".
std::string kernels_phrase(std::span<const std::size_t> kernels, std::span<const std::string> names);

// The table of several kernels (check_matrix.cc): a row per object, a column per kernel, a legend, then
// what fails where. Rows are added as the objects are done; what they fail on is kept in a Spool.
class MatrixTable {
 public:
  // `kernels`: the columns' names; `legend`: {name, file} of those the legend gives the file of; escaped.
  MatrixTable(std::vector<std::string> kernels, std::vector<std::pair<std::string, std::string>> legend);
  // Object `o` of `run`, the report's object `g`, named `shown`, with its cells on every kernel.
  void object(const CheckRun& run, std::size_t o, std::size_t g, const std::string& shown, std::vector<MatrixCell> cells);
  // The matrix in blocks that fit the terminal, the legend, then the failures; nothing when no object
  // was added.
  // `objects`: every object's name, by its place in the report.
  void print(std::span<const std::string> objects, OutputBuffer& out);

 private:
  struct Row {
    std::size_t object;            // its place among the objects
    std::vector<MatrixCell> cells;  // per kernel
  };
  std::vector<std::string> kernels_;
  std::vector<std::pair<std::string, std::string>> legend_;
  std::vector<Row> rows_;
  Spool failures_;
};

}  // namespace btfslim
