// JSON of `btfslim check`'s objects: one record per object with its result on each kernel, one per
// relocation and per kernel reference, each with a result per kernel in the order of "kernels" (the
// report's schema: tests/e2e/test_json_schema.cc). CheckPrinter (check_report.cc) writes the records
// between the report's head and its kernels.
#include "btfslim/check.h"
#include "check_parts.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace btfslim {
namespace {

// Why a failing relocation or kernel reference does not count: "optional", "unused alternative"; null
// when it counts or does not fail.
void json_counted(JsonWriter& j, bool fails, NotCounted why) {
  j.key("excused");
  fails && why != NotCounted::No ? j.value(not_counted_name(why)) : j.value(nullptr);
}

// One result of relocation `i` on a target. Every key is there in every result, null where it does
// not apply, so that a script reads them without asking.
void json_result(JsonWriter& j, const CheckRun& run, const ObjectOnTarget& cell, std::size_t i, NotCounted why) {
  const CoreResult& r = cell.results[i];
  const bool dead = cell.dead[i];
  j.field("status", status_name(r.status));
  j.key("value");
  r.status == CoreStatus::Ok ? j.value(r.value) : j.value(nullptr);
  j.field("local_value", r.local_value);
  // The load's size, where patching changes it.
  const bool resized = r.target_size != r.local_size;
  j.key("local_size_bytes");
  resized ? j.value(r.local_size) : j.value(nullptr);
  j.key("target_size_bytes");
  resized ? j.value(r.target_size) : j.value(nullptr);
  j.key("reason");
  r.reason.empty() ? j.value(nullptr) : j.value(r.reason);
  j.field("reachable", !dead);
  // The programs that reach a poisoned relocation: those whose load it fails.
  j.key("programs");
  j.begin_array();
  const auto it = std::lower_bound(cell.reached_from.begin(), cell.reached_from.end(), i,
                                   [](const auto& entry, std::size_t k) { return entry.first < k; });
  if (it != cell.reached_from.end() && it->first == i)
    for (const std::string_view p : it->second) j.value(p);
  j.end_array();
  j.field("fails", relocation_fails(run, r, dead));
  json_counted(j, relocation_fails(run, r, dead), why);
  j.key("type_ids");
  j.begin_array();
  for (const TargetSpec& m : r.matches) j.value(std::uint64_t{m.root});
  j.end_array();
}

}  // namespace

void json_object(JsonWriter& j, const CheckRun& run, std::size_t o) {
  const BpfObject& obj = *run.objects[o];
  const auto relos = obj.relocations();
  const auto& refs = run.kernel_refs[o];
  j.begin_object();
  j.field("file", obj.path());
  j.field("has_btf_ext", obj.has_ext());
  j.key("note");
  if (const auto note = nothing_to_do(obj); !note.empty())
    j.value(note);
  else
    j.value(nullptr);
  j.field("relocation_count", std::uint64_t{relos.size()});
  j.field("kernel_reference_count", std::uint64_t{refs.size()});
  // The matrix's cells: this object on each kernel, in the order of "kernels".
  std::size_t failing_kernels = 0;
  for (std::size_t t = 0; t < run.targets.size(); ++t) failing_kernels += matrix_cell(run, o, t).failing != 0;
  j.field("failure_count", std::uint64_t{failing_kernels});
  j.key("results");
  j.begin_array();
  for (std::size_t t = 0; t < run.targets.size(); ++t) {
    const MatrixCell c = matrix_cell(run, o, t);
    j.begin_object();
    j.field("kernel", run.targets[t]);
    j.field("failed", c.failing != 0);
    j.field("failing_relocation_count", std::uint64_t{c.failing_relocations});
    j.field("failing_kernel_reference_count", std::uint64_t{c.failing_kernel_refs});
    j.field("optional_failure_count", std::uint64_t{c.not_counted});
    j.end_object();
  }
  j.end_array();
  // Relocations and kernel references alike: what does not depend on the kernel, then "results",
  // one per kernel in the order of "kernels".
  // What counts of each failure, per kernel: the records' results ask by cell.
  std::vector<ProgramOutcomes> outcomes;
  for (std::size_t t = 0; t < run.targets.size(); ++t) outcomes.push_back(program_outcomes(run, o, t));
  auto outcome = [&](const ObjectOnTarget& cell) -> const ProgramOutcomes& {
    return outcomes[static_cast<std::size_t>(&cell - run.cells[o].data())];
  };
  auto records = [&](std::string_view key, std::size_t count, auto&& fields, auto&& result) {
    j.key(key);
    j.begin_array();
    for (std::size_t i = 0; i < count; ++i) {
      j.begin_object();
      fields(i);
      j.key("results");
      j.begin_array();
      for (std::size_t t = 0; t < run.targets.size(); ++t) {
        j.begin_object();
        result(i, run.cells[o][t]);
        j.end_object();
      }
      j.end_array();
      j.end_object();
    }
    j.end_array();
  };
  records(
      "relocations", relos.size(),
      [&](std::size_t i) {
        const CoreRelocation& r = relos[i];
        const Where w = where(obj, r);
        j.field("section", w.section);
        j.field("program", w.program);
        j.field("relo_idx", r.index);
        j.field("insn_off", r.insn_off);
        j.field("insn_idx", w.insn_idx);
        j.field("relocation_kind", reloc_kind_name(r.kind));
        j.field("local_type_id", r.local_type);
        j.field("access", obj.access(r));
        j.field("accessor", describe_access(obj, r));
      },
      [&](std::size_t i, const ObjectOnTarget& cell) { json_result(j, run, cell, i, outcome(cell).relocation(i)); });
  records(
      "kernel_references", refs.size(), [&](std::size_t i) { json_kernel_ref_fields(j, refs[i]); },
      [&](std::size_t i, const ObjectOnTarget& cell) {
        json_kernel_ref_result(j, refs[i], cell.kernel_refs[i]);
        json_counted(j, kernel_ref_fails(refs[i], cell.kernel_refs[i]), outcome(cell).kernel_ref(i));
      });
  json_programs(j, run, o);
  j.end_object();
}


}  // namespace btfslim
