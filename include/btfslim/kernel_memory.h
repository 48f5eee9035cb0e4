// What the kernel keeps in memory for a loaded BTF (Linux 6.x, kernel/bpf/btf.c).
//
// - vmlinux: the data stays where it is, in the kernel image (resident with the image); the kernel adds
//   `types`, one pointer per type plus one for void, in an array whose capacity grows from 0 by
//   max(capacity / 4, 16) (btf_add_type).
// - a module: the data is copied (kvmemdup) and gets the same pointer array, without the void slot.
// - BPF_BTF_LOAD, how a BPF object's own BTF reaches the kernel (libbpf loads it before the programs
//   and maps that name its types; it is never in the image): btf_parse copies the data, builds the same
//   pointer array with the void slot, and keeps resolved_ids and resolved_sizes, one u32 each per type,
//   void included (env_resolve_init; its visit_states are freed once the load is checked).
// Allocator rounding (slab sizes, whole pages) and struct btf itself are not counted.
#pragma once

#include "btfslim/btf.h"

#include <cstdint>
#include <string_view>

namespace btfslim {

enum class LoadedAs { Vmlinux, Module, BtfLoad };

struct KernelMemory {
  LoadedAs as = LoadedAs::Vmlinux;
  std::uint64_t data_bytes = 0;   // the BTF blob
  bool data_copied = false;       // false: the bytes are the image's own
  std::uint64_t type_slots = 0;   // entries in use in the types array
  std::uint64_t type_capacity = 0;
  std::uint64_t type_array_bytes = 0;
  std::uint64_t resolved_bytes = 0;
  std::uint64_t total() const { return data_bytes + type_array_bytes + resolved_bytes; }
};

// The capacity btf_add_type reaches for `slots` entries.
std::uint64_t kernel_types_capacity(std::uint64_t slots);

KernelMemory kernel_memory(std::uint64_t blob_bytes, std::uint32_t type_count, LoadedAs as);
// As the kernel gets `btf`: a split BTF is a module's; a BPF object's (an EM_BPF ELF file with a
// symbol table or .BTF.ext) comes through BPF_BTF_LOAD; anything else is vmlinux's.
KernelMemory kernel_memory(const Btf& btf);

std::string_view loaded_as_name(LoadedAs as);

}  // namespace btfslim
