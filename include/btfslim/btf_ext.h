// What a BPF object's .BTF.ext refers to in its .BTF: the strings and types that stay needed whatever
// types name them, for measuring (footprint.h) and deduplicating (dedup.h) a .bpf.o honestly.
#pragma once

#include "btfslim/btf.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace btfslim {

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

// Reads the .BTF.ext section `ext` of the object whose .BTF is `btf`, checking it as libbpf's
// btf_ext__new does (header, subsection bounds, record sizes, block counts) and that every string
// offset and type id it holds is one of `btf`'s. Either byte order, that of `btf`. Throws InputError
// naming `where` ("FILE: .BTF.ext").
BtfExtReferences read_btf_ext_references(const Btf& btf, std::span<const std::uint8_t> ext, const std::string& where);

// `ext` in the host's byte order: every field of .BTF.ext is a 32-bit word but the 16-bit magic and
// the version and flags bytes, so it is swapped word by word (libbpf 1.1.2 reads only native order).
std::vector<std::uint8_t> btf_ext_in_host_order(std::span<const std::uint8_t> ext);

}  // namespace btfslim
