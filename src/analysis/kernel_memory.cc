// The kernel memory model (described in kernel_memory.h).
#include "btfslim/kernel_memory.h"

#include "btfslim/input.h"

#include <algorithm>

namespace btfslim {

std::uint64_t kernel_types_capacity(std::uint64_t slots) {
  std::uint64_t capacity = 0;
  while (capacity < slots) capacity += std::max<std::uint64_t>(capacity >> 2, 16);
  return capacity;
}

KernelMemory kernel_memory(std::uint64_t blob_bytes, std::uint32_t type_count, LoadedAs as) {
  KernelMemory m;
  m.as = as;
  m.data_bytes = blob_bytes;
  m.data_copied = as != LoadedAs::Vmlinux;
  // A base BTF's array also holds void at index 0; a module's continues its base's ids.
  m.type_slots = std::uint64_t{type_count} + (as == LoadedAs::Module ? 0 : 1);
  m.type_capacity = kernel_types_capacity(m.type_slots);
  m.type_array_bytes = m.type_capacity * 8;
  if (as == LoadedAs::BtfLoad) m.resolved_bytes = m.type_slots * 2 * 4;
  return m;
}

LoadedAs loaded_as(const Btf& btf) {
  if (btf.is_split()) return LoadedAs::Module;
  return is_bpf_object_file(btf.name()) ? LoadedAs::BtfLoad : LoadedAs::Vmlinux;
}

KernelMemory kernel_memory(const Btf& btf) { return kernel_memory(btf.raw().size(), btf.own_count(), loaded_as(btf)); }

std::string_view loaded_as_name(LoadedAs as) {
  switch (as) {
    case LoadedAs::Vmlinux: return "vmlinux";
    case LoadedAs::Module: return "module";
    case LoadedAs::BtfLoad: return "BPF_BTF_LOAD";
  }
  return "";
}

}  // namespace btfslim
