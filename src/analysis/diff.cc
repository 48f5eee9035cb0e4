// Type-by-type comparison of two BTFs (the model is described in diff.h).
//
// Every type gets a key node in one table shared by both sides, so that "the same type" is the same
// node index on both and the comparison is a walk over node indices. A node is a few words - kind, a
// name pointing into the BTF's strings, a parent node, an ordinal - hash-consed: the table holds each
// distinct node once, compared field by field (no hashing of whole keys, so no collisions to worry
// about). No string is built for a key: named types, most of a BTF, are one lookup of (kind, name);
// the spelt-out name is made only for the rows printed.
//
// Keys are computed in two phases per side:
// - phase 1, the key proper: named types by (kind, name); pointers, qualifiers, arrays, type tags and
//   prototypes from the keys of what they refer to (recursively, memoized); anonymous structs and
//   unions from where they are used, which needs the reverse edges, built only for them and for the
//   pointers, qualifiers and arrays that lead to them;
// - phase 2, in id order: the second type with a key already taken on its side becomes `key#2`, etc.
// Recursion is depth-limited and a type met again while its own key is being computed (a cycle, which
// only crafted BTF has) gets the kind's anonymous key, so that any input ends in bounded time.
//
// The table, one side's keys (phase 1) and their spelling are in diff_keys.h and diff_keys.cc; phase 2,
// the sizes and the comparison of layouts are here.
#include "btfslim/diff.h"
#include "anon_members.h"
#include "diff_keys.h"
#include "btfslim/escape.h"
#include "btfslim/footprint.h"
#include "btfslim/memory.h"
#include "btfslim/output.h"
#include "btfslim/parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <unordered_map>
#include <optional>
#include <span>
#include <string_view>

namespace btfslim {
namespace {

using namespace diff_keys;

bool has_layout(Kind k) {
  switch (k) {
    case Kind::Int:
    case Kind::Struct:
    case Kind::Union:
    case Kind::Enum:
    case Kind::Enum64:
    case Kind::Fwd:
    case Kind::Typedef:
    case Kind::Func:
    case Kind::Var:
    case Kind::Float:
    case Kind::Datasec:
      return true;
    default:
      return false;
  }
}
bool is_enum(Kind k) { return k == Kind::Enum || k == Kind::Enum64; }
bool has_size(Kind k) {
  return is_composite(k) || is_enum(k) || k == Kind::Int || k == Kind::Float || k == Kind::Datasec;
}

// Comparing the layouts of two types with the same key: what `diff --by type` and `--by member` show.
// Members are matched by name (unnamed ones as "(anon union)#N", counted per kind), enumerators by name,
// parameters by position. A named member only the old side has and one only the new side has, at the
// same bit offset, of the same bitfield width and type, are one member renamed (paired in member
// order); a member's type is compared by key, so that a renumbered type is no change,
// and spelt as C spells it only when it differs.
class LayoutComparer {
 public:
  LayoutComparer(const KeyTable& table, const SideRef& a, const SideRef& b) : c_(table, true), a_(a), b_(b) {}

  // Fills `out.changes` and `out.summary`; false when the layouts are the same.
  bool compare(TypeId ida, TypeId idb, LayoutChange& out) {
    const TypeView ta = a_.btf.type(ida), tb = b_.btf.type(idb);
    const Kind ka = ta.kind(), kb = tb.kind();
    bool changed = ka != kb;
    if (has_size(ka)) {
      out.old_size = ta.size();
      out.new_size = tb.size();
      changed |= ta.size() != tb.size();
    }
    if (is_composite(ka))
      members(ta, tb, out.changes);
    else if (is_enum(ka))
      enumerators(ta, tb, out.changes);
    else if (ka == Kind::Typedef || ka == Kind::Var)
      target(ta.ref(), tb.ref(), "", out.changes);
    else if (ka == Kind::Func)
      function(ta.ref(), tb.ref(), out.changes);
    else if (ka == Kind::Int && (ta.int_encoding() != tb.int_encoding() || ta.int_bits() != tb.int_bits())) {
      changed = true;
      out.old_encoding = int_encoding(ta);
      out.new_encoding = int_encoding(tb);
    }
    changed |= !out.changes.empty();
    if (changed) out.summary = summary(ka, kb, out);
    return changed;
  }

 private:
  struct MemberFacts {
    std::string name;
    std::uint32_t node;
    std::uint32_t bit_offset;
    std::uint32_t bits;
    TypeId type;
    bool named;
  };

  // `ordinals`: those of the unnamed members (paired_unnamed_ordinals); empty: by position.
  static std::vector<MemberFacts> member_list(const SideRef& s, const TypeView& t,
                                              const std::vector<std::uint32_t>& ordinals = {}) {
    std::vector<MemberFacts> out;
    out.reserve(t.vlen());
    for (unsigned i = 0; i < t.vlen(); ++i) {
      const Member m = t.member(i);
      std::string name;
      if (m.name_off != 0)
        name = escape(s.btf.str(m.name_off));
      else
        name = fmt::format("(anon {})#{}", m.type ? kind_word(s.btf.type(m.type).kind()) : "void",
                           ordinals.empty() ? unnamed_ordinal(s.btf, t, i) : ordinals[i]);
      out.push_back({std::move(name), s.keys.key(m.type), t.member_bit_offset(m), t.member_bitfield_size(m), m.type,
                     m.name_off != 0});
    }
    return out;
  }

  void members(const TypeView& ta, const TypeView& tb, std::vector<MemberChange>& out) {
    // Most members of most types are as they were: the same names in the same order, the same places.
    if (ta.vlen() == tb.vlen()) {
      bool same = true;
      for (unsigned i = 0; i < ta.vlen() && same; ++i) {
        const Member ma = ta.member(i), mb = tb.member(i);
        same = ta.member_bit_offset(ma) == tb.member_bit_offset(mb) &&
               ta.member_bitfield_size(ma) == tb.member_bitfield_size(mb) &&
               a_.keys.key(ma.type) == b_.keys.key(mb.type) &&
               (ma.name_off == 0) == (mb.name_off == 0) &&
               (ma.name_off == 0 || a_.btf.str(ma.name_off) == b_.btf.str(mb.name_off));
      }
      if (same) return;
    }
    const auto before = member_list(a_, ta);
    const auto after = member_list(b_, tb, paired_unnamed_ordinals(a_.btf, ta, b_.btf, tb));
    std::unordered_map<std::string_view, const MemberFacts*> old_by_name, new_by_name;
    for (const MemberFacts& m : before) old_by_name.emplace(m.name, &m);
    for (const MemberFacts& m : after) new_by_name.emplace(m.name, &m);
    // Renamed: per member only the new side has, the old-only member it pairs with, if any.
    std::vector<const MemberFacts*> renamed_from(after.size(), nullptr);
    std::vector<bool> renamed(before.size(), false);
    for (std::size_t i = 0; i < before.size(); ++i) {
      const MemberFacts& o = before[i];
      if (!o.named || new_by_name.count(o.name)) continue;
      for (std::size_t k = 0; k < after.size() && !renamed[i]; ++k) {
        const MemberFacts& m = after[k];
        if (renamed_from[k] || !m.named || old_by_name.count(m.name) || m.bit_offset != o.bit_offset ||
            m.bits != o.bits || m.node != o.node)
          continue;
        renamed_from[k] = &o;
        renamed[i] = true;
      }
    }
    for (std::size_t i = 0; i < before.size(); ++i) {
      const MemberFacts& m = before[i];
      if (renamed[i] || new_by_name.count(m.name)) continue;
      MemberChange c;
      c.change = Change::Removed;
      c.member = m.name;
      c.old_type = c_(m.node);
      c.old_bit_offset = m.bit_offset;
      c.old_bits = m.bits;
      out.push_back(std::move(c));
    }
    for (std::size_t k = 0; k < after.size(); ++k) {
      const MemberFacts& m = after[k];
      const auto was = old_by_name.find(m.name);
      MemberChange c;
      c.member = m.name;
      c.new_type = c_(m.node);
      c.new_bit_offset = m.bit_offset;
      c.new_bits = m.bits;
      if (const MemberFacts* o = renamed_from[k]) {
        c.change = Change::Renamed;
        c.old_member = o->name;
        c.old_type = c.new_type;
        c.old_bit_offset = o->bit_offset;
        c.old_bits = o->bits;
        out.push_back(std::move(c));
        continue;
      }
      if (was == old_by_name.end()) {
        c.change = Change::Added;
        out.push_back(std::move(c));
        continue;
      }
      const MemberFacts& o = *was->second;
      c.old_type = o.node == m.node ? c.new_type : c_(o.node);
      c.old_bit_offset = o.bit_offset;
      c.old_bits = o.bits;
      if (o.node != m.node) {
        c.change = Change::Retyped;
        out.push_back(c);
      }
      if (o.bits != m.bits) {
        c.change = Change::Resized;
        out.push_back(c);
      }
      if (o.bit_offset != m.bit_offset) {
        c.change = Change::Moved;
        out.push_back(std::move(c));
      }
    }
  }

  struct Enumerator {
    std::string_view name;
    std::uint64_t value;
  };
  static std::vector<Enumerator> enumerator_list(const SideRef& s, const TypeView& t) {
    std::vector<Enumerator> out;
    out.reserve(t.vlen());
    for (unsigned i = 0; i < t.vlen(); ++i) {
      if (t.kind() == Kind::Enum) {
        const EnumValue v = t.enum_value(i);
        // A signed enum's 32-bit value, sign-extended, so that ENUM and ENUM64 values compare.
        const std::uint64_t value = t.kflag() ? static_cast<std::uint64_t>(std::int64_t{static_cast<std::int32_t>(v.value)})
                                              : std::uint64_t{v.value};
        out.push_back({s.btf.str(v.name_off), value});
      } else {
        const Enum64Value v = t.enum64_value(i);
        out.push_back({s.btf.str(v.name_off), v.value});
      }
    }
    return out;
  }

  void enumerators(const TypeView& ta, const TypeView& tb, std::vector<MemberChange>& out) {
    const auto before = enumerator_list(a_, ta);
    const auto after = enumerator_list(b_, tb);
    if (before.size() == after.size()) {
      bool same = true;
      for (std::size_t i = 0; i < before.size() && same; ++i)
        same = before[i].name == after[i].name && before[i].value == after[i].value;
      if (same) return;
    }
    const bool is_signed = tb.kflag();
    std::unordered_map<std::string_view, std::uint64_t> old_by_name, new_by_name;
    for (const Enumerator& e : before) old_by_name.emplace(e.name, e.value);
    for (const Enumerator& e : after) new_by_name.emplace(e.name, e.value);
    for (const Enumerator& e : before) {
      if (new_by_name.count(e.name)) continue;
      MemberChange c;
      c.change = Change::Removed;
      c.member = escape(e.name);
      c.old_value = e.value;
      c.value_signed = is_signed;
      out.push_back(std::move(c));
    }
    for (const Enumerator& e : after) {
      const auto was = old_by_name.find(e.name);
      if (was != old_by_name.end() && was->second == e.value) continue;
      MemberChange c;
      c.change = was == old_by_name.end() ? Change::Added : Change::Revalued;
      c.member = escape(e.name);
      if (was != old_by_name.end()) c.old_value = was->second;
      c.new_value = e.value;
      c.value_signed = is_signed;
      out.push_back(std::move(c));
    }
  }

  // A typedef's or variable's target, a return type (member ""), or a parameter's type.
  void target(TypeId ida, TypeId idb, std::string member, std::vector<MemberChange>& out) {
    const std::uint32_t na = a_.keys.key(ida), nb = b_.keys.key(idb);
    if (na == nb) return;
    MemberChange c;
    c.change = Change::Retyped;
    c.member = std::move(member);
    c.old_type = c_(na);
    c.new_type = c_(nb);
    out.push_back(std::move(c));
  }

  // A function's prototype: its return type, then its parameters by position.
  void function(TypeId proto_a, TypeId proto_b, std::vector<MemberChange>& out) {
    if (a_.keys.key(proto_a) == b_.keys.key(proto_b)) return;
    if (proto_a == 0 || proto_b == 0 || a_.btf.type(proto_a).kind() != Kind::FuncProto ||
        b_.btf.type(proto_b).kind() != Kind::FuncProto) {
      target(proto_a, proto_b, "", out);
      return;
    }
    const TypeView pa = a_.btf.type(proto_a), pb = b_.btf.type(proto_b);
    target(pa.ref(), pb.ref(), "", out);
    auto param_name = [](const SideRef& s, const TypeView& t, unsigned i) {
      const Param p = t.param(i);
      if (p.type == 0) return std::string("...");
      return p.name_off ? escape(s.btf.str(p.name_off)) : fmt::format("#{}", i + 1);
    };
    const unsigned common = std::min(pa.vlen(), pb.vlen());
    for (unsigned i = 0; i < common; ++i) target(pa.param(i).type, pb.param(i).type, param_name(b_, pb, i), out);
    // The parameters past the other prototype's: removed from a, added in b.
    auto past_common = [&](const SideRef& s, const TypeView& t, Change change) {
      for (unsigned i = common; i < t.vlen(); ++i) {
        MemberChange c;
        c.change = change;
        c.member = param_name(s, t, i);
        (change == Change::Removed ? c.old_type : c.new_type) = c_(s.keys.key(t.param(i).type));
        out.push_back(std::move(c));
      }
    };
    past_common(a_, pa, Change::Removed);
    past_common(b_, pb, Change::Added);
  }

  // "signed", "unsigned", "signed char", "bool"; with the width in bits where it is not the size's.
  static std::string int_encoding(const TypeView& t) {
    const std::uint32_t e = t.int_encoding();
    std::string out = e & 4 ? "bool" : e & 2 ? (e & 1 ? "signed char" : "char") : e & 1 ? "signed" : "unsigned";
    if (t.int_bits() != 8 * t.size()) out += fmt::format(":{}", t.int_bits());
    return out;
  }

  static std::string summary(Kind ka, Kind kb, const LayoutChange& l) {
    std::vector<std::string> parts;
    if (ka != kb) parts.push_back(fmt::format("{} -> {}", kind_name(ka), kind_name(kb)));
    if (l.old_size && l.new_size && *l.old_size != *l.new_size)
      parts.push_back(fmt::format("size {} -> {}", with_commas(*l.old_size), with_commas(*l.new_size)));
    const std::string_view noun = is_composite(ka) ? "member" : is_enum(ka) ? "enumerator" : "parameter";
    std::size_t counts[7] = {};
    for (const MemberChange& c : l.changes) {
      if (c.member.empty()) {  // the type itself: a typedef's target, a return type
        parts.push_back(fmt::format("{}{} -> {}", ka == Kind::Func ? "returns " : "", c.old_type, c.new_type));
        continue;
      }
      ++counts[static_cast<unsigned>(c.change)];
    }
    std::string tally;  // "3 members added, 192 moved"
    for (const Change c : {Change::Added, Change::Removed, Change::Renamed, Change::Moved, Change::Retyped, Change::Resized,
                           Change::Revalued}) {
      const std::size_t n = counts[static_cast<unsigned>(c)];
      if (n == 0) continue;
      tally += tally.empty() ? fmt::format("{} {}{} {}", with_commas(n), noun, n == 1 ? "" : "s", change_name(c))
                             : fmt::format(", {} {}", with_commas(n), change_name(c));
    }
    if (!tally.empty()) parts.push_back(std::move(tally));
    if (parts.empty()) parts.push_back(fmt::format("encoding {} -> {}", l.old_encoding, l.new_encoding));
    std::string out;
    for (const std::string& p : parts) {
      if (!out.empty()) out += "; ";
      out += p;
    }
    return out;
  }

  Speller c_;
  const SideRef& a_;
  const SideRef& b_;
};

// Phase 2: each own type's final key, in id order: a key already taken on this side gets an ordinal.
ZeroedArray<std::uint32_t> final_keys(const Btf& btf, const Side& side, KeyTable& table, std::uint32_t base_nodes) {
  ZeroedArray<std::uint32_t> uses(base_nodes);
  auto out = ZeroedArray<std::uint32_t>::for_overwrite(btf.own_count());
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const std::uint32_t base = side.key(id);
    const std::uint32_t seen = uses[base]++;
    if (seen == 0) {
      out[id - btf.first_id()] = base;
      continue;
    }
    KeyNode dup;
    dup.kind = table[base].kind;
    dup.role = Role::Dup;
    dup.parent = base;
    dup.extra = seen + 1;
    out[id - btf.first_id()] = table.intern(dup);
  }
  return out;
}

// One side's sizes by final node (0: absent; every type has a record of 12 bytes or more), and the
// type behind each node.
struct Sizes {
  ZeroedArray<std::uint32_t> by_node;
  ZeroedArray<TypeId> id_of;
  std::vector<std::uint64_t> by_kind = std::vector<std::uint64_t>(kMaxKind + 1, 0);
  std::uint64_t header = 0;
  std::uint64_t strings = 0;
  std::uint64_t total = 0;
};

Sizes side_sizes(const Btf& btf, const ZeroedArray<std::uint32_t>& keys, const StringAttribution& strings,
                 std::uint32_t nodes) {
  Sizes s;
  s.by_node = ZeroedArray<std::uint32_t>(nodes);
  s.id_of = ZeroedArray<TypeId>(nodes);
  std::uint64_t named_strings = 0;
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const std::uint32_t node = id - btf.first_id();
    const TypeView t = btf.type(id);
    // Rounded down, so that what the types hold never exceeds the string section.
    const auto share = static_cast<std::uint32_t>(std::floor(strings.per_type[node] + 1e-9));
    const std::uint32_t size = t.record_size() + share;
    named_strings += share;
    s.by_node[keys[node]] = size;
    s.id_of[keys[node]] = id;
    s.by_kind[static_cast<unsigned>(t.kind())] += size;
  }
  const Header& h = btf.header();
  s.total = btf.raw().size();
  s.strings = h.str_len - std::min<std::uint64_t>(named_strings, h.str_len);
  s.header = s.total - h.type_len - h.str_len;
  return s;
}

// The layouts that differ between the sides: types of a kind with a layout (not pointers, qualifiers,
// arrays, prototypes or tags: their changes show in the types that use them), present on both sides
// and compared, or on one side only. An ENUM on one side only and an ENUM64 of the same key on the
// other are one type.
std::vector<LayoutChange> layout_changes(const KeyTable& table, const SideRef& a, const Sizes& before,
                                         const SideRef& b, const Sizes& after, std::uint64_t& compared) {
  Speller spell(table);
  LayoutComparer cmp(table, a, b);
  std::vector<LayoutChange> changed, added, removed;
  // Anonymous types used nowhere but in prototypes are keyed `(anon struct)`, `(anon struct)#2`, ... in
  // id order: the same key on both sides says nothing about being the same type, so they are left out.
  // So are the anonymous types keyed through one of them.
  auto comparable = [&](std::uint32_t node) {
    for (int depth = 0; node != kNone && depth < kMaxDepth; ++depth) {
      const KeyNode& n = table[node];
      if (n.role == Role::Unkeyed) return false;
      if (n.role != Role::Member && n.role != Role::Dup) return true;
      node = n.parent;
    }
    return true;
  };
  // The node of the other enum kind with the same key, when only the other side has it.
  auto enum_partner = [&](std::uint32_t node, const Sizes& other) -> std::uint32_t {
    KeyNode n = table[node];
    if (!is_enum(n.kind) || (n.role != Role::Named && n.role != Role::EnumFirst)) return kNone;
    n.kind = n.kind == Kind::Enum ? Kind::Enum64 : Kind::Enum;
    const std::uint32_t p = table.find(n);
    return p != kNone && p < other.id_of.size() && other.id_of[p] != 0 ? p : kNone;
  };
  for (std::uint32_t node = 0; node < table.size(); ++node) {
    const TypeId ida = before.id_of[node], idb = after.id_of[node];
    if ((ida == 0 && idb == 0) || !has_layout(table[node].kind) || !comparable(node)) continue;
    LayoutChange l;
    if (ida && idb) {
      ++compared;
      if (!cmp.compare(ida, idb, l)) continue;
    } else if (ida) {
      // An ENUM that became an ENUM64 (or back): compared once, from the old side.
      if (const std::uint32_t p = enum_partner(node, after); p != kNone && before.id_of[p] == 0) {
        ++compared;
        l.name = spell(node);
        l.old_kind = table[node].kind;
        l.new_kind = table[p].kind;
        l.old_id = ida;
        l.new_id = after.id_of[p];
        if (cmp.compare(ida, l.new_id, l)) changed.push_back(std::move(l));
        continue;
      }
      l.status = LayoutStatus::Removed;
    } else {
      if (const std::uint32_t p = enum_partner(node, before); p != kNone && after.id_of[p] == 0) continue;
      l.status = LayoutStatus::Added;
    }
    l.name = spell(node);
    l.old_id = ida;
    l.new_id = idb;
    if (ida) l.old_kind = table[node].kind;
    if (idb) l.new_kind = table[node].kind;
    if (l.status != LayoutStatus::Changed && has_size(table[node].kind)) {
      const TypeView t = (ida ? a.btf : b.btf).type(ida ? ida : idb);
      (ida ? l.old_size : l.new_size) = t.size();
    }
    (l.status == LayoutStatus::Changed ? changed : l.status == LayoutStatus::Added ? added : removed).push_back(std::move(l));
  }
  auto by_name = [](const LayoutChange& x, const LayoutChange& y) { return x.name < y.name; };
  std::sort(changed.begin(), changed.end(), by_name);
  std::sort(added.begin(), added.end(), by_name);
  std::sort(removed.begin(), removed.end(), by_name);
  for (auto* more : {&added, &removed}) std::move(more->begin(), more->end(), std::back_inserter(changed));
  return changed;
}

}  // namespace

std::string_view change_name(Change c) {
  switch (c) {
    case Change::Added: return "added";
    case Change::Removed: return "removed";
    case Change::Moved: return "moved";
    case Change::Retyped: return "retyped";
    case Change::Resized: return "resized";
    case Change::Revalued: return "revalued";
    case Change::Renamed: return "renamed";
  }
  return "changed";
}

BtfDiff diff_btf(const Btf& old_btf, const Btf& new_btf, const DiffParts& parts) {
  const bool same = &old_btf == &new_btf;
  // Mostly the same types on both sides: room for the larger side and an eighth more before the table grows.
  const std::size_t larger = std::max(old_btf.end_id(), new_btf.end_id());
  KeyTable table((same ? larger : larger + larger / 8) + 64);
  KeyNode void_key;
  const std::uint32_t void_node = table.intern(void_key);

  // The string shares need nothing of the keys: they are worked out on a second CPU meanwhile.
  StringAttribution old_strings, new_strings;
  Beside shares(
      [&] {
        old_strings = attribute_strings(old_btf);
        if (!same) new_strings = attribute_strings(new_btf);
      },
      old_btf.type_section().size() + (same ? 0 : new_btf.type_section().size()) >= kTypesWorthAThread);

  // The same BTF on both sides (one file named twice, read once) has the same keys and sizes: they are
  // computed once and compared with themselves.
  Side old_side(old_btf, table, void_node);
  old_side.key_all();
  std::optional<Side> other_side;
  if (!same) {
    other_side.emplace(new_btf, table, void_node, &old_side);
    other_side->key_all();
  }
  const Side& new_side = same ? old_side : *other_side;
  const std::uint32_t base_nodes = table.size();

  const ZeroedArray<std::uint32_t> old_keys = final_keys(old_btf, old_side, table, base_nodes);
  const ZeroedArray<std::uint32_t> new_keys = same ? ZeroedArray<std::uint32_t>() : final_keys(new_btf, new_side, table, base_nodes);

  shares.wait();
  const Sizes before = side_sizes(old_btf, old_keys, old_strings, table.size());
  std::optional<Sizes> other_sizes;
  if (!same) other_sizes.emplace(side_sizes(new_btf, new_keys, new_strings, table.size()));
  const Sizes& after = same ? before : *other_sizes;

  BtfDiff out;
  out.old_total = before.total;
  out.new_total = after.total;
  out.old_by_kind = before.by_kind;
  out.new_by_kind = after.by_kind;
  out.old_other = before.header + before.strings;
  out.new_other = after.header + after.strings;
  for (int k = 1; k <= kMaxKind; ++k)
    if (before.by_kind[k] || after.by_kind[k]) out.kinds.push_back(static_cast<Kind>(k));

  out.old_types = old_btf.own_count();
  out.new_types = new_btf.own_count();
  Speller spell(table);
  for (std::uint32_t node = 0; parts.footprint && node < table.size(); ++node) {
    const std::uint32_t o = before.by_node[node], n = after.by_node[node];
    if (o == n) continue;
    DiffRow row;
    row.name = spell(node);
    row.kind = table[node].kind;
    if (o) row.old_size = o;
    if (n) row.new_size = n;
    row.delta = std::int64_t{n} - std::int64_t{o};
    out.rows.push_back(std::move(row));
  }
  if (parts.layout) out.layout = layout_changes(table, {old_btf, old_side}, before, {new_btf, new_side}, after, out.layout_compared);
  auto other = [&](std::string name, std::uint64_t o, std::uint64_t n) {
    if (o == n) return;
    DiffRow row;
    row.name = std::move(name);
    row.old_size = o;
    row.new_size = n;
    row.delta = static_cast<std::int64_t>(n) - static_cast<std::int64_t>(o);
    out.rows.push_back(std::move(row));
  };
  other("[header]", before.header, after.header);
  other("[strings]", before.strings, after.strings);
  std::sort(out.rows.begin(), out.rows.end(), [](const DiffRow& x, const DiffRow& y) {
    if (x.delta != y.delta) return x.delta > y.delta;
    if (x.name != y.name) return x.name < y.name;
    return x.kind < y.kind;
  });
  return out;
}

}  // namespace btfslim
