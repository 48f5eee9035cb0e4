// Reading a vmlinux image for `minimize --kernel`: its .BTF, and the .BTF_ids slots and sets that its
// symbol table names.
//
// resolve_btfids wrote the ids into .BTF_ids at link time, by name, against this .BTF; the symbols say
// which u32 is which (the section itself is a bare array). So a stripped image (a distribution's
// vmlinuz payload) cannot be patched: its slots are anonymous. Every slot is checked against the BTF
// here (the id exists, and is of the slot's kind and name), so that an image whose .BTF_ids belongs to
// another .BTF is refused rather than patched into a kernel that misbehaves.
#include "btfslim/error.h"
#include "btfslim/kernel_btf.h"

#include <elf.h>

#include <algorithm>
#include <bit>
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

}  // namespace

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
  for (const ElfFile::Symbol& sym : symbols) {
    if (sym.name != "linux_banner" || sym.section.empty()) continue;
    // "Linux version 6.1.0-57-cloud-amd64 (...)": the release is the third word.
    for (const ElfFile::Section& s : sections)
      if (s.name == sym.section && sym.value >= s.addr && sym.value - s.addr < s.bytes.size()) {
        const auto text = s.bytes.subspan(sym.value - s.addr);
        const std::string_view banner(reinterpret_cast<const char*>(text.data()), std::min<std::size_t>(text.size(), 256));
        constexpr std::string_view kVersion = "Linux version ";
        if (banner.starts_with(kVersion)) {
          const std::string_view release = banner.substr(kVersion.size());
          image.release = std::string(release.substr(0, release.find_first_of(" \n", 0)));
        }
      }
  }
  read_btf_ids(path, *ids, symbols, *image.btf, order, image.slots, image.sets);
  return image;
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

std::span<const KernelLookup> kernel_lookups() {
  // Read in Linux 6.1 (kernel/bpf/bpf_struct_ops.c, net/ipv4/bpf_tcp_ca.c, net/bpf/bpf_dummy_struct_ops.c,
  // kernel/bpf/verifier.c). Each is looked up at boot or at the first load that needs it; a missing one
  // is a boot warning, or a feature that stops working. The struct_ops types themselves (NAME and
  // bpf_struct_ops_NAME, for every NAME the kernel registers) are found from the bpf_struct_ops_ prefix.
  static constexpr KernelLookup kLookups[] = {
      {"module", Kind::Struct, false, "bpf_struct_ops_init (kernel/bpf/bpf_struct_ops.c, 5.6+): the owner member"},
      {"sock", Kind::Struct, false, "bpf_tcp_ca_init (net/ipv4/bpf_tcp_ca.c, 5.6+)"},
      {"tcp_sock", Kind::Struct, false, "bpf_tcp_ca_init (net/ipv4/bpf_tcp_ca.c, 5.6+)"},
      {"bpf_dummy_ops_state", Kind::Struct, false, "bpf_dummy_init (net/bpf/bpf_dummy_struct_ops.c, 5.14+)"},
      {"bpf_ctx_convert", Kind::Struct, true,
       "btf_get_prog_ctx_type (kernel/bpf/btf.c): its members, by position, pair each program type's context"},
  };
  return kLookups;
}

}  // namespace btfslim
