// A BPF object's .BTF.ext: the one reader of its header and subsections (BtfExtReader), and what it
// refers to in its .BTF: the strings and types that stay needed whatever types name them, for measuring
// (footprint.h) and deduplicating (dedup.h) a .bpf.o honestly. The CO-RE engine reads its relocation
// records through the same reader (core/object.cc).
#pragma once

#include "btfslim/btf.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace btfslim {

// .BTF.ext is a header, then up to three subsections (func_info, line_info, core_relo), each a record
// size followed by blocks { section name offset, record count, records }; records may be longer than
// their kind's minimum (newer fields), never shorter. The reader checks what libbpf's btf_ext__new
// checks (magic in the byte order of .BTF, version, flags, header length, a section with data; each
// subsection aligned, in bounds, with a valid record size and at least one block, each block with
// records that fit), in 64-bit arithmetic so that no count wraps. Throws InputError naming `where`
// ("FILE: .BTF.ext").
class BtfExtReader {
 public:
  enum class Subsection : std::uint8_t { FuncInfo, LineInfo, CoreRelo };

  BtfExtReader(const Btf& btf, std::span<const std::uint8_t> ext, std::string where);

  ByteOrder byte_order() const { return order_; }
  const std::string& where() const { return where_; }
  // Whether the header is long enough to place the subsection (core_relo came after the others) and
  // the subsection is not empty.
  bool has(Subsection s) const;
  // Its record count as the header would allow: at most one per minimum record size, whatever the
  // blocks say. For reserving.
  std::uint64_t most_records(Subsection s) const;
  // Calls fn(block_at, name_off, count, records, record_size) for each block of the subsection, after
  // checking the block: `block_at` is its byte offset in the section (for messages), `records` its
  // first record.
  template <typename Fn>
  void for_each_block(Subsection s, Fn&& fn) const {
    Blocks b = blocks(s);
    while (b.left != 0) {
      const Block k = next(s, b);
      fn(k.at, k.name_off, k.count, k.records, b.record_size);
    }
  }
  static std::string_view name(Subsection s);

 private:
  struct Blocks {
    const std::uint8_t* p = nullptr;
    std::uint64_t left = 0;
    std::uint32_t record_size = 0;
  };
  struct Block {
    std::uint32_t at, name_off, count;
    const std::uint8_t* records;
  };
  Blocks blocks(Subsection s) const;
  Block next(Subsection s, Blocks& b) const;
  std::span<const std::uint8_t> ext_;
  std::string where_;
  ByteOrder order_;
  std::uint32_t hdr_len_ = 0;
};

// Who in .BTF.ext names a string: the ELF section of each block (func_info, line_info, core_relo),
// line_info's file names and source lines, and core_relo's access strings ("0:1:2").
enum class ExtUse : std::uint8_t { SectionNames, LineInfo, CoreAccess };
inline constexpr std::size_t kExtUses = 3;
// "sections", "line info", "CO-RE access".
std::string_view ext_use_name(ExtUse use);

struct BtfExtReferences {
  // The string offsets (into `btf`'s strings, as the records hold them) each use names, sorted, each
  // once.
  std::array<std::vector<std::uint32_t>, kExtUses> strings;
  // func_info's FUNC types and core_relo's local root types, sorted, each once.
  std::vector<TypeId> types;
  std::uint32_t func_info = 0, line_info = 0, core_relo = 0;  // records

  bool empty() const { return func_info == 0 && line_info == 0 && core_relo == 0; }
};

// Reads the .BTF.ext section `ext` of the object whose .BTF is `btf` (BtfExtReader), checking that
// every string offset and type id it holds is one of `btf`'s. Either byte order, that of `btf`.
BtfExtReferences read_btf_ext_references(const Btf& btf, std::span<const std::uint8_t> ext, const std::string& where);

// `ext` in the host's byte order: every field of .BTF.ext is a 32-bit word but the 16-bit magic and
// the version and flags bytes, so it is swapped word by word (libbpf 1.1.2 reads only native order).
std::vector<std::uint8_t> btf_ext_in_host_order(std::span<const std::uint8_t> ext);

}  // namespace btfslim
