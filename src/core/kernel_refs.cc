// The kernel references of a BPF object (kfunc and ksym externs, attach targets, struct_ops maps) and
// their resolution against a target, as libbpf 1.1.2's load does: bpf_object__collect_externs and
// bpf_object__resolve_ksyms_btf_id for the externs, libbpf_prepare_prog_load and find_kernel_btf_id for
// attach targets, bpf_map__init_kern_struct_ops for struct_ops maps.
//
// Reading them takes the ELF symbol table (externs are undefined symbols, global or weak, of no type;
// programs are the functions of executable sections other than .text), the object's BTF (the extern's
// FUNC or VAR and the DATASEC that holds it, the struct_ops variables and their structs) and, for
// struct_ops, the section's bytes and relocations (which members the object sets).
//
// Resolving them is name lookups of a kind and libbpf's relaxed type compatibility
// (core_types_are_compat). libbpf stops at the first failure; we go on, so that every problem shows,
// and we list every member of a struct_ops struct that does not fit, not just the first.
#include "btfslim/escape.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/loader.h"
#include "btfslim/name_prefixes.h"
#include "btfslim/targets.h"
#include "spec.h"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace btfslim {
namespace {

constexpr std::string_view kKsymsSection = ".ksyms";
constexpr std::string_view kStructOpsValuePrefix = "bpf_struct_ops_";
// libbpf 1.1 reads .struct_ops; later versions also .struct_ops.link (maps that a link attaches).
constexpr std::string_view kStructOpsSections[] = {".struct_ops", ".struct_ops.link"};

// The sections of libbpf's section_defs whose programs need a BTF attach target (SEC_ATTACH_BTF), with
// the prefix and kind libbpf's btf_get_kernel_prefix_kind gives their attach type. Each matches its name
// exactly or followed by '/' and the target ("type+" in libbpf).
struct AttachSection {
  std::string_view name;
  std::string_view prefix;
  Kind kind;
};
constexpr AttachSection kAttachSections[] = {
    {"tp_btf", "btf_trace_", Kind::Typedef},
    {"fentry", "", Kind::Func},
    {"fmod_ret", "", Kind::Func},
    {"fexit", "", Kind::Func},
    {"fentry.s", "", Kind::Func},
    {"fmod_ret.s", "", Kind::Func},
    {"fexit.s", "", Kind::Func},
    {"lsm", "bpf_lsm_", Kind::Func},
    {"lsm.s", "bpf_lsm_", Kind::Func},
    {"lsm_cgroup", "bpf_lsm_", Kind::Func},
    {"iter", "bpf_iter_", Kind::Func},
    {"iter.s", "bpf_iter_", Kind::Func},
};

const AttachSection* attach_section(std::string_view section) {
  for (const AttachSection& a : kAttachSections) {
    if (section.substr(0, a.name.size()) != a.name) continue;
    if (section.size() == a.name.size() || section[a.name.size()] == '/') return &a;
  }
  return nullptr;
}

// A type as a reader of C would name it, past modifiers and typedefs: "struct rq", "int", "pointer",
// "void", "function prototype"; escaped.
std::string c_label(const Btf& btf, TypeId id) {
  TypeId resolved = id;
  if (!core::skip_mods_and_typedefs(btf, id, resolved)) return "a typedef loop";
  if (resolved == 0) return "void";
  const TypeView t = btf.type(resolved);
  const std::string_view name = btf.str(t.name_off());
  switch (t.kind()) {
    case Kind::Ptr:
      return "a pointer";
    case Kind::Array:
      return "an array";
    case Kind::FuncProto:
      return "a function prototype";
    case Kind::Int:
    case Kind::Float:
      return fmt::format("{}", esc(name));
    default:
      return name.empty() ? fmt::format("{} (anon)", core::kind_word(t.kind()))
                          : fmt::format("{} {}", core::kind_word(t.kind()), esc(name));
  }
}

// Where two types libbpf finds incompatible first differ, for the reason: the parameter count, the
// first parameter that does not fit, or the return type.
std::string explain_incompatible(core::Context& cx, const Btf& lb, TypeId lid, const Btf& tb, TypeId tid) {
  TypeId l = lid, t = tid;
  if (core::skip_mods_and_typedefs(lb, lid, l) && core::skip_mods_and_typedefs(tb, tid, t) && l && t &&
      lb.type(l).kind() == Kind::FuncProto && tb.type(t).kind() == Kind::FuncProto) {
    const TypeView lp = lb.type(l), tp = tb.type(t);
    if (lp.vlen() != tp.vlen()) return fmt::format("{} parameters here, {} in the kernel", lp.vlen(), tp.vlen());
    for (unsigned i = 0; i < lp.vlen(); ++i) {
      TypeId a = 0, b = 0;
      if (!core::skip_mods_and_typedefs(lb, lp.param(i).type, a) || !core::skip_mods_and_typedefs(tb, tp.param(i).type, b))
        break;
      if (core::core_types_are_compat(cx, lb, a, tb, b) > 0) continue;
      const std::string_view pname = tb.str(tp.param(i).name_off);
      return fmt::format("parameter {}{}{}: {} here, {} in the kernel", i + 1, pname.empty() ? "" : " ",
                         esc(pname), c_label(lb, a), c_label(tb, b));
    }
    return fmt::format("returns {} here, {} in the kernel", c_label(lb, lp.ref()), c_label(tb, tp.ref()));
  }
  return fmt::format("{} here, {} in the kernel", c_label(lb, lid), c_label(tb, tid));
}

// The externs of .ksyms, symbol by symbol (ElfFile::for_each_symbol, in table order).
class Externs {
 public:
  explicit Externs(const BpfObject& object) : btf_(object.btf()) {}

  void add(const ElfFile::Symbol& sym, std::vector<KernelRef>& out) {
    if (!sym.undefined || sym.type != STT_NOTYPE || (sym.binding != STB_GLOBAL && sym.binding != STB_WEAK)) return;
    index();
    const auto found = by_name_.find(sym.name);
    // .kconfig externs come from the kernel's config, not its BTF; an extern without BTF or in another
    // section fails libbpf's open, whatever the kernel.
    if (found == by_name_.end()) return;
    const auto sec = datasec_of_.find(found->second);
    if (sec == datasec_of_.end() || sec->second != kKsymsSection) return;
    const Btf& btf = btf_;
    const TypeView t = btf.type(found->second);
    KernelRef ref;
    ref.kind = t.kind() == Kind::Func ? KernelRefKind::Kfunc : KernelRefKind::Ksym;
    ref.name = std::string(sym.name);
    ref.lookup = ref.name;
    ref.lookup_kind = t.kind();
    ref.weak = sym.binding == STB_WEAK;
    if (!core::skip_mods_and_typedefs(btf, t.ref(), ref.local_type)) return;
    if (ref.kind == KernelRefKind::Ksym && ref.local_type == 0)
      ref.unchecked = "typeless ksym: libbpf finds its address in /proc/kallsyms, not in BTF";
    out.push_back(std::move(ref));
  }

 private:
  // The object's FUNC or VAR an extern symbol names (libbpf's find_extern_btf_id: the first of either
  // kind), and the DATASEC that holds it: one pass each, not one per extern, made at the first extern.
  void index() {
    if (indexed_) return;
    indexed_ = true;
    for (TypeId id = 1; id < btf_.end_id(); ++id) {
      const TypeView t = btf_.type(id);
      if (t.kind() == Kind::Var || t.kind() == Kind::Func) by_name_.emplace(btf_.str(t.name_off()), id);
      if (t.kind() == Kind::Datasec)
        for (unsigned i = 0; i < t.vlen(); ++i) datasec_of_[t.secinfo(i).type] = btf_.str(t.name_off());
    }
  }

  const Btf& btf_;
  bool indexed_ = false;
  std::unordered_map<std::string_view, TypeId> by_name_;
  std::unordered_map<TypeId, std::string_view> datasec_of_;
};

void add_attach_target(const ElfFile::Symbol& sym, const AttachOptions& options, std::vector<bool>* used,
                       std::vector<KernelRef>& out) {
  if (sym.undefined || sym.type != STT_FUNC || !sym.executable || sym.section == ".text") return;
  std::string_view section = sym.section;
  const bool autoload = section.empty() || section[0] != '?';
  if (!autoload) section.remove_prefix(1);
  const AttachSection* def = attach_section(section);
  KernelRef ref;
  ref.kind = KernelRefKind::Attach;
  ref.owner = std::string(sym.name);
  ref.section = std::string(sym.section);
  ref.autoload = autoload;
  for (std::size_t i = 0; i < options.targets.size(); ++i) {
    if (options.targets[i].first != sym.name) continue;
    if (!def)
      fail("--attach-target", "program '{}' (section '{}') has no BTF attach target", esc(sym.name),
           esc(sym.section));
    if (used) (*used)[i] = true;
    ref.name = options.targets[i].second;
    ref.given = true;
  }
  if (!def) return;
  if (!ref.given && section.size() > def->name.size()) ref.name = std::string(section.substr(def->name.size() + 1));
  ref.lookup_kind = def->kind;
  if (!options.check) {
    ref.unchecked = "attach targets left out (--no-attach)";
  } else if (ref.name.empty()) {
    ref.unchecked = fmt::format(
        "section '{}' names no target: its loader sets one (bpf_program__set_attach_target); "
        "name it with --attach-target {}=FUNC",
        esc(section), esc(sym.name));
  }
  ref.lookup = ref.name.empty() ? "" : std::string(def->prefix) + ref.name;
  out.push_back(std::move(ref));
}

void add_struct_ops(const BpfObject& object, std::vector<KernelRef>& out) {
  const Btf& btf = object.btf();
  core::Context cx;
  std::vector<ElfFile::TableSymbol> symbols;  // read where a struct_ops section has relocations
  for (TypeId id = 1; id < btf.end_id(); ++id) {
    const TypeView sec = btf.type(id);
    if (sec.kind() != Kind::Datasec) continue;
    const std::string_view sec_name = btf.str(sec.name_off());
    if (std::find(std::begin(kStructOpsSections), std::end(kStructOpsSections), sec_name) ==
        std::end(kStructOpsSections))
      continue;
    const auto data = object.elf().section(sec_name);
    // Where a program's address is patched in, and which: by offset.
    std::vector<ElfFile::Relocation> relocated = object.elf().relocations_of(sec_name);
    std::stable_sort(relocated.begin(), relocated.end(),
                     [](const ElfFile::Relocation& a, const ElfFile::Relocation& b) { return a.offset < b.offset; });
    if (!relocated.empty() && symbols.empty()) symbols = object.elf().symbol_table();
    for (unsigned i = 0; i < sec.vlen(); ++i) {
      const VarSecInfo vsi = sec.secinfo(i);
      const TypeView var = btf.type(vsi.type);
      if (var.kind() != Kind::Var) continue;
      TypeId struct_id = 0;
      // libbpf's btf__resolve_type and its checks at open: a named struct, or the object does not open.
      if (!core::skip_mods_and_typedefs(btf, var.ref(), struct_id) || struct_id == 0) continue;
      const TypeView st = btf.type(struct_id);
      if (st.kind() != Kind::Struct || st.name_off() == 0) continue;
      KernelRef ref;
      ref.kind = KernelRefKind::StructOps;
      ref.name = std::string(btf.str(st.name_off()));
      ref.lookup = ref.name;
      ref.lookup_kind = Kind::Struct;
      ref.owner = std::string(btf.str(var.name_off()));
      ref.section = std::string(sec_name);
      ref.local_type = struct_id;
      for (unsigned m = 0; m < st.vlen(); ++m) {
        const Member member = st.member(m);
        const std::uint64_t begin = vsi.offset + st.member_bit_offset(member) / 8;
        const std::int64_t size = core::resolve_size(cx, btf, member.type);
        const auto at = std::lower_bound(relocated.begin(), relocated.end(), begin,
                                         [](const ElfFile::Relocation& r, std::uint64_t k) { return r.offset < k; });
        const bool prog = at != relocated.end() && at->offset == begin;
        bool set = prog;
        if (data && size > 0 && begin + static_cast<std::uint64_t>(size) <= data->size())
          set = set || std::any_of(data->begin() + static_cast<std::ptrdiff_t>(begin),
                                   data->begin() + static_cast<std::ptrdiff_t>(begin + static_cast<std::uint64_t>(size)),
                                   [](std::uint8_t b) { return b != 0; });
        ref.members_set.push_back(set);
        ref.members_prog.push_back(prog);
        ref.member_programs.emplace_back(prog && at->symbol < symbols.size() ? symbols[at->symbol].name : "");
      }
      out.push_back(std::move(ref));
    }
  }
}

KernelRefResult missing(const KernelRef& ref, std::string what) {
  KernelRefResult r;
  if (ref.weak) {
    r.status = RefStatus::Absent;
    r.reason = what + ": weak, so libbpf sets it to 0 (its uses must be unreachable)";
  } else {
    r.status = RefStatus::Missing;
    r.reason = std::move(what);
    if (!ref.autoload) r.reason += "; SEC(\"?...\"): libbpf loads the program only when its loader turns autoload on";
  }
  return r;
}

std::string describe(const KernelNameIndex::Found& f) {
  const TypeView t = f.btf->type(f.id);
  std::string s = fmt::format("[{}] {} {}", f.id, kind_name(t.kind()), esc(f.btf->str(t.name_off())));
  if (f.module) s += fmt::format(" ({})", esc(module_name(f.btf->name())));
  return s;
}

KernelRefResult resolve_extern(core::Context& cx, const BpfObject& object, const KernelRef& ref,
                               const KernelNameIndex& index) {
  const bool func = ref.kind == KernelRefKind::Kfunc;
  const auto f = index.find(ref.lookup, func ? Kind::Func : Kind::Var, true);
  if (!f.btf)
    return missing(ref, fmt::format("no {} '{}' in the kernel's BTF{}", func ? "FUNC" : "VAR", esc(ref.lookup),
                                    index.target().modules().empty() ? "" : " or its modules'"));
  KernelRefResult r;
  r.target = describe(f);
  TypeId kernel_type = 0;
  if (!core::skip_mods_and_typedefs(*f.btf, f.btf->type(f.id).ref(), kernel_type)) kernel_type = 0;
  if (core::core_types_are_compat(cx, object.btf(), ref.local_type, *f.btf, kernel_type) > 0) {
    // What BTF does not decide: the verifier takes a typed ksym's address from kallsyms.
    if (!func) r.reason = "the kernel also needs its address in kallsyms (data symbols: CONFIG_KALLSYMS_ALL)";
    return r;
  }
  r.status = RefStatus::Incompatible;
  r.reason = fmt::format("{} [{}] incompatible with the kernel's [{}]: {}", func ? "func_proto" : "type", ref.local_type,
                         kernel_type, explain_incompatible(cx, object.btf(), ref.local_type, *f.btf, kernel_type));
  return r;
}

constexpr std::string_view kPlaceholderPrefix = "dummy_";

KernelRefResult resolve_attach(const KernelRef& ref, const KernelNameIndex& index) {
  const auto f = index.find(ref.lookup, ref.lookup_kind, true);
  if (!f.btf) {
    // libbpf-tools' placeholders (fsslower's fentry/dummy_file_read): a name no kernel has, which the loader
    // always replaces (bpf_program__set_attach_target) with one it chose at run time.
    if (!ref.given && ref.name.starts_with(kPlaceholderPrefix))
      return {RefStatus::Unchecked, "",
              fmt::format("'{}' is a placeholder: its loader sets the target at run time "
                          "(bpf_program__set_attach_target); name it with --attach-target {}=FUNC",
                          esc(ref.name), esc(ref.owner))};
    std::string what = fmt::format("no {} '{}' in the kernel's BTF{}", kind_name(ref.lookup_kind), esc(ref.lookup),
                                   index.target().modules().empty() ? "" : " or its modules'");
    if (!ref.given) what += fmt::format(" (a target set at run time? --attach-target {}=FUNC)", esc(ref.owner));
    return missing(ref, std::move(what));
  }
  KernelRefResult r;
  r.target = describe(f);
  return r;
}

KernelRefResult resolve_struct_ops(core::Context& cx, const BpfObject& object, const KernelRef& ref,
                                   const KernelNameIndex& index) {
  const auto kt = index.find(ref.lookup, Kind::Struct, false);
  if (!kt.btf) return missing(ref, fmt::format("no struct '{}' in the kernel's BTF", esc(ref.lookup)));
  const std::string value_name = std::string(kStructOpsValuePrefix) + ref.lookup;
  const auto vt = index.find(value_name, Kind::Struct, false);
  if (!vt.btf)
    return missing(ref, fmt::format("no struct '{}' in the kernel's BTF: the kernel has no struct_ops of this type",
                                    esc(value_name)));
  KernelRefResult r;
  r.target = describe(kt);
  const Btf& kb = *kt.btf;
  const TypeView value = kb.type(vt.id);
  bool holds = false;
  for (unsigned i = 0; i < value.vlen() && !holds; ++i) holds = value.member(i).type == kt.id;
  if (!holds) {
    r.status = RefStatus::Incompatible;
    r.reason = fmt::format("struct '{}' holds no struct '{}'", esc(value_name), esc(ref.lookup));
    return r;
  }

  const Btf& lb = object.btf();
  const TypeView local = lb.type(ref.local_type);
  const TypeView kernel = kb.type(kt.id);
  std::vector<std::string> problems;
  for (unsigned i = 0; i < local.vlen(); ++i) {
    const Member m = local.member(i);
    const std::string_view name = lb.str(m.name_off);
    int found = -1;
    for (unsigned k = 0; k < kernel.vlen() && found < 0; ++k)
      if (kb.str(kernel.member(k).name_off) == name) found = static_cast<int>(k);
    if (found < 0) {
      problems.push_back(fmt::format("member '{}' is not in the kernel's struct ({})", esc(name),
                                     ref.members_set[i] ? "the object sets it"
                                                        : "left zero: libbpf 1.4 and later skip it, 1.1 refuses it"));
      continue;
    }
    const Member km = kernel.member(static_cast<unsigned>(found));
    if (local.member_bitfield_size(m) || kernel.member_bitfield_size(km)) {
      problems.push_back(fmt::format("member '{}' is a bitfield", esc(name)));
      continue;
    }
    TypeId lt = 0, kt_id = 0;
    if (!core::skip_mods_and_typedefs(lb, m.type, lt) || !core::skip_mods_and_typedefs(kb, km.type, kt_id)) continue;
    const Kind lk = core::kind_of(lb, lt), kk = core::kind_of(kb, kt_id);
    if (lk != kk) {
      problems.push_back(fmt::format("member '{}' is {} here, {} in the kernel", esc(name), c_label(lb, lt),
                                     c_label(kb, kt_id)));
      continue;
    }
    if (lk == Kind::Ptr) {
      TypeId pointee = 0;
      if (ref.members_prog[i] && core::skip_mods_and_typedefs(kb, kb.type(kt_id).ref(), pointee) &&
          core::kind_of(kb, pointee) != Kind::FuncProto)
        problems.push_back(fmt::format("member '{}' is assigned a program but is not a function pointer in the kernel",
                                       esc(name)));
      continue;
    }
    const std::int64_t ls = core::resolve_size(cx, lb, lt), ks = core::resolve_size(cx, kb, kt_id);
    if (ls < 0 || ks < 0 || ls != ks)
      problems.push_back(fmt::format("member '{}' is {} bytes here, {} in the kernel", esc(name), ls, ks));
  }
  if (!problems.empty()) {
    r.status = RefStatus::Incompatible;
    for (const std::string& p : problems) r.reason += (r.reason.empty() ? "" : "; ") + p;
  }
  return r;
}

}  // namespace

std::string_view kernel_ref_kind_name(KernelRefKind kind) {
  switch (kind) {
    case KernelRefKind::Kfunc:
      return "kfunc";
    case KernelRefKind::Ksym:
      return "ksym";
    case KernelRefKind::Attach:
      return "attach";
    case KernelRefKind::StructOps:
      return "struct_ops";
  }
  return "unknown";
}

std::string_view ref_status_name(RefStatus status) {
  switch (status) {
    case RefStatus::Ok:
      return "ok";
    case RefStatus::Absent:
      return "absent";
    case RefStatus::Missing:
      return "missing";
    case RefStatus::Incompatible:
      return "incompatible";
    case RefStatus::Unchecked:
      return "unchecked";
  }
  return "unknown";
}

std::vector<KernelRef> kernel_references(const BpfObject& object, const AttachOptions& options,
                                         std::vector<bool>* used_targets) {
  std::vector<KernelRef> refs;
  // The externs, then the programs' attach targets: two walks of the symbol table, no list of it.
  Externs externs(object);
  object.elf().for_each_symbol([&](const ElfFile::Symbol& sym) { externs.add(sym, refs); });
  object.elf().for_each_symbol([&](const ElfFile::Symbol& sym) { add_attach_target(sym, options, used_targets, refs); });
  add_struct_ops(object, refs);
  return refs;
}

bool kernel_ref_fails(const KernelRef& ref, const KernelRefResult& result) {
  if (result.status != RefStatus::Missing && result.status != RefStatus::Incompatible) return false;
  return ref.autoload;
}

KernelNameIndex::KernelNameIndex(const CoreTarget& target, std::span<const std::vector<KernelRef>> refs)
    : target_(&target) {
  std::unordered_set<std::string> wanted;
  // The kinds looked up (find()'s callers): each reference's own, a function or variable for an
  // extern, a struct for struct_ops.
  std::uint32_t kinds = 0;
  auto want = [&kinds](Kind k) { kinds |= 1u << static_cast<unsigned>(k); };
  for (const auto& list : refs)
    for (const KernelRef& r : list) {
      if (r.lookup.empty()) continue;
      wanted.insert(r.lookup);
      want(r.lookup_kind);
      if (r.kind == KernelRefKind::Kfunc || r.kind == KernelRefKind::Ksym) want(Kind::Func), want(Kind::Var);
      if (r.kind == KernelRefKind::StructOps) {
        wanted.insert(std::string(kStructOpsValuePrefix) + r.lookup);
        want(Kind::Struct);
      }
    }
  if (wanted.empty()) return;
  std::unordered_set<std::string_view> names(wanted.begin(), wanted.end());
  NamePrefixes prefixes;
  for (const std::string_view n : names) prefixes.add(n);
  // The main BTF whole (a split one with its base), each module for its own types.
  auto add_from = [&](std::uint32_t which) {
    return [&, which](const Btf&, TypeId id, Kind kind, const char* raw) {
      if (!prefixes.may_hold(raw)) return;
      if (const std::string_view name(raw); names.count(name)) first_.emplace(Key{name, kind, which}, id);
    };
  };
  for_each_named_record_with_bases(target.main(), kinds, add_from(0));
  for (std::size_t i = 0; i < target.modules().size(); ++i)
    for_each_named_record(*target.modules()[i], kinds, add_from(static_cast<std::uint32_t>(i + 1)));
  // Whether the main BTF has functions at all (a kernel's first is near its start).
  for (TypeId id = 1; id < target.main().end_id() && !has_functions_; ++id)
    has_functions_ = target.main().type(id).kind() == Kind::Func;
}

KernelNameIndex::Found KernelNameIndex::find(std::string_view name, Kind kind, bool modules) const {
  if (auto it = first_.find(Key{name, kind, 0}); it != first_.end()) return {&target_->main(), it->second, false};
  if (!modules) return {};
  for (std::size_t i = 0; i < target_->modules().size(); ++i)
    if (auto it = first_.find(Key{name, kind, static_cast<std::uint32_t>(i + 1)}); it != first_.end())
      return {target_->modules()[i].get(), it->second, true};
  return {};
}

std::vector<KernelRefResult> resolve_kernel_refs(const BpfObject& object, std::span<const KernelRef> refs,
                                                 const KernelNameIndex& index) {
  core::Context cx;
  std::vector<KernelRefResult> out;
  for (const KernelRef& ref : refs) {
    cx.reset_work();
    if (!ref.unchecked.empty()) {
      out.push_back({RefStatus::Unchecked, "", ref.unchecked});
      continue;
    }
    if (!index.has_functions()) {
      out.push_back({RefStatus::Unchecked, "",
                     "the target has no FUNC: a BTF for CO-RE only (minimized, or no kernel's), which cannot say "
                     "what the kernel lacks"});
      continue;
    }
    switch (ref.kind) {
      case KernelRefKind::Kfunc:
      case KernelRefKind::Ksym:
        out.push_back(resolve_extern(cx, object, ref, index));
        break;
      case KernelRefKind::Attach:
        out.push_back(resolve_attach(ref, index));
        break;
      case KernelRefKind::StructOps:
        out.push_back(resolve_struct_ops(cx, object, ref, index));
        break;
    }
  }
  return out;
}

}  // namespace btfslim
