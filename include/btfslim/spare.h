// Memory handed from one object's reading to the next.
//
// check and minimize read hundreds of objects one after another, each dropped before the next: a
// vector each makes and frees again (its relocation records, its code's tables) is kept by the thread
// when its owner is done, and taken by the next owner, which fills it in the memory of the one before.
// A run then allocates what its largest object needs, not the sum of them all. Only memory an
// ordinary object needs is kept (kSpareBytes): a large object's, kept, would stay resident through all
// that follows it, where given back it leaves the resident set at once.
#pragma once

#include <cstddef>
#include <utility>

namespace btfslim {

// The real objects of the shared corpus ask at most some 2,400 relocations, whose arrays are under
// 100 KiB each; a generated agent's 28,000 take over 200 KiB, and kept, that alone was 0.4 MB more
// resident through the rest of a run of 330 objects.
inline constexpr std::size_t kSpareBytes = std::size_t{128} << 10;

// The bytes a vector holds (its capacity).
template <typename V>
std::size_t capacity_bytes(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}

// One spare `V` (a std::vector) per thread and Tag.
template <typename V, typename Tag = void>
class Spare {
 public:
  // The spare, emptied (its capacity kept), or a new V.
  static V take() {
    V v = std::move(slot());
    slot() = V();
    v.clear();
    return v;
  }
  // Keeps `v`'s memory for the next take(), if it has more than the spare already kept and at most
  // kSpareBytes.
  static void give(V&& v) {
    if (v.capacity() > slot().capacity() && capacity_bytes(v) <= kSpareBytes) slot() = std::move(v);
  }

 private:
  static V& slot() {
    thread_local V spare;
    return spare;
  }
};

}  // namespace btfslim
