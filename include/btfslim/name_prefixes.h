// Whether a name may be one of a set, by its first four bytes: most of a kernel's hundred thousand names
// share them with none of the few an index asks for, and are skipped before they are measured and hashed
// (the candidate index, the kernel-name index). Four bytes, as two let through a name in eight of a
// kernel's (sk_, bp, nf_...) for an agent's few dozen.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace btfslim {

class NamePrefixes {
 public:
  // A name asked for, or an essential name (a type's name before "___flavor"): a name shorter than four
  // bytes is also taken as the start of a flavored one ("ab" as "ab__" of "ab___v2"). An empty name
  // turns the filter off: every name may be it.
  void add(std::string_view name) {
    if (name.empty()) {
      all_ = true;
      return;
    }
    set(key(name, '\0'));
    if (name.size() < 4) set(key(name, '_'));
  }
  // `name` is NUL-terminated; nothing past its NUL is read. An empty name is none of a set that filters.
  bool may_hold(const char* name) const {
    if (all_) return true;
    if (name[0] == 0) return false;
    std::uint32_t k = static_cast<std::uint8_t>(name[0]);
    for (unsigned i = 1; i < 4 && name[i - 1] != 0; ++i) k |= std::uint32_t{static_cast<std::uint8_t>(name[i])} << (8 * i);
    return bits_[slot(k) / 64] >> (slot(k) % 64) & 1;
  }

 private:
  // The first four bytes, as a little-endian number; a shorter name is padded with `pad`.
  static std::uint32_t key(std::string_view name, char pad) {
    std::uint32_t k = 0;
    for (unsigned i = 0; i < 4; ++i)
      k |= std::uint32_t{static_cast<std::uint8_t>(i < name.size() ? name[i] : pad)} << (8 * i);
    return k;
  }
  static std::uint32_t slot(std::uint32_t k) { return (k * 0x9e3779b1u) >> 16; }
  void set(std::uint32_t k) { bits_[slot(k) / 64] |= std::uint64_t{1} << (slot(k) % 64); }

  std::vector<std::uint64_t> bits_ = std::vector<std::uint64_t>(65536 / 64, 0);
  bool all_ = false;
};

}  // namespace btfslim
