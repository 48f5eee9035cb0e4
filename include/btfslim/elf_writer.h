// Writing BTF as an ELF object, for the tools that want BTF in a `.BTF` section (a vmlinux-like file).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace btfslim {

struct BtfElfOptions {
  bool big_endian = false;  // the BTF's byte order, which the ELF header must declare
  bool elf32 = false;       // ELFCLASS32: libbpf then takes pointers to be 4 bytes
  std::string output = "ELF output";  // the file it is for, which an error names
};

// An ELF relocatable object (EM_BPF, no symbols) whose only contents are a `.BTF` section holding `btf`
// unchanged and the section-name table. libbpf's btf__parse, bpftool and readelf read it. The same input
// gives the same bytes. Throws InputError naming `options.output` when libelf fails.
std::string btf_elf_object(std::string_view btf, const BtfElfOptions& options);

// The ELF file `elf` with the contents of the named sections replaced (their sizes may change: libelf
// lays the file out again; every other section's contents stay as they are), and without what followed
// the ELF file's last byte (a kernel module's appended signature, which would no longer hold). Throws
// InputError naming `output`.
std::string elf_with_sections(std::span<const std::uint8_t> elf,
                              const std::vector<std::pair<std::string, std::string_view>>& contents,
                              const std::string& output);

}  // namespace btfslim
