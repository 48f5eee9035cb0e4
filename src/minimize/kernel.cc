// Minimizing the BTF a kernel carries: keep what the kernel and a profile of programs resolve against
// it, and nothing else.
//
// What is kept starts from roots, and grows by one rule. The roots:
// - every type a .BTF_ids slot names: the kernel's own lists (kfunc sets, LSM hooks, allow and deny
//   lists, the types helpers take and return), which it reads by id;
// - the types the kernel looks up by name (kernel_lookups.cc: those its sources name, for its release,
//   and those its image and the objects tell), and every struct_ops type it registers;
// - for each object of the profile, what the loader and the verifier resolve against the kernel's BTF:
//   attach targets, kfuncs, typed ksyms, struct_ops types (loader.h), the types and members its CO-RE
//   relocations resolve against (marked as `minimize` marks them), and every member the kernel's walk
//   takes for a load through a pointer the verifier types by BTF (kernel_access.cc, btf_access.h);
// - --keep's types whole, and the families asked for (every tracepoint, every iterator).
// The rule: a kept type keeps every type it refers to, except the members of structs and unions, which
// are kept one by one, where a root needs them. So a function keeps its prototype, its parameters'
// types, and the structs they point to, as shells (name and size, no members): enough for the verifier
// to type a pointer argument and distill the function's model, where a program reading a member also
// has a load the verifier checks that keeps that member. A struct also keeps its first member, which the
// verifier follows to match a pointer to a struct that begins with another (btf_struct_ids_match). Types
// the kernel reads member by member (bpf_ctx_convert, struct_ops types) are kept whole.
//
// Writing keeps the source's order and every kept type's name, kind and layout, with only the kept
// members of structs and unions and the kept variables of data sections, and no deduplication, so that
// each kept type has one new id (the .BTF_ids slots are remapped through that) and every name
// resolve_btfids would look up is still there to find.
//
// Loads the walk cannot place (a typed pointer moved by a value it does not know, states merged past its
// budget) keep their struct whole, and say so in the report; typed pointers it does not follow at all are
// listed in src/core/btf_access.cc (callbacks' arguments, global subprograms' __arg_trusted, kptrs).
#include "btfslim/error.h"
#include "btfslim/kernel_btf.h"
#include "btfslim/minimize.h"

#include "raw_writer.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace btfslim {
namespace {

bool is_composite(Kind k) { return k == Kind::Struct || k == Kind::Union; }

void put_u32(std::uint8_t* at, std::uint32_t v, ByteOrder order) {
  const std::uint32_t raw = order.swapped() ? __builtin_bswap32(v) : v;
  std::memcpy(at, &raw, 4);
}

// Where member `index` of kept composite `id` is among its kept members (sorted), or nullopt when it is
// not kept.
std::optional<std::uint32_t> kept_member_position(const SlimKernel& slim, TypeId id, std::uint32_t index) {
  const auto m = slim.members.find(id);
  if (m == slim.members.end()) return std::nullopt;
  const auto at = std::lower_bound(m->second.begin(), m->second.end(), index);
  if (at == m->second.end() || *at != index) return std::nullopt;
  return static_cast<std::uint32_t>(at - m->second.begin());
}

// The words of a record (host order) with its names written to `w` and its type ids passed through `map`,
// into `words`.
template <typename Map>
void remapped_record(const Btf& btf, const TypeView& t, RawWriter& w, Map&& map, std::vector<std::uint32_t>& words) {
  const ByteOrder order = btf.byte_order();
  words.resize(t.record_size() / 4);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = order.u32(t.data() + 4 * i);
  for_each_field(
      t.info(), [&](std::uint32_t off, NameRole) { words[off / 4] = w.str(btf.str(words[off / 4])); },
      [&](std::uint32_t off, RefRole) { words[off / 4] = map(words[off / 4]); });
}

// A raw BTF RawWriter wrote (host order) in the byte order of `like`.
std::string in_order_of(const Btf& like, std::string raw) {
  return like.byte_order().swapped() ? swapped_byte_order(std::move(raw)) : raw;
}

class KernelMarker {
 public:
  KernelMarker(const Btf& src, SlimKernel& out)
      : src_(src), out_(out), whole_(src.end_id(), false), everything_(src.end_id(), false) {
    out_.why.assign(src.end_id(), {});
  }

  void keep(TypeId id, KernelKeep why) {
    if (id == 0 || id >= src_.end_id() || out_.why[id].why != KernelKeep::Why::None) return;
    out_.why[id] = why;
    work_.push_back(id);
  }

  void member(TypeId id, std::uint32_t index, KernelKeep why) {
    keep(id, why);
    auto& list = out_.members[id];
    if (std::find(list.begin(), list.end(), index) != list.end()) return;
    list.push_back(index);
    out_.member_why.emplace(std::pair(id, index), why);
    keep(src_.type(id).member(index).type, from(id));
  }

  // A struct or union with all its members, a data section with all its variables (anything else: the
  // type). A data section is otherwise written with the variables kept for themselves only, and never
  // empty: the kernel refuses a DATASEC without variables, and with it the whole BTF.
  void whole(TypeId id, KernelKeep why) {
    keep(id, why);
    if (id == 0 || whole_[id]) return;
    whole_[id] = true;
    const TypeView t = src_.type(id);
    if (is_composite(t.kind()))
      for (unsigned i = 0; i < t.vlen(); ++i) member(id, i, why);
    if (t.kind() == Kind::Datasec)
      for (unsigned i = 0; i < t.vlen(); ++i) keep(t.secinfo(i).type, from(id));
  }

  // `id` whole, and every type it reaches whole: a module's type deduplicates against a base type only
  // where the base has all of it.
  void everything(TypeId id, KernelKeep why) {
    std::vector<TypeId> todo{id};
    while (!todo.empty()) {
      const TypeId t = todo.back();
      todo.pop_back();
      if (t == 0 || t >= src_.end_id() || everything_[t]) continue;
      everything_[t] = true;
      whole(t, why);
      for_each_type_ref(src_.type(t), [&](TypeId ref) { todo.push_back(ref); });
    }
  }

  // Keeps what the kept types refer to, until nothing new is kept.
  void close() {
    while (!work_.empty()) {
      const TypeId id = work_.back();
      work_.pop_back();
      const TypeView t = src_.type(id);
      switch (t.kind()) {
        case Kind::Struct:
          if (t.vlen() > 0) member(id, 0, from(id));
          break;
        case Kind::Union:
        case Kind::Datasec:  // written with the variables kept for themselves only
          break;
        case Kind::Var:
          keep(t.ref(), from(id));
          if (const TypeId section = datasec_of(id)) keep(section, from(id));
          break;
        default:
          for_each_type_ref(t, [&](TypeId ref) { keep(ref, from(id)); });
          break;
      }
    }
  }

 private:
  static KernelKeep from(TypeId id) { return {KernelKeep::Why::Type, 0, 0, id}; }

  // The data section listing variable `var` (the verifier finds per-CPU variables by their section).
  TypeId datasec_of(TypeId var) {
    if (!sections_indexed_) {
      sections_indexed_ = true;
      for (TypeId id = 1; id < src_.end_id(); ++id) {
        const TypeView t = src_.type(id);
        if (t.kind() != Kind::Datasec) continue;
        for (unsigned i = 0; i < t.vlen(); ++i) section_of_.try_emplace(t.secinfo(i).type, id);
      }
    }
    const auto found = section_of_.find(var);
    return found == section_of_.end() ? 0 : found->second;
  }

  const Btf& src_;
  SlimKernel& out_;
  std::vector<bool> whole_;
  std::vector<bool> everything_;  // kept whole with all it reaches
  std::vector<TypeId> work_;
  bool sections_indexed_ = false;
  std::unordered_map<TypeId, TypeId> section_of_;
};

// The first type of each wanted name (and kind, where given), in one pass: btf_find_by_name_kind's
// answer.
class FirstByName {
 public:
  void want(std::string_view name, std::optional<Kind> kind) { wanted_.emplace(name, kind); }
  void find(const Btf& btf) {
    if (wanted_.empty()) return;
    for (TypeId id = 1; id < btf.end_id(); ++id) {
      const TypeView t = btf.type(id);
      if (t.name_off() == 0) continue;
      const std::string_view name = btf.str(t.name_off());
      for (const std::optional<Kind> k : {std::optional<Kind>(t.kind()), std::optional<Kind>()}) {
        const auto w = wanted_.find({name, k});
        if (w != wanted_.end()) found_.try_emplace(*w, id);
      }
      // An enum asked for as "enum NAME" may be an ENUM64.
      if (t.kind() == Kind::Enum64)
        if (const auto w = wanted_.find({name, Kind::Enum}); w != wanted_.end()) found_.try_emplace(*w, id);
    }
  }
  TypeId operator()(std::string_view name, std::optional<Kind> kind) const {
    const auto f = found_.find({name, kind});
    return f == found_.end() ? 0 : f->second;
  }

 private:
  using Key = std::pair<std::string_view, std::optional<Kind>>;
  struct Hash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::string_view>()(k.first) * 31 + (k.second ? static_cast<std::size_t>(*k.second) + 1 : 0);
    }
  };
  std::unordered_set<Key, Hash> wanted_;
  std::unordered_map<Key, TypeId, Hash> found_;
};

// Marks the roots (see the file's comment) and closes over them.
void mark_roots(const KernelImage& image, const KernelProfile& profile, KernelMarker& mark, SlimKernel& out) {
  const Btf& src = *image.btf;
  using Why = KernelKeep::Why;

  for (std::size_t i = 0; i < image.slots.size(); ++i)
    mark.keep(image.slots[i].id, {Why::BtfId, static_cast<std::uint32_t>(i)});

  // By name: the kernel's lookups, struct_ops types (bpf_struct_ops_NAME and NAME), --keep, families.
  FirstByName first;
  const auto lookups = kernel_lookups();
  for (std::uint32_t i = 0; i < lookups.size(); ++i)
    if (lookup_applies(lookups[i], image)) {
      out.lookups.push_back(i);
      first.want(lookups[i].name, lookups[i].kind);
    }
  std::vector<std::pair<TypeId, std::string_view>> struct_ops;  // (bpf_struct_ops_NAME, NAME)
  constexpr std::string_view kStructOps = "bpf_struct_ops_", kTrace = "btf_trace_", kIter = "bpf_iter_";
  const bool tracepoints = std::count(profile.families.begin(), profile.families.end(), KernelFamily::Tracepoints);
  const bool iterators = std::count(profile.families.begin(), profile.families.end(), KernelFamily::Iterators);
  for (TypeId id = 1; id < src.end_id(); ++id) {
    const TypeView t = src.type(id);
    if (t.name_off() == 0) continue;
    const std::string_view name = src.str(t.name_off());
    if (t.kind() == Kind::Struct && name.starts_with(kStructOps) && name.size() > kStructOps.size()) {
      struct_ops.push_back({id, name.substr(kStructOps.size())});
      first.want(name.substr(kStructOps.size()), Kind::Struct);
    } else if (tracepoints && t.kind() == Kind::Typedef && name.starts_with(kTrace)) {
      mark.keep(id, {Why::Family, static_cast<std::uint32_t>(KernelFamily::Tracepoints)});
    } else if (iterators && t.kind() == Kind::Func && name.starts_with(kIter)) {
      mark.keep(id, {Why::Family, static_cast<std::uint32_t>(KernelFamily::Iterators)});
    }
  }
  std::vector<TypePattern> keep;
  keep.reserve(profile.keep.size());  // `first` holds views of their names
  for (const std::string& k : profile.keep) {
    keep.push_back(TypePattern::parse(k, TypePattern::Globs::No));
    if (!keep.back().id()) first.want(keep.back().name(), keep.back().kind());
  }
  first.find(src);
  for (const std::uint32_t i : out.lookups) {
    const TypeId id = first(lookups[i].name, lookups[i].kind);
    if (lookups[i].whole)
      mark.whole(id, {Why::Lookup, i});
    else
      mark.keep(id, {Why::Lookup, i});
  }
  for (const auto& [value, name] : struct_ops) {
    mark.whole(value, {Why::StructOps});
    mark.whole(first(name, Kind::Struct), {Why::StructOps});
  }
  for (const TypeId id : profile.module_types) mark.everything(id, {Why::Modules});
  for (std::size_t i = 0; i < profile.keep.size(); ++i) {
    const TypePattern& p = keep[i];
    const TypeId id = p.id() ? (p.id() < src.end_id() ? p.id() : 0) : first(p.name(), p.kind());
    if (id == 0) p.fail_unmatched(src, "--keep");
    mark.whole(id, {Why::Keep, static_cast<std::uint32_t>(i)});
  }

  // The objects: what the loader and the verifier resolve, then the CO-RE relocations.
  const CoreTarget target(image.btf);
  for (const BpfObject* obj : profile.objects) out.refs.push_back(kernel_references(*obj, profile.attach));
  // What this kernel looks up by names its image and the objects tell (kernel_lookups.cc).
  out.found = found_lookups(image, profile, out.refs);
  FirstByName found;
  for (const FoundLookup& f : out.found) found.want(f.name, f.kind);
  found.find(src);
  for (std::uint32_t i = 0; i < out.found.size(); ++i) {
    out.found_ids.push_back(found(out.found[i].name, out.found[i].kind));
    if (out.found[i].whole)
      mark.whole(out.found_ids.back(), {Why::Found, i});
    else
      mark.keep(out.found_ids.back(), {Why::Found, i});
  }
  const KernelNameIndex names(target, out.refs);
  for (std::size_t o = 0; o < profile.objects.size(); ++o) {
    out.ref_ids.emplace_back();
    for (std::size_t r = 0; r < out.refs[o].size(); ++r) {
      const KernelRef& ref = out.refs[o][r];
      const TypeId id = ref.unchecked.empty() ? names.find(ref.lookup, ref.lookup_kind, false).id : 0;
      out.ref_ids.back().push_back(id);
      const KernelKeep why{Why::Reference, static_cast<std::uint32_t>(o), static_cast<std::uint32_t>(r)};
      if (ref.kind == KernelRefKind::StructOps)
        mark.whole(id, why);
      else
        mark.keep(id, why);
    }
  }
  const CandidateIndex candidates(target, profile.objects);
  out.answers.resize(profile.objects.size());
  for (std::size_t o = 0; o < profile.objects.size(); ++o)
    out.results.push_back(resolve_object(*profile.objects[o], candidates, &out.answers[o]));
  const Minimized core = mark_relocations(src, profile.objects, out.results);
  auto reason = [](const KeepReason& r) {
    return KernelKeep{Why::Relocation, static_cast<std::uint32_t>(r.object), r.relocation};
  };
  for (const TypeId id : core.kept_ids()) {
    if (core.whole[id]) mark.whole(id, reason(core.type_reasons.at(id)));
    mark.keep(id, reason(core.type_reasons.at(id)));
  }
  for (const auto& [id, members] : core.member_reasons) {
    if (!is_composite(src.type(id).kind())) continue;  // enums are kept whole
    for (const auto& [index, why] : members) mark.member(id, index, reason(why));
  }

  // The loads through pointers the verifier types by BTF: every member the kernel's walk takes.
  const KernelTypeNames kernel_names(src);
  for (std::size_t o = 0; o < profile.objects.size(); ++o) {
    const BpfObject& obj = *profile.objects[o];
    const BpfCode code(obj);
    KernelAccesses& acc = out.accesses.emplace_back();
    acc.programs = code.programs();
    acc.sections = code.sections();
    acc.contexts = program_contexts(obj, code, out.refs[o], out.ref_ids[o], kernel_names);
    acc.found = btf_accesses(obj, code, out.results[o], kernel_names, acc.contexts);
    const AccessKeeps keeps = access_keeps(src, acc.found, acc.contexts);
    const auto object = static_cast<std::uint32_t>(o);
    for (const AccessKeeps::MemberKeep& m : keeps.members) mark.member(m.type, m.member, {Why::Access, object, m.access});
    for (const AccessKeeps::WholeKeep& w : keeps.whole) mark.whole(w.type, {Why::Unfollowed, object, w.unfollowed});
  }
  mark.close();
}

// Writes the kept types, in source order, with the kept members and variables only.
std::string write_kept(const Btf& src, SlimKernel& out) {
  out.new_id.assign(src.end_id(), 0);
  for (auto& [id, members] : out.members) std::sort(members.begin(), members.end());
  // Declaration tags follow what they tag: the type, a parameter, or a kept member (renumbered).
  auto member_position = [&](TypeId id, std::uint32_t index) { return kept_member_position(out, id, index); };
  for (TypeId id = 1; id < src.end_id(); ++id) {
    const TypeView t = src.type(id);
    if (t.kind() != Kind::DeclTag || out.why[id].why != KernelKeep::Why::None) continue;
    const TypeId target = t.ref();
    if (target == 0 || out.why[target].why == KernelKeep::Why::None) continue;
    const std::int32_t component = t.decl_tag_component_idx();
    if (component >= 0 && is_composite(src.type(target).kind()) &&
        !member_position(target, static_cast<std::uint32_t>(component)))
      continue;
    out.why[id] = {KernelKeep::Why::Type, 0, 0, target};
  }
  TypeId next = 1;
  for (TypeId id = 1; id < src.end_id(); ++id)
    if (out.why[id].why != KernelKeep::Why::None) out.new_id[id] = next++;
  out.types = next - 1;

  RawWriter w;
  std::vector<std::uint32_t> words;
  for (TypeId id = 1; id < src.end_id(); ++id) {
    if (out.new_id[id] == 0) continue;
    const TypeView t = src.type(id);
    remapped_record(src, t, w, [&](TypeId ref) { return ref ? out.new_id[ref] : 0; }, words);
    // Entries kept of a struct, union or data section (3 words each): all of the rest.
    std::vector<std::uint32_t> entries;
    if (is_composite(t.kind())) {
      if (const auto m = out.members.find(id); m != out.members.end()) entries = m->second;
    } else if (t.kind() == Kind::Datasec) {
      for (unsigned i = 0; i < t.vlen(); ++i)
        if (out.new_id[t.secinfo(i).type] != 0) entries.push_back(i);
    } else {
      if (t.kind() == Kind::DeclTag && words[3] != 0xffffffffu && is_composite(src.type(t.ref()).kind()))
        words[3] = *member_position(t.ref(), words[3]);
      for (const std::uint32_t v : words) w.u32(v);
      continue;
    }
    w.u32(words[0]);
    w.u32((words[1] & ~0xffffu) | static_cast<std::uint32_t>(entries.size()));
    w.u32(words[2]);
    for (const std::uint32_t e : entries)
      for (std::size_t k = 0; k < 3; ++k) w.u32(words[3 + 3 * e + k]);
  }
  return in_order_of(src, w.finish());
}

// Sorts each set by id, as resolve_btfids does (a set8 entry's flags travel with its id).
void sort_sets(std::string& ids, std::span<const BtfIdSet> sets, ByteOrder order) {
  auto* bytes = reinterpret_cast<std::uint8_t*>(ids.data());
  for (const BtfIdSet& set : sets) {
    const std::uint64_t first = set.offset + (set.set8 ? 8 : 4), stride = set.set8 ? 8 : 4;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> entries;
    for (std::uint32_t i = 0; i < set.count; ++i)
      entries.push_back({order.u32(bytes + first + i * stride), set.set8 ? order.u32(bytes + first + i * stride + 4) : 0});
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::uint32_t i = 0; i < set.count; ++i) {
      put_u32(bytes + first + i * stride, entries[i].first, order);
      if (set.set8) put_u32(bytes + first + i * stride + 4, entries[i].second, order);
    }
  }
}

}  // namespace

SlimKernel slim_kernel(const KernelImage& image, const KernelProfile& profile) {
  SlimKernel out;
  KernelMarker mark(*image.btf, out);
  mark_roots(image, profile, mark, out);
  out.btf = write_kept(*image.btf, out);
  return out;
}

std::string verify_slim(const KernelImage& image, const KernelProfile& profile, const SlimKernel& slim) {
  const Btf& src = *image.btf;
  Minimized as_minimized;
  as_minimized.bytes = slim.btf;
  const std::shared_ptr<const Btf> out = as_minimized.parse("the slim BTF");
  for (const BtfIdSlot& slot : image.slots) {
    if (slot.id == 0) continue;
    const TypeId id = slim.new_id[slot.id];
    if (id == 0 || out->type(id).kind() != src.type(slot.id).kind() ||
        out->str(out->type(id).name_off()) != src.str(src.type(slot.id).name_off()))
      return fmt::format(".BTF_ids slot {} does not name the same type", esc(slot.symbol));
  }
  if (std::string diff = verify_lookups(image, slim, *out); !diff.empty()) return diff;
  if (std::string diff = verify_minimized(src, as_minimized, profile.objects, slim.results, slim.answers); !diff.empty())
    return "a relocation resolves differently: " + diff;
  const CoreTarget before(image.btf), after(out);
  const KernelNameIndex names_before(before, slim.refs), names_after(after, slim.refs);
  for (std::size_t o = 0; o < profile.objects.size(); ++o) {
    const auto a = resolve_kernel_refs(*profile.objects[o], slim.refs[o], names_before);
    const auto b = resolve_kernel_refs(*profile.objects[o], slim.refs[o], names_after);
    for (std::size_t r = 0; r < a.size(); ++r)
      if (a[r].status != b[r].status)
        return fmt::format("{}: {} {} is {} on the source and {} on the slim BTF{}{}", esc(profile.objects[o]->path()),
                           kernel_ref_kind_name(slim.refs[o][r].kind), esc(slim.refs[o][r].name),
                           ref_status_name(a[r].status), ref_status_name(b[r].status), b[r].reason.empty() ? "" : ": ",
                           b[r].reason);
  }
  for (std::size_t o = 0; o < profile.objects.size(); ++o)
    if (std::string diff = verify_accesses(src, *out, slim.new_id, *profile.objects[o], slim.accesses[o]);
        !diff.empty())
      return diff;
  return "";
}

std::string padded_btf(const KernelImage& image, const SlimKernel& slim) {
  if (slim.btf.size() > image.btf_size)
    fail(image.path(), "the slim BTF ({} bytes) is larger than the image's .BTF section ({} bytes)", slim.btf.size(),
         image.btf_size);
  std::string out = slim.btf;
  out.resize(image.btf_size, '\0');
  // The header's str_len (bytes 20..23) grows by the padding: the string section ends where .BTF ends.
  const ByteOrder order = image.btf->byte_order();
  const std::uint32_t str_len =
      order.u32(reinterpret_cast<const std::uint8_t*>(out.data()) + 20) + static_cast<std::uint32_t>(image.btf_size - slim.btf.size());
  const std::uint32_t raw = order.swapped() ? __builtin_bswap32(str_len) : str_len;
  std::memcpy(out.data() + 20, &raw, 4);
  return out;
}

std::string remapped_btf_ids(const KernelImage& image, const SlimKernel& slim) {
  const auto in = image.btf_ids();
  std::string out(reinterpret_cast<const char*>(in.data()), in.size());
  const ByteOrder order = image.btf->byte_order();
  for (const BtfIdSlot& slot : image.slots)
    put_u32(reinterpret_cast<std::uint8_t*>(out.data()) + slot.offset, slot.id ? slim.new_id[slot.id] : 0, order);
  sort_sets(out, image.sets, order);
  return out;
}

SlimModule slim_module(const KernelImage& image, const SlimKernel& slim, const KernelModule& module) {
  const Btf& mod = *module.btf;
  const Btf& base = *image.btf;
  const TypeId first = mod.first_id();
  auto member_position = [&](TypeId id, std::uint32_t index) { return kept_member_position(slim, id, index); };

  // The module's own types, numbered after the slim base's; a declaration tag on a member of a base
  // struct goes where that member does.
  std::vector<TypeId> own(mod.end_id() - first, 0);
  TypeId next = slim.types + 1;
  for (TypeId id = first; id < mod.end_id(); ++id) {
    const TypeView t = mod.type(id);
    if (t.kind() == Kind::DeclTag && t.ref() != 0 && t.ref() < first && t.decl_tag_component_idx() >= 0 &&
        is_composite(base.type(t.ref()).kind()) &&
        (slim.new_id[t.ref()] == 0 || !member_position(t.ref(), static_cast<std::uint32_t>(t.decl_tag_component_idx()))))
      continue;
    own[id - first] = next++;
  }
  // What they (and the module's .BTF_ids) name of the old base that the slim one lacks: copied after
  // them, structs and unions as shells, the rest with what it names in turn.
  std::unordered_map<TypeId, TypeId> imported;
  std::vector<TypeId> imports;
  auto need = [&](TypeId id) {
    if (id == 0 || id >= first || slim.new_id[id] != 0 || imported.count(id)) return;
    imported[id] = 0;
    imports.push_back(id);
  };
  for (TypeId id = first; id < mod.end_id(); ++id)
    if (own[id - first]) for_each_type_ref(mod.type(id), need);
  for (const BtfIdSlot& slot : module.slots) need(slot.id);
  for (std::size_t i = 0; i < imports.size(); ++i)
    if (!is_composite(base.type(imports[i]).kind())) for_each_type_ref(base.type(imports[i]), need);
  for (const TypeId id : imports) imported[id] = next++;
  auto map = [&](TypeId id) -> TypeId {
    if (id == 0) return 0;
    if (id >= first) return own[id - first];
    return slim.new_id[id] ? slim.new_id[id] : imported.at(id);
  };

  // Strings continue the padded base's: its string section ends where the image's .BTF does.
  const ByteOrder order = base.byte_order();
  const auto* hdr = reinterpret_cast<const std::uint8_t*>(slim.btf.data());
  const std::uint32_t base_strings = static_cast<std::uint32_t>(image.btf_size) - order.u32(hdr + 4) - order.u32(hdr + 16);
  RawWriter w(base_strings);
  // A name the slim base has is named there, as pahole names a module's (its strings are the slim BTF's).
  const std::uint32_t str_off = order.u32(hdr + 4) + order.u32(hdr + 16), str_len = order.u32(hdr + 20);
  const std::string_view strings = std::string_view(slim.btf).substr(str_off, str_len);
  for (std::size_t at = 0; at < strings.size();) {
    const std::size_t end = std::min(strings.find('\0', at), strings.size());
    w.reuse(strings.substr(at, end - at), static_cast<std::uint32_t>(at));
    at = end + 1;
  }
  std::vector<std::uint32_t> words;
  auto copy = [&](const Btf& btf, TypeId id, bool shell) {
    const TypeView t = btf.type(id);
    if (shell) {
      w.u32(w.str(btf.str(t.name_off())));
      w.u32(static_cast<std::uint32_t>(t.kind()) << 24);
      w.u32(t.size());
      return;
    }
    remapped_record(btf, t, w, map, words);
    if (t.kind() == Kind::DeclTag && t.ref() < first && words[3] != 0xffffffffu && is_composite(base.type(t.ref()).kind()))
      words[3] = *member_position(t.ref(), words[3]);
    for (const std::uint32_t v : words) w.u32(v);
  };
  for (TypeId id = first; id < mod.end_id(); ++id)
    if (own[id - first]) copy(mod, id, false);
  for (const TypeId id : imports) copy(base, id, is_composite(base.type(id).kind()));

  SlimModule out;
  out.btf = in_order_of(base, w.finish());
  out.own = static_cast<std::uint32_t>(std::count_if(own.begin(), own.end(), [](TypeId t) { return t != 0; }));
  out.imported = static_cast<std::uint32_t>(imports.size());
  if (!module.slots.empty() || !module.sets.empty()) {
    // The module's .BTF_ids, remapped in place: it lies in the module's file.
    out.ids = module.ids_bytes;
    for (const BtfIdSlot& slot : module.slots)
      put_u32(reinterpret_cast<std::uint8_t*>(out.ids.data()) + slot.offset, map(slot.id), order);
    sort_sets(out.ids, module.sets, order);
  }
  return out;
}

}  // namespace btfslim
