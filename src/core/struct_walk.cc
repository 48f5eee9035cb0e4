// The kernel's walk of a struct for a load through a BTF-typed pointer (kernel/bpf/btf.c:
// btf_struct_walk, btf_struct_access), over any BTF: which member covers the bytes, and what the load
// gives.
//
// The walk goes through the members in order. A member that ends before the load, or a bitfield the load
// does not cover whole, is passed over; a member starting after the load's first byte ends the walk (the
// load is in a hole, or past every member); the first member covering the first byte decides. An array
// member is taken as its elements laid end to end (a multi-dimensional one flattened); a struct or union
// member is walked into (at its start, the walk dives in with offset 0); a pointer member must be loaded
// whole, and gives a pointer to the struct it points to; anything else gives a number, if the load ends
// inside the member (an array's elements count as one member, so that `char cb[48]` is scratch space).
// A load past the struct's size is allowed only into a flexible array at its end, of structs (or, since
// 6.x, of integers), taken modulo the element's size.
//
// Since 6.4 or so a pointer loaded through a union of more than one member is untrusted, and an
// untrusted walk may read past the end of a scalar member; older kernels refuse such a load. Both read
// the same members; walk_struct() says where a union was walked (StructAccess::untrusted) so that a BTF
// that keeps fewer members of a union can be checked to keep that too.
//
// Bounded: modifiers and arrays are followed at most 32 deep (the kernel's MAX_RESOLVE_DEPTH), and a
// walk takes at most 64 steps, so that a loop in bad input ends in an error, never a hang.
#include "btfslim/btf_access.h"

#include "btfslim/escape.h"

#include <fmt/format.h>

namespace btfslim {
namespace {

constexpr int kMaxResolveDepth = 32;
constexpr int kMaxSteps = 64;

bool is_modifier(Kind k) {
  return k == Kind::Typedef || k == Kind::Volatile || k == Kind::Const || k == Kind::Restrict || k == Kind::TypeTag;
}
bool is_composite(Kind k) { return k == Kind::Struct || k == Kind::Union; }

Kind kind_of(const Btf& btf, TypeId id) { return id == 0 ? Kind::Unknown : btf.type(id).kind(); }

// __btf_resolve_size: a member's type past modifiers and arrays, with its size.
struct Resolved {
  bool ok = false;
  bool array = false;           // the member is an array (of any dimensions)
  TypeId elem = 0;              // the type past every array and modifier
  TypeId elem_id = 0;           // array: the innermost array's element type, as it names it
  TypeId id = 0;                // not an array: the member's type past modifiers
  std::uint64_t size = 0;       // of the whole member
  std::uint32_t nelems = 1;     // array: elements in all
};

Resolved resolve_size(const Btf& btf, TypeId id) {
  Resolved r;
  r.id = id;
  TypeId inner_array_elem = 0;
  std::uint64_t nelems = 1;
  for (int i = 0; i < kMaxResolveDepth; ++i) {
    if (id == 0) return r;
    const TypeView t = btf.type(id);
    std::uint64_t size = 0;
    switch (t.kind()) {
      case Kind::Int:
      case Kind::Struct:
      case Kind::Union:
      case Kind::Enum:
      case Kind::Float:
      case Kind::Enum64:
        size = t.size();
        break;
      case Kind::Ptr:
        size = 8;
        break;
      case Kind::Typedef:
      case Kind::Volatile:
      case Kind::Const:
      case Kind::Restrict:
      case Kind::TypeTag:
        id = t.ref();
        r.id = id;
        continue;
      case Kind::Array: {
        r.array = true;
        const ArrayInfo a = t.array();
        if (nelems && a.nelems > UINT32_MAX / nelems) return r;
        nelems *= a.nelems;
        inner_array_elem = a.type;
        id = a.type;
        continue;
      }
      default:
        return r;
    }
    if (nelems && size > UINT32_MAX / nelems) return r;
    r.ok = true;
    r.elem = id;
    r.elem_id = inner_array_elem;
    r.size = nelems * size;
    r.nelems = static_cast<std::uint32_t>(nelems);
    return r;
  }
  return r;
}

std::string type_name(const Btf& btf, TypeId id) {
  return id == 0 ? std::string("void") : escape(btf.str(btf.type(id).name_off()));
}

}  // namespace

TypeId skip_modifiers(const Btf& btf, TypeId id) {
  for (int i = 0; i < kMaxResolveDepth && id != 0 && is_modifier(btf.type(id).kind()); ++i) id = btf.type(id).ref();
  return id;
}

TypeId pointee_struct(const Btf& btf, TypeId id) {
  id = skip_modifiers(btf, id);
  if (kind_of(btf, id) != Kind::Ptr) return 0;
  const TypeId to = skip_modifiers(btf, btf.type(id).ref());
  return is_composite(kind_of(btf, to)) ? to : 0;
}

TypeId pointee_function(const Btf& btf, TypeId id) {
  id = skip_modifiers(btf, id);
  if (kind_of(btf, id) != Kind::Ptr) return 0;
  const TypeId to = skip_modifiers(btf, btf.type(id).ref());
  return kind_of(btf, to) == Kind::FuncProto ? to : 0;
}

StructAccess walk_struct(const Btf& btf, TypeId type, std::int64_t off, std::uint32_t size) {
  using Result = StructAccess::Result;
  StructAccess out;
  auto fail = [&](std::string why) {
    out.result = Result::Error;
    out.error = std::move(why);
    return out;
  };
  if (off < 0) return fail(fmt::format("negative offset {}", off));
  TypeId t = type;
  for (int step = 0; step < kMaxSteps; ++step) {
    t = skip_modifiers(btf, t);
    if (!is_composite(kind_of(btf, t))) return fail(fmt::format("type '{}' is not a struct", type_name(btf, t)));
    const TypeView tv = btf.type(t);
    const unsigned vlen = tv.vlen();
    if (tv.kind() == Kind::Union && vlen != 1) out.untrusted = true;

    if (static_cast<std::uint64_t>(off) + size > tv.size()) {
      // Only into a flexible array at the end: of structs, taken modulo the element, or of integers.
      auto beyond = [&] {
        return fail(fmt::format("access beyond struct {} at off {} size {}", type_name(btf, t), off, size));
      };
      if (vlen == 0) return beyond();
      const Member last = tv.member(vlen - 1);
      const TypeId at = skip_modifiers(btf, last.type);
      if (kind_of(btf, at) != Kind::Array || btf.type(at).array().nelems != 0) return beyond();
      const std::uint32_t moff = tv.member_bit_offset(last) / 8;
      if (off < moff) return beyond();
      const TypeId elem = skip_modifiers(btf, btf.type(at).array().type);
      const Resolved er = resolve_size(btf, elem);
      out.path.push_back({t, vlen - 1, er.ok && er.size ? static_cast<std::uint32_t>((off - moff) / er.size) : 0});
      if (kind_of(btf, elem) == Kind::Int) {
        out.result = Result::Scalar;
        return out;
      }
      if (!is_composite(kind_of(btf, elem)) || btf.type(elem).size() == 0) return beyond();
      off = (off - moff) % btf.type(elem).size();
      t = elem;
      continue;
    }

    bool next = false;
    for (unsigned i = 0; i < vlen && !next; ++i) {
      const Member m = tv.member(i);
      std::uint32_t moff = tv.member_bit_offset(m) / 8;
      if (static_cast<std::uint64_t>(off) + size <= moff) break;  // past the load: nothing further
      if (const std::uint32_t bits = tv.member_bitfield_size(m)) {
        // A bitfield is read only whole: from its first byte (or a byte before it, which an anonymous
        // bitfield clang writes no member for may hold) to its last.
        const std::uint32_t end_bit = tv.member_bit_offset(m) + bits;
        if (off <= moff && (end_bit + 7) / 8 <= off + size) {
          out.path.push_back({t, i, 0});
          out.result = Result::Scalar;
          return out;
        }
        continue;
      }
      if (off < moff) break;  // in a hole
      const Resolved r = resolve_size(btf, m.type);
      if (!r.ok) return fail(fmt::format("field {} doesn't have size", escape(btf.str(m.name_off))));
      const std::uint64_t true_end = std::uint64_t{moff} + r.size;
      if (static_cast<std::uint64_t>(off) >= true_end) continue;
      TypeId mtype = r.array ? r.elem : skip_modifiers(btf, m.type);
      TypeId mid = r.array ? r.elem_id : r.id;
      std::uint64_t msize = r.size;
      std::uint32_t element = 0;
      if (r.array) {
        if (moff == true_end) continue;  // an empty array
        msize /= r.nelems;
        element = static_cast<std::uint32_t>((static_cast<std::uint64_t>(off) - moff) / msize);
        moff += static_cast<std::uint32_t>(element * msize);
      }
      out.path.push_back({t, i, element});
      if (is_composite(kind_of(btf, mtype))) {
        // Into the struct or union: at its start the kernel dives in with offset 0, the same walk.
        off = off == moff ? 0 : off - moff;
        t = mid ? mid : mtype;
        next = true;
        break;
      }
      if (kind_of(btf, mtype) == Kind::Ptr) {
        if (msize != size || off != moff)
          return fail(fmt::format("cannot access ptr member {} with moff {} in struct {} with off {} size {}",
                                  escape(btf.str(m.name_off)), moff, type_name(btf, t), off, size));
        const TypeId pointee = skip_modifiers(btf, btf.type(mtype).ref());
        if (is_composite(kind_of(btf, pointee))) {
          out.result = Result::Pointer;
          out.pointee = pointee;
          return out;
        }
      }
      if (static_cast<std::uint64_t>(off) + size > true_end && !out.untrusted)
        return fail(fmt::format("access beyond the end of member {} (mend:{}) in struct {} with off {} size {}",
                                escape(btf.str(m.name_off)), true_end, type_name(btf, t), off, size));
      out.result = Result::Scalar;
      return out;
    }
    if (!next) return fail(fmt::format("struct {} doesn't have field at offset {}", type_name(btf, t), off));
  }
  return fail("the walk does not end (a loop in the BTF?)");
}

std::string describe_path(const Btf& btf, std::span<const StructStep> path) {
  std::string out;
  for (const StructStep& s : path) {
    const TypeView t = btf.type(s.type);
    const Member m = t.member(s.member);
    const std::string_view name = btf.str(m.name_off);
    if (!out.empty()) out += '.';
    out += name.empty() ? std::string("(anon)") : escape(name);
    if (kind_of(btf, skip_modifiers(btf, m.type)) == Kind::Array) out += fmt::format("[{}]", s.element);
  }
  return out;
}

}  // namespace btfslim
