// Printing the kernel references of `btfslim check` (kfuncs, ksyms, attach targets, struct_ops maps):
// rows under an object's relocations, rows of the lists of failures, and the fields of their JSON
// records. check_report.cc calls these where it prints an object, and lays out the JSON records, which
// have the relocations' shape.
#include "btfslim/check.h"
#include "btfslim/escape.h"

#include <fmt/format.h>

#include <algorithm>

namespace btfslim {
namespace {

// The program or map that needs the reference; "-" for an extern, which the whole object needs.
std::string owner(const KernelRef& ref) { return ref.owner.empty() ? "-" : escape(ref.owner); }

// The name shown: the extern, the attach target ("(none)" for a bare section), the struct.
std::string shown_name(const KernelRef& ref) {
  if (ref.name.empty()) return "(none)";
  return escape(ref.name);
}

std::string result_text(const KernelRef& ref, const KernelRefResult& r, NotCounted excused = NotCounted::No) {
  const bool fails = kernel_ref_fails(ref, r);
  if (fails && excused != NotCounted::No)
    return fmt::format("{} ({})", r.status == RefStatus::Missing ? "missing" : "incompatible", not_counted_name(excused));
  switch (r.status) {
    case RefStatus::Ok:
      return "ok";
    case RefStatus::Absent:
      return "absent (weak)";
    case RefStatus::Missing:
      return fails ? "MISSING" : "missing (not loaded)";
    case RefStatus::Incompatible:
      return fails ? "INCOMPATIBLE" : "incompatible (not loaded)";
    case RefStatus::Unchecked:
      return "unchecked";
  }
  return "";
}

std::string summary(const CheckRun& run, std::size_t o, const ObjectOnTarget& cell, std::size_t not_counted) {
  std::size_t counts[5] = {};
  for (const KernelRefResult& r : cell.kernel_refs) ++counts[static_cast<std::size_t>(r.status)];
  std::string s;
  for (const RefStatus st : {RefStatus::Ok, RefStatus::Absent, RefStatus::Missing, RefStatus::Incompatible,
                             RefStatus::Unchecked}) {
    const std::size_t n = counts[static_cast<std::size_t>(st)];
    if (n == 0 && st != RefStatus::Ok) continue;
    if (!s.empty()) s += ", ";
    s += fmt::format("{} {}", n, ref_status_name(st));
  }
  if (const std::size_t failing = kernel_refs_failing(run, o, cell) - not_counted)
    s += fmt::format(" ({} failing)", failing);
  return s;
}

}  // namespace

std::size_t kernel_refs_failing(const CheckRun& run, std::size_t o, const ObjectOnTarget& cell) {
  if (o >= run.kernel_refs.size()) return 0;
  const auto& refs = run.kernel_refs[o];
  std::size_t n = 0;
  for (std::size_t i = 0; i < refs.size() && i < cell.kernel_refs.size(); ++i)
    if (kernel_ref_fails(refs[i], cell.kernel_refs[i])) ++n;
  return n;
}

bool kernel_refs_checked(const CheckRun&, std::size_t, const ObjectOnTarget& cell) {
  return std::any_of(cell.kernel_refs.begin(), cell.kernel_refs.end(),
                     [](const KernelRefResult& r) { return r.status != RefStatus::Unchecked; });
}

void print_kernel_refs(const CheckRun& run, std::size_t o, std::string_view shown, bool failures_only,
                       OutputBuffer& out) {
  if (o >= run.kernel_refs.size() || run.kernel_refs[o].empty()) return;
  const auto& refs = run.kernel_refs[o];
  const ObjectOnTarget& cell = run.cells[o][0];
  // Failures in optional programs or unused alternatives are shown in lower case and not counted.
  const ProgramOutcomes outcomes = program_outcomes(run, o, 0);
  std::size_t not_counted = 0;
  for (std::size_t i = 0; i < refs.size(); ++i) not_counted += outcomes.kernel_ref(i) != NotCounted::No;
  // On a target without functions every reference is unchecked for the same reason: the rows show
  // them, and the line says why once.
  const bool none_decidable = !cell.kernel_refs_decidable;
  auto listed = [&](std::size_t i) { return !failures_only || kernel_ref_fails(refs[i], cell.kernel_refs[i]); };
  std::vector<std::string> owners, names;
  std::size_t ow = 13, nw = 4, rw = 6, listed_count = 0;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    owners.push_back(owner(refs[i]));
    names.push_back(shown_name(refs[i]));
    if (!listed(i)) continue;
    ++listed_count;
    ow = std::max(ow, owners.back().size());
    nw = std::max(nw, names.back().size());
    rw = std::max(rw, result_text(refs[i], cell.kernel_refs[i], outcomes.kernel_ref(i)).size());
  }
  nw = std::min<std::size_t>(nw, 40);
  if (listed_count) {
    out.print("  {:<{}}  {:<10}  {:<{}}  {:<{}}  {}\n", "PROGRAM / MAP", ow, "KIND", "NAME", nw, "RESULT", rw, "TARGET");
    for (std::size_t i = 0; i < refs.size(); ++i) {
      if (!listed(i)) continue;
      const KernelRefResult& r = cell.kernel_refs[i];
      out.print("  {:<{}}  {:<10}  {:<{}}  {:<{}}  {}\n", owners[i], ow, kernel_ref_kind_name(refs[i].kind), names[i], nw,
                result_text(refs[i], r, outcomes.kernel_ref(i)), rw, r.target.empty() ? "-" : r.target);
      if (!r.reason.empty() && r.status != RefStatus::Ok && !none_decidable)
        out.print("  {:<{}}  {}\n", "", ow + 12, r.reason);
    }
  }
  out.print("{}: {} kernel references: {}", shown, refs.size(), summary(run, o, cell, not_counted));
  if (none_decidable && !cell.kernel_refs.empty()) out.print("; {}", cell.kernel_refs.front().reason);
  out.put('\n');
}

void failing_kernel_refs(const CheckRun& run, std::size_t o, std::size_t t, std::vector<FailureRow>& rows) {
  if (o >= run.kernel_refs.size()) return;
  const auto& refs = run.kernel_refs[o];
  const ObjectOnTarget& cell = run.cells[o][t];
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const KernelRefResult& r = cell.kernel_refs[i];
    if (!kernel_ref_fails(refs[i], r)) continue;
    rows.push_back({owner(refs[i]), "", std::string(kernel_ref_kind_name(refs[i].kind)), result_text(refs[i], r),
                    shown_name(refs[i]), r.reason});
  }
}

void json_kernel_ref_fields(JsonWriter& j, const KernelRef& ref) {
  const bool attach = ref.kind == KernelRefKind::Attach, struct_ops = ref.kind == KernelRefKind::StructOps;
  j.field("reference_kind", kernel_ref_kind_name(ref.kind));
  j.field("name", ref.name);
  j.field("lookup", ref.lookup);
  j.field("lookup_kind", kind_name(ref.lookup_kind));
  // Every record has every key; null where it does not apply to this kind of reference.
  j.key("program");
  attach ? j.value(ref.owner) : j.value(nullptr);
  j.key("map");
  struct_ops ? j.value(ref.owner) : j.value(nullptr);
  j.key("section");
  attach || struct_ops ? j.value(ref.section) : j.value(nullptr);
  j.key("autoload");
  attach ? j.value(ref.autoload) : j.value(nullptr);
  j.key("target_given");
  attach ? j.value(ref.given) : j.value(nullptr);
  j.key("weak");
  attach || struct_ops ? j.value(nullptr) : j.value(ref.weak);
}

void json_kernel_ref_result(JsonWriter& j, const KernelRef& ref, const KernelRefResult& r) {
  j.field("status", ref_status_name(r.status));
  j.key("resolved");
  r.target.empty() ? j.value(nullptr) : j.value(r.target);
  j.key("reason");
  r.reason.empty() ? j.value(nullptr) : j.value(r.reason);
  j.field("fails", kernel_ref_fails(ref, r));
}

}  // namespace btfslim
