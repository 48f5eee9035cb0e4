// Looking into ELF images (BPF objects, .ko files) from tests that patch their bytes: where each
// section is, and little-endian words (clang -target bpf writes little-endian objects on these hosts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace btfslim::test {

struct SectionPlace {
  std::size_t offset = 0, size = 0;
  std::uint32_t name = 0;  // offset of its name in the section header string table
};

// Where the sections of an ELF image are, by name; and where its section name table is.
struct ElfLayout {
  std::map<std::string, SectionPlace> sections;
  std::size_t shstrtab = 0;
};

ElfLayout elf_layout(const std::string& image);
// Where section `name` is; the test fails when the image has none (or an empty one).
SectionPlace elf_section(const std::string& image, const std::string& name);

std::uint32_t get_u32(const std::string& bytes, std::size_t off);
void put_u32(std::string& bytes, std::size_t off, std::uint32_t v);

}  // namespace btfslim::test
