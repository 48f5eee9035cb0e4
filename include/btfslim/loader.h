// What a loader resolves against kernel BTF besides CO-RE relocations, as libbpf 1.1.2 does on load:
//   kfunc       an `extern ... __ksym` function (a FUNC of extern linkage in DATASEC .ksyms): a kernel FUNC
//               of that name whose prototype is compatible (bpf_object__resolve_ksym_func_btf_id);
//   ksym        an `extern ... __ksym` variable of a type: a kernel VAR of that name and a compatible type
//               (bpf_object__resolve_ksym_var_btf_id); a typeless one (`extern const void x __ksym`) is
//               found in /proc/kallsyms, not in BTF;
//   attach      the target a tracing, LSM or iterator program's section names: fentry/F, fexit/F,
//               fmod_ret/F (and .s) a FUNC F, lsm/H (lsm.s, lsm_cgroup) a FUNC bpf_lsm_H, iter/T a FUNC
//               bpf_iter_T, tp_btf/T a TYPEDEF btf_trace_T (libbpf_find_attach_btf_id);
//   struct_ops  a variable of DATASEC .struct_ops of type struct X: the kernel has struct X and struct
//               bpf_struct_ops_X holding it, and every member the object's struct has, of the same kind and
//               size, function pointers where the object assigns a program (bpf_map__init_kern_struct_ops).
// The externs and struct_ops are looked up as libbpf does: kfuncs, ksyms and attach targets in the main
// BTF, then in module BTFs when it has none of that name; struct_ops in the main BTF only.
//
// Not decided from BTF, and reported as unchecked: typeless ksyms (kallsyms), a program whose section
// names no target (SEC("fentry"): its loader calls bpf_program__set_attach_target), and attach targets
// the user leaves out. Not modeled: what the verifier decides after BTF (whether a FUNC is a kfunc the
// program type may call, whether a function may be traced, sleepable or have its return modified, the
// calls a weak kfunc's absence leaves reachable), and freplace targets (BPF programs, not the kernel).
#pragma once

#include "btfslim/btf.h"
#include "btfslim/core.h"

#include <cstdint>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace btfslim {

enum class KernelRefKind : std::uint8_t { Kfunc, Ksym, Attach, StructOps };
// "kfunc", "ksym", "attach", "struct_ops".
std::string_view kernel_ref_kind_name(KernelRefKind kind);

// One thing an object needs the kernel's BTF to have.
struct KernelRef {
  KernelRefKind kind = KernelRefKind::Kfunc;
  std::string name;        // the extern; the attach target as the section names it; the struct_ops struct
  std::string lookup;      // the kernel type looked up: "bpf_lsm_file_open", "btf_trace_sched_switch", ...
  Kind lookup_kind = Kind::Func;
  std::string owner;       // attach: the program; struct_ops: the variable (libbpf's map); externs: ""
  std::string section;     // attach: the program's ELF section
  TypeId local_type = 0;   // kfunc: its FUNC_PROTO; ksym: its type past modifiers; struct_ops: the struct
  bool weak = false;       // an extern bound STB_WEAK: the kernel may lack it (libbpf then sets it to 0)
  bool autoload = true;    // attach: false for SEC("?..."), which libbpf does not load unless told to
  bool given = false;      // attach: the target came from --attach-target, not from the section
  std::string unchecked;   // why the file alone cannot decide it ("" when it can)
  std::vector<bool> members_set;  // struct_ops: per member of the local struct, set (non-zero or a program)
  std::vector<bool> members_prog; // struct_ops: per member, a program is assigned to it
  std::vector<std::string> member_programs;  // struct_ops: per member, the program assigned ("" for none)
};

// What check is told about attach targets.
struct AttachOptions {
  bool check = true;  // false (--no-attach): attach targets are reported, not decided
  // --attach-target PROG=FUNC: the target a loader gives PROG with bpf_program__set_attach_target, named
  // as that function takes it (without the section's prefix: file_open for an lsm program).
  std::vector<std::pair<std::string, std::string>> targets;
};

// The kernel references of an object, in the order: externs (symbol table order), attach targets
// (program order), struct_ops variables (DATASEC order). `used_targets`, where given, gets the indices of
// options.targets that named one of its programs.
std::vector<KernelRef> kernel_references(const BpfObject& object, const AttachOptions& options,
                                         std::vector<bool>* used_targets = nullptr);

enum class RefStatus : std::uint8_t {
  Ok,            // found, and compatible
  Absent,        // a weak extern the kernel lacks: set to 0, its calls must be unreachable
  Missing,       // the kernel has no such name (of that kind)
  Incompatible,  // found, but the types disagree (or struct_ops members do not fit)
  Unchecked,     // not decided by BTF (see KernelRef::unchecked)
};
// "ok", "absent", "missing", "incompatible", "unchecked".
std::string_view ref_status_name(RefStatus status);

struct KernelRefResult {
  RefStatus status = RefStatus::Ok;
  std::string target;  // what it resolved to: "[id] FUNC name", with " (MODULE)" for a module's
  std::string reason;  // why not ok (escaped, one line); also a note for some ok results
};

// Whether a result fails the load: missing or incompatible, for a program libbpf loads by default.
bool kernel_ref_fails(const KernelRef& ref, const KernelRefResult& result);

// The names a set of objects looks up, found by one pass over a target's types (not one per name):
// libbpf's btf__find_by_name_kind, the first type of that name and kind.
class KernelNameIndex {
 public:
  KernelNameIndex(const CoreTarget& target, std::span<const std::vector<KernelRef>> refs);

  struct Found {
    const Btf* btf = nullptr;
    TypeId id = 0;
    bool module = false;
  };
  // In the main BTF (with its base when split), else, with `modules`, the first module that has it.
  Found find(std::string_view name, Kind kind, bool modules) const;
  const CoreTarget& target() const { return *target_; }
  // Whether the main BTF describes a kernel's functions (holds a FUNC): a BTF for CO-RE only (a minimized
  // one, bpftool gen min_core_btf's, or types that are no kernel's) cannot say what the kernel lacks.
  bool has_functions() const { return has_functions_; }

 private:
  // (name, kind, which BTF: 0 the main one, i + 1 module i) -> the first id of that name and kind there.
  using Key = std::tuple<std::string_view, Kind, std::uint32_t>;
  const CoreTarget* target_;
  std::map<Key, TypeId> first_;
  bool has_functions_ = false;
};

// The programs of an object as its loader sees them (programs.cc): which it may leave out (--optional,
// SEC("?...")), and which are alternatives of one another. libbpf-tools and many tools built like them
// compile one handler several ways (fentry/F and kprobe/F, fexit/F and kretprobe/F, tp_btf/T and raw_tp/T)
// and turn all but one off before loading (bpf_program__set_autoload(false)): those programs hook the same
// kernel function (entry or exit) or tracepoint by different means, and form an alternatives group, which
// fails only when every variant does. Recognised by what the sections attach to, not by program names.
struct ProgramRole {
  std::string name;         // the program (its symbol)
  std::string section;      // its ELF section, as written
  std::string optional_by;  // the --optional glob that matched, "SEC(\"?...\")", or "" when required
  std::uint32_t group = UINT32_MAX;  // its alternatives group (ObjectPrograms::groups), or none
  std::uint32_t variant = 0;         // its variant in the group (0: the one a loader prefers)
  bool optional() const { return !optional_by.empty(); }
  bool alternative() const { return group != UINT32_MAX; }
};

struct AlternativesGroup {
  std::string hook;                   // "tcp_v4_connect entry", "tcp_v4_connect exit", "tracepoint sched_wakeup"
  std::vector<std::string> variants;  // how each variant attaches, in the order a loader prefers: "fentry", "kprobe"
};

struct ObjectPrograms {
  std::vector<ProgramRole> programs;  // symbol table order
  std::vector<AlternativesGroup> groups;
  // The program of that name, or SIZE_MAX (a subprogram, or no function).
  std::size_t find(std::string_view name) const;
  // Whether any program is optional or an alternative: otherwise every failure counts.
  bool any_role() const;
};

// The entry programs of `object` and their roles. `refs` (kernel_references) give the attach targets
// (those of --attach-target too); `optional` are fnmatch globs matched against each program's name and
// its section; `used_optional`, where given, gets the indices of the globs that matched a program.
ObjectPrograms object_programs(const BpfObject& object, std::span<const KernelRef> refs,
                               std::span<const std::string> optional, std::vector<bool>* used_optional = nullptr);

// Resolves an object's references (kernel_references) against the index's target, in order. Against a
// target without functions (KernelNameIndex::has_functions) every one is unchecked.
std::vector<KernelRefResult> resolve_kernel_refs(const BpfObject& object, std::span<const KernelRef> refs,
                                                 const KernelNameIndex& index);

}  // namespace btfslim
