// Minimizing: mark what the relocations resolved against, then write a BTF of only that.
//
// The engine's results say, for every relocation, which source types matched and the path each match
// took (members, anonymous members on the way, array elements). From them we mark what libbpf's checks
// read when the same relocation is resolved against the output:
// - a field access: each member on the path (structs keep only marked members, at their bit offsets),
//   the typedef/modifier chains between them, arrays whole with their index type, and the field's own
//   type as far as field compatibility looks: a struct or union as a shell (kind, name, size), a
//   pointer with its pointee only if something else needs the pointee (else `void *`), ints, floats,
//   enums and forward declarations whole;
// - a type-based relocation: what type compatibility compares, recursing through pointers, arrays and
//   function prototypes down to shells; TYPE_MATCHES also compares members by name and their types,
//   so composites outside pointers are kept with all their members;
// - an enumerator relocation: the enum whole.
// The INT libbpf sizes pointers by ("long") is kept too. Then the marked types are written in source
// order (pointers to unmarked types become pointers to void), and libbpf's btf__dedup folds what is
// identical. The same inputs give the same bytes.
#include "btfslim/minimize.h"
#include "btfslim/error.h"

#include "../core/spec.h"
#include "raw_writer.h"

#include <bpf/btf.h>
#include <fmt/format.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace btfslim {
namespace {

using core::kind_of;

bool is_modifier_or_typedef(Kind k) {
  return k == Kind::Typedef || k == Kind::Const || k == Kind::Volatile || k == Kind::Restrict || k == Kind::TypeTag;
}

// What `id` names past typedefs and modifiers (0 for void, and for a loop of them).
TypeId resolve(const Btf& btf, TypeId id) {
  TypeId out = 0;
  return core::skip_mods_and_typedefs(btf, id, out) ? out : 0;
}

class Marker {
 public:
  Marker(const Btf& src, Minimized& out) : src_(src), out_(out) {
    out_.kept.assign(src.end_id(), false);
    out_.named.assign(src.end_id(), false);
    out_.pointee.assign(src.end_id(), false);
    out_.whole.assign(src.end_id(), false);
  }
  // Goes on marking into what another Marker marked.
  struct Continue {};
  Marker(const Btf& src, Minimized& out, Continue) : src_(src), out_(out) {}

  void set_reason(KeepReason r) { reason_ = r; }

  // Candidates are found by name; a struct reached only as a member's type or a path's container is
  // compared by kind alone, and is written without its name.
  void named(TypeId id) {
    if (id != 0) out_.named[id] = true;
  }
  // Type compatibility and TYPE_MATCHES look through pointers; field compatibility does not, so a
  // pointer only a field needs is written as `void *`.
  void pointee(TypeId ptr) {
    if (ptr != 0) out_.pointee[ptr] = true;
  }

  // Composites whose exact members a check compares (TYPE_MATCHES, --keep): their anonymous members
  // are written as they are, not flattened into them.
  void whole(TypeId id) {
    if (id != 0) out_.whole[id] = true;
  }

  void type(TypeId id) {
    if (id == 0) return;
    if (!out_.kept[id]) {
      out_.kept[id] = true;
      out_.type_reasons[id] = reason_;
    }
  }

  // Enumerators are kept like members (all of them unless some are named).
  void enumerator(TypeId id, std::uint32_t index) { member(id, index); }

  void member(TypeId id, std::uint32_t index) {
    type(id);
    auto& list = out_.member_reasons[id];
    for (const auto& m : list)
      if (m.first == index) return;
    list.push_back({index, reason_});
  }

  // The type of a field, as far as field compatibility and sizes look. Typedefs and modifiers are
  // skipped there (references to them are written as references to what they name), and a struct or
  // union is only compared by kind and sized: unless something else keeps it, it is written as an
  // anonymous shell of its size.
  void field_type(TypeId id) {
    for (int guard = 0; guard < kChain; ++guard) {
      id = resolve(src_, id);
      if (id == 0) return;
      const TypeView t = src_.type(id);
      if (t.kind() == Kind::Struct || t.kind() == Kind::Union) return;
      type(id);
      if (t.kind() != Kind::Array) return;
      type(t.array().index_type);
      id = t.array().type;
    }
  }

  // What type compatibility (types_are_compat) compares, past typedefs and modifiers. Each type is
  // walked once: crafted BTF (prototypes taking prototypes) cannot make this exponential.
  void compat_type(TypeId id, int depth = 0) {
    if (depth > kDepth) return;
    for (int guard = 0; guard < kChain; ++guard) {
      id = resolve(src_, id);
      if (id == 0 || compat_seen_[id]) return;
      compat_seen_[id] = true;
      type(id);
      const TypeView t = src_.type(id);
      switch (t.kind()) {
        case Kind::Ptr:
          pointee(id);
          id = t.ref();
          continue;
        case Kind::Array:
          type(t.array().index_type);
          id = t.array().type;
          continue;
        case Kind::FuncProto:
          for (unsigned i = 0; i < t.vlen(); ++i) compat_type(t.param(i).type, depth + 1);
          id = t.ref();
          continue;
        default:
          return;
      }
    }
  }

  // What TYPE_MATCHES compares: names at every level, composites outside pointers with all members.
  void match_type(TypeId id, bool behind_ptr, int depth = 0) {
    if (depth > kDepth) return;
    for (int guard = 0; guard < kChain; ++guard) {
      id = resolve(src_, id);
      if (id == 0) return;
      auto seen = match_seen_[behind_ptr].find(id);
      if (seen != match_seen_[behind_ptr].end()) return;
      match_seen_[behind_ptr].insert(id);
      type(id);
      named(id);  // TYPE_MATCHES compares names at every level
      const TypeView t = src_.type(id);
      switch (t.kind()) {
        case Kind::Ptr:
          pointee(id);
          behind_ptr = true;
          id = t.ref();
          continue;
        case Kind::Array:
          type(t.array().index_type);
          id = t.array().type;
          continue;
        case Kind::FuncProto:
          for (unsigned i = 0; i < t.vlen(); ++i) match_type(t.param(i).type, behind_ptr, depth + 1);
          id = t.ref();
          continue;
        case Kind::Struct:
        case Kind::Union:
          if (!behind_ptr) whole(id);
          if (!behind_ptr)
            for (unsigned i = 0; i < t.vlen(); ++i) {
              member(id, i);
              match_type(t.member(i).type, false, depth + 1);
            }
          return;
        case Kind::Enum:
        case Kind::Enum64:
          for (unsigned i = 0; i < t.vlen(); ++i) enumerator(id, i);  // matched by name, all of them
          return;
        default:
          return;
      }
    }
  }

  // --keep: the type, what it names, and all its members or enumerators, with the names of the ints
  // they use (for C printed from the output: `int x;` needs its int's name).
  void keep_whole(TypeId id) {
    chain(id);
    const TypeId r = resolve(src_, id);
    if (r == 0) return;
    const TypeView t = src_.type(r);
    if (t.kind() == Kind::Struct || t.kind() == Kind::Union) {
      whole(r);
      for (unsigned i = 0; i < t.vlen(); ++i) {
        member(r, i);
        field_type(t.member(i).type);
        const TypeId m = resolve(src_, t.member(i).type);
        if (m != 0 && src_.type(m).kind() == Kind::Int) named(m);
      }
    } else if (t.kind() == Kind::Enum || t.kind() == Kind::Enum64) {
      for (unsigned i = 0; i < t.vlen(); ++i) enumerator(r, i);
    }
  }

  // A candidate and the chain of typedefs and modifiers from it to what it names, all kept: candidates
  // are found by their own name and kind. What the chain ends at is kept whole (not as a shell).
  void chain(TypeId id) {
    for (int guard = 0; guard < kChain && id != 0; ++guard) {
      type(id);
      named(id);
      const TypeView t = src_.type(id);
      if (!is_modifier_or_typedef(t.kind())) {
        if (t.kind() == Kind::Array) field_type(id);
        return;
      }
      id = t.ref();
    }
  }

 private:
  static constexpr int kChain = 1 << 16;
  static constexpr int kDepth = 64;
  const Btf& src_;
  Minimized& out_;
  KeepReason reason_;
  std::vector<bool> compat_seen_ = std::vector<bool>(src_.end_id(), false);
  std::unordered_set<TypeId> match_seen_[2];  // by behind_ptr
};

void mark_relocation(Marker& mark, const BpfObject& obj, const CoreRelocation& r, const CoreResult& res) {
  for (const TargetSpec& m : res.matches) {
    if (m.btf == nullptr) continue;
    if (is_type_kind(r.kind)) {
      mark.chain(m.root);  // the candidate itself, found by its name and kind
      if (r.kind == static_cast<std::uint32_t>(RelocKind::TypeMatches))
        mark.match_type(m.root, false);
      else
        mark.compat_type(m.root);
      continue;
    }
    mark.chain(m.root);
    if (is_enumval_kind(r.kind)) {
      // The enum keeps the enumerators relocations name: they are found by name, the rest is unread.
      if (!m.steps.empty()) mark.enumerator(m.steps[0].type, m.steps[0].index);
      continue;
    }
    // Field: every step of the path; the last one's type as field compatibility sees it.
    TypeId last = 0;
    for (std::size_t i = 0; i < m.steps.size(); ++i) {
      const TargetSpec::Step& s = m.steps[i];
      if (s.member) {
        mark.member(s.type, s.index);
        last = m.btf->type(s.type).member(s.index).type;
      } else if (i > 0) {
        last = s.type;  // the array
      } else {
        continue;  // the root pointer's index: the root, already marked
      }
      mark.field_type(last);
    }
  }
  (void)obj;
}

// Writes the marked types of `src` from id `cut` on, in source order, numbered from `cut`: a split BTF
// on a base that has the source's types below `cut` (references to them stay as they are), or, with
// `cut` 1, a standalone BTF. `string_base`: the base's string bytes.
std::string write_marked(const Btf& src, Minimized& m, TypeId cut, std::uint32_t string_base,
                         std::uint32_t& count) {
  // Anonymous structs and unions that a path only goes through are flattened into the struct holding
  // them: their kept members are written into it at their absolute bit offsets. libbpf matches a field
  // by name, searching anonymous members depth first, and the local access path names only named
  // fields, so the result is the same; each flattened level saves a type and a member. Not flattened:
  // into a union (the kernel wants its members at offset 0), across kind_flag encodings, or in and out
  // of composites whose members a check compares whole (TYPE_MATCHES, --keep).
  struct OutMember {
    std::uint32_t name_off;
    TypeId type;
    std::uint32_t offset;  // as written, with the bitfield size on top under kind_flag
  };
  auto kept_indexes = [&](TypeId id) {
    std::vector<std::uint32_t> out;
    if (const auto f = m.member_reasons.find(id); f != m.member_reasons.end())
      for (const auto& [index, reason] : f->second) out.push_back(index);
    std::sort(out.begin(), out.end());
    return out;
  };
  // The anonymous composite member `mm` (at `bit`, in a struct with `kflag`) may be written into.
  auto flattenable = [&](bool kflag, const Member& mm, std::uint64_t bit) -> TypeId {
    if (mm.name_off != 0 || mm.type < cut || mm.type >= src.end_id() || !m.kept[mm.type]) return 0;
    const TypeView c = src.type(mm.type);
    if ((c.kind() != Kind::Struct && c.kind() != Kind::Union) || c.name_off() != 0) return 0;
    if (m.whole[mm.type] || m.named[mm.type] || m.member_reasons.find(mm.type) == m.member_reasons.end()) return 0;
    if (kflag && bit + std::uint64_t{c.size()} * 8 >= (std::uint64_t{1} << 24)) return 0;
    // Each kept member must say the same in the holder's encoding: a bitfield is written with
    // kind_flag as a size in the offset, without it as an INT of fewer bits.
    if (c.kflag() != kflag)
      for (const std::uint32_t i : kept_indexes(mm.type)) {
        const Member cm = c.member(i);
        if (c.kflag() && c.member_bitfield_size(cm) != 0) return 0;
        if (!c.kflag()) {
          const TypeId r = resolve(src, cm.type);
          if (r == 0) continue;
          const TypeView it = src.type(r);
          const std::uint32_t bits = it.int_data() & 0xff, at = (it.int_data() >> 16) & 0xff;
          if (it.kind() == Kind::Int && (at != 0 || bits != it.size() * 8)) return 0;
        }
      }
    return mm.type;
  };
  // The members written for composite `id`; the composites flattened into it are added to `inlined`.
  auto members_of = [&](TypeId id, std::vector<TypeId>* inlined = nullptr) {
    std::vector<OutMember> out;
    const TypeView t = src.type(id);
    const bool flatten = t.kind() == Kind::Struct && !m.whole[id];
    const bool kflag = t.kflag();
    auto expand = [&](auto& self, TypeId holder, std::uint64_t base, int depth) -> void {
      const TypeView h = src.type(holder);
      for (const std::uint32_t i : kept_indexes(holder)) {
        const Member mm = h.member(i);
        const std::uint64_t bit = base + h.member_bit_offset(mm);
        if (const TypeId child = flatten && depth < 32 ? flattenable(kflag, mm, bit) : 0) {
          if (inlined) inlined->push_back(child);
          m.flattened.insert({holder, i});
          self(self, child, bit, depth + 1);
          continue;
        }
        const std::uint32_t offset = kflag ? (h.member_bitfield_size(mm) << 24 | static_cast<std::uint32_t>(bit))
                                           : static_cast<std::uint32_t>(bit);
        out.push_back({mm.name_off, mm.type, offset});
      }
    };
    expand(expand, id, 0, 0);
    return out;
  };

  // Which kept types are written: a flattened composite only while something other than the struct
  // it is flattened into still refers to it (a pointer, a typedef, a union's member...).
  // (The kept ids from `cut` on, in order: a few hundred, where a scan of every source id costs as much
  // as the rest of writing.)
  const std::vector<TypeId> kept_list = m.kept_ids(cut);
  std::vector<bool> written = m.kept;
  std::vector<TypeId> dropped;
  for (const TypeId id : kept_list) {
    if (src.type(id).kind() != Kind::Struct || m.whole[id]) continue;
    std::vector<TypeId> inlined;
    (void)members_of(id, &inlined);
    for (const TypeId child : inlined)
      if (written[child]) {
        written[child] = false;
        dropped.push_back(child);
      }
  }
  for (bool changed = !dropped.empty(); changed;) {
    changed = false;
    std::vector<bool> referenced(src.end_id(), false);
    auto refer = [&](TypeId to) {
      const TypeId r = to < cut ? to : resolve(src, to);
      if (r != 0 && r < referenced.size()) referenced[r] = true;
    };
    for (const TypeId id : kept_list) {
      if (!written[id]) continue;
      const TypeView t = src.type(id);
      if (t.kind() == Kind::Ptr) {
        if (m.pointee[id]) refer(t.ref());
      } else if (t.kind() == Kind::Struct || t.kind() == Kind::Union) {
        for (const OutMember& om : members_of(id)) refer(om.type);
      } else {
        for_each_type_ref(t, refer);
      }
    }
    for (const TypeId d : dropped)
      if (!written[d] && referenced[d]) written[d] = changed = true;
  }

  std::vector<TypeId> kept_ids;
  for (const TypeId id : kept_list)
    if (written[id]) kept_ids.push_back(id);
  std::unordered_map<TypeId, TypeId> new_id;
  TypeId next = cut;
  for (const TypeId id : kept_ids) new_id[id] = next++;
  // Anonymous struct shells standing in for structs and unions that are only a field's type, one per
  // size, numbered after the kept types in the order they are first needed.
  std::vector<std::uint32_t> shell_sizes;
  std::unordered_map<std::uint32_t, TypeId> shell_of_size;
  // A reference, past typedefs and modifiers: to the kept type, or a shell, or void (a pointer's target
  // that nothing needs).
  auto ref = [&](TypeId id, bool pointee = false) -> TypeId {
    if (id < cut) return id;  // the base's, as it is
    const TypeId r = resolve(src, id);
    if (r < cut) return r;
    if (m.kept[r]) return new_id.at(r);
    const TypeView t = src.type(r);
    if (pointee || (t.kind() != Kind::Struct && t.kind() != Kind::Union)) return 0;
    auto [it, inserted] = shell_of_size.try_emplace(t.size(), next);
    if (inserted) {
      shell_sizes.push_back(t.size());
      ++next;
    }
    return it->second;
  };

  static const std::vector<std::pair<std::uint32_t, KeepReason>> kNone;
  RawWriter w(string_base);
  for (const TypeId id : kept_ids) {
    const auto found = m.member_reasons.find(id);
    const auto& kept_members = found == m.member_reasons.end() ? kNone : found->second;
    const TypeView t = src.type(id);
    const Kind k = t.kind();
    const bool composite = k == Kind::Struct || k == Kind::Union;
    const bool any_enum = k == Kind::Enum || k == Kind::Enum64;
    // An enum that only types a field keeps its enumerators (nothing names any, so all).
    const bool pruned = composite || (any_enum && !kept_members.empty());
    std::vector<std::pair<std::uint32_t, KeepReason>> members;
    if (pruned) {
      members = kept_members;
      std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    const std::vector<OutMember> fields = composite ? members_of(id) : std::vector<OutMember>{};
    const std::uint32_t vlen = composite ? static_cast<std::uint32_t>(fields.size())
                               : pruned  ? static_cast<std::uint32_t>(members.size())
                                         : t.vlen();
    auto entry = [&](unsigned i) { return pruned ? members[i].first : i; };
    // Names only field compatibility would read are dropped: structs and unions compare by kind, ints
    // by size and encoding. Kept: what candidates are found by, what TYPE_MATCHES compares, the "long"
    // libbpf sizes pointers by, and the ints of --keep's types (C printed from them needs the names).
    const bool anonymous = (composite || k == Kind::Int) && !m.named[id];
    w.u32(anonymous ? 0 : w.str(src.str(t.name_off())));
    w.u32((t.info() & ~0xffffu) | vlen);
    switch (k) {
      case Kind::Ptr:
        w.u32(m.pointee[id] ? ref(t.ref(), true) : 0);
        break;
      case Kind::Typedef:
      case Kind::Volatile:
      case Kind::Const:
      case Kind::Restrict:
      case Kind::TypeTag:
      case Kind::Func:
      case Kind::Var:
      case Kind::DeclTag:
        w.u32(ref(t.ref()));
        break;
      case Kind::FuncProto:
        w.u32(ref(t.ref()));
        break;
      default:
        w.u32(t.size());
        break;
    }
    switch (k) {
      case Kind::Int:
        w.u32(t.int_data());
        break;
      case Kind::Array:
        w.u32(ref(t.array().type));
        w.u32(ref(t.array().index_type));
        w.u32(t.array().nelems);
        break;
      case Kind::Struct:
      case Kind::Union:
        for (const OutMember& om : fields) {
          w.u32(w.str(src.str(om.name_off)));
          w.u32(ref(om.type));
          w.u32(om.offset);
        }
        break;
      case Kind::Enum:
        for (unsigned i = 0; i < vlen; ++i) {
          w.u32(w.str(src.str(t.enum_value(entry(i)).name_off)));
          w.u32(t.enum_value(entry(i)).value);
        }
        break;
      case Kind::Enum64:
        for (unsigned i = 0; i < vlen; ++i) {
          const Enum64Value v = t.enum64_value(entry(i));
          w.u32(w.str(src.str(v.name_off)));
          w.u32(static_cast<std::uint32_t>(v.value));
          w.u32(static_cast<std::uint32_t>(v.value >> 32));
        }
        break;
      case Kind::FuncProto:
        for (unsigned i = 0; i < vlen; ++i) {
          w.u32(w.str(src.str(t.param(i).name_off)));
          w.u32(ref(t.param(i).type));
        }
        break;
      case Kind::Var:
        w.u32(t.var_linkage());
        break;
      case Kind::DeclTag:
        w.u32(static_cast<std::uint32_t>(t.decl_tag_component_idx()));
        break;
      default:
        break;
    }
  }
  for (const std::uint32_t size : shell_sizes) {
    w.u32(0);
    w.u32(static_cast<std::uint32_t>(Kind::Struct) << 24);
    w.u32(size);
  }
  count = next - cut;
  return w.finish();
}

using LibbpfPtr = std::unique_ptr<struct btf, void (*)(struct btf*)>;

LibbpfPtr libbpf_btf(struct btf* btf) { return LibbpfPtr(btf, btf__free); }

// libbpf's copy of raw BTF bytes (in either byte order): for the output's base and for what we wrote.
LibbpfPtr libbpf_parse(const Btf& owner_of_errors, std::span<const std::uint8_t> raw, const char* what) {
  LibbpfPtr btf = libbpf_btf(btf__new(raw.data(), static_cast<__u32>(raw.size())));
  if (!btf) fail(owner_of_errors.name(), "internal error: libbpf rejects {} ({})", what, std::strerror(errno));
  return btf;
}

// libbpf 1.1.2 exports no btf__new_split: split BTF bytes reach it as a file, here one in memory.
LibbpfPtr libbpf_parse_split(const Btf& source, const std::string& raw, struct btf* base) {
  const int fd = ::memfd_create("btfslim-split", MFD_CLOEXEC);
  if (fd < 0) fail(source.name(), "cannot create an in-memory file for the split BTF: {}", std::strerror(errno));
  const std::unique_ptr<int, void (*)(int*)> close_fd(new int(fd), [](int* f) { ::close(*f); delete f; });
  for (std::size_t done = 0; done < raw.size();) {
    const ssize_t n = ::write(fd, raw.data() + done, raw.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail(source.name(), "cannot write the split BTF to memory: {}{}", n < 0 ? std::strerror(errno) : "short write",
           n < 0 && errno == EFBIG ? " (a file-size limit, ulimit -f, applies to memory files too)" : "");
    done += static_cast<std::size_t>(n);
  }
  const std::string path = fmt::format("/proc/self/fd/{}", fd);
  LibbpfPtr btf = libbpf_btf(btf__parse_raw_split(path.c_str(), base));
  if (!btf)
    fail(source.name(), "internal error: libbpf rejects the minimized split BTF ({})", std::strerror(errno));
  return btf;
}

bool same_bytes(const Btf& a, const Btf& b) {
  return a.raw().size() == b.raw().size() && std::memcmp(a.raw().data(), b.raw().data(), a.raw().size()) == 0;
}

}  // namespace

CoreTarget minimize_target(const std::shared_ptr<const Btf>& btf) {
  // A module's split BTF is searched as libbpf searches modules: its base first.
  if (btf->is_split()) return CoreTarget(btf->base_shared(), {btf});
  return CoreTarget(btf);
}

std::vector<TypeId> Minimized::kept_ids(TypeId first) const {
  std::vector<TypeId> out;
  out.reserve(type_reasons.size());
  for (const auto& [id, reason] : type_reasons)
    if (id >= first) out.push_back(id);
  std::sort(out.begin(), out.end());
  return out;
}

std::shared_ptr<const Btf> Minimized::parse(const std::string& name) const {
  auto owner = std::make_shared<std::string>(bytes);
  return Btf::parse(name, owner,
                    std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size()),
                    base);
}

struct RelocationMarker::State {
  explicit State(const Btf& source) : mark(source, out) {}
  Minimized out;
  Marker mark;
};

RelocationMarker::RelocationMarker(const Btf& source) : s_(std::make_unique<State>(source)) {}
RelocationMarker::~RelocationMarker() = default;

void RelocationMarker::add(const BpfObject& object, int index, const CoreResults& results) {
  // Relocations that ask the same question share their matches: marked once, for the first of them.
  // A question's last matches are looked at before the set of all: nearly always they are the same.
  // The set is the object's own: its results, which the identities point into, go with it.
  std::unordered_set<const void*> marked;
  const auto relos = object.relocations();
  std::vector<const void*> last(object.question_count());
  for (std::size_t i = 0; i < relos.size(); ++i) {
    const void* q = results[i].matches.identity();
    if (q && q == last[relos[i].question]) continue;
    if (q) last[relos[i].question] = q;
    if (q && !marked.insert(q).second) continue;
    s_->mark.set_reason({index, static_cast<std::uint32_t>(i)});
    mark_relocation(s_->mark, object, relos[i], results[i]);
  }
}

Minimized RelocationMarker::finish() { return std::move(s_->out); }

Minimized mark_relocations(const Btf& source, const std::vector<const BpfObject*>& objects,
                            const std::vector<CoreResults>& results) {
  RelocationMarker marker(source);
  for (std::size_t o = 0; o < objects.size(); ++o) marker.add(*objects[o], static_cast<int>(o), results[o]);
  return marker.finish();
}

Minimized minimize(const Btf& source, const std::vector<const BpfObject*>& objects,
                   const std::vector<CoreResults>& results, const MinimizeOptions& options) {
  return minimize(source, mark_relocations(source, objects, results), options);
}

Minimized minimize(const Btf& source, Minimized marked, const MinimizeOptions& options) {
  Minimized out = std::move(marked);
  Marker mark(source, out, Marker::Continue{});
  // libbpf sizes pointers by the first INT named like "long", and by the host's pointer size (8 on the
  // 64-bit hosts that load BPF) where there is none: a 4-byte long is kept where a pointer is.
  bool any_pointer = false;
  for (const auto& [id, reason] : out.type_reasons) any_pointer = any_pointer || source.type(id).kind() == Kind::Ptr;
  if (const TypeId long_id = core::long_type(source); long_id && any_pointer && source.type(long_id).size() != 8) {
    mark.type(long_id);
    mark.named(long_id);
  }
  for (const std::string& name : options.keep) {
    const TypePattern pattern = TypePattern::parse(name, TypePattern::Globs::No);
    bool found = false;
    for (TypeId id = 1; id < source.end_id(); ++id) {
      if (!pattern.matches(source, id)) continue;
      // A bare NAME means the type: a function, variable or section of that name has nothing to keep.
      const Kind k = source.type(id).kind();
      if (!pattern.kind() && !pattern.id() &&
          (k == Kind::Func || k == Kind::Var || k == Kind::DeclTag || k == Kind::Datasec))
        continue;
      found = true;
      mark.keep_whole(id);
    }
    if (!found) pattern.fail_unmatched(source, "--keep");
  }

  // C printed from --keep's types needs the names of the ints it uses, however deep.
  if (!options.keep.empty())
    for (const auto& [id, reason] : out.type_reasons)
      if (source.type(id).kind() == Kind::Int) mark.named(id);

  // Where the output goes: standalone; split on the source's own base (a module: what the base has is
  // referenced as it is, only the module's types are written); or split on another base, onto which
  // the standalone result is appended and deduplicated, so that what the base has is dropped.
  out.base = options.base ? options.base : source.base_shared();
  TypeId cut = 1;
  if (out.base) {
    if (out.base->big_endian() != source.big_endian())
      fail(out.base->name(), "is {}-endian and {} is not: a split BTF has its base's byte order",
           out.base->big_endian() ? "big" : "little", esc(source.name()));
    if (source.is_split() && same_bytes(*out.base, *source.base()))
      cut = source.first_id();
    else if (!source.is_split() && same_bytes(*out.base, source))
      cut = source.end_id();  // the base is the source: it has everything
  }

  std::uint32_t count = 0;
  const std::uint32_t string_base = cut > 1 ? out.base->string_end() : 0;
  const std::string raw = write_marked(source, out, cut, string_base, count);

  // libbpf parses what we wrote (a check of its own), folds duplicates (on a base: also into the
  // base's types), and writes it back in the source's byte order.
  LibbpfPtr base_btf = libbpf_btf(nullptr);
  if (out.base) base_btf = libbpf_parse(*out.base, out.base->raw(), "the base BTF");
  LibbpfPtr btf = libbpf_btf(nullptr);
  if (cut > 1) {
    btf = libbpf_parse_split(source, raw, base_btf.get());
  } else {
    btf = libbpf_parse(source, std::span(reinterpret_cast<const std::uint8_t*>(raw.data()), raw.size()),
                       "the minimized BTF");
    if (out.base) {
      // Deduplicated alone first: libbpf maps a base type to one copy in the split part, so two equal
      // copies (two `void *`) would keep a struct using both from matching the base's.
      if (btf__dedup(btf.get(), nullptr) != 0)
        fail(source.name(), "internal error: libbpf cannot deduplicate the minimized BTF ({})", std::strerror(errno));
      LibbpfPtr split = libbpf_btf(btf__new_empty_split(base_btf.get()));
      if (!split || btf__add_btf(split.get(), btf.get()) < 0)
        fail(source.name(), "internal error: libbpf cannot append the minimized types to {} ({})", esc(out.base->name()),
             std::strerror(errno));
      btf = std::move(split);
    }
  }
  if (btf__dedup(btf.get(), nullptr) != 0)
    fail(source.name(), "internal error: libbpf cannot deduplicate the minimized BTF ({})", std::strerror(errno));
  if (source.big_endian()) btf__set_endianness(btf.get(), BTF_BIG_ENDIAN);
  __u32 size = 0;
  const void* data = btf__raw_data(btf.get(), &size);
  if (!data) fail(source.name(), "internal error: libbpf cannot write the minimized BTF");
  out.bytes.assign(static_cast<const char*>(data), size);
  out.types = btf__type_cnt(btf.get()) - (out.base ? btf__type_cnt(base_btf.get()) : 1);
  return out;
}

std::string verify_minimized(const Btf& source, const Minimized& minimized, const std::vector<const BpfObject*>& objects,
                             const std::vector<CoreResults>& expected, const std::vector<AnswerLog>& answers) {
  RootNames roots;
  for (const BpfObject* o : objects) roots.add(*o);
  const MinimizedVerifier verifier(source, minimized, roots.roots());
  for (std::size_t o = 0; o < objects.size(); ++o) {
    std::string diff = verifier.check(*objects[o], expected[o], answers[o]);
    objects[o]->release_pages();  // read again from the page cache by whatever needs it next
    if (!diff.empty()) return diff;
  }
  return "";
}

namespace {

// Split output is searched as libbpf and the kernel search a module's BTF on its vmlinux (and as check
// searches --btf SPLIT -B BASE): its base first, its own types only for names the base lacks. A type the
// output repeats from its base by name is then never a candidate (cilium/ebpf weighs both: the output
// must resolve the same under either rule, and this one is the stricter).
CoreTarget verified_target(const std::shared_ptr<const Btf>& out) {
  return out->is_split() ? CoreTarget(out->base_shared(), {out}) : CoreTarget(out);
}

// check()'s comparison of one relocation's results, folded into `h`: the status; for an Ok one its
// value and sizes, or for a target type id the kind and name of the type, whose id differs by design.
std::uint64_t fold_result(std::uint64_t h, const Btf& btf, const CoreRelocation& relo, const CoreResult& r) {
  auto mix = [&h](std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdu;
  };
  mix(static_cast<std::uint64_t>(r.status));
  if (r.status != CoreStatus::Ok) return h;
  if (relo.kind == static_cast<std::uint32_t>(RelocKind::TypeIdTarget) && r.value != 0) {
    const TypeView t = btf.type(static_cast<TypeId>(r.value));
    mix(static_cast<std::uint64_t>(t.kind()) | 1u << 8);
    mix(std::hash<std::string_view>{}(btf.str(t.name_off())));
    return h;
  }
  mix(r.value);
  mix(std::uint64_t{r.local_size} << 8 | r.target_size);
  return h;
}

}  // namespace

std::uint64_t MinimizedVerifier::source_digest(const Btf& source, const BpfObject& object, const CoreResults& results) {
  const auto relos = object.relocations();
  std::uint64_t h = relos.size();
  for (std::size_t i = 0; i < results.size(); ++i) h = fold_result(h, source, relos[i], results[i]);
  return h;
}

std::uint64_t MinimizedVerifier::output_digest(const BpfObject& object) const {
  const auto relos = object.relocations();
  std::uint64_t h = relos.size();
  resolve_object(object, index_, [&](std::size_t i, CoreResult&& r) { h = fold_result(h, *out_, relos[i], r); });
  return h;
}

MinimizedVerifier::MinimizedVerifier(const Btf& source, const Minimized& minimized,
                                     std::span<const BpfObject::RootName> roots)
    : source_(source),
      out_(minimized.parse("the minimized BTF")),
      target_(verified_target(out_)),
      index_(target_, roots) {}

std::string MinimizedVerifier::check(const BpfObject& object, const CoreResults& expected,
                                     const AnswerLog& answers) const {
  // Only the relocations whose answer is not the one they took on the source, each compared as it is
  // made: the output's results are never all held beside the source's, and the code is not read again.
  std::string diff;
  const auto relos = object.relocations();
  resolve_changed(object, index_, answers, [&](std::size_t i, CoreResult&& b) {
    const CoreResult& a = expected[i];
    bool same = a.status == b.status;
    if (same && a.status == CoreStatus::Ok) {
      if (relos[i].kind == static_cast<std::uint32_t>(RelocKind::TypeIdTarget) && a.value != 0 && b.value != 0) {
        // Ids differ by design: the types must be the same kind and name.
        const TypeView ta = source_.type(static_cast<TypeId>(a.value)), tb = out_->type(static_cast<TypeId>(b.value));
        same = ta.kind() == tb.kind() && source_.str(ta.name_off()) == out_->str(tb.name_off());
      } else {
        same = a.value == b.value && a.local_size == b.local_size && a.target_size == b.target_size;
      }
    }
    if (!same)
      diff = fmt::format("{}: relocation #{} of section '{}' ({} {}): {} {} on the source, {} {} on the output{}",
                         esc(object.path()), relos[i].index, esc(object.sections()[relos[i].section].name),
                         reloc_kind_name(relos[i].kind), describe_access(object, relos[i]), status_name(a.status),
                         a.value, status_name(b.status), b.value,
                         std::string_view(b.reason).empty() ? "" : fmt::format(" ({})", std::string_view(b.reason)));
    return diff.empty();
  });
  return diff;
}

}  // namespace btfslim
