// .BTF.ext: its reader, and the strings and types it refers to in its .BTF.
//
// A func_info record is { insn_off, FUNC type id }, a line_info record { insn_off, file name offset,
// line offset, line/col }, a core_relo record { insn_off, local type id, access string offset, kind }.
// The reader checks the layout as libbpf's btf_ext__new does (btf_ext.h); the references add what
// libbpf only finds out at load time, that every offset and id is in range. Only what the records name
// in .BTF is collected here: measure attributes those strings to .BTF.ext rather than calling them
// unreferenced, and dedup must keep them. The CO-RE engine keeps the core_relo records themselves
// (core/object.cc).
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

std::string_view BtfExtReader::name(Subsection s) {
  switch (s) {
    case Subsection::FuncInfo:
      return "func_info";
    case Subsection::LineInfo:
      return "line_info";
    case Subsection::CoreRelo:
      return "core_relo";
  }
  return "?";
}

namespace {

// Where the header keeps a subsection's offset and length, and its records' least size.
std::uint32_t header_field(BtfExtReader::Subsection s) { return 8 + 8 * static_cast<std::uint32_t>(s); }
std::uint32_t min_record_size(BtfExtReader::Subsection s) { return s == BtfExtReader::Subsection::FuncInfo ? 8 : 16; }

}  // namespace

BtfExtReader::BtfExtReader(const Btf& btf, std::span<const std::uint8_t> ext, std::string where)
    : ext_(ext), where_(std::move(where)), order_(btf.byte_order()) {
  if (ext.size() < kMinHeader) fail(where_, "truncated: {} bytes, too short for its header", ext.size());
  // The magic is read in the byte order of .BTF; a .BTF.ext of the other order is an error, as in libbpf.
  const std::uint16_t magic = order_.u16(ext.data());
  if (magic != kBtfMagic) {
    if (magic == __builtin_bswap16(kBtfMagic)) fail(where_, "byte order differs from the object's .BTF");
    fail(where_, "bad magic {:#06x} (expected {:#06x})", magic, kBtfMagic);
  }
  if (ext[2] != 1) fail(where_, "unsupported version {}", ext[2]);
  if (ext[3] != 0) fail(where_, "unsupported flags {:#x}", ext[3]);
  hdr_len_ = order_.u32(ext.data() + 4);
  if (hdr_len_ < kHeaderWithLines) fail(where_, "header length {} is too short (at least {})", hdr_len_, kHeaderWithLines);
  if (hdr_len_ > ext.size()) fail(where_, "header length {} exceeds the section's {} bytes", hdr_len_, ext.size());
  if (hdr_len_ == ext.size()) fail(where_, "has a header and no data");
}

bool BtfExtReader::has(Subsection s) const {
  static_assert(kHeaderWithCore == 8 + 8 * 3);
  return header_field(s) + 8 <= hdr_len_ && order_.u32(ext_.data() + header_field(s) + 4) != 0;
}

std::uint64_t BtfExtReader::most_records(Subsection s) const {
  if (!has(s)) return 0;
  return std::min<std::uint64_t>(order_.u32(ext_.data() + header_field(s) + 4), ext_.size()) / min_record_size(s);
}

BtfExtReader::Blocks BtfExtReader::blocks(Subsection s) const {
  if (!has(s)) return {};
  const std::string_view what = name(s);
  const std::uint32_t off = order_.u32(ext_.data() + header_field(s));
  const std::uint32_t len = order_.u32(ext_.data() + header_field(s) + 4);
  if (off % 4 != 0) fail(where_, "{} subsection offset {} is not 4-byte aligned", what, off);
  const std::uint64_t start = std::uint64_t{hdr_len_} + off;
  if (start + len > ext_.size())
    fail(where_, "{} subsection [{}, +{}) lies past the end of the section ({} bytes)", what, start, len, ext_.size());
  Blocks b{ext_.data() + start, len, 0};
  if (b.left < 4) fail(where_, "{} subsection has no record size", what);
  b.record_size = order_.u32(b.p);
  if (b.record_size < min_record_size(s) || b.record_size % 4 != 0)
    fail(where_, "{} record size {} is invalid (at least {}, a multiple of 4)", what, b.record_size, min_record_size(s));
  b.p += 4;
  b.left -= 4;
  if (b.left == 0) fail(where_, "{} subsection has no records", what);
  return b;
}

BtfExtReader::Block BtfExtReader::next(Subsection s, Blocks& b) const {
  const auto at = static_cast<std::uint32_t>(b.p - ext_.data());
  if (b.left < 8) fail(where_, "{} subsection ends inside a block header", name(s));
  const std::uint32_t count = order_.u32(b.p + 4);
  const std::uint64_t bytes = 8 + std::uint64_t{count} * b.record_size;
  if (count == 0 || bytes > b.left)
    fail(where_, "{} block at byte {} has an invalid record count {}", name(s), at, count);
  const Block block{at, order_.u32(b.p), count, b.p + 8};
  b.p += bytes;
  b.left -= bytes;
  return block;
}

BtfExtReferences read_btf_ext_references(const Btf& btf, std::span<const std::uint8_t> ext, const std::string& where) {
  const BtfExtReader reader(btf, ext, where);
  const ByteOrder order = reader.byte_order();
  BtfExtReferences refs;
  auto string = [&](ExtUse use, std::uint32_t off, std::string_view what) {
    if (!btf.valid_str(off)) fail(where, "{} offset {} is past the end of the strings ({} bytes)", what, off, btf.string_end());
    if (off != 0) refs.strings[static_cast<std::size_t>(use)].push_back(off);
  };
  auto type = [&](TypeId id, std::string_view what) {
    if (id >= btf.end_id()) fail(where, "{} refers to type {}, but the last type is [{}]", what, id, btf.end_id() - 1);
    if (id != 0) refs.types.push_back(id);
  };
  // Calls fn(record) for each record of a subsection.
  auto walk = [&](BtfExtReader::Subsection s, auto&& fn) {
    reader.for_each_block(s, [&](std::uint32_t, std::uint32_t name_off, std::uint32_t count, const std::uint8_t* r,
                                 std::uint32_t record_size) {
      string(ExtUse::SectionNames, name_off, "a section name");
      for (std::uint32_t i = 0; i < count; ++i, r += record_size) fn(r);
    });
  };
  walk(BtfExtReader::Subsection::FuncInfo, [&](const std::uint8_t* r) {
    ++refs.func_info;
    type(order.u32(r + 4), "a func_info record");
  });
  walk(BtfExtReader::Subsection::LineInfo, [&](const std::uint8_t* r) {
    ++refs.line_info;
    string(ExtUse::LineInfo, order.u32(r + 4), "a line_info file name");
    string(ExtUse::LineInfo, order.u32(r + 8), "a line_info line");
  });
  walk(BtfExtReader::Subsection::CoreRelo, [&](const std::uint8_t* r) {
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
