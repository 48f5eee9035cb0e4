// Access specs and compatibility: libbpf's bpf_core_parse_spec, bpf_core_spec_match and the relations
// behind them (fields_are_compat, types_are_compat, types_match), rule for rule.
//
// Where libbpf trusts its input (no loop checks in skip_mods_and_typedefs, exponential searches
// through anonymous members or nested composites on crafted BTF, division by a zero size), we stop
// with an error instead: such BTF never passes the kernel's checks, and btfslim must not hang on it.
#include "spec.h"

#include "btfslim/escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

namespace btfslim::core {
namespace {

// A generous bound on modifier/typedef chains: real ones are a few links long.
constexpr int kMaxChain = 1 << 16;

bool names_match(const Btf& lb, std::uint32_t local_off, const Btf& tb, std::uint32_t target_off) {
  const std::string_view l = lb.str(local_off), t = tb.str(target_off);
  if (t.empty()) return l.empty();
  return essential_name(l) == essential_name(t);
}


std::string type_label(const Btf& btf, TypeId id) {
  const std::uint32_t off = name_off_of(btf, id);
  return off ? fmt::format("{} {}", kind_word(kind_of(btf, id)), esc(btf.str(off)))
             : fmt::format("{} (anon) [{}]", kind_word(kind_of(btf, id)), id);
}

// libbpf's bpf_core_fields_are_compat.
int fields_are_compat(Context& cx, const Btf& lb, TypeId lid, const Btf& tb, TypeId tid) {
  for (;;) {
    if (!cx.step()) return -E2BIG;
    if (!skip_mods_and_typedefs(lb, lid, lid) || !skip_mods_and_typedefs(tb, tid, tid)) return -EINVAL;
    const Kind lk = kind_of(lb, lid), tk = kind_of(tb, tid);
    if (is_composite(lk) && is_composite(tk)) return 1;
    if (!kinds_core_compatible(lk, tk)) return 0;
    switch (lk) {
      case Kind::Ptr:
      case Kind::Float:
        return 1;
      case Kind::Fwd:
      case Kind::Enum:
      case Kind::Enum64: {
        const std::string_view l = essential_name(lb.str(name_off_of(lb, lid)));
        const std::string_view t = essential_name(tb.str(name_off_of(tb, tid)));
        return l.empty() || t.empty() || l == t;
      }
      case Kind::Int:
        return lb.type(lid).int_offset() == 0 && tb.type(tid).int_offset() == 0;
      case Kind::Array:
        lid = lb.type(lid).array().type;
        tid = tb.type(tid).array().type;
        continue;
      default:
        return 0;
    }
  }
}

// libbpf's __bpf_core_types_are_compat.
int types_are_compat(Context& cx, const Btf& lb, TypeId lid, const Btf& tb, TypeId tid, int level) {
  if (!kinds_core_compatible(kind_of(lb, lid), kind_of(tb, tid))) return 0;
  for (int depth = 32;;) {
    if (--depth < 0) return -EINVAL;
    if (!cx.step()) return -E2BIG;
    if (!skip_mods_and_typedefs(lb, lid, lid) || !skip_mods_and_typedefs(tb, tid, tid)) return -EINVAL;
    const Kind lk = kind_of(lb, lid), tk = kind_of(tb, tid);
    if (!kinds_core_compatible(lk, tk)) return 0;
    switch (lk) {
      case Kind::Unknown:
      case Kind::Struct:
      case Kind::Union:
      case Kind::Enum:
      case Kind::Fwd:
      case Kind::Enum64:
        return 1;
      case Kind::Int:
        return lb.type(lid).int_offset() == 0 && tb.type(tid).int_offset() == 0;
      case Kind::Ptr:
        lid = lb.type(lid).ref();
        tid = tb.type(tid).ref();
        continue;
      case Kind::Array:
        lid = lb.type(lid).array().type;
        tid = tb.type(tid).array().type;
        continue;
      case Kind::FuncProto: {
        const TypeView l = lb.type(lid), t = tb.type(tid);
        if (l.vlen() != t.vlen()) return 0;
        for (unsigned i = 0; i < l.vlen(); ++i) {
          if (level <= 0) return -EINVAL;
          TypeId lp = 0, tp = 0;
          if (!skip_mods_and_typedefs(lb, l.param(i).type, lp) || !skip_mods_and_typedefs(tb, t.param(i).type, tp))
            return -EINVAL;
          if (const int err = types_are_compat(cx, lb, lp, tb, tp, level - 1); err <= 0) return err;
        }
        if (!skip_mods_and_typedefs(lb, l.ref(), lid) || !skip_mods_and_typedefs(tb, t.ref(), tid)) return -EINVAL;
        continue;
      }
      default:
        return 0;
    }
  }
}

int types_match(Context& cx, const Btf& lb, TypeId lid, const Btf& tb, TypeId tid, bool behind_ptr, int level);

int enums_match(const Btf& lb, const TypeView& l, const Btf& tb, const TypeView& t) {
  if (l.size() != t.size() || l.vlen() > t.vlen()) return 0;
  auto name_at = [](const TypeView& e, unsigned i) {
    return e.kind() == Kind::Enum ? e.enum_value(i).name_off : e.enum64_value(i).name_off;
  };
  for (unsigned i = 0; i < l.vlen(); ++i) {
    bool matched = false;
    for (unsigned j = 0; j < t.vlen() && !matched; ++j) matched = names_match(lb, name_at(l, i), tb, name_at(t, j));
    if (!matched) return 0;
  }
  return 1;
}

int composites_match(Context& cx, const Btf& lb, const TypeView& l, const Btf& tb, const TypeView& t, bool behind_ptr,
                     int level) {
  if (l.vlen() > t.vlen()) return 0;
  for (unsigned i = 0; i < l.vlen(); ++i) {
    const Member lm = l.member(i);
    bool matched = false;
    for (unsigned j = 0; j < t.vlen(); ++j) {
      const Member tm = t.member(j);
      if (!names_match(lb, lm.name_off, tb, tm.name_off)) continue;
      const int err = types_match(cx, lb, lm.type, tb, tm.type, behind_ptr, level - 1);
      if (err < 0) return err;
      if (err > 0) {
        matched = true;
        break;
      }
    }
    if (!matched) return 0;
  }
  return 1;
}

// libbpf's __bpf_core_types_match (TYPE_MATCHES).
int types_match(Context& cx, const Btf& lb, TypeId lid, const Btf& tb, TypeId tid, bool behind_ptr, int level) {
  if (level <= 0) return -EINVAL;
  for (int depth = 32;;) {
    if (--depth < 0) return -EINVAL;
    if (!cx.step()) return -E2BIG;
    if (!skip_mods_and_typedefs(lb, lid, lid) || !skip_mods_and_typedefs(tb, tid, tid)) return -EINVAL;
    if (!names_match(lb, name_off_of(lb, lid), tb, name_off_of(tb, tid))) return 0;
    const Kind lk = kind_of(lb, lid), tk = kind_of(tb, tid);
    switch (lk) {
      case Kind::Unknown:
        return lk == tk;
      case Kind::Fwd: {
        const bool lf = lb.type(lid).kflag();
        if (behind_ptr) {
          if (lk == tk) return lf == tb.type(tid).kflag();
          return (tk == Kind::Struct && !lf) || (tk == Kind::Union && lf);
        }
        if (lk != tk) return 0;
        return lf == tb.type(tid).kflag();
      }
      case Kind::Enum:
      case Kind::Enum64:
        if (!is_any_enum(tk)) return 0;
        return enums_match(lb, lb.type(lid), tb, tb.type(tid));
      case Kind::Struct:
      case Kind::Union:
        if (behind_ptr) {
          if (lk == tk) return 1;
          if (tk != Kind::Fwd) return 0;
          return (lk == Kind::Union) == tb.type(tid).kflag();
        }
        if (lk != tk) return 0;
        return composites_match(cx, lb, lb.type(lid), tb, tb.type(tid), behind_ptr, level);
      case Kind::Int: {
        if (lk != tk) return 0;
        const TypeView l = lb.type(lid), t = tb.type(tid);
        return l.size() == t.size() && (l.int_encoding() & 1) == (t.int_encoding() & 1);
      }
      case Kind::Ptr:
        if (lk != tk) return 0;
        behind_ptr = true;
        lid = lb.type(lid).ref();
        tid = tb.type(tid).ref();
        continue;
      case Kind::Array: {
        if (lk != tk) return 0;
        const ArrayInfo l = lb.type(lid).array(), t = tb.type(tid).array();
        if (l.nelems != t.nelems) return 0;
        lid = l.type;
        tid = t.type;
        continue;
      }
      case Kind::FuncProto: {
        if (lk != tk) return 0;
        const TypeView l = lb.type(lid), t = tb.type(tid);
        if (l.vlen() != t.vlen()) return 0;
        for (unsigned i = 0; i < l.vlen(); ++i) {
          const int err = types_match(cx, lb, l.param(i).type, tb, t.param(i).type, behind_ptr, level - 1);
          if (err <= 0) return err;
        }
        lid = l.ref();
        tid = t.ref();
        continue;
      }
      default:
        return 0;
    }
  }
}

// libbpf's is_flex_arr: an array of no elements that is the last member of the struct `acc` indexes.
bool is_flex_array(const Btf& btf, const Accessor& acc, const ArrayInfo& a) {
  if (!acc.named || a.nelems > 0) return false;
  return acc.idx + 1 == btf.type(acc.type).vlen();
}

// libbpf's bpf_core_match_member: finds the local accessor's member by name in `tid`, searching
// anonymous members depth-first, and checks field compatibility.
int match_member(Context& cx, const Btf& lb, const Accessor& local_acc, const Btf& tb, TypeId tid, Spec& spec,
                 TypeId& next) {
  if (!skip_mods_and_typedefs(tb, tid, tid)) return -EINVAL;
  if (!is_composite(kind_of(tb, tid))) return 0;
  const Member local_member = lb.type(local_acc.type).member(local_acc.idx);
  const std::string_view local_name = lb.str(local_member.name_off);
  const TypeView t = tb.type(tid);
  for (unsigned i = 0; i < t.vlen(); ++i) {
    if (!cx.step()) return -E2BIG;
    const Member m = t.member(i);
    const std::uint32_t bit_offset = t.member_bit_offset(m);
    if (spec.raw_len == kSpecMaxLen) return -E2BIG;
    spec.bit_offset += bit_offset;
    spec.raw[spec.raw_len++] = {tid, i, true};
    // Compared where it lies, NUL-terminated: most members differ in their first bytes, and a struct's
    // every member is passed on the way to the one asked for, so none is measured first.
    const char* raw = tb.c_str(m.name_off);
    if (raw[0] == 0) {
      if (const int found = match_member(cx, lb, local_acc, tb, m.type, spec, next); found != 0) return found;
    } else if (std::strncmp(raw, local_name.data(), local_name.size()) == 0 && raw[local_name.size()] == 0) {
      const std::string_view name = tb.str(m.name_off);
      spec.acc[spec.len++] = {tid, i, name, true};
      next = m.type;
      const int found = fields_are_compat(cx, lb, local_member.type, tb, m.type);
      if (found == 0) {
        --spec.len;
        cx.why(fmt::format("member '{}' of {} has an incompatible type ({} in the target)", esc(name), type_label(tb, tid),
                           type_label(tb, m.type)));
      }
      return found;
    }
    spec.bit_offset -= bit_offset;
    --spec.raw_len;
  }
  return 0;
}

// One index of an access string, as libbpf reads it with sscanf("%d") under glibc: white space first
// ("1 0" is 1:0 to libbpf), a sign, then every digit, read as a long (strtol: clamped to LONG_MIN and
// LONG_MAX) and stored in an int, which keeps its low 32 bits: "4294967295" is -1, "2147483648" is
// INT_MIN. Where a negative index means something to libbpf is parse_spec's to say.
bool parse_index(std::string_view& s, std::int64_t& out) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const std::size_t first = i;
  constexpr std::uint64_t kLongMax = std::numeric_limits<long>::max();
  std::uint64_t v = 0;  // the magnitude, held at kLongMax + 1 once past it (LONG_MIN's)
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
    v = std::min<std::uint64_t>(v * 10 + static_cast<unsigned>(s[i] - '0'), kLongMax + 1);
  if (i == first) return false;
  const std::uint64_t as_long = negative ? 0 - v : std::min(v, kLongMax);  // two's complement
  out = static_cast<std::int32_t>(static_cast<std::uint32_t>(as_long));
  s.remove_prefix(i);
  return true;
}

// idx * size * 8 as libbpf adds it to a spec's 32-bit bit offset: only the low 32 bits count, so the
// product is taken modulo 2^64 (an index of -1 is 2^64 - 1) and cut.
std::uint32_t bits_at(std::int64_t idx, std::int64_t size) {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(idx) * static_cast<std::uint64_t>(size) * 8);
}

}  // namespace

int core_types_are_compat(Context& cx, const Btf& local, TypeId local_id, const Btf& target, TypeId target_id) {
  return types_are_compat(cx, local, local_id, target, target_id, 32);
}

std::string_view kind_word(Kind k) {
  switch (k) {
    case Kind::Struct:
      return "struct";
    case Kind::Union:
      return "union";
    case Kind::Enum:
    case Kind::Enum64:
      return "enum";
    case Kind::Typedef:
      return "typedef";
    case Kind::Fwd:
      return "fwd";
    case Kind::Unknown:
      return "void";
    default:
      return kind_name(k);
  }
}

TypeId long_type(const Btf& btf) {
  static constexpr std::string_view kLongNames[] = {
      "long",          "long int",          "int long",          "unsigned long",
      "long unsigned", "unsigned long int", "unsigned int long", "long unsigned int",
      "long int unsigned", "int unsigned long", "int long unsigned"};
  for (TypeId id = 1; id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    if (t.kind() != Kind::Int || (t.size() != 4 && t.size() != 8)) continue;
    const std::string_view name = btf.str(t.name_off());
    for (auto n : kLongNames)
      if (n == name) return id;
  }
  return 0;
}

std::uint32_t Context::pointer_size(const Btf& btf) {
  if (ptr_btf_ == &btf) return ptr_size_;
  const TypeId id = long_type(btf);
  ptr_btf_ = &btf;
  ptr_size_ = id ? btf.type(id).size() : sizeof(void*);
  return ptr_size_;
}

bool skip_mods_and_typedefs(const Btf& btf, TypeId id, TypeId& result) {
  for (int i = 0; i < kMaxChain; ++i) {
    result = id;
    if (id == 0) return true;
    const TypeView t = btf.type(id);
    switch (t.kind()) {
      case Kind::Const:
      case Kind::Volatile:
      case Kind::Restrict:
      case Kind::TypeTag:
      case Kind::Typedef:
        id = t.ref();
        break;
      default:
        return true;
    }
  }
  return false;
}

std::int64_t resolve_size(Context& cx, const Btf& btf, TypeId id) {
  constexpr int kMaxResolveDepth = 32;
  std::uint32_t nelems = 1;
  std::int64_t size = -1;
  for (int i = 0; i < kMaxResolveDepth && id != 0; ++i) {
    const TypeView t = btf.type(id);
    switch (t.kind()) {
      case Kind::Int:
      case Kind::Struct:
      case Kind::Union:
      case Kind::Enum:
      case Kind::Enum64:
      case Kind::Datasec:
      case Kind::Float:
        size = t.size();
        i = kMaxResolveDepth;
        continue;
      case Kind::Ptr:
        size = cx.pointer_size(btf);
        i = kMaxResolveDepth;
        continue;
      case Kind::Typedef:
      case Kind::Volatile:
      case Kind::Const:
      case Kind::Restrict:
      case Kind::Var:
      case Kind::DeclTag:
      case Kind::TypeTag:
        id = t.ref();
        break;
      case Kind::Array: {
        const ArrayInfo a = t.array();
        if (nelems && a.nelems > UINT32_MAX / nelems) return -E2BIG;
        nelems *= a.nelems;
        id = a.type;
        break;
      }
      default:
        return -EINVAL;
    }
  }
  if (size < 0) return -EINVAL;
  if (nelems && size > static_cast<std::int64_t>(UINT32_MAX / nelems)) return -E2BIG;
  return std::int64_t{nelems} * size;
}

int parse_spec(Context& cx, const Btf& local, const CoreRelocation& r, std::string_view access, Spec& spec) {
  spec = Spec{};
  spec.btf = &local;
  spec.root = r.local_type;
  spec.kind = r.kind;
  if (access.empty() || access.front() == ':') return -EINVAL;
  if (is_type_kind(r.kind)) return access == "0" ? 0 : -EINVAL;

  std::array<std::int64_t, kSpecMaxLen> raw{};
  int raw_len = 0;
  while (!access.empty()) {
    if (access.front() == ':') access.remove_prefix(1);
    std::int64_t v = 0;
    if (!parse_index(access, v)) return -EINVAL;
    if (raw_len == kSpecMaxLen) return -E2BIG;
    raw[raw_len++] = v;
  }
  if (raw_len == 0) return -EINVAL;

  TypeId id = 0;
  if (!skip_mods_and_typedefs(local, r.local_type, id)) return -EINVAL;
  const Kind root_kind = kind_of(local, id);
  spec.acc[0] = {id, static_cast<std::uint32_t>(raw[0]), {}, false};
  spec.len = 1;
  spec.raw[0] = {id, static_cast<std::uint32_t>(raw[0]), false};
  spec.raw_len = raw_len;

  if (is_enumval_kind(r.kind)) {
    // A negative index is libbpf's too (its check compares it as an int with the 16-bit count), and it
    // reads the enumerator before the first: nothing to agree with, so it is refused.
    if (!is_any_enum(root_kind) || raw_len > 1 || raw[0] < 0 || raw[0] >= local.type(id).vlen()) return -EINVAL;
    const TypeView t = local.type(id);
    const std::uint32_t name_off = root_kind == Kind::Enum ? t.enum_value(raw[0]).name_off : t.enum64_value(raw[0]).name_off;
    spec.acc[0].name = local.str(name_off);
    spec.acc[0].named = true;
    return 0;
  }
  if (!is_field_kind(r.kind)) return -EINVAL;

  std::int64_t sz = resolve_size(cx, local, id);
  if (sz < 0) return static_cast<int>(sz);
  // The first index may be negative, as to libbpf: the element before the one pointed at.
  spec.bit_offset = bits_at(raw[0], sz);

  for (int i = 1; i < raw_len; ++i) {
    if (!skip_mods_and_typedefs(local, id, id)) return -EINVAL;
    const Kind k = kind_of(local, id);
    const std::int64_t idx = raw[i];
    if (is_composite(k)) {
      const TypeView t = local.type(id);
      if (idx < 0 || idx >= t.vlen()) return -EINVAL;  // negative: libbpf reads before the members
      const Member m = t.member(static_cast<unsigned>(idx));
      spec.bit_offset += t.member_bit_offset(m);
      spec.raw[i] = {id, static_cast<std::uint32_t>(idx), true};
      if (m.name_off) {
        const std::string_view name = local.str(m.name_off);
        if (name.empty()) return -EINVAL;
        spec.acc[spec.len++] = {id, static_cast<std::uint32_t>(idx), name, true};
      }
      id = m.type;
    } else if (k == Kind::Array) {
      const ArrayInfo a = local.type(id).array();
      spec.raw[i] = {id, static_cast<std::uint32_t>(idx), false};
      if (!skip_mods_and_typedefs(local, a.type, id)) return -EINVAL;
      const bool flex = is_flex_array(local, spec.acc[spec.len - 1], a);
      // Compared unsigned, as libbpf does: a negative index only into a flexible array.
      if (!flex && static_cast<std::uint32_t>(idx) >= a.nelems) return -EINVAL;
      spec.acc[spec.len++] = {id, static_cast<std::uint32_t>(idx), {}, false};
      sz = resolve_size(cx, local, id);
      if (sz < 0) return static_cast<int>(sz);
      spec.bit_offset += bits_at(idx, sz);
    } else {
      return -EINVAL;
    }
  }
  return 0;
}

int spec_match(Context& cx, const Spec& local, const Btf& tb, TypeId tid, Spec& out) {
  out = Spec{};
  out.btf = &tb;
  out.root = tid;
  out.kind = local.kind;
  const Btf& lb = *local.btf;

  if (is_type_kind(local.kind)) {
    int r = local.kind == static_cast<std::uint32_t>(RelocKind::TypeMatches)
                ? types_match(cx, lb, local.root, tb, tid, false, 32)
                : types_are_compat(cx, lb, local.root, tb, tid, 32);
    if (r == 0)
      cx.why(fmt::format("{} [{}] in the target does not {}", type_label(tb, tid), tid,
                         local.kind == static_cast<std::uint32_t>(RelocKind::TypeMatches) ? "match" : "fit"));
    return r;
  }

  if (is_enumval_kind(local.kind)) {
    if (!skip_mods_and_typedefs(tb, tid, tid)) return -EINVAL;
    if (!is_any_enum(kind_of(tb, tid))) {
      cx.why(fmt::format("{} in the target is not an enum", type_label(tb, tid)));
      return 0;
    }
    const TypeView t = tb.type(tid);
    const std::string_view want = essential_name(local.acc[0].name);
    for (unsigned i = 0; i < t.vlen(); ++i) {
      const std::uint32_t off = t.kind() == Kind::Enum ? t.enum_value(i).name_off : t.enum64_value(i).name_off;
      const std::string_view name = tb.str(off);
      if (essential_name(name) != want) continue;
      out.acc[0] = {tid, i, name, true};
      out.len = 1;
      out.raw[0] = {tid, i, false};
      out.raw_len = 1;
      return 1;
    }
    cx.why(fmt::format("{} has no enumerator '{}'", type_label(tb, tid), esc(local.acc[0].name)));
    return 0;
  }

  if (!is_field_kind(local.kind)) return -EINVAL;
  for (int i = 0; i < local.len; ++i) {
    const Accessor& la = local.acc[i];
    if (!skip_mods_and_typedefs(tb, tid, tid)) return -EINVAL;
    if (la.named) {
      const TypeId container = tid;
      const int matched = match_member(cx, lb, la, tb, tid, out, tid);
      if (matched == 0)
        cx.why(is_composite(kind_of(tb, container))
                   ? fmt::format("{} has no member '{}'", type_label(tb, container), esc(la.name))
                   : fmt::format("'{}' is looked up in {}, which is not a struct or union", esc(la.name),
                                 type_label(tb, container)));
      if (matched <= 0) return matched;
      continue;
    }
    TypeId step_type = tid;
    if (i > 0) {
      if (kind_of(tb, tid) != Kind::Array) {
        cx.why(fmt::format("{} is not an array in the target", type_label(tb, tid)));
        return 0;
      }
      const ArrayInfo a = tb.type(tid).array();
      const bool flex = is_flex_array(tb, out.acc[i - 1], a);
      if (!flex && la.idx >= a.nelems) {
        cx.why(fmt::format("index {} is past the end of a {}-element array", la.idx, a.nelems));
        return 0;
      }
      if (!skip_mods_and_typedefs(tb, a.type, tid)) return -EINVAL;
    }
    if (out.raw_len == kSpecMaxLen) return -E2BIG;
    out.acc[out.len++] = {tid, la.idx, {}, false};
    out.raw[out.raw_len++] = {step_type, la.idx, false};
    const std::int64_t sz = resolve_size(cx, tb, tid);
    if (sz < 0) return static_cast<int>(sz);
    out.bit_offset += bits_at(la.idx, sz);
  }
  return 1;
}

std::string format_spec(const Spec& spec) {
  const Btf& btf = *spec.btf;
  std::string out = spec.root == 0 ? std::string("void") : type_label(btf, spec.root);
  if (is_type_kind(spec.kind)) return out;
  if (is_enumval_kind(spec.kind)) return out + "::" + escape(spec.acc[0].name);
  for (int i = 0; i < spec.len; ++i) {
    const Accessor& a = spec.acc[i];
    if (a.named)
      out += fmt::format(".{}", esc(a.name));
    else if (i > 0 || a.idx > 0)
      out += fmt::format("[{}]", static_cast<std::int32_t>(a.idx));  // as the access string has it: [-1]
  }
  return out;
}

}  // namespace btfslim::core
