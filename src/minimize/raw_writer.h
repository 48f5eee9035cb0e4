// Writing raw BTF: the one writer minimize and minimize --kernel share.
#pragma once

#include "btfslim/btf.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>

namespace btfslim {

// A raw BTF being written in host byte order: types appended, strings deduplicated. Split BTF
// continues its base's string offsets, so its own strings start at `string_base`.
class RawWriter {
 public:
  explicit RawWriter(std::uint32_t string_base = 0) : string_base_(string_base) { strings_.push_back('\0'); }

  std::uint32_t str(std::string_view s) {
    if (s.empty()) return 0;
    auto [it, inserted] = offsets_.try_emplace(s, string_base_ + static_cast<std::uint32_t>(strings_.size()));
    if (inserted) {
      strings_.append(s);
      strings_.push_back('\0');
    }
    return it->second;
  }
  void u32(std::uint32_t v) { types_.append(reinterpret_cast<const char*>(&v), 4); }
  // Names `s` by `offset` in the base's strings (split BTF may point below string_base), instead of
  // writing it again. `s` must outlive the writer.
  void reuse(std::string_view s, std::uint32_t offset) {
    if (!s.empty() && offset < string_base_) offsets_.try_emplace(s, offset);
  }

  std::string finish() const {
    std::string out(kHeaderSize, '\0');
    auto put = [&](std::size_t off, std::uint32_t v) { std::memcpy(out.data() + off, &v, 4); };
    const std::uint16_t magic = kBtfMagic;
    std::memcpy(out.data(), &magic, 2);
    out[2] = 1;  // version
    put(4, kHeaderSize);
    put(8, 0);
    put(12, static_cast<std::uint32_t>(types_.size()));
    put(16, static_cast<std::uint32_t>(types_.size()));
    put(20, static_cast<std::uint32_t>(strings_.size()));
    out += types_;
    out += strings_;
    return out;
  }

 private:
  std::uint32_t string_base_;
  std::string types_, strings_;
  std::unordered_map<std::string_view, std::uint32_t> offsets_;  // views into the source's strings
};

// `raw` (a whole raw BTF, as RawWriter writes it, in host byte order) in the other byte order: the
// header's fields and every word of the type section swapped, the strings as they are.
inline std::string swapped_byte_order(std::string raw) {
  auto swap_at = [&](std::size_t off) {
    std::uint32_t v;
    std::memcpy(&v, raw.data() + off, 4);
    v = __builtin_bswap32(v);
    std::memcpy(raw.data() + off, &v, 4);
  };
  std::uint16_t magic;
  std::memcpy(&magic, raw.data(), 2);
  magic = __builtin_bswap16(magic);
  std::memcpy(raw.data(), &magic, 2);
  std::uint32_t hdr_len, type_off, type_len;
  std::memcpy(&hdr_len, raw.data() + 4, 4);
  std::memcpy(&type_off, raw.data() + 8, 4);
  std::memcpy(&type_len, raw.data() + 12, 4);
  for (std::size_t off = 4; off < kHeaderSize; off += 4) swap_at(off);
  for (std::size_t off = hdr_len + type_off; off < hdr_len + type_off + type_len; off += 4) swap_at(off);
  return raw;
}

}  // namespace btfslim
