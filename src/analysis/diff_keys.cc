// Keying types for `diff`: ordering key nodes, keying anonymous structs and unions by where they are
// used, and spelling keys out (diff_keys.h).
#include "diff_keys.h"

#include "anon_members.h"
#include "btfslim/escape.h"

#include <fmt/format.h>

#include <algorithm>

namespace btfslim::diff_keys {

// A total order on nodes that does not depend on the order they were interned in.
int compare_nodes(const KeyTable& table, std::uint32_t a, std::uint32_t b, int depth) {
  if (a == b) return 0;
  if (a == kNone || b == kNone) return a == kNone ? -1 : 1;
  if (depth > 4 * kMaxDepth) return a < b ? -1 : 1;
  const KeyNode& x = table[a];
  const KeyNode& y = table[b];
  if (x.role != y.role) return x.role < y.role ? -1 : 1;
  if (x.kind != y.kind) return x.kind < y.kind ? -1 : 1;
  if (const int c = x.name().compare(y.name())) return c;
  if (x.extra != y.extra) return x.extra < y.extra ? -1 : 1;
  if (const int c = compare_nodes(table, x.parent, y.parent, depth + 1)) return c;
  if (const int c = compare_nodes(table, x.aux, y.aux, depth + 1)) return c;
  const auto px = table.params_of(x), py = table.params_of(y);
  for (std::size_t i = 0; i < px.size() && i < py.size(); ++i) {
    if (const int c = px[i].name.compare(py[i].name)) return c;
    if (const int c = compare_nodes(table, px[i].type, py[i].type, depth + 1)) return c;
  }
  return px.size() == py.size() ? 0 : px.size() < py.size() ? -1 : 1;
}

std::uint32_t Side::by_use(TypeId id, Kind kind, int depth) {
  KeyNode best;
  bool have = false;
  auto consider = [&](const KeyNode& c) {
    if (have) {
      int order = compare_nodes(table_, c.parent, best.parent);
      if (order == 0) order = c.name().compare(best.name());
      if (order == 0) order = c.extra < best.extra ? -1 : c.extra > best.extra ? 1 : 0;
      if (order >= 0) return;
    }
    best = c;
    have = true;
  };
  // Through pointers, qualifiers and arrays to the members, typedefs and variables that hold them.
  std::vector<TypeId> todo{id};
  std::vector<TypeId> seen{id};
  while (!todo.empty() && seen.size() <= kMaxDepth) {
    const TypeId at = todo.back();
    todo.pop_back();
    for (const Use& use : users(at)) {
      const TypeView u = btf_.type(use.user);
      if (is_wrapper(u.kind())) {
        if (std::find(seen.begin(), seen.end(), use.user) == seen.end()) {
          seen.push_back(use.user);
          todo.push_back(use.user);
        }
        continue;
      }
      KeyNode c;
      c.kind = kind;
      c.role = Role::Member;
      c.parent = key_of(use.user, depth + 1);
      if (use.slot != kNone) {
        const Member m = u.member(use.slot);
        if (m.name_off != 0)
          c.set_name(btf_.str(m.name_off));
        else
          c.extra = unnamed_member_ordinal(use.user, u, use.slot, c.parent);
      }
      consider(c);
    }
  }
  return have ? table_.intern(best) : kNone;
}

std::uint32_t Side::unnamed_member_ordinal(TypeId user, const TypeView& u, unsigned slot, std::uint32_t user_key) {
  if (!before_) return unnamed_ordinal(btf_, u, slot);
  if (const auto done = paired_.find(user); done != paired_.end()) return done->second[slot];
  if (!before_by_key_) {
    before_by_key_.emplace();
    const Btf& old_btf = before_->btf_;
    for (TypeId id = 1; id < old_btf.end_id(); ++id) {
      const TypeView t = old_btf.type(id);
      if (!is_composite(t.kind())) continue;
      for (unsigned i = 0; i < t.vlen(); ++i)
        if (t.member(i).name_off == 0) {
          before_by_key_->try_emplace(before_->key(id), id);
          break;
        }
    }
  }
  const auto old = before_by_key_->find(user_key);
  if (old == before_by_key_->end()) return unnamed_ordinal(btf_, u, slot);
  const auto& ordinals =
      paired_.emplace(user, paired_unnamed_ordinals(before_->btf_, before_->btf_.type(old->second), btf_, u))
          .first->second;
  return ordinals[slot];
}

std::string_view kind_word(Kind k) {
  switch (k) {
    case Kind::Int: return "int";
    case Kind::Ptr: return "ptr";
    case Kind::Array: return "array";
    case Kind::Struct: return "struct";
    case Kind::Union: return "union";
    case Kind::Enum: return "enum";
    case Kind::Fwd: return "fwd";
    case Kind::Typedef: return "typedef";
    case Kind::Volatile: return "volatile";
    case Kind::Const: return "const";
    case Kind::Restrict: return "restrict";
    case Kind::Func: return "func";
    case Kind::FuncProto: return "func_proto";
    case Kind::Var: return "var";
    case Kind::Datasec: return "datasec";
    case Kind::Float: return "float";
    case Kind::DeclTag: return "decl_tag";
    case Kind::TypeTag: return "type_tag";
    case Kind::Enum64: return "enum64";
    default: return "unknown";
  }
}


void Speller::proto(const KeyNode& n, std::string_view inner, std::string& out, int depth) {
  spell(n.parent, out, depth + 1);
  out += ' ';
  if (!inner.empty()) {
    out += inner;
  }
  out += '(';
  const auto params = table_.params_of(n);
  if (params.empty()) out += "void";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i) out += ", ";
    if (table_[params[i].type].role == Role::Void) {
      out += "...";
      continue;
    }
    spell(params[i].type, out, depth + 1);
    if (!params[i].name.empty()) {
      if (out.back() != '*') out += ' ';
      append_escaped(out, params[i].name);
    }
  }
  out += ')';
}

void Speller::spell(std::uint32_t node, std::string& out, int depth) {
  if (node == kNone || depth > 4 * kMaxDepth) {
    out += "...";
    return;
  }
  const KeyNode& n = table_[node];
  switch (n.role) {
    case Role::Void:
      out += "void";
      return;
    case Role::Named:
      if (c_names_) {
        if (n.kind == Kind::Fwd)
          out += n.extra ? "union " : "struct ";
        else if (n.kind == Kind::Struct || n.kind == Kind::Union || n.kind == Kind::Enum)
          (out += kind_word(n.kind)) += ' ';
        else if (n.kind == Kind::Enum64)
          out += "enum ";
      } else if (n.kind != Kind::Int && n.kind != Kind::Float) {
        out += kind_word(n.kind);
        out += ' ';
        if (n.kind == Kind::Fwd) out += n.extra ? "union " : "struct ";
      }
      append_escaped(out, n.name());
      return;
    case Role::Wrapper:
      if (n.kind == Kind::Ptr && n.parent != kNone && table_[n.parent].role == Role::Proto) {
        proto(table_[n.parent], "(*)", out, depth);
        return;
      }
      if (n.kind == Kind::Array) {
        spell(n.parent, out, depth + 1);
        out += fmt::format("[{}]", n.extra);
        return;
      }
      if (n.kind == Kind::Ptr) {
        spell(n.parent, out, depth + 1);
        out += out.empty() || out.back() == '*' ? "*" : " *";
        return;
      }
      {
        const std::string q = n.kind == Kind::TypeTag ? fmt::format("__tag({})", esc(n.name())) : std::string(kind_word(n.kind));
        if (is_ptr(n.parent)) {
          spell(n.parent, out, depth + 1);
          out += ' ';
          out += q;
        } else if (n.parent != kNone && (table_[n.parent].role == Role::Proto || table_[n.parent].kind == Kind::Array)) {
          // A qualified array or prototype: C would read "const int[4]" as an array of const int.
          out += q;
          out += " (";
          spell(n.parent, out, depth + 1);
          out += ')';
        } else {
          out += q;
          out += ' ';
          spell(n.parent, out, depth + 1);
        }
      }
      return;
    case Role::Proto:
      proto(n, "", out, depth);
      return;
    case Role::Member:
      spell(n.parent, out, depth + 1);
      out += "::(anon ";
      out += kind_word(n.kind);
      if (!n.name().empty()) {
        out += ' ';
        append_escaped(out, n.name());
        out += ')';
      } else if (n.extra) {
        out += fmt::format(")#{}", n.extra);
      } else {
        out += ')';
      }
      return;
    case Role::EnumFirst:
      out += kind_word(n.kind);
      out += " {";
      append_escaped(out, n.name());
      out += ",...}";
      return;
    case Role::Tag:
      out += "decl_tag ";
      append_escaped(out, n.name());
      out += " on ";
      spell(n.parent, out, depth + 1);
      if (n.extra) out += fmt::format(" (component {})", n.extra - 1);
      return;
    case Role::Unkeyed:
      out += "(anon ";
      out += kind_word(n.kind);
      out += ')';
      return;
    case Role::Dup:
      spell(n.parent, out, depth + 1);
      out += fmt::format("#{}", n.extra);
      return;
  }
}

}  // namespace btfslim::diff_keys
