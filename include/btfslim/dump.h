// Printing types: bpftool's raw format, bpftool-shaped JSON, and C through libbpf's btf_dump.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/output.h"

#include <string>
#include <vector>

namespace btfslim {

// Which types a command looks at. Empty criteria select everything; given criteria must all hold
// (ids OR-ed among themselves, names likewise, kinds likewise).
struct TypeSelection {
  std::vector<TypeId> ids;          // explicit ids, may lie in a split input's base
  std::vector<TypePattern> names;   // NAME, KIND NAME, globs (*, ?, [...]) in NAME
  std::vector<Kind> kinds;

  bool selects_all() const { return ids.empty() && names.empty() && kinds.empty(); }
  // The selected ids in ascending order: the input's own types, or exactly `ids` when given.
  // Throws InputError for an id that does not exist.
  std::vector<TypeId> resolve(const Btf& btf) const;
  bool matches(const Btf& btf, TypeId id) const;
  // Throws the InputError for a --name that matches no type of `btf` at all.
  void require_names(const Btf& btf) const;
};

// --name values as TypeSelection takes them (globs allowed).
std::vector<TypePattern> name_patterns(const std::vector<std::string>& names);

// Parses "5", "5-9", "5,7,10-12" into ids; throws InputError naming `option`.
std::vector<TypeId> parse_id_list(std::string_view text, std::string_view option);

// A short C-like name for a type, for tables: "task_struct", "struct sock *", "const char[16]",
// "int (*)(3 args)". Bounded, so reference loops cannot hang it.
std::string type_summary(const Btf& btf, TypeId id);

// One type in bpftool's raw format, without the trailing newline:
// [id] KIND 'name' size=... then one "\n\t..." line per member/value/param/var. Names are escaped
// (btfslim/escape.h); `names_plain` says that no string of the BTF needs it (all_plain), so that
// no name is tested.
void dump_raw_type(const Btf& btf, TypeId id, OutputBuffer& out, bool names_plain = false);
// `bpftool btf dump file` byte for byte: the input's own types (or the selection), one per line.
void dump_raw(const Btf& btf, const TypeSelection& selection, OutputBuffer& out);
// {"types":[...]} with bpftool's field names, one object per type.
void dump_json(const Btf& btf, const TypeSelection& selection, OutputBuffer& out);
// Throws InputError when printing `roots` and what they need as C would meet a shape C cannot express
// (a loop through no pointer or no named struct, a member of a kind without size): libbpf's btf_dump
// crashes or hangs on those.
void check_c_printable(const Btf& btf, const std::vector<TypeId>& roots);

// Compilable C (a vmlinux.h) for the selection and everything it needs, by libbpf's btf_dump.
void dump_c(const Btf& btf, const TypeSelection& selection, OutputBuffer& out);

}  // namespace btfslim
