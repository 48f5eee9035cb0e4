// Writing BTF as an ELF object, for the tools that want BTF in a `.BTF` section (a vmlinux-like file).
#pragma once

#include <string>
#include <string_view>

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

}  // namespace btfslim
