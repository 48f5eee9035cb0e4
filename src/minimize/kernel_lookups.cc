// What a kernel looks up in its own BTF by name, and so what `minimize --kernel` must keep for it besides
// the types .BTF_ids slots name (which resolve_btfids filled by name at link time, and the kernel reads by
// id).
//
// Two sorts. The names its sources spell out (kernel_lookups()): "sock" and "tcp_sock" for BPF congestion
// control, "task_struct" for sched_ext, ... Each came in some release and some went away (a lookup
// replaced by a .BTF_ids slot, or by the struct_ops' own type), so each entry says for which releases, and
// a subsystem that may not be built in names a symbol of its own: an image without it does not look.
// They were read in the sources of Linux 6.1 and 6.12 (grep btf_find_by_name_kind, bpf_find_btf_id,
// kallsyms_lookup), and in the history of the newest for when each came and went (5.15's are 6.1's, by
// that history; its sources were not read here).
//
// And the names its sources do not spell out, found here (found_lookups()):
// - struct_ops stubs. Registering a struct_ops type reads, for each function pointer of the struct, the
//   stub function its `cfi_stubs` object holds there, and looks up that function's FUNC to learn which
//   arguments are __nullable (prepare_arg_info); a stub it cannot find fails the registration, and that
//   struct_ops is gone. 6.9 named the stub STRUCT__MEMBER (find_stub_func_proto: a missing one was quietly
//   skipped, and its arguments lost their __nullable); 6.15 (and the 6.12.y and 6.14.y stable releases of
//   mid-2025) take the name kallsyms gives the stub's address. The release alone cannot tell a stable
//   release that has the change from one that has not, so both are kept: the FUNC of the stub's symbol,
//   read from the image (each `struct bpf_struct_ops` object, its `name` and `cfi_stubs`), and the FUNC
//   STRUCT__MEMBER where the BTF has one (where both rules apply they are the same function).
// - Tracepoint templates. Since 6.12 (and 6.11.11), a tp_btf program's target is typed by the FUNC of the
//   tracepoint's template, __bpf_trace_TEMPLATE, whose argument names carry __nullable; without it the
//   verifier falls back to the btf_trace_ typedef's prototype, whose arguments have no names (it says so
//   in the log of a program that fails; a program that loads gets its log reset). The template is the
//   function the tracepoint's bpf_raw_event_map entry points to (the `__bpf_raw_tp_map` section, between
//   __start__bpf_raw_tp and __stop__bpf_raw_tp): found for each tracepoint the profile attaches to or keeps
//   the typedef of, or all with --family tracepoints.
// - __safe_ types. The verifier decides whether a pointer loaded from a trusted one is trusted by looking
//   up T__safe_trusted, T__safe_rcu, T__safe_rcu_or_null or T__safe_trusted_or_null and reading the names
//   and types of its members (btf_nested_type_is_trusted, 6.3+). A kernel has only the ones it reads:
//   every one is kept whole.
// - kptr structs. A map value's `struct T __kptr *` is looked up by T's name in the kernel's BTF
//   (btf_parse_kptr, 5.19+): each struct an object's BTF points to through a kptr type tag is kept whole
//   (what a program reads through a kptr loaded from a map is not followed member by member).
//
// Not kept, because nothing here can tell which: the functions tracefs probe events with BTF arguments
// look up (trace_btf.c: fprobe and kprobe events, 6.9+, any function a user names).
#include "btfslim/error.h"
#include "btfslim/kernel_btf.h"

#include <elf.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace btfslim {
namespace {

// The first type of that name and kind, as btf_find_by_name_kind finds it (0: none).
TypeId first_named(const Btf& btf, std::string_view name, Kind kind) {
  for (TypeId id = 1; id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    if (t.kind() == kind && t.name_off() != 0 && btf.str(t.name_off()) == name) return id;
  }
  return 0;
}

// The byte offset of member `name` of composite `id`, or nullopt.
std::optional<std::uint32_t> member_offset(const Btf& btf, TypeId id, std::string_view name) {
  const TypeView t = btf.type(id);
  for (unsigned i = 0; i < t.vlen(); ++i) {
    const Member m = t.member(i);
    if (m.name_off != 0 && btf.str(m.name_off) == name) return t.member_bit_offset(m) / 8;
  }
  return std::nullopt;
}

// Adds each name once: the first reason stands.
class Found {
 public:
  void add(FoundLookup::Source source, std::string_view name, Kind kind, bool whole, std::string why) {
    if (!seen_.insert({std::string(name), kind}).second) return;
    out_.push_back({source, std::string(name), kind, whole, std::move(why)});
  }
  std::vector<FoundLookup> take() { return std::move(out_); }

 private:
  struct Hash {
    std::size_t operator()(const std::pair<std::string, Kind>& k) const {
      return std::hash<std::string>()(k.first) * 31 + static_cast<std::size_t>(k.second);
    }
  };
  std::unordered_set<std::pair<std::string, Kind>, Hash> seen_;
  std::vector<FoundLookup> out_;
};

std::string hex(std::uint64_t addr) { return fmt::format("{:#x}", addr); }

// The stub functions of every struct_ops the image registers (see the file's comment).
void struct_ops_stubs(const KernelImage& image, Found& found) {
  const Btf& btf = *image.btf;
  if (image.version && *image.version < KernelVersion{6, 9, 0}) return;
  const TypeId ops = first_named(btf, "bpf_struct_ops", Kind::Struct);
  if (ops == 0) return;
  const auto stubs_at = member_offset(btf, ops, "cfi_stubs");
  const auto name_at = member_offset(btf, ops, "name");
  if (!stubs_at || !name_at) return;  // before cfi_stubs (6.8): nothing looked up by a stub's name
  const std::uint64_t ops_size = btf.type(ops).size();

  // The struct_ops types the kernel can register: NAME with a bpf_struct_ops_NAME value type.
  constexpr std::string_view kValue = "bpf_struct_ops_";
  std::unordered_set<std::string_view> values;
  std::vector<std::pair<std::string_view, TypeId>> structs;
  for (TypeId id = 1; id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    if (t.kind() != Kind::Struct || t.name_off() == 0) continue;
    const std::string_view name = btf.str(t.name_off());
    if (name.starts_with(kValue)) values.insert(name.substr(kValue.size()));
    structs.push_back({name, id});
  }
  auto struct_named = [&](std::string_view name) -> TypeId {
    for (const auto& [n, id] : structs)
      if (n == name) return id;
    return 0;
  };

  // Each `struct bpf_struct_ops` object: a symbol of its size whose `name` is such a NAME.
  for (const KernelImage::Symbol& object : image.symbols) {
    if (object.type != STT_OBJECT || object.size != ops_size) continue;
    const auto name_ptr = image.pointer_at(object.addr + *name_at);
    const auto name = name_ptr ? image.string_at(*name_ptr) : std::nullopt;
    if (!name || !values.count(*name)) continue;
    const TypeId st = struct_named(*name);
    if (st == 0) continue;
    const auto stubs = image.pointer_at(object.addr + *stubs_at);
    if (!stubs) fail(image.path(), "struct_ops {}: its cfi_stubs cannot be read at {}", esc(object.name), hex(object.addr + *stubs_at));
    if (*stubs == 0) continue;  // the kernel refuses it ("has no cfi_stubs"): nothing to look up
    const TypeView t = btf.type(st);
    for (unsigned i = 0; i < t.vlen(); ++i) {
      const Member m = t.member(i);
      if (m.name_off == 0 || !pointee_function(btf, m.type)) continue;
      const std::string_view member = btf.str(m.name_off);
      const std::uint64_t slot = *stubs + t.member_bit_offset(m) / 8;
      const auto stub = image.pointer_at(slot);
      if (!stub)
        fail(image.path(), "struct_ops {}: its cfi_stubs at {} cannot be read at member {} ({})", esc(object.name),
             hex(*stubs), esc(member), hex(slot));
      if (*stub != 0)  // none: the member is not supported, and not looked up (6.12+)
        for (const std::string_view function : image.functions_at(*stub))
          found.add(FoundLookup::Source::StructOpsStub, function, Kind::Func, false,
                    fmt::format("the stub {}.cfi_stubs holds for {}.{}, looked up by its symbol's name when the "
                                "kernel registers {} (prepare_arg_info, kernel/bpf/bpf_struct_ops.c: 6.15+, 6.12.y "
                                "and 6.14.y)",
                                esc(object.name), esc(*name), esc(member), esc(*name)));
      found.add(FoundLookup::Source::StructOpsStub, fmt::format("{}__{}", *name, member), Kind::Func, false,
                fmt::format("the stub of {}.{} by the name STRUCT__MEMBER, looked up when the kernel registers {} "
                            "(find_stub_func_proto, kernel/bpf/bpf_struct_ops.c: 6.9 until the cfi_stubs lookup)",
                            esc(*name), esc(member), esc(*name)));
    }
  }
}

// The template functions of the tracepoints the profile attaches to (see the file's comment).
void tracepoint_templates(const KernelImage& image, const KernelProfile& profile,
                          std::span<const std::vector<KernelRef>> refs, Found& found) {
  const Btf& btf = *image.btf;
  if (image.version && *image.version < KernelVersion{6, 11, 11}) return;
  constexpr std::string_view kTrace = "btf_trace_";
  const bool all = std::count(profile.families.begin(), profile.families.end(), KernelFamily::Tracepoints) > 0;
  std::unordered_set<std::string_view> wanted;
  for (const std::vector<KernelRef>& object : refs)
    for (const KernelRef& ref : object)
      if (ref.kind == KernelRefKind::Attach && ref.lookup_kind == Kind::Typedef && ref.lookup.starts_with(kTrace))
        wanted.insert(std::string_view(ref.lookup).substr(kTrace.size()));
  std::vector<TypePattern> kept;  // --keep btf_trace_T too (`wanted` holds views of their names)
  kept.reserve(profile.keep.size());
  for (const std::string& k : profile.keep) {
    kept.push_back(TypePattern::parse(k, TypePattern::Globs::No));
    if (kept.back().name().starts_with(kTrace) && kept.back().kind().value_or(Kind::Typedef) == Kind::Typedef)
      wanted.insert(kept.back().name().substr(kTrace.size()));
  }
  if (!all && wanted.empty()) return;

  const TypeId map = first_named(btf, "bpf_raw_event_map", Kind::Struct);
  const TypeId tracepoint = first_named(btf, "tracepoint", Kind::Struct);
  const KernelImage::Symbol* start = image.symbol_named("__start__bpf_raw_tp");
  const KernelImage::Symbol* stop = image.symbol_named("__stop__bpf_raw_tp");
  if (map == 0 || tracepoint == 0 || !start || !stop) return;
  const auto tp_at = member_offset(btf, map, "tp"), func_at = member_offset(btf, map, "bpf_func");
  const auto name_at = member_offset(btf, tracepoint, "name");
  const std::uint64_t entry = btf.type(map).size();
  if (!tp_at || !func_at || !name_at || entry == 0) return;
  if (stop->addr < start->addr || !image.bytes_at(start->addr, stop->addr - start->addr))
    fail(image.path(), "its tracepoint map (__start__bpf_raw_tp {} to __stop__bpf_raw_tp {}) is not in its sections",
         hex(start->addr), hex(stop->addr));
  for (std::uint64_t at = start->addr; stop->addr - at >= entry; at += entry) {
    const auto tp = image.pointer_at(at + *tp_at);
    const auto name_ptr = tp ? image.pointer_at(*tp + *name_at) : std::nullopt;
    const auto name = name_ptr ? image.string_at(*name_ptr) : std::nullopt;
    if (!name) fail(image.path(), "the tracepoint of its bpf_raw_event_map entry at {} has no name to read", hex(at));
    if (!all && !wanted.count(*name)) continue;
    for (const std::string_view function : image.functions_at(*image.pointer_at(at + *func_at)))
      found.add(FoundLookup::Source::TracepointTemplate, function, Kind::Func, false,
                fmt::format("the template of tracepoint {} (its bpf_raw_event_map's bpf_func), looked up when a "
                            "tp_btf program attaches to it (bpf_check_attach_target, kernel/bpf/verifier.c: "
                            "6.12+, 6.11.11+)",
                            esc(*name)));
  }
}

// Every __safe_ type the kernel has (see the file's comment).
void safe_types(const KernelImage& image, Found& found) {
  const Btf& btf = *image.btf;
  constexpr std::string_view kSuffixes[] = {"__safe_trusted", "__safe_rcu", "__safe_rcu_or_null",
                                            "__safe_trusted_or_null"};
  for (TypeId id = 1; id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    if (t.kind() != Kind::Struct || t.name_off() == 0) continue;
    const std::string_view name = btf.str(t.name_off());
    for (const std::string_view suffix : kSuffixes)
      if (name.ends_with(suffix) && name.size() > suffix.size())
        found.add(FoundLookup::Source::SafeType, name, Kind::Struct, true,
                  fmt::format("read by the verifier to decide whether a pointer loaded from a struct {} is trusted "
                              "(btf_nested_type_is_trusted, kernel/bpf/btf.c: 6.3+)",
                              esc(name.substr(0, name.size() - suffix.size()))));
  }
}

// The structs the objects' kptrs point to (see the file's comment).
void kptr_structs(const KernelProfile& profile, Found& found) {
  constexpr std::string_view kTags[] = {"kptr", "kptr_untrusted", "kptr_ref", "percpu_kptr"};
  for (const BpfObject* object : profile.objects) {
    const Btf& btf = object->btf();
    for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
      const TypeView t = btf.type(id);
      if (t.kind() != Kind::TypeTag || t.name_off() == 0) continue;
      const std::string_view tag = btf.str(t.name_off());
      if (std::find(std::begin(kTags), std::end(kTags), tag) == std::end(kTags)) continue;
      const TypeId target = skip_modifiers(btf, t.ref());
      if (target == 0 || btf.type(target).kind() != Kind::Struct || btf.type(target).name_off() == 0) continue;
      const std::string_view name = btf.str(btf.type(target).name_off());
      found.add(FoundLookup::Source::Kptr, name, Kind::Struct, true,
                fmt::format("{}: a map value's {} to struct {}, looked up by its name in the kernel's BTF when the "
                            "map is created (btf_parse_kptr, kernel/bpf/btf.c: 5.19+)",
                            esc(object->path()), esc(tag), esc(name)));
    }
  }
}

}  // namespace

std::span<const KernelLookup> kernel_lookups() {
  // Each is looked up at boot, when a subsystem registers, or when a program that needs it loads; a
  // missing one is a boot warning, a feature gone, or a program refused (netfilter's: a WARN as well).
  // Types a struct_ops registration looks up (NAME and bpf_struct_ops_NAME) are kept whole for every
  // NAME with a bpf_struct_ops_ type, whatever the release.
  static constexpr KernelLookup kLookups[] = {
      {"bpf_ctx_convert", Kind::Struct, true,
       "btf_get_prog_ctx_type (kernel/bpf/btf.c): its members, by position, pair each program type's context",
       {5, 5, 0}, {}, ""},
      {"module", Kind::Struct, false,
       "bpf_struct_ops_init (kernel/bpf/bpf_struct_ops.c): the owner member (a .BTF_ids slot from 6.9)",
       {5, 6, 0}, {6, 9, 0}, ""},
      {"sock", Kind::Struct, false, "bpf_tcp_ca_init (net/ipv4/bpf_tcp_ca.c)", {5, 6, 0}, {}, "bpf_tcp_congestion_ops"},
      {"tcp_sock", Kind::Struct, false, "bpf_tcp_ca_init (net/ipv4/bpf_tcp_ca.c)", {5, 6, 0}, {},
       "bpf_tcp_congestion_ops"},
      {"tcp_congestion_ops", Kind::Struct, false,
       "bpf_tcp_ca_init (net/ipv4/bpf_tcp_ca.c): a program's member offset (bpf_struct_ops_prog_moff from 6.16)",
       {6, 9, 0}, {6, 16, 0}, "bpf_tcp_congestion_ops"},
      {"bpf_dummy_ops_state", Kind::Struct, false,
       "bpf_dummy_init, bpf_dummy_ops_btf_struct_access (net/bpf/bpf_dummy_struct_ops.c)", {5, 14, 0}, {},
       "bpf_bpf_dummy_ops"},
      {"sk_buff", Kind::Struct, false, "nf_ptr_to_btf_id (net/netfilter/nf_bpf_link.c): a netfilter program's ctx->skb",
       {6, 4, 0}, {}, "netfilter_prog_ops"},
      {"nf_hook_state", Kind::Struct, false,
       "nf_ptr_to_btf_id (net/netfilter/nf_bpf_link.c): a netfilter program's ctx->state", {6, 4, 0}, {},
       "netfilter_prog_ops"},
      {"hid_bpf_ctx", Kind::Struct, false,
       "hid_bpf_ops_btf_struct_access (drivers/hid/bpf/hid_bpf_struct_ops.c): the fields a program may write",
       {6, 11, 0}, {}, "bpf_hid_bpf_ops"},
      {"hid_device", Kind::Struct, false,
       "hid_bpf_ops_btf_struct_access (drivers/hid/bpf/hid_bpf_struct_ops.c): the fields a program may write",
       {6, 11, 0}, {}, "bpf_hid_bpf_ops"},
      {"task_struct", Kind::Struct, false, "bpf_scx_init (kernel/sched/ext.c): sched_ext (a .BTF_ids slot from 6.13)",
       {6, 12, 0}, {6, 13, 0}, "bpf_sched_ext_ops"},
  };
  return kLookups;
}

bool lookup_applies(const KernelLookup& lookup, const KernelImage& image) {
  if (image.version) {
    if (*image.version < lookup.since) return false;
    if (lookup.until.major != 0 && *image.version >= lookup.until) return false;
  }
  return lookup.symbol.empty() || image.symbol_named(lookup.symbol) != nullptr;
}

std::string lookup_releases(const KernelLookup& lookup) {
  if (lookup.until.major == 0) return version_text(lookup.since) + "+";
  if (lookup.until.minor == 0 || lookup.until.patch != 0)
    return fmt::format("{} to before {}", version_text(lookup.since), version_text(lookup.until));
  // The last release that does it: the one before `until`.
  const KernelVersion last{lookup.until.major, lookup.until.minor - 1, 0};
  if (last.major == lookup.since.major && last.minor == lookup.since.minor) return version_text(lookup.since);
  return fmt::format("{} to {}", version_text(lookup.since), version_text(last));
}

std::vector<FoundLookup> found_lookups(const KernelImage& image, const KernelProfile& profile,
                                       std::span<const std::vector<KernelRef>> refs) {
  Found found;
  struct_ops_stubs(image, found);
  tracepoint_templates(image, profile, refs, found);
  safe_types(image, found);
  kptr_structs(profile, found);
  return found.take();
}

std::string verify_lookups(const KernelImage& image, const SlimKernel& slim, const Btf& out) {
  // The first type of each name and kind, of the source and of the slim BTF, in one pass each.
  using Key = std::pair<std::string_view, Kind>;
  struct Hash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::string_view>()(k.first) * 31 + static_cast<std::size_t>(k.second);
    }
  };
  std::unordered_map<Key, TypeId, Hash> wanted;
  const auto lookups = kernel_lookups();
  for (const std::uint32_t i : slim.lookups) wanted.emplace(Key{lookups[i].name, lookups[i].kind}, 0);
  for (const FoundLookup& f : slim.found) wanted.emplace(Key{f.name, f.kind}, 0);
  auto firsts = [&](const Btf& btf) {
    std::unordered_map<Key, TypeId, Hash> first;
    for (TypeId id = 1; id < btf.end_id(); ++id) {
      const TypeView t = btf.type(id);
      if (t.name_off() == 0) continue;
      const Key key{btf.str(t.name_off()), t.kind()};
      if (wanted.count(key)) first.try_emplace(key, id);
    }
    return first;
  };
  const auto before = firsts(*image.btf), after = firsts(out);
  for (const auto& [key, unused] : wanted) {
    const auto b = before.find(key);
    if (b == before.end()) continue;  // the kernel has none to find
    const auto a = after.find(key);
    if (a == after.end() || a->second != slim.new_id[b->second])
      return fmt::format("the kernel looks up {} '{}' by name and would find {} on the slim BTF", kind_name(key.second),
                         esc(key.first), a == after.end() ? std::string("none") : fmt::format("[{}]", a->second));
  }
  return "";
}

std::string_view found_source_name(FoundLookup::Source source) {
  switch (source) {
    case FoundLookup::Source::StructOpsStub: return "struct_ops stub";
    case FoundLookup::Source::TracepointTemplate: return "tracepoint template";
    case FoundLookup::Source::SafeType: return "__safe_ type";
    case FoundLookup::Source::Kptr: return "kptr struct";
  }
  return "?";
}

}  // namespace btfslim
