// The kernel memory model (described in kernel_memory.h).
#include "btfslim/kernel_memory.h"

#include "btfslim/input.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

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

namespace {

// Whether `path` is a BPF object: its ELF header says EM_BPF (read alone, so that a 600 MB vmlinux
// costs one read of 20 bytes), and it has what a compiler writes, a symbol table or a .BTF.ext (a Go
// bpf2go object may lack the latter); minimize's BTF-only ELF, made for libbpf's btf_custom_path and
// never loaded, has neither.
bool is_bpf_object(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char e[EI_NIDENT + 4] = {};
  const bool read = ::pread(fd, e, sizeof e, 0) == static_cast<ssize_t>(sizeof e);
  ::close(fd);
  if (!read || e[EI_MAG0] != ELFMAG0 || e[EI_MAG1] != ELFMAG1 || e[EI_MAG2] != ELFMAG2 || e[EI_MAG3] != ELFMAG3)
    return false;
  const unsigned machine = e[EI_DATA] == ELFDATA2MSB ? e[EI_NIDENT + 2] << 8 | e[EI_NIDENT + 3]
                                                      : e[EI_NIDENT + 3] << 8 | e[EI_NIDENT + 2];
  if (machine != EM_BPF) return false;
  try {
    const ElfFile elf(FileBytes::open(path));
    return elf.section(".BTF.ext").has_value() || elf.section(".symtab").has_value();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

LoadedAs loaded_as(const Btf& btf) {
  if (btf.is_split()) return LoadedAs::Module;
  return is_bpf_object(btf.name()) ? LoadedAs::BtfLoad : LoadedAs::Vmlinux;
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
