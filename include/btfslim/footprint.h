// Where the bytes of a BTF go.
//
// Every byte of the blob is attributed exactly once: the header, each type's record (its exact encoded
// size), each type's share of the strings it names, and what no type names (the leading empty string,
// unreferenced strings, gaps between sections). So the parts always add up to the blob's size.
//
// A string named by several types is split evenly among the references. A string's extent runs from
// its offset to its NUL, or to the next referenced offset when one points into its middle (a suffix
// shared by another string), so that extents never overlap. For split BTF only the split part's own
// strings are measured; names that resolve in the base cost the module nothing.
//
// A BPF object's .BTF.ext names strings of .BTF too (line info, CO-RE access strings, section names).
// Bytes that no type names but .BTF.ext does are .BTF.ext's, in rows of their own, not unreferenced:
// types keep what they name, and .BTF.ext is given what only it needs.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/btf_ext.h"
#include "btfslim/graph.h"
#include "btfslim/kernel_memory.h"
#include "btfslim/memory.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace btfslim {

struct StringAttribution {
  ZeroedArray<double> per_type;        // string bytes of each own type, indexed by id - first_id()
  std::uint64_t referenced_bytes = 0;  // sum of per_type (exact; per_type holds the fractions)
  std::uint64_t unreferenced_bytes = 0;  // own string bytes nothing names, the leading "" included
  std::array<std::uint64_t, kExtUses> ext_bytes{};  // bytes no type names that .BTF.ext does, per use
};

// A type section from this size up is worth a second thread (Beside, parallel.h) for the work on it
// that can go beside other work: its string shares or its reference graph. Vmlinux's (3 MB) take a
// millisecond each; starting a thread takes a tenth of that.
constexpr std::size_t kTypesWorthAThread = std::size_t{256} << 10;

// `names`: the records' names, where Btf::parse collected them (else they are collected here); `ext`:
// what the object's .BTF.ext names, where there is one.
StringAttribution attribute_strings(const Btf& btf, RecordNames names = {}, const BtfExtReferences* ext = nullptr);

struct KindFootprint {
  std::uint32_t count = 0;
  std::uint64_t record_bytes = 0;
  double string_bytes = 0;
};

struct FileFootprint {
  std::uint64_t file_bytes = 0;    // the BTF blob (for an ELF input: its .BTF section)
  std::uint64_t header_bytes = 0;  // hdr_len
  std::uint64_t type_bytes = 0;    // type_len
  std::uint64_t string_bytes = 0;  // str_len
  std::uint64_t gap_bytes = 0;     // bytes in the blob outside the header and both sections
  std::uint64_t referenced_string_bytes = 0;
  std::uint64_t unreferenced_string_bytes = 0;
  std::array<std::uint64_t, kExtUses> ext_string_bytes{};  // StringAttribution::ext_bytes
  bool has_ext = false;  // the object has a .BTF.ext
  std::uint32_t type_count = 0;
  std::array<KindFootprint, kMaxKind + 1> kinds{};
};

FileFootprint measure_file(const Btf& btf);
FileFootprint measure_file(const Btf& btf, const StringAttribution& strings);

// Everything `measure` knows about each own type (arrays indexed by node = id - first_id()).
// own = record + string share; retained = own summed over the dominator subtree (graph.h).
struct Footprint {
  // Kinds: `file` and `kernel` only, what the per-kind roll-up prints (the string totals are in `strings`
  // too, but not per type); Full: everything.
  enum class Depth { Kinds, Full };

  StringAttribution strings;
  ZeroedArray<double> own;
  FileFootprint file;
  TypeGraph graph;
  DominatorTree dominators;
  ZeroedArray<double> retained;
  KernelMemory kernel;

  // strings.per_type, own, the graph, the dominators and retained are left empty at Depth::Kinds.
  // `names`, `ext`: as for attribute_strings.
  explicit Footprint(const Btf& btf, Depth depth = Depth::Full, RecordNames names = {},
                     const BtfExtReferences* ext = nullptr);
};

}  // namespace btfslim
