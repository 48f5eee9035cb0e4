// Printing the kernel references of `btfslim check` (kfuncs, ksyms, attach targets, struct_ops maps):
// rows under an object's relocations, lines in the matrix's list of failures, and JSON records shaped
// like the relocations' ones. check_report.cc calls these where it prints an object.
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

std::string result_text(const KernelRef& ref, const KernelRefResult& r) {
  const bool fails = kernel_ref_fails(ref, r);
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

std::string summary(const CheckRun& run, std::size_t o, const ObjectOnTarget& cell) {
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
  if (const std::size_t failing = kernel_refs_failing(run, o, cell)) s += fmt::format(" ({} failing)", failing);
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

void print_kernel_refs(const CheckRun& run, std::size_t o, OutputBuffer& out) {
  if (o >= run.kernel_refs.size() || run.kernel_refs[o].empty()) return;
  const auto& refs = run.kernel_refs[o];
  const ObjectOnTarget& cell = run.cells[o][0];
  if (!cell.kernel_refs_shown) return;
  std::vector<std::string> owners, names;
  std::size_t ow = 13, nw = 4;
  for (const KernelRef& ref : refs) {
    owners.push_back(owner(ref));
    names.push_back(shown_name(ref));
    ow = std::max(ow, owners.back().size());
    nw = std::max(nw, names.back().size());
  }
  nw = std::min<std::size_t>(nw, 60);
  out.print("  {:<{}}  {:<10}  {:<{}}  {:<20}  {}\n", "PROGRAM / MAP", ow, "KIND", "NAME", nw, "RESULT", "TARGET");
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const KernelRefResult& r = cell.kernel_refs[i];
    out.print("  {:<{}}  {:<10}  {:<{}}  {:<20}  {}\n", owners[i], ow, kernel_ref_kind_name(refs[i].kind), names[i], nw,
              result_text(refs[i], r), r.target.empty() ? "-" : r.target);
    if (!r.reason.empty() && r.status != RefStatus::Ok) out.print("  {:<{}}  {}\n", "", ow + 12, r.reason);
  }
  out.print("{}: {} kernel references: {}\n", esc(run.objects[o]->path()), refs.size(), summary(run, o, cell));
}

void print_failing_kernel_refs(const CheckRun& run, std::size_t o, std::size_t t, const std::string& header,
                               bool& printed, OutputBuffer& out) {
  if (o >= run.kernel_refs.size()) return;
  const auto& refs = run.kernel_refs[o];
  const ObjectOnTarget& cell = run.cells[o][t];
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const KernelRefResult& r = cell.kernel_refs[i];
    if (!kernel_ref_fails(refs[i], r)) continue;
    if (!printed) out.print("{}", header);
    printed = true;
    out.print("  {} {} {}: {}: {}\n", owner(refs[i]), kernel_ref_kind_name(refs[i].kind), shown_name(refs[i]),
              ref_status_name(r.status), r.reason);
  }
}

void json_kernel_refs(JsonWriter& j, const CheckRun& run, std::size_t o) {
  j.key("kernel_references");
  j.begin_array();
  const bool many = run.targets.size() != 1;
  const auto& refs = o < run.kernel_refs.size() ? run.kernel_refs[o] : std::vector<KernelRef>{};
  auto result = [&](const KernelRef& ref, const KernelRefResult& r) {
    j.field("status", ref_status_name(r.status));
    if (!r.target.empty()) j.field("resolved", r.target);
    if (!r.reason.empty()) j.field("reason", r.reason);
    j.field("fails", kernel_ref_fails(ref, r));
  };
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const KernelRef& ref = refs[i];
    j.begin_object();
    j.field("object", run.objects[o]->path());
    j.field("kind", kernel_ref_kind_name(ref.kind));
    j.field("name", ref.name);
    j.field("lookup", ref.lookup);
    j.field("lookup_kind", kind_name(ref.lookup_kind));
    if (ref.kind == KernelRefKind::Attach) {
      j.field("program", ref.owner);
      j.field("section", ref.section);
      j.field("autoload", ref.autoload);
      j.field("target_given", ref.given);
    } else if (ref.kind == KernelRefKind::StructOps) {
      j.field("map", ref.owner);
      j.field("section", ref.section);
    } else {
      j.field("weak", ref.weak);
    }
    if (many) {
      j.key("results");
      j.begin_array();
      for (std::size_t t = 0; t < run.targets.size(); ++t) {
        j.begin_object();
        j.field("target", run.targets[t]);
        result(ref, run.cells[o][t].kernel_refs[i]);
        j.end_object();
      }
      j.end_array();
    } else {
      result(ref, run.cells[o][0].kernel_refs[i]);
    }
    j.end_object();
  }
  j.end_array();
}

}  // namespace btfslim
