// Where btfslim's BTF reader and libbpf 1.1.2's (btf__new, btf__parse_raw_split) may disagree, and why:
// the only differences fuzz_libbpf accepts. Each has an input in tests/unit/test_libbpf_differences.cc
// that shows it; fuzz/README.md lists them.
//
// Stricter: btfslim refuses, libbpf reads. Matched on btfslim's error message. libbpf 1.1.2 checks the
// header's layout, the string section's ends and each record's size, and nothing that a record says
// (libbpf 1.3 added the checks of names and ids): the kernel (kernel/bpf/btf.c) refuses all of these.
//
// Laxer: btfslim reads, libbpf refuses. Matched on libbpf's debug message (libbpf_set_print).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace btfslim::fuzz {

struct KnownDifference {
  std::string_view message;  // a part of the refusing side's message
  std::string_view reason;
};

inline constexpr KnownDifference kStricter[] = {
    {"unsupported BTF version",
     "libbpf 1.1.2 never reads the version; only version 1 exists, and the kernel refuses any other"},
    {"smaller than the 24 bytes of a BTF header",
     "libbpf reads a header shorter than its fields (the sections then start inside it); the kernel refuses it"},
    {"is past the end of the strings",
     "a name offset outside the string section: libbpf 1.1.2 does not check names (1.3 does) and reads out of bounds "
     "when asked for one; the kernel refuses it"},
    {"but the last type is",
     "a reference to a type id that does not exist: libbpf 1.1.2 does not check ids (1.3 does); the kernel refuses it"},
    {"past the last type",
     "the same, in split BTF, reported as a sign of the wrong base"},
    {"points into the middle of a string of the base",
     "a split BTF's name that starts inside one of the base's strings: valid offsets, but no BTF writer makes "
     "them, so btfslim takes it for split BTF on another base than the one it was built on"},
};

inline constexpr KnownDifference kLaxer[] = {
    {"Invalid BTF data sections layout",
     "libbpf wants the type section before the strings; the kernel takes the sections in either order"},
    {"non-native endianness due to unsupported header length",
     "libbpf reads only a 24-byte header in the other byte order; btfslim and the kernel read a longer one"},
};

// Both readers take it, but btfslim's dedup refuses to hand it to btf__dedup, which would crash on it
// (libbpf 1.1.2). Matched on btfslim's error message.
inline constexpr KnownDifference kDedupRefused[] = {
    {"in its type field, which must be 0",
     "a FWD whose type field is not 0: libbpf walks it as a type id and indexes its arrays with it (btf__dedup "
     "crashed); the kernel refuses it"},
};

// The known difference a message is, or null.
inline const KnownDifference* known_difference(std::span<const KnownDifference> list, std::string_view message) {
  for (const KnownDifference& d : list)
    if (message.find(d.message) != std::string_view::npos) return &d;
  return nullptr;
}

}  // namespace btfslim::fuzz
