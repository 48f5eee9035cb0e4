// Pairing the unnamed members of one struct or union across two BTFs by what they hold (diff.cc).
#pragma once

#include "btfslim/btf.h"

#include <cstdint>
#include <vector>

namespace btfslim {

// Among unnamed members of `t`, the 1-based position of member `slot` counting only those whose type
// has the same kind (the second unnamed union is #2 however many unnamed structs come before it).
std::uint32_t unnamed_ordinal(const Btf& btf, const TypeView& t, unsigned slot);

// For each member of `after` (a struct or union of `new_btf`), the ordinal its unnamed member is known
// by on the old side ("(anon union)#N" of `before`, of `old_btf`); 0 for a named member.
//
// An unnamed struct or union is what it holds: the names of its members, those of its own unnamed members
// included (the names C code uses). Two unnamed members of the same kind pair when they share the most
// names (ties: the nearer in position, then the earlier); the ones sharing no name with any pair by
// position among the rest; a new one left over takes the next ordinal past the old side's. So a member
// moved from one unnamed union into another, or a union that moved down the struct, is not a member
// removed from one and added to another, as pairing by position made it (pahole sees them moved too).
std::vector<std::uint32_t> paired_unnamed_ordinals(const Btf& old_btf, const TypeView& before, const Btf& new_btf,
                                                   const TypeView& after);

}  // namespace btfslim
