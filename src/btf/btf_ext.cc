// The strings and types a BPF object's .BTF.ext refers to in its .BTF.
//
// .BTF.ext is a header, then up to three subsections (func_info, line_info, core_relo), each a record
// size followed by blocks { section name offset, record count, records }. A func_info record is
// { insn_off, FUNC type id }, a line_info record { insn_off, file name offset, line offset, line/col },
// a core_relo record { insn_off, local type id, access string offset, kind }; records may be longer
// than that (newer fields), never shorter. Here only what they name in .BTF is collected: measure
// attributes those strings to .BTF.ext rather than calling them unreferenced, and dedup must keep them.
// The checks are libbpf's (btf_ext__new) and, where they only find out at load time, that every offset
// and id is in range. The CO-RE engine reads core_relo for itself (core/object.cc).
#include "btfslim/btf_ext.h"

#include "btfslim/error.h"

#include <algorithm>
#include <cstring>

namespace btfslim {
namespace {

constexpr std::uint32_t kMinHeader = 8;           // magic, version, flags, hdr_len
constexpr std::uint32_t kHeaderWithLines = 24;    // + func_info and line_info off/len
constexpr std::uint32_t kHeaderWithCore = 32;     // + core_relo off/len

void sort_unique(std::vector<std::uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

std::string_view ext_use_name(ExtUse use) {
  switch (use) {
    case ExtUse::SectionNames:
      return "sections";
    case ExtUse::LineInfo:
      return "line info";
    case ExtUse::CoreAccess:
      return "CO-RE access";
  }
  return "?";
}

BtfExtReferences read_btf_ext_references(const Btf& btf, std::span<const std::uint8_t> ext, const std::string& where) {
  if (ext.size() < kMinHeader) fail(where, "truncated: {} bytes, too short for its header", ext.size());
  const ByteOrder order = btf.byte_order();
  const std::uint16_t magic = order.u16(ext.data());
  if (magic != kBtfMagic) {
    if (magic == __builtin_bswap16(kBtfMagic)) fail(where, "byte order differs from the object's .BTF");
    fail(where, "bad magic {:#06x} (expected {:#06x})", magic, kBtfMagic);
  }
  if (ext[2] != 1) fail(where, "unsupported version {}", ext[2]);
  if (ext[3] != 0) fail(where, "unsupported flags {:#x}", ext[3]);
  const std::uint32_t hdr_len = order.u32(ext.data() + 4);
  if (hdr_len < kHeaderWithLines) fail(where, "header length {} is too short (at least {})", hdr_len, kHeaderWithLines);
  if (hdr_len > ext.size()) fail(where, "header length {} exceeds the section's {} bytes", hdr_len, ext.size());

  BtfExtReferences refs;
  auto string = [&](ExtUse use, std::uint32_t off, std::string_view what) {
    if (!btf.valid_str(off)) fail(where, "{} offset {} is past the end of the strings ({} bytes)", what, off, btf.string_end());
    if (off != 0) refs.strings[static_cast<std::size_t>(use)].push_back(off);
  };
  auto type = [&](TypeId id, std::string_view what) {
    if (id >= btf.end_id()) fail(where, "{} refers to type {}, but the last type is [{}]", what, id, btf.end_id() - 1);
    if (id != 0) refs.types.push_back(id);
  };
  // Calls fn(record) for each record of a subsection, after checking its bounds as libbpf does.
  auto walk = [&](std::uint32_t header_field, std::string_view name, std::uint32_t min_record_size, auto&& fn) {
    if (std::uint64_t{header_field} + 8 > hdr_len) return;  // an older, shorter header
    const std::uint32_t off = order.u32(ext.data() + header_field);
    const std::uint32_t len = order.u32(ext.data() + header_field + 4);
    if (len == 0) return;
    if (off % 4 != 0) fail(where, "{} subsection offset {} is not 4-byte aligned", name, off);
    const std::uint64_t start = std::uint64_t{hdr_len} + off;
    if (start + len > ext.size())
      fail(where, "{} subsection [{}, +{}) lies past the end of the section ({} bytes)", name, start, len, ext.size());
    const std::uint8_t* p = ext.data() + start;
    std::uint64_t left = len;
    if (left < 4) fail(where, "{} subsection has no record size", name);
    const std::uint32_t record_size = order.u32(p);
    if (record_size < min_record_size || record_size % 4 != 0)
      fail(where, "{} record size {} is invalid (at least {}, a multiple of 4)", name, record_size, min_record_size);
    p += 4;
    left -= 4;
    while (left != 0) {
      if (left < 8) fail(where, "{} subsection ends inside a block header", name);
      const std::uint32_t count = order.u32(p + 4);
      const std::uint64_t block = 8 + std::uint64_t{count} * record_size;
      if (count == 0 || block > left)
        fail(where, "{} block at byte {} has an invalid record count {}", name, p - ext.data(), count);
      string(ExtUse::SectionNames, order.u32(p), "a section name");
      for (const std::uint8_t* r = p + 8; r < p + block; r += record_size) fn(r);
      p += block;
      left -= block;
    }
  };
  walk(8, "func_info", 8, [&](const std::uint8_t* r) {
    ++refs.func_info;
    type(order.u32(r + 4), "a func_info record");
  });
  walk(16, "line_info", 16, [&](const std::uint8_t* r) {
    ++refs.line_info;
    string(ExtUse::LineInfo, order.u32(r + 4), "a line_info file name");
    string(ExtUse::LineInfo, order.u32(r + 8), "a line_info line");
  });
  if (hdr_len >= kHeaderWithCore)
    walk(24, "core_relo", 16, [&](const std::uint8_t* r) {
      ++refs.core_relo;
      type(order.u32(r + 4), "a CO-RE relocation");
      string(ExtUse::CoreAccess, order.u32(r + 8), "a CO-RE access string");
    });
  for (auto& s : refs.strings) sort_unique(s);
  sort_unique(refs.types);
  return refs;
}

std::vector<std::uint8_t> btf_ext_in_host_order(std::span<const std::uint8_t> ext) {
  std::vector<std::uint8_t> out(ext.begin(), ext.end());
  if (out.size() < 4) return out;
  std::swap(out[0], out[1]);
  for (std::size_t at = 4; at + 4 <= out.size(); at += 4) {
    std::uint32_t w;
    std::memcpy(&w, out.data() + at, 4);
    w = __builtin_bswap32(w);
    std::memcpy(out.data() + at, &w, 4);
  }
  return out;
}

}  // namespace btfslim
