// `minimize --kernel` on a small image whose .BTF_ids and symbol table are mutated in place.
//
// The image (fuzz/data/kernel_small.c, linked and given .BTF by pahole -J at build time) has the CO-RE
// corpus' "moved" types, three functions, a linux_banner and a .BTF_ids of slots, a set and a set8, as
// a vmlinux lays them out. At start-up its slots are filled as resolve_btfids fills them (the id of the
// type of that kind and name, 0 for none) and its sets counted and sorted. Each input is then XORed over
// the image's .BTF_ids and then its .symtab, back to back: a seed of zeros is the image itself; a
// flipped bit is another id in a slot or set, a moved, resized, renamed or retyped symbol.
//
// On what read_kernel_image takes: slim_kernel for the BPF objects the build compiles from tests/bpf
// (their relocations, kernel references and typed-pointer loads), and then what the command checks
// before writing: verify_slim must find no difference, padded_btf fit or refuse, remapped_btf_ids, and
// verify_lookups on the slim BTF read back. An InputError other than read_kernel_image's refusal (or
// padded_btf's "does not fit") is a finding, as is any difference.
#include "common.h"

#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/kernel_btf.h"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace btfslim;

std::string g_image;
std::vector<std::pair<std::size_t, std::size_t>> g_regions;  // .BTF_ids, .symtab: (offset, size)
std::vector<std::unique_ptr<const BpfObject>> g_objects;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_kernel: %s\n", what.c_str());
  std::abort();
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TypeId find_type(const Btf& btf, std::string_view kind, std::string_view name) {
  const Kind want = kind == "struct" ? Kind::Struct : kind == "union" ? Kind::Union : kind == "typedef" ? Kind::Typedef
                                                                                                          : Kind::Func;
  for (TypeId id = 1; id < btf.end_id(); ++id)
    if (btf.type(id).kind() == want && btf.str(btf.type(id).name_off()) == name) return id;
  return 0;
}

void put_u32(std::size_t off, std::uint32_t v) { std::memcpy(g_image.data() + off, &v, 4); }
std::uint32_t get_u32(std::size_t off) {
  std::uint32_t v;
  std::memcpy(&v, g_image.data() + off, 4);
  return v;
}

// Fills the template's .BTF_ids as resolve_btfids does, and notes where .BTF_ids and .symtab are.
void prepare_image(const std::string& path) {
  g_image = read_file(path);
  const auto btf = load_btf_file(path, nullptr);
  std::string copy = g_image;
  if (elf_version(EV_CURRENT) == EV_NONE) std::abort();
  Elf* elf = elf_memory(copy.data(), copy.size());
  std::size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) std::abort();
  GElf_Shdr ids{}, symtab{};
  std::size_t ids_index = 0;
  Elf_Scn* symtab_scn = nullptr;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) std::abort();
    const std::string_view name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == ".BTF_ids") ids = shdr, ids_index = elf_ndxscn(scn);
    if (shdr.sh_type == SHT_SYMTAB) symtab = shdr, symtab_scn = scn;
  }
  if (!ids_index || !symtab_scn) finding("the template has no .BTF_ids or .symtab");
  Elf_Data* syms = elf_getdata(symtab_scn, nullptr);
  struct Set {
    std::size_t at;
    std::uint32_t count, stride;
  };
  std::vector<Set> sets;
  for (std::size_t i = 0; i < symtab.sh_size / symtab.sh_entsize; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(syms, static_cast<int>(i), &sym) || sym.st_shndx != ids_index) continue;
    const std::string name = elf_strptr(elf, symtab.sh_link, sym.st_name);
    const std::size_t at = ids.sh_offset + (sym.st_value - ids.sh_addr);
    constexpr std::string_view kPrefix = "__BTF_ID__";
    if (!name.starts_with(kPrefix)) continue;
    const std::string rest = name.substr(kPrefix.size());
    if (rest.starts_with("set8__")) {
      sets.push_back({at, static_cast<std::uint32_t>((sym.st_size - 8) / 8), 8});
    } else if (rest.starts_with("set__")) {
      sets.push_back({at, static_cast<std::uint32_t>((sym.st_size - 4) / 4), 4});
    } else {
      const std::size_t k = rest.find("__"), n = rest.rfind("__");
      put_u32(at, find_type(*btf, rest.substr(0, k), rest.substr(k + 2, n - k - 2)));
    }
  }
  // Sets: the count, then the ids sorted (resolve_btfids sorts them for the kernel's binary search).
  for (const Set& s : sets) {
    put_u32(s.at, s.count);
    const std::size_t first = s.at + (s.stride == 8 ? 8 : 4);
    std::vector<std::uint32_t> v;
    for (std::uint32_t i = 0; i < s.count; ++i) v.push_back(get_u32(first + i * s.stride));
    std::sort(v.begin(), v.end());
    for (std::uint32_t i = 0; i < s.count; ++i) put_u32(first + i * s.stride, v[i]);
  }
  elf_end(elf);
  g_regions = {{ids.sh_offset, ids.sh_size}, {symtab.sh_offset, symtab.sh_size}};
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  prepare_image(BTFSLIM_FUZZ_KERNEL);
  std::istringstream paths(BTFSLIM_FUZZ_OBJECTS);
  for (std::string path; std::getline(paths, path, ':');)
    if (!path.empty()) g_objects.push_back(BpfObject::open(path));
  // The template itself must be taken: else every input is refused and nothing is fuzzed.
  const fuzz::MemFile file({reinterpret_cast<const std::uint8_t*>(g_image.data()), g_image.size()});
  try {
    (void)read_kernel_image(file.path());
  } catch (const InputError& e) {
    finding(std::string("the template image is refused: ") + e.what());
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes = g_image;
  std::size_t m = 0;
  for (const auto& [off, len] : g_regions)
    for (std::size_t i = 0; i < len && m < size; ++i) bytes[off + i] = static_cast<char>(bytes[off + i] ^ data[m++]);
  const fuzz::MemFile file({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  KernelImage image;
  try {
    image = read_kernel_image(file.path());
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
    return 0;
  }
  KernelProfile profile;
  for (const auto& o : g_objects) profile.objects.push_back(o.get());
  std::optional<SlimKernel> slim;
  try {
    slim.emplace(slim_kernel(image, profile));
    if (const std::string diff = verify_slim(image, profile, *slim); !diff.empty())
      finding("the slim BTF does not serve as the source does: " + diff);
    (void)remapped_btf_ids(image, *slim);
    auto owner = std::make_shared<std::string>(slim->btf);
    const auto out = Btf::parse("slim.btf", owner,
                                {reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size()});
    if (const std::string diff = verify_lookups(image, *slim, *out); !diff.empty())
      finding("a lookup finds another type on the slim BTF: " + diff);
  } catch (const InputError& e) {
    finding(std::string("minimize --kernel failed on an image it read: ") + e.what());
  }
  try {
    (void)padded_btf(image, *slim);
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);  // the slim BTF does not fit the image's .BTF
  }
  return 0;
}
