// The programs of an object as its loader sees them: the ones it may leave out, and the ones that are
// alternatives of one another (loader.h).
//
// A tool that runs on kernels old and new often compiles one handler twice: as fentry/F, which needs F
// in the kernel's BTF and trampolines, and as kprobe/F, which needs neither; fexit/F beside kretprobe/F;
// tp_btf/T beside raw_tp/T (libbpf-tools' biolatency, tcpconnlat, fsslower, vfsstat...); kprobe.multi/F
// (one function, no pattern) as kprobe/F is; a syscall as ksyscall/NAME beside fentry or kprobe on its
// arch-specific function (__x64_sys_NAME), which libbpf's ksyscall attaches to. Before loading,
// its loader asks the kernel which one works (fentry_can_attach, probe_tp_btf) and turns the others off
// with bpf_program__set_autoload(false); libbpf then neither relocates nor loads them. The object
// fails only if every variant does.
//
// The variants are found by what they attach to, not by their names, which follow no rule
// (fentry_tcp_v4_connect beside tcp_v4_connect, file_read_fentry beside file_read_entry): programs of one
// object that hook the same kernel function at the same end, or the same tracepoint, by different means.
// Two programs of the same means on one hook are both loaded (two handlers), so a group needs two means
// at least. Not modeled: which variants a loader switches together (tcpconnlat turns every fentry program
// off at once, after asking about one function): each hook is decided on its own.
#include "btfslim/input.h"
#include "btfslim/loader.h"

#include <elf.h>
#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace btfslim {
namespace {

// How a section attaches, and what to: the hook's name and the means, ranked in the order loaders try
// them (the BTF-based means first: fentry_can_attach, probe_tp_btf).
struct Means {
  std::string_view prefix;  // the section's first part, as libbpf's section_defs spell it
  std::string_view hook;    // "entry", "exit", or "tracepoint"
  std::string_view name;    // the variant's name as the table shows it
  int rank;
  bool btf_target;  // the target comes from kernel_references (it may be given by --attach-target)
  int parts;        // how many '/'-separated parts the target has (tracepoint/CATEGORY/NAME: the last)
};
constexpr Means kMeans[] = {
    {"fentry", "entry", "fentry", 0, true, 1},        {"fentry.s", "entry", "fentry", 0, true, 1},
    {"kprobe", "entry", "kprobe", 1, false, 1},       {"fexit", "exit", "fexit", 0, true, 1},
    {"fexit.s", "exit", "fexit", 0, true, 1},         {"kretprobe", "exit", "kretprobe", 1, false, 1},
    {"tp_btf", "tracepoint", "tp_btf", 0, true, 1},   {"raw_tp", "tracepoint", "raw_tp", 1, false, 1},
    {"raw_tracepoint", "tracepoint", "raw_tp", 1, false, 1}, {"raw_tp.w", "tracepoint", "raw_tp", 1, false, 1},
    {"raw_tracepoint.w", "tracepoint", "raw_tp", 1, false, 1}, {"tp", "tracepoint", "tp", 2, false, 2},
    {"tracepoint", "tracepoint", "tp", 2, false, 2},
    {"kprobe.multi", "entry", "kprobe.multi", 1, false, 1}, {"kretprobe.multi", "exit", "kretprobe.multi", 1, false, 1},
    {"ksyscall", "entry", "ksyscall", 1, false, 1},   {"kretsyscall", "exit", "kretsyscall", 1, false, 1},
};

// The prefixes of a syscall's function, by architecture, as libbpf's ksyscall finds it ("sys_" on
// kernels without syscall wrappers).
constexpr std::string_view kSyscallPrefixes[] = {"__x64_sys_", "__ia32_sys_", "__arm64_sys_", "__s390x_sys_",
                                                 "__s390_sys_", "__arm_sys_", "__riscv_sys_", "__powerpc_sys_",
                                                 "__loongarch_sys_", "sys_"};

// What a hook on `target` by `means` hooks: "syscall NAME" for a syscall, whether named by ksyscall or by
// its function; the function itself otherwise.
std::string hook_target(const Means& means, std::string_view target) {
  if (means.prefix == "ksyscall" || means.prefix == "kretsyscall") return "syscall " + std::string(target);
  if (means.hook != "tracepoint")
    for (const std::string_view p : kSyscallPrefixes)
      if (target.starts_with(p) && target.size() > p.size()) return "syscall " + std::string(target.substr(p.size()));
  return std::string(target);
}

struct Hooked {
  const Means* means = nullptr;
  std::string target;  // the function or tracepoint
};

// What program `name` in `section` hooks, or no means when it is not one of the alternatives' kinds (or
// names no target: its loader chooses one).
Hooked hooked(std::string_view name, std::string_view section, std::span<const KernelRef> refs) {
  if (!section.empty() && section[0] == '?') section.remove_prefix(1);
  const auto slash = section.find('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view prefix = section.substr(0, slash);
  const auto m = std::find_if(std::begin(kMeans), std::end(kMeans), [&](const Means& x) { return x.prefix == prefix; });
  if (m == std::end(kMeans)) return {};
  std::string_view target = section.substr(slash + 1);
  if (m->parts == 2) {
    const auto last = target.rfind('/');
    if (last == std::string_view::npos) return {};
    target = target.substr(last + 1);
  }
  Hooked h{m, std::string(target)};
  if (m->btf_target)
    for (const KernelRef& r : refs)
      if (r.kind == KernelRefKind::Attach && r.owner == name) h.target = r.name;  // --attach-target's
  // kprobe/F+0x10 hooks inside F, not its entry; kprobe.multi/tcp_* hooks many functions.
  if (h.target.empty() || h.target.find_first_of("+*?[") != std::string::npos) return {};
  h.target = hook_target(*m, h.target);
  return h;
}

}  // namespace

std::size_t ObjectPrograms::find(std::string_view name) const {
  for (std::size_t i = 0; i < programs.size(); ++i)
    if (programs[i].name == name) return i;
  return SIZE_MAX;
}

bool ObjectPrograms::any_role() const {
  return std::any_of(programs.begin(), programs.end(),
                     [](const ProgramRole& p) { return p.optional() || p.alternative(); });
}

ObjectPrograms object_programs(const BpfObject& object, std::span<const KernelRef> refs,
                               std::span<const std::string> optional, std::vector<bool>* used_optional) {
  ObjectPrograms out;
  std::vector<Hooked> hooks;
  // The entry programs, as kernel_references finds them: functions in executable sections but .text.
  object.elf().for_each_symbol([&](const ElfFile::Symbol& sym) {
    if (sym.undefined || sym.type != STT_FUNC || !sym.executable || sym.section == ".text") return;
    ProgramRole p;
    p.name = std::string(sym.name);
    p.section = std::string(sym.section);
    for (std::size_t g = 0; g < optional.size(); ++g) {
      const std::string& glob = optional[g];
      if (fnmatch(glob.c_str(), p.name.c_str(), 0) != 0 && fnmatch(glob.c_str(), p.section.c_str(), 0) != 0) continue;
      if (used_optional) (*used_optional)[g] = true;
      if (p.optional_by.empty()) p.optional_by = "--optional " + glob;
    }
    if (p.optional_by.empty() && !p.section.empty() && p.section[0] == '?') p.optional_by = "SEC(\"?...\")";
    hooks.push_back(hooked(p.name, p.section, refs));
    out.programs.push_back(std::move(p));
  });

  // Programs by hook; a hook with two means or more is a group, each means a variant.
  std::map<std::pair<std::string_view, std::string>, std::vector<std::size_t>> by_hook;
  for (std::size_t i = 0; i < hooks.size(); ++i)
    if (hooks[i].means) by_hook[{hooks[i].means->hook, hooks[i].target}].push_back(i);
  std::vector<std::size_t> firsts;  // each group's first program, so that groups come in program order
  std::vector<const std::vector<std::size_t>*> members;
  for (const auto& [hook, programs] : by_hook) {
    const std::string_view first_means = hooks[programs.front()].means->name;
    if (std::all_of(programs.begin(), programs.end(), [&](std::size_t i) { return hooks[i].means->name == first_means; }))
      continue;
    firsts.push_back(programs.front());
    members.push_back(&programs);
  }
  std::vector<std::size_t> order(firsts.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return firsts[a] < firsts[b]; });
  for (const std::size_t k : order) {
    const std::vector<std::size_t>& programs = *members[k];
    const Hooked& h = hooks[programs.front()];
    AlternativesGroup group;
    group.hook = h.means->hook == "tracepoint" ? "tracepoint " + h.target : h.target + " " + std::string(h.means->hook);
    // Variants by rank, then in program order.
    std::vector<std::pair<int, std::string_view>> variants;
    for (const std::size_t i : programs) {
      const std::pair<int, std::string_view> v{hooks[i].means->rank, hooks[i].means->name};
      if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
    }
    std::stable_sort(variants.begin(), variants.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& v : variants) group.variants.emplace_back(v.second);
    const auto index = static_cast<std::uint32_t>(out.groups.size());
    for (const std::size_t i : programs) {
      out.programs[i].group = index;
      const auto at = std::find(group.variants.begin(), group.variants.end(), hooks[i].means->name);
      out.programs[i].variant = static_cast<std::uint32_t>(at - group.variants.begin());
    }
    out.groups.push_back(std::move(group));
  }
  return out;
}

}  // namespace btfslim
