// Reading a vmlinux image for `minimize --kernel`: its .BTF, the .BTF_ids slots and sets that its
// symbol table names, and its own data by address.
//
// resolve_btfids wrote the ids into .BTF_ids at link time, by name, against this .BTF; the symbols say
// which u32 is which (the section itself is a bare array). So a stripped image (a distribution's
// vmlinuz payload) cannot be patched: its slots are anonymous. Every slot is checked against the BTF
// here (the id exists, and is of the slot's kind and name), so that an image whose .BTF_ids belongs to
// another .BTF is refused rather than patched into a kernel that misbehaves.
//
// The kernel also looks its BTF up by the names of functions its data points to: the stubs a struct_ops'
// cfi_stubs points to, a tracepoint's template (kallsyms_lookup, then btf_find_by_name_kind). To find
// those names here, the image's allocated sections are its memory at their link addresses (sh_addr), read
// in place over the mapped file, and its symbols, sorted by address, name what a pointer points to, as
// kallsyms would. An address no section holds is an answer (nullopt), not a crash.
#include "btfslim/error.h"
#include "btfslim/kernel_btf.h"

#include <elf.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <optional>

namespace btfslim {
namespace {

constexpr std::string_view kIdPrefix = "__BTF_ID__";

// The kind, name and set-ness of `__BTF_ID__<kind>__<name>__<n>` (slots) or `__BTF_ID__set__<name>`,
// `__BTF_ID__set8__<name>` (sets, which have no number).
struct ParsedSymbol {
  std::string_view kind, name;
};
std::optional<ParsedSymbol> parse_symbol(std::string_view symbol) {
  if (!symbol.starts_with(kIdPrefix)) return std::nullopt;
  std::string_view rest = symbol.substr(kIdPrefix.size());
  const std::size_t sep = rest.find("__");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  ParsedSymbol p{rest.substr(0, sep), rest.substr(sep + 2)};
  if (p.kind == "set" || p.kind == "set8") return p;
  const std::size_t last = p.name.rfind("__");
  if (last == std::string_view::npos || last == 0 || last + 2 == p.name.size()) return std::nullopt;
  if (!std::all_of(p.name.begin() + static_cast<std::ptrdiff_t>(last + 2), p.name.end(),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  p.name = p.name.substr(0, last);
  return p;
}

std::optional<Kind> slot_kind(std::string_view kind) {
  if (kind == "struct") return Kind::Struct;
  if (kind == "union") return Kind::Union;
  if (kind == "typedef") return Kind::Typedef;
  if (kind == "func") return Kind::Func;
  return std::nullopt;
}

// The slots and sets the symbols name in section `ids` (whose bytes hold ids of `btf`), checked: each
// slot holds 0 or an id of the type its symbol names, except in sets, which resolve_btfids sorted by id
// after filling them, so that a set's ids are its slots' types in another order.
void read_btf_ids(const std::string& path, const ElfFile::Section& ids, const std::vector<ElfFile::Symbol>& symbols,
                  const Btf& btf, ByteOrder order, std::vector<BtfIdSlot>& slots, std::vector<BtfIdSet>& sets) {
  const std::uint64_t ids_size = ids.bytes.size();
  auto u32_at = [&](std::uint64_t off) { return order.u32(ids.bytes.data() + off); };
  for (const ElfFile::Symbol& sym : symbols) {
    const auto parsed = parse_symbol(sym.name);
    if (!parsed) continue;
    if (sym.section != ".BTF_ids") fail(path, "symbol {} is not in a .BTF_ids section", esc(sym.name));
    if (sym.value < ids.addr || sym.value - ids.addr > ids_size || ids_size - (sym.value - ids.addr) < 4)
      fail(path, "symbol {} lies outside .BTF_ids ({} bytes)", esc(sym.name), ids_size);
    const std::uint64_t offset = sym.value - ids.addr;
    if (parsed->kind == "set" || parsed->kind == "set8") {
      BtfIdSet set{std::string(sym.name), offset, u32_at(offset), parsed->kind == "set8"};
      const std::uint64_t header = set.set8 ? 8 : 4, entry = set.set8 ? 8 : 4;
      // resolve_btfids wrote the count from the symbol's size; both must fit the section.
      if (header + entry * set.count != sym.size || ids_size - offset < header + entry * set.count)
        fail(path, "set {} holds a count of {} that its symbol's size ({} bytes) does not fit", esc(sym.name),
             set.count, sym.size);
      sets.push_back(std::move(set));
      continue;
    }
    slots.push_back({std::string(sym.name), std::string(parsed->kind), std::string(parsed->name), offset, u32_at(offset)});
  }
  std::vector<const BtfIdSet*> set_of(slots.size(), nullptr);
  for (const BtfIdSet& set : sets) {
    const std::uint64_t begin = set.offset + (set.set8 ? 8 : 4), end = begin + std::uint64_t{set.count} * (set.set8 ? 8 : 4);
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i].offset >= begin && slots[i].offset < end) set_of[i] = &set;
  }
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const BtfIdSlot& slot = slots[i];
    if (slot.id == 0) continue;
    if (!btf.valid_id(slot.id))
      fail(path, ".BTF_ids slot {} holds id {}, past the last type of its .BTF ({}): the two do not belong together",
           esc(slot.symbol), slot.id, btf.end_id() - 1);
    const TypeView t = btf.type(slot.id);
    const std::string_view name = btf.str(t.name_off());
    const auto names = [&](const BtfIdSlot& s) { return slot_kind(s.kind) == t.kind() && s.name == name; };
    bool fits = names(slot);
    for (std::size_t j = 0; !fits && set_of[i] && j < slots.size(); ++j)
      fits = set_of[j] == set_of[i] && names(slots[j]);
    if (!fits)
      fail(path, ".BTF_ids slot {} holds id {}, which is {} '{}': its .BTF_ids do not belong to its .BTF",
           esc(slot.symbol), slot.id, kind_name(t.kind()), esc(name));
  }
}

// .BTF and .BTF_ids among `sections`, where there are.
std::pair<const ElfFile::Section*, const ElfFile::Section*> btf_sections(const std::vector<ElfFile::Section>& sections) {
  const ElfFile::Section* btf = nullptr;
  const ElfFile::Section* ids = nullptr;
  for (const ElfFile::Section& s : sections) {
    if (s.name == ".BTF") btf = &s;
    if (s.name == ".BTF_ids") ids = &s;
  }
  return {btf, ids};
}

// The image's memory and symbols (KernelImage::memory, ::symbols): its allocated sections with contents,
// and its symbols defined in a section, each sorted by address.
void read_memory(KernelImage& image, const std::vector<ElfFile::Section>& sections,
                 const std::vector<ElfFile::Symbol>& symbols) {
  for (const ElfFile::Section& s : sections)
    if ((s.flags & SHF_ALLOC) && !s.bytes.empty() && s.addr != 0 && !(s.flags & SHF_COMPRESSED))
      image.memory.push_back({s.addr, s.bytes});
  std::sort(image.memory.begin(), image.memory.end(), [](const auto& a, const auto& b) { return a.addr < b.addr; });
  for (const ElfFile::Symbol& sym : symbols)
    if (!sym.undefined && !sym.section.empty() && !sym.name.empty() &&
        (sym.type == STT_FUNC || sym.type == STT_OBJECT || sym.type == STT_NOTYPE))
      image.symbols.push_back({sym.value, sym.size, sym.name, sym.type});
  std::stable_sort(image.symbols.begin(), image.symbols.end(), [](const auto& a, const auto& b) { return a.addr < b.addr; });
  const auto bytes = image.file->bytes();
  image.pointer_size = bytes.size() > EI_CLASS && bytes[EI_CLASS] == ELFCLASS32 ? 4 : 8;
}

// The bytes of the region that holds `addr`, from there to the region's end (nullopt: none holds it). The
// last region that starts at or below it: sections do not overlap in a linked image.
std::optional<std::span<const std::uint8_t>> from_address(const std::vector<KernelImage::Region>& memory,
                                                          std::uint64_t addr) {
  const auto after = std::upper_bound(memory.begin(), memory.end(), addr,
                                      [](std::uint64_t a, const KernelImage::Region& r) { return a < r.addr; });
  if (after == memory.begin()) return std::nullopt;
  const KernelImage::Region& r = *(after - 1);
  if (addr - r.addr >= r.bytes.size()) return std::nullopt;
  return r.bytes.subspan(addr - r.addr);
}

}  // namespace

std::optional<KernelVersion> parse_kernel_version(std::string_view release) {
  KernelVersion v;
  const char* p = release.data();
  const char* const end = p + release.size();
  auto number = [&](std::uint32_t& out) {
    const auto [ptr, ec] = std::from_chars(p, end, out);
    if (ec != std::errc()) return false;
    p = ptr;
    return true;
  };
  if (!number(v.major) || p == end || *p != '.') return std::nullopt;
  ++p;
  if (!number(v.minor)) return std::nullopt;
  if (p != end && *p == '.' && (++p, !number(v.patch))) v.patch = 0;
  if (v.major == 0) return std::nullopt;
  return v;
}

std::string version_text(KernelVersion v) {
  return v.patch ? fmt::format("{}.{}.{}", v.major, v.minor, v.patch) : fmt::format("{}.{}", v.major, v.minor);
}

KernelImage read_kernel_image(const std::string& path) {
  KernelImage image;
  image.file = FileBytes::open(path);
  if (!ElfFile::has_elf_magic(image.file->bytes()))
    fail(path, "not an ELF file: --kernel takes a vmlinux image (a kernel build's vmlinux, or the -dbg "
               "package's usr/lib/debug/boot/vmlinux-RELEASE)");
  const ElfFile elf(image.file);
  image.big_endian = elf.big_endian();
  const ByteOrder order(image.big_endian != (std::endian::native == std::endian::big));
  const auto base = image.file->bytes().data();

  const std::vector<ElfFile::Section> sections = elf.sections();
  const auto [btf, ids] = btf_sections(sections);
  if (!btf) fail(path, "has no .BTF section: a kernel built without CONFIG_DEBUG_INFO_BTF has no BTF to slim");
  if (btf->flags & SHF_COMPRESSED) fail(path, "its .BTF section is compressed: a kernel image's never is");
  if (btf->bytes.empty()) fail(path, "its .BTF section is empty");
  image.btf_offset = static_cast<std::uint64_t>(btf->bytes.data() - base);
  image.btf_size = btf->bytes.size();
  image.btf = Btf::parse(path, image.file, btf->bytes);
  if (image.btf->is_split()) fail(path, "its .BTF is split BTF: --kernel takes a vmlinux, not a module");
  // resolve_btfids writes .BTF_ids into every vmlinux with BPF (the verifier's own type ids live there):
  // an ELF without it is some other file (a BPF object, a module).
  if (!ids || ids->bytes.empty())
    fail(path, "has no .BTF_ids section: not a vmlinux image (a kernel build's vmlinux, or the -dbg package's "
               "usr/lib/debug/boot/vmlinux-RELEASE)");
  if (ids->flags & SHF_COMPRESSED) fail(path, "its .BTF_ids section is compressed");
  image.ids_offset = static_cast<std::uint64_t>(ids->bytes.data() - base);
  image.ids_size = ids->bytes.size();

  const std::vector<ElfFile::Symbol> symbols = elf.symbols();
  if (symbols.empty())
    fail(path, "has no symbol table, so its .BTF_ids slots cannot be told apart: use the vmlinux of the "
               "kernel's build, or of its -dbg package (usr/lib/debug/boot/vmlinux-RELEASE)");
  read_memory(image, sections, symbols);
  if (const KernelImage::Symbol* banner = image.symbol_named("linux_banner"))
    if (const auto text = image.string_at(banner->addr)) {
      // "Linux version 6.1.0-57-cloud-amd64 (...)": the release is the third word.
      constexpr std::string_view kVersion = "Linux version ";
      if (text->starts_with(kVersion)) {
        const std::string_view release = text->substr(kVersion.size());
        image.release = std::string(release.substr(0, release.find_first_of(" \n", 0)));
        image.version = parse_kernel_version(image.release);
      }
    }
  read_btf_ids(path, *ids, symbols, *image.btf, order, image.slots, image.sets);
  return image;
}

std::optional<std::span<const std::uint8_t>> KernelImage::bytes_at(std::uint64_t addr, std::uint64_t size) const {
  const auto tail = from_address(memory, addr);
  if (!tail || size > tail->size()) return std::nullopt;
  return tail->first(size);
}

std::optional<std::uint64_t> KernelImage::pointer_at(std::uint64_t addr) const {
  const auto bytes = bytes_at(addr, pointer_size);
  if (!bytes) return std::nullopt;
  const ByteOrder order(big_endian != (std::endian::native == std::endian::big));
  const std::uint32_t first = order.u32(bytes->data());
  if (pointer_size == 4) return first;
  const std::uint32_t second = order.u32(bytes->data() + 4);
  return big_endian ? (std::uint64_t{first} << 32 | second) : (std::uint64_t{second} << 32 | first);
}

std::optional<std::string_view> KernelImage::string_at(std::uint64_t addr) const {
  constexpr std::uint64_t kMax = 256;
  const auto tail = from_address(memory, addr);
  if (!tail) return std::nullopt;
  const std::string_view text(reinterpret_cast<const char*>(tail->data()), std::min<std::uint64_t>(tail->size(), kMax));
  const std::size_t end = text.find('\0');
  if (end == std::string_view::npos) return std::nullopt;
  return text.substr(0, end);
}

std::vector<std::string_view> KernelImage::functions_at(std::uint64_t addr) const {
  // As kallsyms shows it: a clang LTO build promotes static functions with a ".llvm.N" suffix, which
  // kallsyms drops (cleanup_symbol_name), and which BTF never had.
  auto shown = [](std::string_view name) { return name.substr(0, name.find(".llvm.")); };
  std::vector<std::string_view> out;
  auto at = std::lower_bound(symbols.begin(), symbols.end(), addr, [](const Symbol& s, std::uint64_t a) { return s.addr < a; });
  for (auto it = at; it != symbols.end() && it->addr == addr; ++it)
    if (it->type == STT_FUNC) out.push_back(shown(it->name));
  if (!out.empty()) return out;
  // None starts there: the function that holds it, the nearest below whose size reaches it.
  for (auto it = at; it != symbols.begin();) {
    --it;
    if (it->type != STT_FUNC) continue;
    if (addr - it->addr < it->size) out.push_back(shown(it->name));
    break;
  }
  return out;
}

const KernelImage::Symbol* KernelImage::symbol_named(std::string_view name) const {
  for (const Symbol& s : symbols)
    if (s.name.starts_with(name) && (s.name.size() == name.size() || s.name.substr(name.size()).starts_with(".llvm.")))
      return &s;
  return nullptr;
}

std::optional<KernelModule> read_kernel_module(const std::string& path, const KernelImage& image) {
  KernelModule module;
  module.file = FileBytes::open(path);
  if (!ElfFile::has_elf_magic(module.file->bytes())) fail(path, "not an ELF file: --modules takes kernel modules (.ko)");
  const ElfFile elf(module.file);
  if (!elf.is_kernel_module()) fail(path, "not a kernel module (no .modinfo)");
  if (const std::string_view release = elf.module_release(); !image.release.empty() && release != image.release)
    fail(path, "a module of Linux {}, not of {} ({})", esc(release), esc(image.release), esc(image.path()));
  const std::vector<ElfFile::Section> sections = elf.sections();
  const auto [btf, ids] = btf_sections(sections);
  if (!btf || btf->bytes.empty()) return std::nullopt;
  if ((btf->flags & SHF_COMPRESSED) || (ids && (ids->flags & SHF_COMPRESSED)))
    fail(path, "its .BTF or .BTF_ids section is compressed");
  module.btf = Btf::parse(path, module.file, btf->bytes, image.btf);
  if (ids && !ids->bytes.empty())
    module.ids_bytes.assign(reinterpret_cast<const char*>(ids->bytes.data()), ids->bytes.size());
  if (ids && !ids->bytes.empty())
    read_btf_ids(path, *ids, elf.symbols(), *module.btf, ByteOrder(elf.big_endian() != (std::endian::native == std::endian::big)),
                 module.slots, module.sets);
  return module;
}

}  // namespace btfslim
