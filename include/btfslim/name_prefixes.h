// Whether a name may be one of a set, by its first two bytes: most of a kernel's hundred thousand names
// share them with none of the few an index asks for, and are skipped before they are measured and hashed
// (the candidate index, the kernel-name index).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace btfslim {

class NamePrefixes {
 public:
  // A name of one byte or none turns the filter off: every name may be it.
  void add(std::string_view name) {
    if (name.size() < 2) all_ = true;
    else pairs_[pair(name.data()) / 64] |= std::uint64_t{1} << (pair(name.data()) % 64);
  }
  // `name` is NUL-terminated. An empty name is none of a set that filters.
  bool may_hold(const char* name) const {
    return all_ || (name[0] != 0 && (pairs_[pair(name) / 64] >> (pair(name) % 64) & 1));
  }

 private:
  static unsigned pair(const char* n) {
    return static_cast<unsigned>(static_cast<std::uint8_t>(n[0])) << 8 | static_cast<std::uint8_t>(n[1]);
  }
  std::vector<std::uint64_t> pairs_ = std::vector<std::uint64_t>(65536 / 64, 0);
  bool all_ = false;
};

}  // namespace btfslim
