// BTF inputs the tests build themselves with libbpf's btf__add_* (no checked-in blobs).
#pragma once

#include <functional>
#include <string>

struct btf;  // libbpf's

namespace btfslim {
class OutputBuffer;
}

namespace btfslim::test {

// The id a btf__add_* call returned; an exception naming the error when it failed.
int added(int id);

// The raw BTF libbpf writes for `b` (btf__raw_data), in big-endian order when asked.
std::string raw_bytes(struct btf* b, bool big_endian = false);

// What `fn` writes to an OutputBuffer, through a real file descriptor as the commands write.
std::string captured(const std::function<void(OutputBuffer&)>& fn);

// Raw BTF with at least one type of every kind 1..19, bitfields, signed and unsigned enums, anonymous
// members, a function with parameters, a datasec with variables and decl tags on a member and a param.
std::string all_kinds_btf(bool big_endian = false);

// The BTF whose footprint the tests work out by hand: [1] int, [2] node *, [3] struct node {next; val},
// [4] typedef node_t, [5] proto int(node *n), [6] func walk, [7] struct lonely {val}; with `with_tag`
// also [8] decl_tag "tag" on struct node. Own bytes 20 12 48 19 22 17 33 (and 20).
std::string footprint_btf(bool with_tag = false);

// One name, two kinds: [1] int, [2] struct vmpressure {int x}, [3] proto int(void), [4] func vmpressure
// (as the kernel has both), and a struct used_by_both that [2] and [4] leave alone.
std::string kind_clash_btf();

// Function pointers C must spell with a prototype: struct ops {int (*get)(); void (*put)(void);
// int (*log)(int, ...); int (*add)(int a, int b);}, the first with no parameter (vlen 0), the second
// with clang's one void parameter; and a typedef of a pointer to a function of no parameters.
std::string prototypes_btf();

// A small, valid raw BTF (a few types) for byte-level mutation tests.
std::string small_btf();

// A base BTF and a split BTF on it whose types refer to base types and strings.
struct SplitPair {
  std::string base;
  std::string split;
};
SplitPair split_btf(bool big_endian = false);

// Bases that split_btf's split does not fit: `shifted_strings` has split_btf's base types under other
// names, so that the split's base names point into the middle of its strings; `fewer_types` has the
// base's strings in the same places but only its first type, so that every name fits and the split's
// type ids run past the last type.
struct Misfits {
  std::string shifted_strings;
  std::string fewer_types;
};
Misfits split_btf_misfits();

}  // namespace btfslim::test
