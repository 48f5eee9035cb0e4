// A stable sort of records by an unsigned integer key, a least significant digit first radix sort:
// for the hundreds of thousands of records a kernel's BTF or an agent's code gives, where a
// comparison sort's N log N comparisons cost several times the few passes this makes.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace btfslim {

// Sorts `items` by key(item), which must be below 2^bits, keeping the order of equal keys: 11 bits a
// pass, every digit counted in one pass first, a digit that is the same for all skipped.
template <typename T, typename Key>
void radix_sort(std::vector<T>& items, unsigned bits, Key key) {
  constexpr unsigned kDigit = 11;
  constexpr std::uint64_t kMask = (1u << kDigit) - 1;
  const unsigned digits = (bits + kDigit - 1) / kDigit;
  if (items.size() < 2 || digits == 0) return;
  std::vector<std::array<std::uint32_t, 1u << kDigit>> counts(digits);
  for (const T& item : items) {
    const std::uint64_t k = key(item);
    for (unsigned d = 0; d < digits; ++d) ++counts[d][k >> (d * kDigit) & kMask];
  }
  std::vector<T> out(items.size());
  for (unsigned d = 0; d < digits; ++d) {
    auto& count = counts[d];
    if (std::find(count.begin(), count.end(), items.size()) != count.end()) continue;  // one bucket
    std::uint32_t at = 0;
    for (std::uint32_t& c : count) at += std::exchange(c, at);
    for (const T& item : items) out[count[key(item) >> (d * kDigit) & kMask]++] = item;
    items.swap(out);
  }
}

}  // namespace btfslim
