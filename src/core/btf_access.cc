// The loads a program makes through pointers the verifier types by the kernel's BTF (btf_access.h).
//
// Each program that is handed typed pointers is walked as the verifier walks it (verifier_walk.h: every
// path, with the object's relocated values on the kernel, constants deciding branches), with the state
// carrying where each register's typed pointer comes from:
// - the context: a tracing, LSM, iterator or struct_ops program's arguments are the u64 slots of its
//   attach target's prototype (btf_ctx_access: a struct-by-value argument takes as many slots as it
//   has 8-byte words), the return value after them for fexit and fmod_ret; a pointer to a struct or
//   union is typed by it. A netfilter program's context is struct bpf_nf_ctx's two pointers;
// - helpers that return typed pointers (bpf_get_current_task_btf, bpf_skc_to_*, bpf_sock_from_file,
//   bpf_task_pt_regs, bpf_per_cpu_ptr and bpf_this_cpu_ptr of a typed per-CPU ksym), by the type their
//   prototypes name;
// - kfuncs whose kernel prototype returns a pointer to a struct, bpf_rdonly_cast (the type its second
//   argument names) and bpf_cast_to_kern_ctx (the program's kernel context);
// - typed ksyms (`extern struct T x __ksym`, a per-CPU one usable through bpf_per_cpu_ptr);
// - pointer members loaded through any of those (the kernel's walk says which struct they point to).
// A typed pointer moved by a constant stays typed; spilled to the stack and filled back, it is the same
// pointer. Every load through one is walked on the kernel's BTF (walk_struct) once per distinct
// (struct, offset, size), and recorded with the first program and instruction that makes it.
//
// Where a typed pointer's offset is not followed (moved by a value the walk does not know), or states
// holding typed pointers are merged past the walk's budget, the struct is recorded as unfollowed: its
// caller keeps it whole. Not followed at all, and not seen: typed pointers handed to callbacks
// (bpf_find_vma's task and vma), global subprograms' `__arg_trusted` arguments, and kptrs loaded from map
// values (their structs are kept whole by name by the kernel's own lookup, kernel_lookups()).
#include "btfslim/btf_access.h"

#include "btfslim/error.h"
#include "btfslim/input.h"

#include "verifier_walk.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace btfslim {

struct KernelTypeNames::Index {
  std::unordered_map<std::string_view, TypeId> func, var, composite;
  std::vector<bool> percpu;  // by id: a VAR of the per-CPU data section
};

KernelTypeNames::KernelTypeNames(const Btf& kernel) : btf_(kernel) {}
KernelTypeNames::~KernelTypeNames() = default;

const KernelTypeNames::Index& KernelTypeNames::index() const {
  if (index_) return *index_;
  index_ = std::make_unique<Index>();
  index_->percpu.assign(btf_.end_id(), false);
  for (TypeId id = 1; id < btf_.end_id(); ++id) {
    const TypeView t = btf_.type(id);
    switch (t.kind()) {
      case Kind::Func: index_->func.try_emplace(btf_.str(t.name_off()), id); break;
      case Kind::Var: index_->var.try_emplace(btf_.str(t.name_off()), id); break;
      case Kind::Struct:
      case Kind::Union:
        if (t.name_off() != 0) index_->composite.try_emplace(btf_.str(t.name_off()), id);
        break;
      case Kind::Datasec:
        if (btf_.str(t.name_off()) == ".data..percpu")
          for (unsigned i = 0; i < t.vlen(); ++i)
            if (btf_.valid_id(t.secinfo(i).type)) index_->percpu[t.secinfo(i).type] = true;
        break;
      default: break;
    }
  }
  return *index_;
}

TypeId KernelTypeNames::find(std::string_view name, Kind kind) const {
  const Index& ix = index();
  const auto& map = kind == Kind::Func ? ix.func : kind == Kind::Var ? ix.var : ix.composite;
  const auto it = map.find(name);
  return it == map.end() ? 0 : it->second;
}

bool KernelTypeNames::percpu(TypeId var) const {
  const Index& ix = index();
  return var < ix.percpu.size() && ix.percpu[var];
}

namespace {

using namespace btfslim::verifier;
using VKind = verifier::Kind;

bool is_composite(btfslim::Kind k) { return k == btfslim::Kind::Struct || k == btfslim::Kind::Union; }

Value btf_pointer(TypeId type) { return type ? Value{VKind::Btf, 0, type, 0} : scalar(); }

// Helpers whose prototype returns a pointer typed by a kernel struct (ret_btf_id), by helper id.
std::string_view helper_struct(std::int32_t id) {
  switch (id) {
    case 136: return "tcp6_sock";          // skc_to_tcp6_sock
    case 137: return "tcp_sock";           // skc_to_tcp_sock
    case 138: return "tcp_timewait_sock";  // skc_to_tcp_timewait_sock
    case 139: return "tcp_request_sock";   // skc_to_tcp_request_sock
    case 140: return "udp6_sock";          // skc_to_udp6_sock
    case 158: return "task_struct";        // get_current_task_btf
    case 162: return "socket";             // sock_from_file
    case 175: return "pt_regs";            // task_pt_regs
    case 178: return "unix_sock";          // skc_to_unix_sock
    case 196: return "mptcp_sock";         // skc_to_mptcp_sock
    default: return {};
  }
}
constexpr std::int32_t kPerCpuPtr = 153, kThisCpuPtr = 154;

// One object's analysis: what its programs' walks found, each distinct access once.
class Analysis {
 public:
  Analysis(const BpfObject& object, const BpfCode& code, const KernelTypeNames& kernel, BtfAccesses& out)
      : object_(object), code_(code), kernel_(kernel), btf_(kernel.btf()), out_(out),
        symbols_(object.elf().symbol_table()) {}

  const BpfCode& code() const { return code_; }
  // The registers live at each instruction (live_registers), read once for all the object's programs.
  const std::vector<std::uint16_t>& live() {
    if (live_.empty()) live_ = live_registers(code_);
    return live_;
  }
  const Btf& btf() const { return btf_; }
  const KernelTypeNames& kernel() const { return kernel_; }

  // The name of symbol `index`, or "" for none.
  std::string_view symbol(std::uint32_t index) const { return index < symbols_.size() ? symbols_[index].name : ""; }

  // What a load of `size` bytes at `off` of `type` gives, recorded on first sight.
  const StructAccess& access(std::uint32_t program, std::uint32_t pc, TypeId type, std::int64_t off, std::uint32_t size) {
    const auto [it, fresh] = seen_.try_emplace(std::tuple(type, off, size), out_.accesses.size());
    if (fresh) out_.accesses.push_back({program, pc, type, off, size, walk_struct(btf_, type, off, size)});
    return out_.accesses[it->second].walk;
  }

  void unfollowed(std::uint32_t program, std::uint32_t pc, TypeId type, std::string_view why) {
    if (!unfollowed_seen_.emplace(program, type, why).second) return;
    out_.unfollowed.push_back({program, pc, type, std::string(why)});
  }

  // A typed ksym (`extern T x __ksym`, a VAR of the object's .ksyms): the kernel VAR's type, per-CPU or
  // not. Anything else a 64-bit load of an extern names (.kconfig) is a number or untyped memory.
  Value ksym(std::string_view name) {
    if (!ksyms_) {
      ksyms_.emplace();
      const Btf& local = object_.btf();
      for (TypeId id = 1; id < local.end_id(); ++id) {
        const TypeView t = local.type(id);
        if (t.kind() != btfslim::Kind::Datasec || local.str(t.name_off()) != ".ksyms") continue;
        for (unsigned i = 0; i < t.vlen(); ++i)
          if (const TypeId v = t.secinfo(i).type; local.valid_id(v) && local.type(v).kind() == btfslim::Kind::Var)
            ksyms_->insert(local.str(local.type(v).name_off()));
      }
    }
    if (!ksyms_->count(name)) return scalar();
    const TypeId var = kernel_.find(name, btfslim::Kind::Var);
    if (var == 0) return scalar();
    const TypeId type = skip_modifiers(btf_, btf_.type(var).ref());
    if (type == 0) return scalar();
    if (kernel_.percpu(var)) return {VKind::PerCpu, 0, type, 0};
    return is_composite(btf_.type(type).kind()) ? btf_pointer(type) : scalar();
  }

 private:
  const BpfObject& object_;
  const BpfCode& code_;
  const KernelTypeNames& kernel_;
  const Btf& btf_;
  BtfAccesses& out_;
  std::vector<ElfFile::TableSymbol> symbols_;
  std::map<std::tuple<TypeId, std::int64_t, std::uint32_t>, std::size_t> seen_;
  std::set<std::tuple<std::uint32_t, TypeId, std::string>> unfollowed_seen_;
  std::optional<std::unordered_set<std::string_view>> ksyms_;
  std::vector<std::uint16_t> live_;
};

// The walk of one program: where its typed pointers come from, and what loads through them give.
class BtfHooks {
 public:
  BtfHooks(Analysis& a, std::uint32_t program, const ProgramContext& ctx, TypeId kernel_ctx)
      : a_(a), program_(program), entry_(a.code().programs()[program].entry), ctx_(ctx), kernel_ctx_(kernel_ctx) {}

  bool goes_on(std::uint32_t, const State&) const { return true; }

  // At a meeting point the registers no path reads again are forgotten, as the verifier forgets them:
  // a dead register holding a typed pointer on one path and a number on another is no reason to stop
  // following either. The callers' frames keep what they read after their calls return (r6-r9).
  void clean(std::uint32_t pc, State& st) {
    const std::vector<std::uint16_t>& live = a_.live();
    for (std::size_t f = 0; f < st.frames.size(); ++f) {
      const bool top = f + 1 == st.frames.size();
      const std::uint16_t keep = top ? live[pc] : static_cast<std::uint16_t>(live[st.frames[f + 1].return_pc] & 0x3c0);
      for (int r = 0; r < 10; ++r)
        if (!(keep >> r & 1)) st.frames[f].regs[r] = scalar();
    }
  }

  // The program's own entry gets its context in r1; a callback or global subprogram, numbers.
  void enter(std::uint32_t entry, Value* regs) const {
    if (entry == entry_ && ctx_.kind != ProgramContext::Kind::None) regs[1] = {VKind::Ctx};
  }

  Value data(std::uint32_t, const BpfCode::InsnRef& ref) {
    return ref.target ? a_.ksym(a_.symbol(ref.target)) : scalar();
  }

  Value helper(std::uint32_t, std::int32_t id, const Value* regs) {
    if (id == kPerCpuPtr || id == kThisCpuPtr) {
      const Value& var = regs[1];
      if (var.kind != VKind::PerCpu) return scalar();
      return is_composite(a_.btf().type(var.section).kind()) ? btf_pointer(var.section) : scalar();
    }
    const std::string_view name = helper_struct(id);
    return name.empty() ? scalar() : btf_pointer(a_.kernel().find(name, btfslim::Kind::Struct));
  }

  Value kfunc(std::uint32_t pc, const BpfCode::InsnRef& ref, const Value* regs) {
    if (ref.ref != BpfCode::Ref::ExternCall) return scalar();
    const std::string_view name = a_.symbol(ref.target);
    const Btf& btf = a_.btf();
    if (name == "bpf_rdonly_cast") {
      // The type its second argument names (bpf_core_type_id_kernel: a relocated constant).
      const Value& id = regs[2];
      if (id.kind == VKind::Const && btf.valid_id(static_cast<TypeId>(id.v)) && id.v == static_cast<TypeId>(id.v) &&
          is_composite(btf.type(static_cast<TypeId>(id.v)).kind()))
        return btf_pointer(static_cast<TypeId>(id.v));
      a_.unfollowed(program_, pc, 0, "bpf_rdonly_cast of a type id the walk does not know");
      return scalar();
    }
    if (name == "bpf_cast_to_kern_ctx") {
      if (kernel_ctx_ == 0) a_.unfollowed(program_, pc, 0, "bpf_cast_to_kern_ctx in a program whose kernel context the walk does not know");
      return btf_pointer(kernel_ctx_);
    }
    const TypeId func = a_.kernel().find(name, btfslim::Kind::Func);
    if (func == 0) return scalar();
    const TypeId proto = skip_modifiers(btf, btf.type(func).ref());
    if (proto == 0 || btf.type(proto).kind() != btfslim::Kind::FuncProto) return scalar();
    return btf_pointer(pointee_struct(btf, btf.type(proto).ref()));
  }

  Value load(std::uint32_t pc, const Value& ptr, std::int64_t off, int size) {
    switch (ptr.kind) {
      case VKind::Ctx:
        return context(static_cast<std::int64_t>(ptr.v) + off, size);
      case VKind::Btf: {
        const StructAccess& w =
            a_.access(program_, pc, ptr.section, static_cast<std::int64_t>(ptr.v) + off, static_cast<std::uint32_t>(size));
        return w.result == StructAccess::Result::Pointer ? btf_pointer(w.pointee) : scalar();
      }
      case VKind::BtfVar:
        a_.unfollowed(program_, pc, ptr.section, "a load at an offset the walk does not follow");
        return scalar();
      default:
        return scalar();  // a per-CPU address is not loaded through
    }
  }

  // States merged (past the walk's budget, or past its states at one instruction): a typed pointer the
  // join turned into another value is no longer followed, and its struct is kept whole.
  void merged(const State& before, const State& after) {
    auto note = [&](const Value& v, const Value& now) {
      if ((v.kind == VKind::Btf || v.kind == VKind::BtfVar || v.kind == VKind::PerCpu) && v != now)
        a_.unfollowed(program_, entry_, v.section, "states merged past what the walk follows");
    };
    for (std::size_t f = 0; f < before.frames.size() && f < after.frames.size(); ++f)
      for (int r = 0; r < 11; ++r) note(before.frames[f].regs[r], after.frames[f].regs[r]);
    for (const Slot& s : before.stack) {
      const Slot* now = find_slot(after, s.frame, s.off);
      note(s.value, now && now->spill == s.spill ? now->value : scalar());
    }
  }

  void gave_up() { a_.unfollowed(program_, entry_, 0, "the program is too large for the walk to follow"); }

 private:
  // A load from the context: an argument (a pointer to a struct is typed by it), or for netfilter one of
  // struct bpf_nf_ctx's two pointers.
  Value context(std::int64_t off, int size) const {
    const Btf& btf = a_.btf();
    if (ctx_.kind == ProgramContext::Kind::Netfilter) {
      if (size != 8) return scalar();
      return off == 0 ? btf_pointer(ctx_.from) : off == 8 ? btf_pointer(ctx_.to) : scalar();
    }
    if (ctx_.kind != ProgramContext::Kind::Args || off < 0 || off % 8 != 0 || size != 8) return scalar();
    const TypeView proto = btf.type(ctx_.proto);
    // get_ctx_arg_idx: each argument takes its size in 8-byte slots (a pointer one).
    std::int64_t slot = 0;
    for (unsigned i = ctx_.skip; i < proto.vlen(); ++i) {
      const TypeId type = proto.param(i).type;
      const TypeId t = skip_modifiers(btf, type);
      const std::int64_t words =
          t == 0 || btf.type(t).kind() == btfslim::Kind::Ptr ? 1 : std::max<std::int64_t>(1, (btf.type(t).size() + 7) / 8);
      if (off / 8 < slot + words) return off / 8 == slot ? argument(type) : scalar();
      slot += words;
    }
    return off / 8 == slot && ctx_.retval ? argument(proto.ref()) : scalar();
  }

  Value argument(TypeId type) const {
    TypeId to = pointee_struct(a_.btf(), type);
    if (to != 0 && to == ctx_.from) to = ctx_.to;
    return btf_pointer(to);
  }

  Analysis& a_;
  std::uint32_t program_;
  std::uint32_t entry_;
  const ProgramContext& ctx_;
  TypeId kernel_ctx_;
};

// The kernel's context struct of a program's type, by its section (libbpf's names), as
// bpf_cast_to_kern_ctx returns it (bpf_ctx_convert pairs them): 0 where the walk does not know it.
TypeId kernel_context(const KernelTypeNames& kernel, std::string_view section) {
  static constexpr std::pair<std::string_view, std::string_view> kContexts[] = {
      {"socket", "sk_buff"},        {"tc", "sk_buff"},          {"tcx/", "sk_buff"},
      {"classifier", "sk_buff"},    {"action", "sk_buff"},      {"cgroup_skb/", "sk_buff"},
      {"sk_skb", "sk_buff"},        {"lwt_", "sk_buff"},        {"xdp", "xdp_buff"},
      {"perf_event", "bpf_perf_event_data_kern"},               {"sk_msg", "sk_msg"},
      {"sockops", "bpf_sock_ops_kern"},                         {"sk_lookup", "bpf_sk_lookup_kern"},
      {"flow_dissector", "bpf_flow_dissector"},
  };
  if (section.starts_with('?')) section.remove_prefix(1);
  for (const auto& [prefix, name] : kContexts)
    if (section.starts_with(prefix)) return kernel.find(name, btfslim::Kind::Struct);
  return 0;
}

// Whether a program with no typed context may still get typed pointers: a helper that returns one, a
// kfunc, or a 64-bit load of an extern (a typed ksym), anywhere in the object's code.
bool hands_out_typed(const BpfCode& code) {
  bool found = false;
  code.in_stretches(0, static_cast<std::uint32_t>(code.insns().size()), [&](std::uint32_t from, std::uint32_t to) {
    for (std::uint32_t pc = from; pc < to && !found; ++pc) {
      const BpfInsn& in = code.insns()[pc];
      if (in.code == kCall)
        found = in.src == kPseudoKfuncCall ||
                (in.src == 0 && (!helper_struct(in.imm).empty() || in.imm == kPerCpuPtr || in.imm == kThisCpuPtr));
      else if (in.code == kLdImm64)
        found = code.ref(pc).ref == BpfCode::Ref::Data && code.ref(pc).target != 0;
    }
  });
  return found;
}

}  // namespace

BtfAccesses btf_accesses(const BpfObject& object, const BpfCode& code, std::span<const CoreResult> results,
                         const KernelTypeNames& kernel, std::span<const ProgramContext> contexts) {
  BtfAccesses out;
  const auto& programs = code.programs();
  const bool typed_anywhere = hands_out_typed(code);
  bool any = typed_anywhere;
  for (std::size_t p = 0; p < programs.size() && !any; ++p) any = contexts[p].kind != ProgramContext::Kind::None;
  if (!any) return out;

  // The relocated values on the kernel, as reachability() puts them in.
  Patches patches(code.insns().size(), results, results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::uint32_t pc = code.insn_of(i);
    if (pc == kNoInsn) continue;
    if (results[i].status == CoreStatus::Ok && patches.kind(pc) != Patch::Poison)
      patches.set_value(pc, static_cast<std::uint32_t>(i));
    else if (results[i].status == CoreStatus::Poisoned)
      patches.set_poison(pc);
  }
  patches.done();

  Analysis analysis(object, code, kernel, out);
  WalkScratch scratch(code);
  for (std::size_t p = 0; p < programs.size(); ++p) {
    const ProgramContext& ctx = contexts[p];
    if (ctx.kind == ProgramContext::Kind::None && !typed_anywhere) continue;
    scratch.clear();
    BtfHooks hooks(analysis, static_cast<std::uint32_t>(p), ctx, kernel_context(kernel, programs[p].section));
    Walk walk(code, patches, hooks, scratch);
    walk.run(programs[p].entry);
  }
  return out;
}

}  // namespace btfslim
