// Walking a BTF's own type records in id order, for the passes of the analysis.
//
// The analysis decodes every record several times (names for the strings, references for the graph),
// so the walk is what those passes cost. What makes it cheaper than Btf::type(id) in a loop: the byte
// order is fixed at compile time, one instantiation per order, so that ByteOrder's loads fold to plain
// loads instead of testing the order on each one, and the walk goes straight to the offset index of a
// BTF's own types, with no test for ids that belong to the base.
#pragma once

#include "btfslim/btf.h"

#include <cstdint>

namespace btfslim {

namespace detail {

// flatten: the decoders fn calls (for_each_name_ref, for_each_type_ref) must be inlined here for the
// byte order to fold, and GCC does not always do it on its own.
template <bool Swapped, typename Fn>
[[gnu::flatten]] void walk_records(const Btf& btf, Fn& fn) {
  constexpr ByteOrder order(Swapped);
  const std::uint8_t* const types = btf.type_section().data();
  const std::uint32_t n = btf.own_count();
  const TypeId first = btf.first_id();
  for (std::uint32_t node = 0; node < n; ++node) fn(node, TypeView(types + btf.type_offset(first + node), order));
}

}  // namespace detail

// Calls fn(node, view) for each own type, node = id - first_id(), in id order.
template <typename Fn>
void for_each_record(const Btf& btf, Fn&& fn) {
  if (btf.byte_order().swapped())
    detail::walk_records<true>(btf, fn);
  else
    detail::walk_records<false>(btf, fn);
}

}  // namespace btfslim
