// Comparing two BTFs type by type, as the kernel's scripts/bloat-o-meter compares two binaries.
//
// Types are matched by a key that does not depend on type ids, so that renumbering is not a change:
// - a named type by its kind and name (`struct task_struct`, `func vfs_read`; a FWD also by struct/union);
// - pointers, qualifiers, arrays, type tags and function prototypes by what they are made of, spelt as
//   C spells them (`const char *`, `int[16]`, `int (struct sk_buff *skb, int len)`);
// - an anonymous struct or union by where it is used: the named type (or anonymous type, recursively)
//   and the member through which it is reached, pointers and arrays on the way ignored
//   (`struct sk_buff::(anon union)#2` for the second unnamed union member, `struct foo::(anon struct u)`
//   for a member `u` of anonymous type, `typedef foo_t::(anon struct)`); used in several places, the
//   smallest key of those places wins; used nowhere (or only by prototypes) it is `(anon struct)`;
// - an anonymous enum by its first enumerator (`enum {TCP_ESTABLISHED,...}`);
// - a decl tag by its text, the type it annotates and the component.
// Two types of one BTF with the same key (several `struct foo` variants, undeduplicated BTF) are told
// apart by ordinal in id order: `struct foo`, `struct foo#2`, ...
//
// A type's size is its BTF footprint as `measure` counts it (footprint.h): its record bytes plus its
// share of the strings it names (a string named by n references costs each 1/n), rounded to a whole
// byte. `[header]` is the header (and any gap between sections); `[strings]` is the rest of the string
// section: strings no type names, and the rounding of the types' shares. So the rows of each side add up
// to exactly the BTF's size in bytes (for an ELF input, its .BTF section; for split BTF, the split part).
#pragma once

#include "btfslim/btf.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace btfslim {

struct DiffRow {
  std::string name;                  // the key spelt out, or "[header]" / "[strings]"
  std::optional<Kind> kind;          // none for [header] and [strings]
  std::optional<std::uint64_t> old_size;  // none: absent from the old BTF
  std::optional<std::uint64_t> new_size;  // none: absent from the new BTF
  std::int64_t delta = 0;
};

// What changed in one member, enumerator or parameter of a type present on both sides (or in the type
// itself: a typedef's, variable's or prototype's return type). A field that does not apply is empty.
enum class Change : std::uint8_t {
  Added,        // a member, enumerator or parameter only the new side has
  Removed,      // ... only the old side has
  Moved,        // a member at another bit offset
  Retyped,      // a member, parameter, typedef/var target or return type of another type
  Resized,      // a bitfield of another width (or a member that became or stopped being a bitfield)
  Revalued,     // an enumerator with another value
  Renamed,      // a member of another name, at the same place with the same type
};
// "added", "removed", "moved", "retyped", "resized", "revalued", "renamed"
std::string_view change_name(Change c);

struct MemberChange {
  Change change = Change::Added;
  std::string member;  // the member, enumerator or parameter ("#N" for an unnamed parameter), escaped;
                       // "" for the type itself (typedef target, var type, return type)
  std::string old_member;  // a renamed member's old name, escaped; "" for any other change
  std::string old_type, new_type;  // C type names, escaped ("u32", "struct foo *")
  std::optional<std::uint64_t> old_bit_offset, new_bit_offset;
  std::optional<std::uint32_t> old_bits, new_bits;  // bitfield width; 0: not a bitfield
  // Enumerator values as their bits; `value_signed` when the enum is signed (then they are int64_t).
  std::optional<std::uint64_t> old_value, new_value;
  bool value_signed = false;
};

enum class LayoutStatus : std::uint8_t { Changed, Added, Removed };

// One type whose layout differs: matched by kind and name (an ENUM that became an ENUM64 is the same
// type), anonymous structs and unions by the member that holds them.
struct LayoutChange {
  std::string name;  // the key spelt out: "struct task_struct", "struct sk_buff::(anon union)#2"
  LayoutStatus status = LayoutStatus::Changed;
  std::optional<Kind> old_kind, new_kind;
  TypeId old_id = 0, new_id = 0;                         // 0 where absent
  std::optional<std::uint64_t> old_size, new_size;       // declared size, for kinds that have one
  std::string old_encoding, new_encoding;                // an INT's, where it changed: "signed", "char", ...
  std::vector<MemberChange> changes;                     // in the new side's member order, removed first
  std::string summary;                                   // "size 9,728 -> 3,264; 192 members moved, 3 added"
};

struct BtfDiff {
  std::vector<DiffRow> rows;  // rows whose size changed, by delta descending, then name ascending
  std::uint64_t old_total = 0;
  std::uint64_t new_total = 0;
  std::uint64_t old_types = 0, new_types = 0;
  // Kinds present in either BTF: the blocks of a per-kind report.
  std::vector<Kind> kinds;
  // Per kind (index = kind), the sizes of all its types on each side, for the per-kind totals.
  std::vector<std::uint64_t> old_by_kind, new_by_kind;
  // The same for [header] and [strings].
  std::uint64_t old_other = 0, new_other = 0;
  // Layout: changed types first (by name), then added, then removed (each by name).
  std::vector<LayoutChange> layout;
  std::uint64_t layout_compared = 0;  // types with a layout present on both sides
};

// What to work out beyond the totals: a view needs one of them, JSON both.
struct DiffParts {
  bool footprint = true;  // BtfDiff::rows
  bool layout = true;     // BtfDiff::layout
};
BtfDiff diff_btf(const Btf& old_btf, const Btf& new_btf, const DiffParts& parts = {});

}  // namespace btfslim

#include "btfslim/output.h"
#include "btfslim/report.h"

namespace btfslim {

enum class DiffView : std::uint8_t { Type, Kind, Member };

struct DiffPrintOptions {
  Format format = Format::Table;
  DiffView view = DiffView::Type;
  bool details = false;     // -v: with --by type, each type's member changes under its line
  std::size_t top = 0;      // table rows before [N others]; 0: all
  std::size_t columns = 0;  // the width a table line is cut to; 0: none
  std::string old_name, new_name;  // the inputs, for the table's heading and JSON's `file`
};

// --by type: one line per type whose layout changed; --by member: one per member change; --by kind:
// bloat-o-meter's table of footprints, one block per kind. CSV for each view; JSON one document with all.
void print_diff(const BtfDiff& diff, const DiffPrintOptions& options, OutputBuffer& out);

}  // namespace btfslim
