// Finding sections in ELF files with libelf.
//
// libelf reads the ELF and section headers of the mapped file (either class, either byte order); the
// section contents we hand out are spans of that same mapping, bounds-checked against the file, so a
// 500 MB vmlinux image costs only the pages of its .BTF. A compressed section (SHF_COMPRESSED) is
// inflated by libelf and lives as long as this ElfFile.
#include "btfslim/error.h"
#include "btfslim/input.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>

namespace btfslim {

struct ElfFile::Impl {
  Elf* elf = nullptr;
  std::size_t shstrndx = 0;
  ~Impl() {
    if (elf) elf_end(elf);
  }
};

bool ElfFile::has_elf_magic(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F';
}

ElfFile::ElfFile(std::shared_ptr<const FileBytes> file) : file_(std::move(file)), impl_(std::make_unique<Impl>()) {
  static const bool initialized = elf_version(EV_CURRENT) != EV_NONE;
  if (!initialized) fail(path(), "libelf is too old");
  auto bytes = file_->bytes();
  // elf_memory takes a non-const image; FileBytes maps copy-on-write, so a fix-up cannot reach the file.
  impl_->elf = elf_memory(reinterpret_cast<char*>(const_cast<std::uint8_t*>(bytes.data())), bytes.size());
  if (!impl_->elf) fail(path(), "not a valid ELF file: {}", elf_errmsg(-1));
  // libelf sets no error for identification bytes it does not know; it just calls the file ELF_K_NONE.
  if (elf_kind(impl_->elf) != ELF_K_ELF) {
    if (bytes.size() < EI_NIDENT) fail(path(), "truncated: {} bytes, too short for an ELF header", bytes.size());
    fail(path(), "not a valid ELF file: unknown class {}, byte order {} or version {} in its identification",
         bytes[EI_CLASS], bytes[EI_DATA], bytes[EI_VERSION]);
  }
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(impl_->elf, &ehdr)) fail(path(), "invalid ELF header: {}", elf_errmsg(-1));
  // libelf quietly sees no sections when their header table lies past the end (a truncated file): say
  // so here rather than report a missing .BTF. With e_shnum 0 the count is in the first header.
  const std::uint64_t shdr_size = gelf_getclass(impl_->elf) == ELFCLASS32 ? sizeof(Elf32_Shdr) : sizeof(Elf64_Shdr);
  const std::uint64_t table_size = shdr_size * (ehdr.e_shnum ? ehdr.e_shnum : 1);
  if (ehdr.e_shoff != 0 && (ehdr.e_shoff > bytes.size() || table_size > bytes.size() - ehdr.e_shoff))
    fail(path(), "truncated: ELF section header table [{}, +{}) lies past the end of the file ({} bytes)",
         ehdr.e_shoff, table_size, bytes.size());
  if (elf_getshdrstrndx(impl_->elf, &impl_->shstrndx) != 0)
    fail(path(), "invalid ELF section name table: {}", elf_errmsg(-1));
}

ElfFile::~ElfFile() = default;

std::optional<std::span<const std::uint8_t>> ElfFile::section(std::string_view name) const {
  return sections_named(std::span(&name, 1))[0];
}

std::vector<std::optional<std::span<const std::uint8_t>>> ElfFile::sections_named(
    std::span<const std::string_view> names) const {
  std::vector<std::optional<std::span<const std::uint8_t>>> out(names.size());
  // Each name's place in `out`: a few are compared in turn, more looked up (an object may name hundreds).
  constexpr std::size_t kCompared = 8;
  std::unordered_map<std::string_view, std::size_t> wanted;
  std::size_t distinct = names.size();
  if (names.size() > kCompared) {
    for (std::size_t i = 0; i < names.size(); ++i) wanted.try_emplace(names[i], i);
    distinct = wanted.size();
  } else {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) != names.begin() + static_cast<std::ptrdiff_t>(i))
        --distinct;
  }
  auto place = [&](std::string_view name) -> std::optional<std::size_t> {
    if (names.size() > kCompared) {
      const auto it = wanted.find(name);
      return it == wanted.end() ? std::nullopt : std::optional(it->second);
    }
    const auto it = std::find(names.begin(), names.end(), name);  // the first of equal names, as try_emplace keeps
    return it == names.end() ? std::nullopt : std::optional(static_cast<std::size_t>(it - names.begin()));
  };
  const auto bytes = file_->bytes();
  elf_errno();  // clear a stale error so that the check after the loop sees only this walk's
  Elf_Scn* scn = nullptr;
  std::size_t left = distinct;
  while (left > 0 && (scn = elf_nextscn(impl_->elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) fail(path(), "invalid ELF section header: {}", elf_errmsg(-1));
    const char* sname = elf_strptr(impl_->elf, impl_->shstrndx, shdr.sh_name);
    if (!sname) continue;
    const auto at = place(sname);
    if (!at || out[*at]) continue;
    const std::string_view name = names[*at];
    --left;
    if (shdr.sh_type == SHT_NOBITS) fail(path(), "section {} has no contents (SHT_NOBITS)", esc(name));
    if (shdr.sh_flags & SHF_COMPRESSED) {
      if (elf_compress(scn, 0, 0) < 0) fail(path(), "cannot decompress section {}: {}", esc(name), elf_errmsg(-1));
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (!data || (!data->d_buf && data->d_size))
        fail(path(), "cannot read section {}: {}", esc(name), elf_errmsg(-1));
      out[*at] = std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(data->d_buf), data->d_size);
      continue;
    }
    if (shdr.sh_offset > bytes.size() || shdr.sh_size > bytes.size() - shdr.sh_offset)
      fail(path(), "section {} [{}, +{}) lies past the end of the file ({} bytes)", esc(name), shdr.sh_offset,
           shdr.sh_size, bytes.size());
    out[*at] = bytes.subspan(shdr.sh_offset, shdr.sh_size);
  }
  // elf_errno() clears the error it returns, so the message must come from that number.
  if (const int err = elf_errno(); err != 0) fail(path(), "invalid ELF section table: {}", elf_errmsg(err));
  for (std::size_t i = 0; i < names.size(); ++i) out[i] = out[*place(names[i])];  // a name asked twice
  return out;
}

bool ElfFile::big_endian() const {
  const auto bytes = file_->bytes();
  return bytes.size() > EI_DATA && bytes[EI_DATA] == ELFDATA2MSB;
}

std::uint16_t ElfFile::machine() const {
  GElf_Ehdr ehdr;
  return gelf_getehdr(impl_->elf, &ehdr) ? ehdr.e_machine : EM_NONE;  // read and checked when opened
}

bool ElfFile::is_linked_image() const {
  GElf_Ehdr ehdr;
  return gelf_getehdr(impl_->elf, &ehdr) && (ehdr.e_type == ET_EXEC || ehdr.e_type == ET_DYN);
}

bool is_bpf_object_file(const std::string& path) {
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
    // A Go bpf2go object may lack .BTF.ext; every compiler's has a symbol table.
    const ElfFile elf(FileBytes::open(path));
    return elf.section(".BTF.ext").has_value() || elf.section(".symtab").has_value();
  } catch (const std::exception&) {
    return false;
  }
}

template <typename Fn>
void ElfFile::for_each_table_symbol(Fn&& fn) const {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(impl_->elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) fail(path(), "invalid ELF section header: {}", elf_errmsg(-1));
    if (shdr.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) fail(path(), "cannot read the symbol table: {}", elf_errmsg(-1));
    const std::size_t count = shdr.sh_entsize ? data->d_size / shdr.sh_entsize : 0;
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) fail(path(), "invalid symbol {}: {}", i, elf_errmsg(-1));
      fn(i, sym, elf_strptr(impl_->elf, shdr.sh_link, sym.st_name));
    }
    return;  // an object has one
  }
}

std::size_t ElfFile::table_symbol_count() const {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(impl_->elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB) return shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
  }
  return 0;
}

ElfFile::SymbolSection ElfFile::symbol_section(std::uint16_t shndx) const {
  Elf_Scn* in = elf_getscn(impl_->elf, shndx);
  GElf_Shdr hdr;
  if (!in || !gelf_getshdr(in, &hdr)) return {};
  return {elf_strptr(impl_->elf, impl_->shstrndx, hdr.sh_name), (hdr.sh_flags & SHF_EXECINSTR) != 0};
}

std::vector<ElfFile::Function> ElfFile::functions() const {
  std::vector<Function> out;
  for_each_function([&](const Function& f) { out.push_back(f); });
  return out;
}

void ElfFile::for_each_function(const std::function<void(const Function&)>& fn) const {
  for_each_table_symbol([&](std::size_t i, const GElf_Sym& sym, const char* name) {
    if (i == 0 || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
      return;
    const char* section = symbol_section(sym.st_shndx).name;
    if (!name || !section) fail(path(), "symbol {} has an invalid name or section", i);
    fn({name, section, sym.st_value, sym.st_size});
  });
}

std::vector<ElfFile::Section> ElfFile::sections() const {
  std::vector<Section> out;
  sections(out);
  return out;
}

void ElfFile::sections(std::vector<Section>& out) const {
  const auto bytes = file_->bytes();
  out.assign(1, Section{});
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(impl_->elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) fail(path(), "invalid ELF section header: {}", elf_errmsg(-1));
    const char* name = elf_strptr(impl_->elf, impl_->shstrndx, shdr.sh_name);
    Section s{name ? name : "", shdr.sh_type, shdr.sh_flags, shdr.sh_info, shdr.sh_addr, shdr.sh_offset, {}};
    if (shdr.sh_type != SHT_NOBITS && shdr.sh_size != 0) {
      if (shdr.sh_flags & SHF_COMPRESSED) {
        if (auto inflated = section(s.name)) s.bytes = *inflated;
      } else if (shdr.sh_offset > bytes.size() || shdr.sh_size > bytes.size() - shdr.sh_offset) {
        fail(path(), "section {} [{}, +{}) lies past the end of the file ({} bytes)", esc(s.name), shdr.sh_offset,
             shdr.sh_size, bytes.size());
      } else {
        s.bytes = bytes.subspan(shdr.sh_offset, shdr.sh_size);
      }
    }
    out.push_back(s);
  }
}

std::vector<ElfFile::TableSymbol> ElfFile::symbol_table() const {
  std::vector<TableSymbol> out;
  symbol_table(out);
  return out;
}

void ElfFile::symbol_table(std::vector<TableSymbol>& out) const {
  out.clear();
  out.reserve(table_symbol_count());
  for_each_table_symbol([&](std::size_t, const GElf_Sym& sym, const char* name) {
    out.push_back({name ? name : "", sym.st_value, sym.st_size, sym.st_shndx,
                   static_cast<std::uint8_t>(GELF_ST_TYPE(sym.st_info)),
                   static_cast<std::uint8_t>(GELF_ST_BIND(sym.st_info)),
                   static_cast<std::uint8_t>(GELF_ST_VISIBILITY(sym.st_other))});
  });
}

std::vector<ElfFile::Relocation> ElfFile::relocations(std::uint32_t index) const {
  std::vector<Relocation> out;
  relocations(index, out);
  return out;
}

void ElfFile::relocations(std::uint32_t index, std::vector<Relocation>& out) const {
  out.clear();
  Elf_Scn* scn = elf_getscn(impl_->elf, index);
  GElf_Shdr shdr;
  if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_REL) return;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!data) fail(path(), "cannot read relocation section {}: {}", index, elf_errmsg(-1));
  const std::size_t count = shdr.sh_entsize ? data->d_size / shdr.sh_entsize : 0;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Rel rel;
    if (!gelf_getrel(data, static_cast<int>(i), &rel))
      fail(path(), "invalid relocation {} of section {}: {}", i, index, elf_errmsg(-1));
    out.push_back({rel.r_offset, static_cast<std::uint32_t>(GELF_R_SYM(rel.r_info)),
                   static_cast<std::uint32_t>(GELF_R_TYPE(rel.r_info))});
  }
}

// The release a module was built for: the first word of `vermagic=` among .modinfo's NUL-separated
// key=value strings.
std::string_view ElfFile::module_release() const {
  const auto modinfo = section(".modinfo");
  if (!modinfo) return {};
  const std::string_view all(reinterpret_cast<const char*>(modinfo->data()), modinfo->size());
  constexpr std::string_view kKey = "vermagic=";
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = std::min(all.find('\0', at), all.size());
    const std::string_view entry = all.substr(at, end - at);
    if (entry.starts_with(kKey)) {
      const std::string_view value = entry.substr(kKey.size());
      return value.substr(0, value.find(' '));
    }
    at = end + 1;
  }
  return {};
}

bool ElfFile::is_kernel_module() const {
  return section(".modinfo").has_value() || section(".gnu.linkonce.this_module").has_value();
}

}  // namespace btfslim

namespace btfslim {

void ElfFile::for_each_symbol(const std::function<void(const Symbol&)>& fn) const {
  for_each_table_symbol([&](std::size_t i, const GElf_Sym& sym, const char* name) {
    if (i == 0) return;
    if (!name) fail(path(), "symbol {} has an invalid name", i);
    Symbol s;
    s.name = name;
    s.value = sym.st_value;
    s.size = sym.st_size;
    s.binding = static_cast<std::uint8_t>(GELF_ST_BIND(sym.st_info));
    s.type = static_cast<std::uint8_t>(GELF_ST_TYPE(sym.st_info));
    s.undefined = sym.st_shndx == SHN_UNDEF;
    if (!s.undefined && sym.st_shndx < SHN_LORESERVE) {
      const SymbolSection in = symbol_section(sym.st_shndx);
      if (!in.name) fail(path(), "symbol {} has an invalid section", i);
      s.section = in.name;
      s.executable = in.executable;
    }
    fn(s);
  });
}

std::vector<ElfFile::Symbol> ElfFile::symbols() const {
  std::vector<Symbol> out;
  out.reserve(table_symbol_count());  // one allocation, not a doubling series
  for_each_symbol([&](const Symbol& s) { out.push_back(s); });
  return out;
}

std::vector<ElfFile::Relocation> ElfFile::relocations_of(std::string_view name) const {
  // The index of the section, then the relocation sections that apply to it (sh_info).
  std::size_t target = 0;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(impl_->elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) fail(path(), "invalid ELF section header: {}", elf_errmsg(-1));
    const char* sname = elf_strptr(impl_->elf, impl_->shstrndx, shdr.sh_name);
    if (sname && name == sname) {
      target = elf_ndxscn(scn);
      break;
    }
  }
  std::vector<Relocation> out;
  if (target == 0) return out;
  scn = nullptr;
  while ((scn = elf_nextscn(impl_->elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) fail(path(), "invalid ELF section header: {}", elf_errmsg(-1));
    if ((shdr.sh_type != SHT_REL && shdr.sh_type != SHT_RELA) || shdr.sh_info != target) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) fail(path(), "cannot read relocations for {}: {}", esc(name), elf_errmsg(-1));
    const std::size_t count = shdr.sh_entsize ? data->d_size / shdr.sh_entsize : 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (shdr.sh_type == SHT_REL) {
        GElf_Rel rel;
        if (!gelf_getrel(data, static_cast<int>(i), &rel)) fail(path(), "invalid relocation {}: {}", i, elf_errmsg(-1));
        out.push_back({rel.r_offset, static_cast<std::uint32_t>(GELF_R_SYM(rel.r_info)),
                       static_cast<std::uint32_t>(GELF_R_TYPE(rel.r_info))});
      } else {
        GElf_Rela rela;
        if (!gelf_getrela(data, static_cast<int>(i), &rela))
          fail(path(), "invalid relocation {}: {}", i, elf_errmsg(-1));
        out.push_back({rela.r_offset, static_cast<std::uint32_t>(GELF_R_SYM(rela.r_info)),
                       static_cast<std::uint32_t>(GELF_R_TYPE(rela.r_info))});
      }
    }
  }
  return out;
}

}  // namespace btfslim
