// `btfslim check` from the loader's side: which failures count once the programs a loader may leave
// out (--optional, SEC("?...")) and the alternatives it chooses between (loader.h, ObjectPrograms) are
// taken into account, and the rows, JSON and verdict note that say so. check_report.cc asks
// program_outcomes() for each object and kernel; everything else here prints.
//
// A failure keeps programs from loading: a poisoned relocation the programs that reach it, any other
// relocation the program it is in, an attach target its program. A failure in a subprogram no program
// reaches, an ambiguous or failed relocation in .text, an extern or a struct_ops map keeps the whole
// object from loading (libbpf relocates subprograms and resolves externs whatever is turned off): it
// always counts. A failure counts unless every program it keeps from loading is optional or an unused
// alternative. A group's variant is used when none of its programs fails, the first such in the order
// loaders prefer (fentry before kprobe, tp_btf before raw_tp); when every variant fails, the group
// fails, and the failures of its programs count (but in optional ones).
#include "btfslim/check.h"
#include "btfslim/escape.h"

#include <fmt/format.h>

#include <algorithm>

namespace btfslim {
namespace {

constexpr std::size_t kWholeObject = SIZE_MAX;

// Calls `fn` with each program (its index in `programs`, or kWholeObject) that failing relocation `i`
// keeps from loading.
template <typename Fn>
void relocation_owners(const CheckRun& run, std::size_t o, const ObjectOnTarget& cell, std::size_t i, Fn&& fn) {
  const ObjectPrograms& programs = run.programs[o];
  const auto it = std::lower_bound(cell.reached_from.begin(), cell.reached_from.end(), i,
                                   [](const auto& entry, std::size_t k) { return entry.first < k; });
  if (cell.results[i].status == CoreStatus::Poisoned && it != cell.reached_from.end() && it->first == i) {
    for (const std::string_view p : it->second) fn(programs.find(p));
    return;
  }
  const BpfObject& obj = *run.objects[o];
  const CoreRelocation& r = obj.relocations()[i];
  const BpfFunction* f = obj.function_of(r);
  fn(f && obj.sections()[r.section].name != ".text" ? programs.find(f->name) : kWholeObject);
}

std::size_t kernel_ref_owner(const CheckRun& run, std::size_t o, std::size_t i) {
  const KernelRef& ref = run.kernel_refs[o][i];
  return ref.kind == KernelRefKind::Attach ? run.programs[o].find(ref.owner) : kWholeObject;
}

// How a program's failures stand, given the groups' choices: NotCounted::No when they count.
NotCounted program_excuse(const ObjectPrograms& programs, const ProgramOutcomes& out, std::size_t p) {
  if (p == kWholeObject) return NotCounted::No;
  const ProgramRole& role = programs.programs[p];
  if (role.optional()) return NotCounted::Optional;
  if (!role.alternative()) return NotCounted::No;
  const std::uint32_t used = out.used[role.group];
  return used != ProgramOutcomes::kNoVariant && used != role.variant ? NotCounted::UnusedAlternative : NotCounted::No;
}

// A failure's excuse from its programs': none when one of them counts; else optional when all are.
struct Excuse {
  bool counts = false, all_optional = true, any = false;
  void add(NotCounted why) {
    any = true;
    if (why == NotCounted::No) counts = true;
    if (why != NotCounted::Optional) all_optional = false;
  }
  NotCounted result() const {
    if (counts || !any) return NotCounted::No;
    return all_optional ? NotCounted::Optional : NotCounted::UnusedAlternative;
  }
};

std::string role_text(const ObjectPrograms& programs, const ProgramRole& p) {
  std::string s;
  if (p.alternative()) {
    const AlternativesGroup& g = programs.groups[p.group];
    s = fmt::format("{} of {}", g.variants[p.variant], escape(g.hook));
  }
  if (p.optional()) s += fmt::format("{}optional ({})", s.empty() ? "" : ", ", escape(p.optional_by));
  return s;
}

std::string outcome_text(const ObjectPrograms& programs, const ProgramOutcomes& out, std::size_t p) {
  const ProgramRole& role = programs.programs[p];
  const bool fails = out.fails[p];
  if (role.alternative()) {
    const std::uint32_t used = out.used[role.group];
    if (used == ProgramOutcomes::kNoVariant)
      return role.optional() ? "fails (optional; no variant loads)" : "FAILS (no variant loads)";
    if (used == role.variant) return "ok, used";
    return fails ? "fails (unused alternative)" : "ok (unused alternative)";
  }
  return fails ? "fails (optional)" : "ok";
}

}  // namespace

std::string_view not_counted_name(NotCounted why) {
  switch (why) {
    case NotCounted::No:
      return "";
    case NotCounted::Optional:
      return "optional";
    case NotCounted::UnusedAlternative:
      return "unused alternative";
  }
  return "";
}

ProgramOutcomes program_outcomes(const CheckRun& run, std::size_t o, std::size_t t, bool every_program) {
  ProgramOutcomes out;
  if (o >= run.programs.size() || !(every_program || run.programs[o].any_role())) return out;
  const ObjectPrograms& programs = run.programs[o];
  const ObjectOnTarget& cell = run.cells[o][t];
  const auto& refs = run.kernel_refs[o];
  const std::size_t relocations = run.objects[o]->relocations().size();
  auto relocation_fails_here = [&](std::size_t i) { return relocation_fails(run, cell.results[i], cell.dead[i]); };

  // Which programs fail, then which variant each group would use.
  out.fails.assign(programs.programs.size(), false);
  auto mark = [&](std::size_t p) {
    if (p != kWholeObject) out.fails[p] = true;
  };
  for (std::size_t i = 0; i < relocations; ++i)
    if (relocation_fails_here(i)) relocation_owners(run, o, cell, i, mark);
  for (std::size_t i = 0; i < refs.size() && i < cell.kernel_refs.size(); ++i)
    if (kernel_ref_fails(refs[i], cell.kernel_refs[i])) mark(kernel_ref_owner(run, o, i));
  out.used.assign(programs.groups.size(), ProgramOutcomes::kNoVariant);
  for (std::size_t g = 0; g < programs.groups.size(); ++g)
    for (std::uint32_t v = 0; v < programs.groups[g].variants.size() && out.used[g] == ProgramOutcomes::kNoVariant; ++v) {
      bool loads = true;
      for (std::size_t p = 0; p < programs.programs.size(); ++p)
        if (programs.programs[p].group == g && programs.programs[p].variant == v && out.fails[p]) loads = false;
      if (loads) out.used[g] = v;
    }

  // Then each failure: counted, or why not.
  out.relocations.assign(relocations, NotCounted::No);
  for (std::size_t i = 0; i < relocations; ++i) {
    if (!relocation_fails_here(i)) continue;
    Excuse e;
    relocation_owners(run, o, cell, i, [&](std::size_t p) { e.add(program_excuse(programs, out, p)); });
    out.relocations[i] = e.result();
    out.not_counted += out.relocations[i] != NotCounted::No;
  }
  out.kernel_refs.assign(refs.size(), NotCounted::No);
  for (std::size_t i = 0; i < refs.size() && i < cell.kernel_refs.size(); ++i) {
    if (!kernel_ref_fails(refs[i], cell.kernel_refs[i])) continue;
    out.kernel_refs[i] = program_excuse(programs, out, kernel_ref_owner(run, o, i));
    out.not_counted += out.kernel_refs[i] != NotCounted::No;
  }
  return out;
}

void print_program_roles(const CheckRun& run, std::size_t o, std::string_view shown, bool failures_only,
                         OutputBuffer& out) {
  if (o >= run.programs.size() || !run.programs[o].any_role()) return;
  const ObjectPrograms& programs = run.programs[o];
  const ProgramOutcomes outcomes = program_outcomes(run, o, 0);
  std::vector<std::size_t> listed;
  std::size_t nw = 7, rw = 4;
  for (std::size_t p = 0; p < programs.programs.size(); ++p) {
    const ProgramRole& role = programs.programs[p];
    if (!role.optional() && !role.alternative()) continue;
    if (failures_only && !outcomes.fails[p]) continue;
    listed.push_back(p);
    nw = std::max(nw, escape(role.name).size());
    rw = std::max(rw, role_text(programs, role).size());
  }
  if (!listed.empty()) {
    out.print("  {:<{}}  {:<{}}  {}\n", "PROGRAM", nw, "ROLE", rw, "RESULT");
    for (const std::size_t p : listed)
      out.print("  {:<{}}  {:<{}}  {}\n", escape(programs.programs[p].name), nw, role_text(programs, programs.programs[p]),
                rw, outcome_text(programs, outcomes, p));
  }
  std::size_t optional = 0;
  for (const ProgramRole& p : programs.programs) optional += p.optional();
  std::string roles;
  if (!programs.groups.empty())
    roles = fmt::format("{} alternatives group{}", programs.groups.size(), programs.groups.size() == 1 ? "" : "s");
  if (optional) roles += fmt::format("{}{} optional", roles.empty() ? "" : ", ", optional);
  out.print("{}: programs: {}; {} failure{} not counted\n", shown, roles, outcomes.not_counted,
            outcomes.not_counted == 1 ? "" : "s");
}

void json_programs(JsonWriter& j, const CheckRun& run, std::size_t o) {
  j.key("programs");
  j.begin_array();
  if (o < run.programs.size()) {
    const ObjectPrograms& programs = run.programs[o];
    std::vector<ProgramOutcomes> outcomes;
    for (std::size_t t = 0; t < run.targets.size(); ++t) outcomes.push_back(program_outcomes(run, o, t, true));
    for (std::size_t p = 0; p < programs.programs.size(); ++p) {
      const ProgramRole& role = programs.programs[p];
      j.begin_object();
      j.field("name", role.name);
      j.field("section", role.section);
      j.field("optional", role.optional());
      j.key("optional_by");
      role.optional() ? j.value(role.optional_by) : j.value(nullptr);
      j.key("alternatives");
      role.alternative() ? j.value(programs.groups[role.group].hook) : j.value(nullptr);
      j.key("variant");
      role.alternative() ? j.value(programs.groups[role.group].variants[role.variant]) : j.value(nullptr);
      j.key("results");
      j.begin_array();
      for (std::size_t t = 0; t < run.targets.size(); ++t) {
        const ProgramOutcomes& out = outcomes[t];
        j.begin_object();
        j.field("fails", static_cast<bool>(out.fails[p]));
        j.key("used");
        if (role.alternative())
          j.value(out.used[role.group] == role.variant);
        else
          j.value(nullptr);
        j.end_object();
      }
      j.end_array();
      j.end_object();
    }
  }
  j.end_array();
}

std::string not_counted_note(std::size_t not_counted) {
  if (not_counted == 0) return "";
  return fmt::format(" (and {} failure{} in optional programs or unused alternatives, not counted)", not_counted,
                     not_counted == 1 ? "" : "s");
}

}  // namespace btfslim
