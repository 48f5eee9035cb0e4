// Type selection and the raw and JSON dumps.
//
// The raw format is bpftool's (tools/bpf/bpftool/btf.c, dump_btf_type), reproduced byte for byte because
// it is what people read BTF in and what golden tests diff; the tests hold bpftool 7.1 as the oracle.
// The JSON mirrors `bpftool -j btf dump`: the same object per type under {"types": [...]}.
#include "btfslim/dump.h"

#include "btfslim/error.h"
#include "btfslim/escape.h"


#include <algorithm>
#include <charconv>

namespace btfslim {
namespace {

std::string_view int_encoding_name(std::uint32_t encoding) {
  switch (encoding) {
    case 0: return "(none)";
    case 1: return "SIGNED";
    case 2: return "CHAR";
    case 4: return "BOOL";
    default: return "UNKN";
  }
}

std::string_view linkage_name(std::uint32_t linkage) {
  switch (linkage) {
    case 0: return "static";
    case 1: return "global";
    case 2: return "extern";
    default: return "(unknown)";
  }
}

}  // namespace

std::vector<TypeId> parse_id_list(std::string_view text, std::string_view option) {
  std::vector<TypeId> ids;
  auto bad = [&] { fail(std::string(option), "'{}' is not a type id list (e.g. 5,7,10-12)", esc(text)); };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = text.substr(pos, comma - pos);
    const std::size_t dash = item.find('-');
    auto number = [&](std::string_view s) {
      TypeId v = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || end != s.data() + s.size() || s.empty()) bad();
      return v;
    };
    if (dash == std::string_view::npos) {
      ids.push_back(number(item));
    } else {
      const TypeId lo = number(item.substr(0, dash));
      const TypeId hi = number(item.substr(dash + 1));
      if (hi < lo || hi - lo > (1u << 24)) bad();
      for (TypeId id = lo; id <= hi; ++id) ids.push_back(id);
    }
    pos = comma + 1;
  }
  return ids;
}

bool TypeSelection::matches(const Btf& btf, TypeId id) const {
  const TypeView t = btf.type(id);
  if (!kinds.empty() && std::find(kinds.begin(), kinds.end(), t.kind()) == kinds.end()) return false;
  if (!names.empty()) {
    bool any = false;
    for (const TypePattern& pattern : names) any = any || pattern.matches(btf, id);
    if (!any) return false;
  }
  return true;
}

void TypeSelection::require_names(const Btf& btf) const {
  for (const TypePattern& pattern : names) {
    bool any = false;
    for (TypeId id = btf.first_id(); id < btf.end_id() && !any; ++id) any = pattern.matches(btf, id);
    if (!any) pattern.fail_unmatched(btf, "--name");
  }
}

std::vector<TypePattern> name_patterns(const std::vector<std::string>& names) {
  std::vector<TypePattern> patterns;
  for (const std::string& n : names) patterns.push_back(TypePattern::parse(n, TypePattern::Globs::Allowed));
  return patterns;
}

std::vector<TypeId> TypeSelection::resolve(const Btf& btf) const {
  std::vector<TypeId> out;
  if (!ids.empty()) {
    for (const TypeId id : ids) {
      if (!btf.valid_id(id))
        fail(btf.name(), "there is no type [{}]: ids run from 1 to {}", id, btf.end_id() - 1);
      if (matches(btf, id)) out.push_back(id);
    }
    return out;
  }
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id)
    if (selects_all() || matches(btf, id)) out.push_back(id);
  return out;
}

namespace {

void summarize(const Btf& btf, TypeId id, std::string& out, int depth) {
  if (id == 0) {
    out += "void";
    return;
  }
  if (depth > 8) {
    out += "...";
    return;
  }
  const TypeView t = btf.type(id);
  const std::string_view name = btf.str(t.name_off());
  switch (t.kind()) {
    case Kind::Struct:
    case Kind::Union:
    case Kind::Enum:
    case Kind::Enum64:
    case Kind::Fwd: {
      const char* tag = t.kind() == Kind::Struct ? "struct"
                        : t.kind() == Kind::Union ? "union"
                        : t.kind() == Kind::Fwd   ? (t.kflag() ? "union" : "struct")
                                                  : "enum";
      out += tag;
      out += ' ';
      if (name.empty())
        out += "{...}";
      else
        append_escaped(out, name);
      return;
    }
    case Kind::Ptr:
      summarize(btf, t.ref(), out, depth + 1);
      out += " *";
      return;
    case Kind::Const:
    case Kind::Volatile:
    case Kind::Restrict:
      out += t.kind() == Kind::Const ? "const " : t.kind() == Kind::Volatile ? "volatile " : "restrict ";
      summarize(btf, t.ref(), out, depth + 1);
      return;
    case Kind::TypeTag:
      fmt::format_to(std::back_inserter(out), "__tag({}) ", esc(name));
      summarize(btf, t.ref(), out, depth + 1);
      return;
    case Kind::Array:
      summarize(btf, t.array().type, out, depth + 1);
      fmt::format_to(std::back_inserter(out), "[{}]", t.array().nelems);
      return;
    case Kind::FuncProto:
      summarize(btf, t.ref(), out, depth + 1);
      fmt::format_to(std::back_inserter(out), " (*)({} args)", t.vlen());
      return;
    case Kind::DeclTag:
      fmt::format_to(std::back_inserter(out), "__tag({}) on ", esc(name));
      summarize(btf, t.ref(), out, depth + 1);
      return;
    default:
      if (name.empty())
        out += "(anon)";
      else
        append_escaped(out, name);
  }
}

[[gnu::noinline]] std::string_view escaped_into(std::string& scratch, std::string_view s) {
  scratch.clear();
  append_escaped(scratch, s);
  return scratch;
}

}  // namespace

std::string type_summary(const Btf& btf, TypeId id) {
  const TypeView t = btf.type(id);
  if (t.name_off() != 0 && t.kind() != Kind::DeclTag && t.kind() != Kind::TypeTag)
    return escape(btf.str(t.name_off()));
  std::string out;
  summarize(btf, id, out, 0);
  return out;
}

void dump_raw_type(const Btf& btf, TypeId id, OutputBuffer& out, bool names_plain) {
  const TypeView t = btf.type(id);
  const Kind kind = t.kind();
  const unsigned vlen = t.vlen();
  // A name as it is when nothing in it needs escaping (every real kernel's), else escaped into
  // `scratch`: one name per print below. (A custom formatter costs the dump of vmlinux a third more.)
  std::string scratch;
  auto name = [&](std::uint32_t off) -> std::string_view {
    const std::string_view s = name_or_anon(btf, off);
    return names_plain || is_plain(s) ? s : escaped_into(scratch, s);
  };
  out.print(FMT_COMPILE("[{}] {} '{}'"), id, kind_name(kind), name(t.name_off()));
  switch (kind) {
    case Kind::Int:
      out.print(FMT_COMPILE(" size={} bits_offset={} nr_bits={} encoding={}"), t.size(), t.int_offset(), t.int_bits(),
                int_encoding_name(t.int_encoding()));
      break;
    case Kind::Ptr:
    case Kind::Const:
    case Kind::Volatile:
    case Kind::Restrict:
    case Kind::Typedef:
    case Kind::TypeTag:
      out.print(FMT_COMPILE(" type_id={}"), t.ref());
      break;
    case Kind::Array: {
      const ArrayInfo a = t.array();
      out.print(FMT_COMPILE(" type_id={} index_type_id={} nr_elems={}"), a.type, a.index_type, a.nelems);
      break;
    }
    case Kind::Struct:
    case Kind::Union:
      out.print(FMT_COMPILE(" size={} vlen={}"), t.size(), vlen);
      for (unsigned i = 0; i < vlen; ++i) {
        const Member m = t.member(i);
        out.print(FMT_COMPILE("\n\t'{}' type_id={} bits_offset={}"), name(m.name_off), m.type,
                  t.member_bit_offset(m));
        if (const auto bits = t.member_bitfield_size(m)) out.print(FMT_COMPILE(" bitfield_size={}"), bits);
      }
      break;
    case Kind::Enum:
      out.print(FMT_COMPILE(" encoding={} size={} vlen={}"), t.kflag() ? "SIGNED" : "UNSIGNED", t.size(), vlen);
      for (unsigned i = 0; i < vlen; ++i) {
        const EnumValue v = t.enum_value(i);
        if (t.kflag())
          out.print(FMT_COMPILE("\n\t'{}' val={}"), name(v.name_off), static_cast<std::int32_t>(v.value));
        else
          out.print(FMT_COMPILE("\n\t'{}' val={}"), name(v.name_off), v.value);
      }
      break;
    case Kind::Enum64:
      out.print(FMT_COMPILE(" encoding={} size={} vlen={}"), t.kflag() ? "SIGNED" : "UNSIGNED", t.size(), vlen);
      for (unsigned i = 0; i < vlen; ++i) {
        const Enum64Value v = t.enum64_value(i);
        if (t.kflag())
          out.print(FMT_COMPILE("\n\t'{}' val={}LL"), name(v.name_off), static_cast<std::int64_t>(v.value));
        else
          out.print(FMT_COMPILE("\n\t'{}' val={}ULL"), name(v.name_off), v.value);
      }
      break;
    case Kind::Fwd:
      out.print(FMT_COMPILE(" fwd_kind={}"), t.kflag() ? "union" : "struct");
      break;
    case Kind::Func:
      out.print(FMT_COMPILE(" type_id={} linkage={}"), t.ref(), linkage_name(t.func_linkage()));
      break;
    case Kind::FuncProto:
      out.print(FMT_COMPILE(" ret_type_id={} vlen={}"), t.ref(), vlen);
      for (unsigned i = 0; i < vlen; ++i) {
        const Param p = t.param(i);
        out.print(FMT_COMPILE("\n\t'{}' type_id={}"), name(p.name_off), p.type);
      }
      break;
    case Kind::Var:
      out.print(FMT_COMPILE(" type_id={}, linkage={}"), t.ref(), linkage_name(t.var_linkage()));
      break;
    case Kind::Datasec:
      out.print(FMT_COMPILE(" size={} vlen={}"), t.size(), vlen);
      for (unsigned i = 0; i < vlen; ++i) {
        const VarSecInfo v = t.secinfo(i);
        out.print(FMT_COMPILE("\n\ttype_id={} offset={} size={}"), v.type, v.offset, v.size);
        if (btf.valid_id(v.type)) {
          const TypeView vt = btf.type(v.type);
          out.print(FMT_COMPILE(" ({} '{}')"), kind_name(vt.kind()), name(vt.name_off()));
        }
      }
      break;
    case Kind::Float:
      out.print(FMT_COMPILE(" size={}"), t.size());
      break;
    case Kind::DeclTag:
      out.print(FMT_COMPILE(" type_id={} component_idx={}"), t.ref(), t.decl_tag_component_idx());
      break;
    case Kind::Unknown:
      break;
  }
}

void dump_raw(const Btf& btf, const TypeSelection& selection, OutputBuffer& out) {
  const std::vector<TypeId> ids = selection.resolve(btf);
  // Many types: test the string sections once rather than every name printed (a fifth of a dump of
  // vmlinux when done name by name).
  bool plain = ids.size() >= 1024;
  for (const Btf* b = &btf; plain && b; b = b->base()) plain = all_plain(b->string_section());
  for (const TypeId id : ids) {
    dump_raw_type(btf, id, out, plain);
    out.put('\n');
  }
}

namespace {

void json_type(const Btf& btf, TypeId id, JsonWriter& w) {
  const TypeView t = btf.type(id);
  const Kind kind = t.kind();
  const unsigned vlen = t.vlen();
  w.begin_object();
  w.field("id", id);
  w.field("kind", kind_name(kind));
  w.field("name", name_or_anon(btf, t.name_off()));
  switch (kind) {
    case Kind::Int:
      w.field("size", t.size());
      w.field("bits_offset", t.int_offset());
      w.field("nr_bits", t.int_bits());
      w.field("encoding", int_encoding_name(t.int_encoding()));
      break;
    case Kind::Ptr:
    case Kind::Const:
    case Kind::Volatile:
    case Kind::Restrict:
    case Kind::Typedef:
    case Kind::TypeTag:
      w.field("type_id", t.ref());
      break;
    case Kind::Array: {
      const ArrayInfo a = t.array();
      w.field("type_id", a.type);
      w.field("index_type_id", a.index_type);
      w.field("nr_elems", a.nelems);
      break;
    }
    case Kind::Struct:
    case Kind::Union:
      w.field("size", t.size());
      w.field("vlen", vlen);
      w.key("members");
      w.begin_array();
      for (unsigned i = 0; i < vlen; ++i) {
        const Member m = t.member(i);
        w.begin_object();
        w.field("name", name_or_anon(btf, m.name_off));
        w.field("type_id", m.type);
        w.field("bits_offset", t.member_bit_offset(m));
        if (const auto bits = t.member_bitfield_size(m)) w.field("bitfield_size", bits);
        w.end_object();
      }
      w.end_array();
      break;
    case Kind::Enum:
    case Kind::Enum64:
      w.field("encoding", t.kflag() ? "SIGNED" : "UNSIGNED");
      w.field("size", t.size());
      w.field("vlen", vlen);
      w.key("values");
      w.begin_array();
      for (unsigned i = 0; i < vlen; ++i) {
        w.begin_object();
        if (kind == Kind::Enum) {
          const EnumValue v = t.enum_value(i);
          w.field("name", name_or_anon(btf, v.name_off));
          if (t.kflag())
            w.field("val", static_cast<std::int32_t>(v.value));
          else
            w.field("val", v.value);
        } else {
          const Enum64Value v = t.enum64_value(i);
          w.field("name", name_or_anon(btf, v.name_off));
          if (t.kflag())
            w.field("val", static_cast<std::int64_t>(v.value));
          else
            w.field("val", v.value);
        }
        w.end_object();
      }
      w.end_array();
      break;
    case Kind::Fwd:
      w.field("fwd_kind", t.kflag() ? "union" : "struct");
      break;
    case Kind::Func:
      w.field("type_id", t.ref());
      w.field("linkage", linkage_name(t.func_linkage()));
      break;
    case Kind::FuncProto:
      w.field("ret_type_id", t.ref());
      w.field("vlen", vlen);
      w.key("params");
      w.begin_array();
      for (unsigned i = 0; i < vlen; ++i) {
        const Param p = t.param(i);
        w.begin_object();
        w.field("name", name_or_anon(btf, p.name_off));
        w.field("type_id", p.type);
        w.end_object();
      }
      w.end_array();
      break;
    case Kind::Var:
      w.field("type_id", t.ref());
      w.field("linkage", linkage_name(t.var_linkage()));
      break;
    case Kind::Datasec:
      w.field("size", t.size());
      w.field("vlen", vlen);
      w.key("vars");
      w.begin_array();
      for (unsigned i = 0; i < vlen; ++i) {
        const VarSecInfo v = t.secinfo(i);
        w.begin_object();
        w.field("type_id", v.type);
        w.field("offset", v.offset);
        w.field("size", v.size);
        w.end_object();
      }
      w.end_array();
      break;
    case Kind::Float:
      w.field("size", t.size());
      break;
    case Kind::DeclTag:
      w.field("type_id", t.ref());
      w.field("component_idx", t.decl_tag_component_idx());
      break;
    case Kind::Unknown:
      break;
  }
  w.end_object();
}

}  // namespace

void dump_json(const Btf& btf, const TypeSelection& selection, OutputBuffer& out) {
  JsonWriter w(out);
  w.begin_object();
  w.key("types");
  w.begin_array();
  for (const TypeId id : selection.resolve(btf)) json_type(btf, id, w);
  w.end_array();
  w.end_object();
  w.finish();
}

}  // namespace btfslim
