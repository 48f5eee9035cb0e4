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
  std::vector<std::string> changes;  // with details: what changed inside (members, enumerators, size)
};

struct BtfDiff {
  std::vector<DiffRow> rows;  // rows whose size changed, by delta descending, then name ascending
  std::uint64_t old_total = 0;
  std::uint64_t new_total = 0;
  // Kinds present in either BTF: the blocks of a per-kind report.
  std::vector<Kind> kinds;
  // Per kind (index = kind), the sizes of all its types on each side, for the per-kind totals.
  std::vector<std::uint64_t> old_by_kind, new_by_kind;
  // The same for [header] and [strings].
  std::uint64_t old_other = 0, new_other = 0;
};

// `details`: fill DiffRow::changes for types present on both sides.
BtfDiff diff_btf(const Btf& old_btf, const Btf& new_btf, bool details);

}  // namespace btfslim

#include "btfslim/output.h"
#include "btfslim/report.h"

namespace btfslim {

struct DiffPrintOptions {
  Format format = Format::Table;
  bool by_kind = false;  // -c: one block per kind, then one for [header] and [strings]
  bool details = false;  // -v: the changes inside each type under its row
  std::string old_name, new_name;  // for JSON
};

// bloat-o-meter's layout for the table; CSV `kind,name,old,new,delta`; JSON with the summary.
void print_diff(const BtfDiff& diff, const DiffPrintOptions& options, OutputBuffer& out);

}  // namespace btfslim
