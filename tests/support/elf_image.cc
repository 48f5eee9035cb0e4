#include "elf_image.h"

#include <catch2/catch.hpp>
#include <gelf.h>
#include <libelf.h>

namespace btfslim::test {

ElfLayout elf_layout(const std::string& image) {
  REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
  std::string copy = image;
  Elf* elf = elf_memory(copy.data(), copy.size());
  REQUIRE(elf != nullptr);
  std::size_t shstrndx = 0;
  REQUIRE(elf_getshdrstrndx(elf, &shstrndx) == 0);
  ElfLayout layout;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    REQUIRE(gelf_getshdr(scn, &shdr) != nullptr);
    if (elf_ndxscn(scn) == shstrndx) layout.shstrtab = shdr.sh_offset;
    if (const char* n = elf_strptr(elf, shstrndx, shdr.sh_name))
      layout.sections[n] = {shdr.sh_offset, shdr.sh_size, shdr.sh_name};
  }
  elf_end(elf);
  return layout;
}

SectionPlace elf_section(const std::string& image, const std::string& name) {
  const ElfLayout layout = elf_layout(image);
  INFO("section " << name);
  REQUIRE(layout.sections.count(name) == 1);
  const SectionPlace place = layout.sections.at(name);
  REQUIRE(place.size > 0);
  return place;
}

std::uint32_t get_u32(const std::string& b, std::size_t off) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<std::uint8_t>(b[off + i]);
  return v;
}

void put_u32(std::string& b, std::size_t off, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace btfslim::test
