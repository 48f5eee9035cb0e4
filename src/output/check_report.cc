// Printing `btfslim check`: a table of relocations for one target, a matrix of objects by targets for
// several, and JSON with one record per relocation either way.
#include "btfslim/check.h"
#include "btfslim/escape.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace btfslim {
namespace {

constexpr std::uint32_t kInsnSize = 8;

struct Where {
  std::string_view section, program;
  std::uint64_t insn_idx;
};

Where where(const BpfObject& obj, const CoreRelocation& r) {
  const ProgramSection& s = obj.sections()[r.section];
  if (const BpfFunction* f = obj.function_of(r)) return {s.name, f->name, (r.insn_off - f->offset) / kInsnSize};
  return {s.name, s.name, r.insn_off / kInsnSize};
}

struct Tally {
  std::size_t ok = 0, poisoned = 0, dead = 0, ambiguous = 0, error = 0;
  std::size_t failing = 0;
};

Tally tally(const CheckRun& run, const ObjectOnTarget& cell) {
  Tally t;
  for (std::size_t i = 0; i < cell.results.size(); ++i) {
    const CoreResult& r = cell.results[i];
    switch (r.status) {
      case CoreStatus::Ok:
        ++t.ok;
        break;
      case CoreStatus::Poisoned:
        ++(cell.dead[i] ? t.dead : t.poisoned);
        break;
      case CoreStatus::Ambiguous:
        ++t.ambiguous;
        break;
      case CoreStatus::Error:
        ++t.error;
        break;
    }
    if (relocation_fails(run, r, cell.dead[i])) ++t.failing;
  }
  return t;
}

std::string summary(const Tally& t) {
  std::string s = fmt::format("{} ok", t.ok);
  if (t.poisoned) s += fmt::format(", {} poisoned", t.poisoned);
  if (t.dead) s += fmt::format(", {} poisoned in dead code", t.dead);
  if (t.ambiguous) s += fmt::format(", {} ambiguous", t.ambiguous);
  if (t.error) s += fmt::format(", {} errors", t.error);
  return s;
}

// "no .BTF.ext", "no CO-RE relocations", or "".
std::string_view nothing_to_do(const BpfObject& obj) {
  if (!obj.has_ext()) return "no .BTF.ext: nothing to relocate";
  if (obj.relocations().empty()) return "no CO-RE relocations";
  return "";
}

std::string result_text(const CoreResult& r, bool dead) {
  switch (r.status) {
    case CoreStatus::Ok:
      if (r.target_size != r.local_size) return fmt::format("{} (size {} -> {})", r.value, r.local_size, r.target_size);
      return r.value == r.local_value ? fmt::format("{}", r.value) : fmt::format("{} (was {})", r.value, r.local_value);
    case CoreStatus::Poisoned:
      return dead ? "poisoned (dead code)" : "POISONED";
    case CoreStatus::Ambiguous:
      return "AMBIGUOUS";
    case CoreStatus::Error:
      return "ERROR";
  }
  return "";
}

void print_one_target(const CheckRun& run, OutputBuffer& out) {
  for (std::size_t o = 0; o < run.objects.size(); ++o) {
    const BpfObject& obj = *run.objects[o];
    const ObjectOnTarget& cell = run.cells[o][0];
    out.print("{} on {}\n", esc(obj.path()), esc(run.targets[0]));
    if (const auto note = nothing_to_do(obj); !note.empty()) {
      out.print("  {}\n", note);
      print_kernel_refs(run, o, out);
      out.put('\n');
      continue;
    }
    // Column widths from the rows, so that long accessors do not break the table. Programs and
    // accessors are named once each: an agent's thousands of relocations ask a few hundred questions.
    const auto relos = obj.relocations();
    std::vector<std::uint32_t> program_of(relos.size()), accessor_of(relos.size());
    std::vector<std::string> programs, accessors;
    std::unordered_map<std::string_view, std::uint32_t> program_ids;
    std::unordered_map<std::uint64_t, std::uint32_t> accessor_ids;
    std::size_t pw = 7, aw = 8;
    for (std::size_t i = 0; i < relos.size(); ++i) {
      const CoreRelocation& r = relos[i];
      auto [p, new_program] = program_ids.try_emplace(where(obj, r).program, static_cast<std::uint32_t>(programs.size()));
      if (new_program) {
        programs.push_back(escape(p->first));
        pw = std::max(pw, programs.back().size());
      }
      program_of[i] = p->second;
      const std::uint64_t question = std::uint64_t{r.local_type} << 36 | std::uint64_t{r.access_off} << 4 | r.kind;
      auto [a, new_accessor] = accessor_ids.try_emplace(question, static_cast<std::uint32_t>(accessors.size()));
      if (new_accessor) {
        accessors.push_back(describe_access(obj, r));
        aw = std::max(aw, accessors.back().size());
      }
      accessor_of[i] = a->second;
    }
    aw = std::min<std::size_t>(aw, 60);
    // Escaped names are ASCII: padded by their length, not by counting code points.
    static constexpr std::string_view kSpaces = "                                                                ";
    auto cell_at = [&out](std::string_view s, std::size_t width) {
      out.write(s);
      for (std::size_t n = s.size(); n < width; n += kSpaces.size()) out.write(kSpaces.substr(0, width - n));
    };
    out.write("  ");
    cell_at("PROGRAM", pw);
    out.write("   INSN  KIND            ");
    cell_at("ACCESSOR", aw);
    out.write("  RESULT                TARGET\n");
    for (std::size_t i = 0; i < relos.size(); ++i) {
      const CoreResult& r = cell.results[i];
      out.write("  ");
      cell_at(programs[program_of[i]], pw);
      out.print(FMT_COMPILE("  {:>5}  "), where(obj, relos[i]).insn_idx);
      cell_at(reloc_kind_name(relos[i].kind), 14);
      out.write("  ");
      cell_at(accessors[accessor_of[i]], aw);
      out.write("  ");
      cell_at(result_text(r, cell.dead[i]), 20);
      out.write("  ");
      out.write(cell.targets[i] == 0 ? "-" : cell.target_names[cell.targets[i]]);
      out.put('\n');
      if (!r.reason.empty() && r.status != CoreStatus::Ok) {
        cell_at("", pw + 11);
        out.write(r.reason);
        out.put('\n');
      }
    }
    out.print("{}: {} relocations: {}\n", esc(obj.path()), relos.size(), summary(tally(run, cell)));
    print_kernel_refs(run, o, out);
    out.put('\n');
    obj.release_pages();  // one object's pages at a time
  }
}

void print_matrix(const CheckRun& run, OutputBuffer& out) {
  std::vector<std::string> objects, targets;
  for (const auto& obj : run.objects) objects.push_back(escape(obj->path()));
  for (const auto& t : run.targets) targets.push_back(escape(t));
  std::size_t tw = 6;
  for (const std::string& t : targets) tw = std::max(tw, t.size());
  // One row per target (kernels outnumber objects in a btfhub tree), one column per object.
  out.print("{:<{}}", "TARGET", tw);
  for (const std::string& o : objects) out.print("  {:<{}}", o, std::max<std::size_t>(o.size(), 12));
  out.put('\n');
  for (std::size_t t = 0; t < run.targets.size(); ++t) {
    out.print("{:<{}}", targets[t], tw);
    for (std::size_t o = 0; o < run.objects.size(); ++o) {
      const BpfObject& obj = *run.objects[o];
      const Tally tl = tally(run, run.cells[o][t]);
      const std::size_t failing = tl.failing + kernel_refs_failing(run, o, run.cells[o][t]);
      const bool nothing = !nothing_to_do(obj).empty() && !kernel_refs_checked(run, o, run.cells[o][t]);
      std::string cell = nothing ? "-" : failing == 0 ? "ok" : fmt::format("{} failing", failing);
      out.print("  {:<{}}", cell, std::max<std::size_t>(objects[o].size(), 12));
    }
    out.put('\n');
  }
  // What fails where.
  for (std::size_t o = 0; o < run.objects.size(); ++o) {
    const BpfObject& obj = *run.objects[o];
    const auto relos = obj.relocations();
    for (std::size_t t = 0; t < run.targets.size(); ++t) {
      const ObjectOnTarget& cell = run.cells[o][t];
      bool header = false;
      for (std::size_t i = 0; i < relos.size(); ++i) {
        const CoreResult& r = cell.results[i];
        if (!relocation_fails(run, r, cell.dead[i])) continue;
        if (!header) out.print("\n{} on {}:\n", objects[o], targets[t]);
        header = true;
        const Where w = where(obj, relos[i]);
        out.print("  {} insn #{} {} {}: {}{}{}{}\n", esc(w.program), w.insn_idx, reloc_kind_name(relos[i].kind),
                  describe_access(obj, relos[i]), status_name(r.status),
                  cell.dead[i] ? " (in dead code)" : "", r.reason.empty() ? "" : ": ",
                  r.reason);
      }
      print_failing_kernel_refs(run, o, t, fmt::format("\n{} on {}:\n", objects[o], targets[t]), header, out);
    }
    obj.release_pages();  // one object's pages at a time
  }
}

void json_result(JsonWriter& j, const CheckRun& run, const ObjectOnTarget& cell, std::size_t i) {
  const CoreResult& r = cell.results[i];
  const bool dead = cell.dead[i];
  j.field("status", status_name(r.status));
  if (r.status == CoreStatus::Ok) j.field("value", r.value);
  j.field("local_value", r.local_value);
  if (r.target_size != r.local_size) {
    j.field("local_size", r.local_size);
    j.field("target_size", r.target_size);
  }
  if (!r.reason.empty()) j.field("reason", r.reason);
  if (r.status == CoreStatus::Poisoned) {
    j.field("reachable", !dead);
    // The programs that reach it: those whose load it fails.
    const auto it = std::lower_bound(cell.reached_from.begin(), cell.reached_from.end(), i,
                                     [](const auto& entry, std::size_t k) { return entry.first < k; });
    if (it != cell.reached_from.end() && it->first == i) {
      j.key("programs");
      j.begin_array();
      for (const std::string_view p : it->second) j.value(p);
      j.end_array();
    }
  }
  j.field("fails", relocation_fails(run, r, dead));
  j.key("targets");
  j.begin_array();
  for (const TargetSpec& m : r.matches) j.value(std::uint64_t{m.root});
  j.end_array();
}

}  // namespace

std::string describe_targets(const CoreResult& r) {
  std::string s;
  for (const TargetSpec& m : r.matches) {
    if (!s.empty()) s += ", ";
    const std::uint32_t off = m.root ? m.btf->type(m.root).name_off() : 0;
    s += fmt::format("[{}]", m.root);
    if (off) s += fmt::format(" {}", esc(m.btf->str(off)));
  }
  return s;
}

void mark_reachability(ObjectOnTarget& cell, const BpfCode* code) {
  cell.dead.assign(cell.results.size(), false);
  cell.reached_from.clear();
  if (!code) return;
  const Reachability reach = reachability(*code, cell.results);
  for (std::size_t i = 0; i < cell.results.size(); ++i) cell.dead[i] = !reach.reached[i];
  for (std::size_t p = 0; p < reach.programs.size(); ++p)
    for (const std::uint32_t i : reach.programs[p].relocations)
      if (cell.results[i].status == CoreStatus::Poisoned) {
        auto it = std::lower_bound(cell.reached_from.begin(), cell.reached_from.end(), std::size_t{i},
                                   [](const auto& entry, std::size_t k) { return entry.first < k; });
        if (it == cell.reached_from.end() || it->first != i) it = cell.reached_from.insert(it, {i, {}});
        it->second.push_back(code->programs()[p].name);
      }
}

bool relocation_fails(const CheckRun& run, const CoreResult& result, bool dead) {
  if (result.status == CoreStatus::Ok) return false;
  return !(result.status == CoreStatus::Poisoned && dead && !run.strict);
}

bool check_failed(const CheckRun& run) {
  for (std::size_t o = 0; o < run.objects.size(); ++o)
    for (const ObjectOnTarget& cell : run.cells[o])
      for (std::size_t i = 0; i < cell.results.size(); ++i)
        if (relocation_fails(run, cell.results[i], cell.dead[i])) return true;
  for (std::size_t o = 0; o < run.objects.size(); ++o)
    for (const ObjectOnTarget& cell : run.cells[o])
      if (kernel_refs_failing(run, o, cell) != 0) return true;
  return false;
}

void print_check_table(const CheckRun& run, OutputBuffer& out) {
  if (run.targets.size() == 1)
    print_one_target(run, out);
  else
    print_matrix(run, out);
}

void print_check_json(const CheckRun& run, OutputBuffer& out) {
  JsonWriter j(out);
  const bool many = run.targets.size() != 1;
  j.begin_object();
  if (many) {
    j.key("targets");
    j.begin_array();
    for (const auto& t : run.targets) j.value(t);
    j.end_array();
  } else {
    j.field("target", run.targets[0]);
  }
  j.key("objects");
  j.begin_array();
  for (std::size_t o = 0; o < run.objects.size(); ++o) {
    const BpfObject& obj = *run.objects[o];
    j.begin_object();
    j.field("object", obj.path());
    j.field("has_btf_ext", obj.has_ext());
    if (const auto note = nothing_to_do(obj); !note.empty()) j.field("note", note);
    j.key("relocations");
    j.begin_array();
    const auto relos = obj.relocations();
    for (std::size_t i = 0; i < relos.size(); ++i) {
      const CoreRelocation& r = relos[i];
      const Where w = where(obj, r);
      j.begin_object();
      j.field("object", obj.path());
      j.field("section", w.section);
      j.field("program", w.program);
      j.field("relo_idx", r.index);
      j.field("insn_off", r.insn_off);
      j.field("insn_idx", w.insn_idx);
      j.field("kind", reloc_kind_name(r.kind));
      j.field("local_type_id", r.local_type);
      j.field("access", obj.access(r));
      j.field("accessor", describe_access(obj, r));
      if (many) {
        j.key("results");
        j.begin_array();
        for (std::size_t t = 0; t < run.targets.size(); ++t) {
          j.begin_object();
          j.field("target", run.targets[t]);
          json_result(j, run, run.cells[o][t], i);
          j.end_object();
        }
        j.end_array();
      } else {
        json_result(j, run, run.cells[o][0], i);
      }
      j.end_object();
    }
    j.end_array();
    json_kernel_refs(j, run, o);
    j.end_object();
    obj.release_pages();  // one object's pages at a time
  }
  j.end_array();
  j.field("failed", check_failed(run));
  j.end_object();
  j.finish();
}

}  // namespace btfslim
