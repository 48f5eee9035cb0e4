// What libbpf's btf_dump needs before it may print BTF as C.
//
// btf_dump trusts that its input passed the kernel's verifier. On BTF that did not, it recurses without
// end (a typedef of a const of itself, an array of itself, a function pointer taking itself), divides by
// zero (a member whose type has no size, such as a VAR or a bare FUNC_PROTO) or stops half-way. Our model
// checks ranges only, since such BTF is still worth measuring; so before printing C we walk what will be
// printed and refuse, with the type named, what C cannot express:
// - a loop that passes through no pointer (a type containing itself by value);
// - a loop that passes through no named struct or union (nothing to declare ahead);
// - ints, enums and floats of sizes C has no type for; a member of type void, one starting or ending past
//   the end of its struct, or a struct over 16 MiB (libbpf pads up to each member in int arithmetic: an
//   offset that wraps has it print padding for ever);
// - a member, array element or typedef/modifier target that is a FUNC, VAR, DATASEC or DECL_TAG, a member
//   or array element that is a bare FUNC_PROTO, a FUNC whose type is not a FUNC_PROTO;
// - a name C cannot spell: btf_dump prints names as they are, so a member named "x;\n#include ..." would
//   write that into the header. Struct, union, enum, typedef, member, enumerator and parameter names
//   must be identifiers, int and float names identifiers and blanks ("long unsigned int"), and a type
//   tag, printed inside a string literal, printable ASCII without quotes or backslashes.
#include "btfslim/dump.h"
#include "btfslim/error.h"
#include "btfslim/escape.h"

#include <algorithm>
#include <vector>

namespace btfslim {
namespace {

constexpr std::uint32_t kMaxCompositeBytes = 16u << 20;

bool named_composite(const Btf& btf, TypeId id) {
  if (id == 0) return false;
  const TypeView t = btf.type(id);
  const Kind k = t.kind();
  return (k == Kind::Struct || k == Kind::Union || k == Kind::Fwd) && t.name_off() != 0;
}

// Calls fn(target, by_value) for each type a record makes C print.
template <typename Fn>
void for_each_c_edge(const TypeView& t, Fn&& fn) {
  const unsigned vlen = t.vlen();
  switch (t.kind()) {
    case Kind::Typedef:
    case Kind::Const:
    case Kind::Volatile:
    case Kind::Restrict:
    case Kind::TypeTag:
    case Kind::Var:
      fn(t.ref(), true);
      break;
    case Kind::Array:
      fn(t.array().type, true);
      break;
    case Kind::Struct:
    case Kind::Union:
      for (unsigned i = 0; i < vlen; ++i) fn(t.member(i).type, true);
      break;
    case Kind::Ptr:
    case Kind::Func:
    case Kind::DeclTag:
      fn(t.ref(), false);
      break;
    case Kind::FuncProto:
      fn(t.ref(), false);
      for (unsigned i = 0; i < vlen; ++i) fn(t.param(i).type, false);
      break;
    case Kind::Datasec:
      for (unsigned i = 0; i < vlen; ++i) fn(t.secinfo(i).type, false);
      break;
    default:
      break;
  }
}

bool identifier_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// An identifier, or empty (anonymous).
bool c_identifier(std::string_view s) {
  if (s.empty()) return true;
  if (s[0] >= '0' && s[0] <= '9') return false;
  return std::all_of(s.begin(), s.end(), identifier_char);
}

bool c_base_type_name(std::string_view s) {
  return !s.empty() && !(s[0] >= '0' && s[0] <= '9') &&
         std::all_of(s.begin(), s.end(), [](char c) { return identifier_char(c) || c == ' '; });
}

bool c_string_text(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
}

[[noreturn]] void refuse(const Btf& btf, TypeId id, std::string_view why) {
  const TypeView t = btf.type(id);
  fail(btf.name(), "cannot print as C: type [{}] {} '{}' {}", id, kind_name(t.kind()), esc(name_or_anon(btf, t.name_off())),
       why);
}

void check_names(const Btf& btf, TypeId id) {
  const TypeView t = btf.type(id);
  const std::string_view name = btf.str(t.name_off());
  auto refuse_part = [&](std::string_view part, std::uint32_t name_off) {
    refuse(btf, id, fmt::format("has {} named '{}', which is not a C identifier", part, esc(btf.str(name_off))));
  };
  switch (t.kind()) {
    case Kind::Int:
    case Kind::Float:
      if (!c_base_type_name(name)) refuse(btf, id, "has a name that is not a C type name");
      break;
    case Kind::Struct:
    case Kind::Union:
      if (!c_identifier(name)) refuse(btf, id, "has a name that is not a C identifier");
      for (unsigned i = 0; i < t.vlen(); ++i)
        if (!c_identifier(btf.str(t.member(i).name_off))) refuse_part("a member", t.member(i).name_off);
      break;
    case Kind::Enum:
      if (!c_identifier(name)) refuse(btf, id, "has a name that is not a C identifier");
      for (unsigned i = 0; i < t.vlen(); ++i)
        if (!c_identifier(btf.str(t.enum_value(i).name_off))) refuse_part("an enumerator", t.enum_value(i).name_off);
      break;
    case Kind::Enum64:
      if (!c_identifier(name)) refuse(btf, id, "has a name that is not a C identifier");
      for (unsigned i = 0; i < t.vlen(); ++i)
        if (!c_identifier(btf.str(t.enum64_value(i).name_off))) refuse_part("an enumerator", t.enum64_value(i).name_off);
      break;
    case Kind::FuncProto:
      for (unsigned i = 0; i < t.vlen(); ++i)
        if (!c_identifier(btf.str(t.param(i).name_off))) refuse_part("a parameter", t.param(i).name_off);
      break;
    case Kind::Fwd:
    case Kind::Typedef:
      if (!c_identifier(name)) refuse(btf, id, "has a name that is not a C identifier");
      break;
    case Kind::TypeTag:
    case Kind::DeclTag:
      if (!c_string_text(name)) refuse(btf, id, "has a tag that is not plain printable text");
      break;
    default:
      break;
  }
}

void check_kinds(const Btf& btf, TypeId id) {
  check_names(btf, id);
  const TypeView t = btf.type(id);
  auto no_size = [&](TypeId target, bool bare_proto_ok) {
    if (target == 0) return false;
    const Kind k = btf.type(target).kind();
    return k == Kind::Func || k == Kind::Var || k == Kind::Datasec || k == Kind::DeclTag ||
           (!bare_proto_ok && k == Kind::FuncProto);
  };
  switch (t.kind()) {
    case Kind::Int: {
      const std::uint32_t size = t.size();
      if (size != 1 && size != 2 && size != 4 && size != 8 && size != 16)
        refuse(btf, id, "has a size other than 1, 2, 4, 8 or 16 bytes");
      if (t.int_offset() + t.int_bits() > size * 8) refuse(btf, id, "has more bits than its size holds");
      break;
    }
    case Kind::Enum:
    case Kind::Enum64:
    case Kind::Float:
      if (t.size() == 0 || t.size() > 16) refuse(btf, id, "has a size C cannot give it");
      break;
    case Kind::Struct:
    case Kind::Union:
      // libbpf writes padding up to each member: a member past the end, or a struct of absurd size,
      // would have it print for ever.
      if (t.size() > kMaxCompositeBytes) refuse(btf, id, "is larger than 16 MiB");
      for (unsigned i = 0; i < t.vlen(); ++i) {
        const Member m = t.member(i);
        if (m.type == 0) refuse(btf, id, "has a member of type void");
        if (no_size(m.type, false)) refuse(btf, id, "has a member of a kind that has no size in C");
        if (t.member_bit_offset(m) / 8 > t.size()) refuse(btf, id, "has a member that starts past its end");
      }
      break;
    case Kind::Array:
      if (no_size(t.array().type, false)) refuse(btf, id, "has elements of a kind that has no size in C");
      break;
    case Kind::Typedef:
    case Kind::Const:
    case Kind::Volatile:
    case Kind::Restrict:
    case Kind::TypeTag:
    case Kind::Ptr:
      if (no_size(t.ref(), true)) refuse(btf, id, "refers to a FUNC, VAR, DATASEC or DECL_TAG");
      break;
    case Kind::Func:
      if (t.ref() == 0 || btf.type(t.ref()).kind() != Kind::FuncProto) refuse(btf, id, "is not of a FUNC_PROTO type");
      break;
    default:
      break;
  }
}

// Depth-first search for a loop among the edges `follow` accepts, from `roots`.
template <typename Follow>
void find_loops(const Btf& btf, const std::vector<TypeId>& roots, Follow&& follow, std::string_view why) {
  enum : std::uint8_t { kNew, kOnPath, kDone };
  std::vector<std::uint8_t> state(btf.end_id(), kNew);
  struct Frame {
    TypeId id;
    std::vector<TypeId> next;
    std::size_t i;
  };
  std::vector<Frame> stack;
  auto push = [&](TypeId id) {
    Frame f{id, {}, 0};
    for_each_c_edge(btf.type(id), [&](TypeId to, bool by_value) {
      if (to != 0 && follow(to, by_value)) f.next.push_back(to);
    });
    state[id] = kOnPath;
    stack.push_back(std::move(f));
  };
  for (const TypeId root : roots) {
    if (root == 0 || state[root] != kNew) continue;
    push(root);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.i == f.next.size()) {
        state[f.id] = kDone;
        stack.pop_back();
        continue;
      }
      const TypeId to = f.next[f.i++];
      if (state[to] == kOnPath) refuse(btf, to, why);
      if (state[to] == kNew) push(to);
    }
  }
}

// The bytes a value of type `id` occupies, as btf__resolve_size finds them, at least: pointers count 4
// (the smallest pointer size libbpf assumes), arrays saturate rather than wrap. Runs after the loop
// checks, so the chain of typedefs, modifiers and arrays from `id` ends; it is walked without recursion,
// since a hostile file can make it as long as the file allows.
class ValueSizes {
 public:
  explicit ValueSizes(const Btf& btf) : btf_(btf), memo_(btf.end_id(), kUnknown), aligned_memo_(btf.end_id(), false) {}

  // Whether libbpf can align a value of type `id` (btf__align_of is not 0): it ends, through typedefs,
  // modifiers and arrays, at a type with a size (void, FWD and FUNC_PROTO have none).
  bool aligned(TypeId id) {
    (void)of(id);
    return aligned_;
  }

  std::uint64_t of(TypeId id) {
    chain_.clear();
    std::uint64_t size = 0;
    aligned_ = false;
    for (TypeId at = id;; ) {
      if (at == 0) break;
      if (memo_[at] != kUnknown) {
        size = memo_[at];
        aligned_ = aligned_memo_[at];
        break;
      }
      const TypeView t = btf_.type(at);
      const Kind k = t.kind();
      if (k == Kind::Typedef || k == Kind::Const || k == Kind::Volatile || k == Kind::Restrict ||
          k == Kind::TypeTag || k == Kind::Var) {
        chain_.push_back(at);
        at = t.ref();
      } else if (k == Kind::Array) {
        chain_.push_back(at);
        at = t.array().type;
      } else {
        size = k == Kind::Ptr ? 4 : has_size(k) ? t.size() : 0;
        aligned_ = k == Kind::Ptr || has_size(k);
        memo_[at] = size;
        aligned_memo_[at] = aligned_;
        break;
      }
    }
    for (auto it = chain_.rbegin(); it != chain_.rend(); ++it) {
      const TypeView t = btf_.type(*it);
      if (t.kind() == Kind::Array) size = std::min<std::uint64_t>(size * t.array().nelems, kSaturated);
      memo_[*it] = size;
      aligned_memo_[*it] = aligned_;
    }
    return size;
  }

 private:
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};
  static constexpr std::uint64_t kSaturated = std::uint64_t{1} << 40;  // times 2^32 elements stays in range

  static bool has_size(Kind k) {
    return k == Kind::Int || k == Kind::Struct || k == Kind::Union || k == Kind::Enum || k == Kind::Enum64 ||
           k == Kind::Float;
  }

  const Btf& btf_;
  std::vector<std::uint64_t> memo_;
  std::vector<bool> aligned_memo_;
  bool aligned_ = false;
  std::vector<TypeId> chain_;
};

// Every member of the structs and unions printing reaches ends inside its struct.
void check_member_ends(const Btf& btf, const std::vector<TypeId>& reached) {
  ValueSizes sizes(btf);
  for (const TypeId id : reached) {
    const TypeView t = btf.type(id);
    if (t.kind() != Kind::Struct && t.kind() != Kind::Union) continue;
    const std::uint64_t size_bits = std::uint64_t{t.size()} * 8;
    for (unsigned i = 0; i < t.vlen(); ++i) {
      const Member m = t.member(i);
      // libbpf aligns a struct by its members' btf__align_of, which is 0 for a member ending at void, a
      // FWD or a FUNC_PROTO (through typedefs, modifiers or arrays): its padding then divides by zero.
      if (!sizes.aligned(m.type))
        refuse(btf, id, "has a member of a type without size (void, a forward declaration or a function)");
      std::uint64_t bits = t.member_bitfield_size(m);
      if (bits == 0) {
        // Without kind_flag, a bitfield's width is its INT's.
        const TypeView mt = btf.type(m.type);
        bits = mt.kind() == Kind::Int ? mt.int_offset() + mt.int_bits() : sizes.of(m.type) * 8;
      }
      if (t.member_bit_offset(m) + bits > size_bits) refuse(btf, id, "has a member that reaches past its size");
    }
  }
}

}  // namespace

void check_c_printable(const Btf& btf, const std::vector<TypeId>& roots) {
  // Everything printing reaches, for the kind checks.
  std::vector<bool> seen(btf.end_id(), false);
  std::vector<TypeId> work, reached;
  for (const TypeId r : roots)
    if (r != 0 && !seen[r]) seen[r] = true, work.push_back(r);
  while (!work.empty()) {
    const TypeId id = work.back();
    work.pop_back();
    reached.push_back(id);
    check_kinds(btf, id);
    for_each_c_edge(btf.type(id), [&](TypeId to, bool) {
      if (to != 0 && !seen[to]) seen[to] = true, work.push_back(to);
    });
  }
  find_loops(btf, roots, [](TypeId, bool by_value) { return by_value; },
             "contains itself by value (a reference loop through no pointer)");
  find_loops(btf, roots, [&](TypeId to, bool) { return !named_composite(btf, to); },
             "is in a reference loop through no named struct or union");
  check_member_ends(btf, reached);
}

}  // namespace btfslim
