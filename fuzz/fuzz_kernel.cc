// `minimize --kernel` and `--modules` on a small image and module whose .BTF_ids, symbol tables and (for
// the module) split BTF are mutated in place.
//
// The image (fuzz/data/kernel_small.c, linked and given .BTF by pahole -J at build time) has the CO-RE
// corpus' "moved" types, three functions, a linux_banner and a .BTF_ids of slots, a set and a set8, as
// a vmlinux lays them out; the module (fuzz/data/module_small.c, pahole -J --btf_base the image) has
// types of its own on the image's and a .BTF_ids. At start-up their slots are filled as resolve_btfids
// fills them (the id of the type of that kind and name, 0 for none) and their sets counted and sorted.
// An input's first byte picks the file (even: the image, odd: the module); the rest is XORed over the
// image's .BTF_ids then .symtab, or the module's .BTF, .BTF_ids then .symtab: a seed of zeros is the file
// itself.
//
// The image: read_kernel_image, then slim_kernel for the BPF objects the build compiles from tests/bpf,
// and what the command checks before writing: verify_slim must find no difference, remapped_btf_ids,
// verify_lookups on the slim BTF read back, padded_btf fit or refuse. The module: read_kernel_module on
// the unmutated image, slim_module, and the rewritten BTF read back on the padded slim base with all the
// module's own types. An InputError other than the readers' refusals (or padded_btf's "does not fit") is
// a finding, as is any difference.
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

// A file and the places in it an input is XORed over, back to back: (offset, size).
struct Template {
  std::string bytes;
  std::vector<std::pair<std::size_t, std::size_t>> regions;
};
Template g_image;   // regions: .BTF_ids, .symtab
Template g_module;  // regions: .BTF, .BTF_ids, .symtab
std::vector<std::unique_ptr<const BpfObject>> g_objects;
// The image as read and slimmed once, for the modules: the slim kernel and its padded .BTF, parsed.
KernelImage g_kernel;
std::optional<SlimKernel> g_slim;
std::shared_ptr<const Btf> g_slim_base;

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

void put_u32(std::string& bytes, std::size_t off, std::uint32_t v) { std::memcpy(bytes.data() + off, &v, 4); }
std::uint32_t get_u32(const std::string& bytes, std::size_t off) {
  std::uint32_t v;
  std::memcpy(&v, bytes.data() + off, 4);
  return v;
}

// The file at `path` with its .BTF_ids filled as resolve_btfids fills them from `btf` (the file's own,
// split on the image's for a module); its regions .BTF (with `btf_region`), .BTF_ids and .symtab.
Template prepare(const std::string& path, const Btf& btf, bool btf_region) {
  Template t;
  t.bytes = read_file(path);
  std::string copy = t.bytes;
  if (elf_version(EV_CURRENT) == EV_NONE) std::abort();
  Elf* elf = elf_memory(copy.data(), copy.size());
  std::size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) std::abort();
  GElf_Shdr ids{}, symtab{}, btf_section{};
  std::size_t ids_index = 0;
  Elf_Scn* symtab_scn = nullptr;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) std::abort();
    const std::string_view name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == ".BTF_ids") ids = shdr, ids_index = elf_ndxscn(scn);
    if (name == ".BTF") btf_section = shdr;
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
    const std::size_t at = ids.sh_offset + (sym.st_value - ids.sh_addr);  // sh_addr is 0 in a module
    constexpr std::string_view kPrefix = "__BTF_ID__";
    if (!name.starts_with(kPrefix)) continue;
    const std::string rest = name.substr(kPrefix.size());
    if (rest.starts_with("set8__")) {
      sets.push_back({at, static_cast<std::uint32_t>((sym.st_size - 8) / 8), 8});
    } else if (rest.starts_with("set__")) {
      sets.push_back({at, static_cast<std::uint32_t>((sym.st_size - 4) / 4), 4});
    } else {
      const std::size_t k = rest.find("__"), n = rest.rfind("__");
      put_u32(t.bytes, at, find_type(btf, rest.substr(0, k), rest.substr(k + 2, n - k - 2)));
    }
  }
  // Sets: the count, then the ids sorted (resolve_btfids sorts them for the kernel's binary search).
  for (const Set& s : sets) {
    put_u32(t.bytes, s.at, s.count);
    const std::size_t first = s.at + (s.stride == 8 ? 8 : 4);
    std::vector<std::uint32_t> v;
    for (std::uint32_t i = 0; i < s.count; ++i) v.push_back(get_u32(t.bytes, first + i * s.stride));
    std::sort(v.begin(), v.end());
    for (std::uint32_t i = 0; i < s.count; ++i) put_u32(t.bytes, first + i * s.stride, v[i]);
  }
  elf_end(elf);
  if (btf_region) t.regions.push_back({btf_section.sh_offset, btf_section.sh_size});
  t.regions.push_back({ids.sh_offset, ids.sh_size});
  t.regions.push_back({symtab.sh_offset, symtab.sh_size});
  return t;
}

// `t` with `mask` XORed over its regions.
std::string mutated(const Template& t, std::span<const std::uint8_t> mask) {
  std::string bytes = t.bytes;
  std::size_t m = 0;
  for (const auto& [off, len] : t.regions)
    for (std::size_t i = 0; i < len && m < mask.size(); ++i) bytes[off + i] = static_cast<char>(bytes[off + i] ^ mask[m++]);
  return bytes;
}

KernelProfile profile() {
  KernelProfile p;
  for (const auto& o : g_objects) p.objects.push_back(o.get());
  return p;
}

// The image mutated: read, slimmed, checked as the command checks before writing.
void image_input(std::span<const std::uint8_t> mask) {
  const std::string bytes = mutated(g_image, mask);
  const fuzz::MemFile file({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  KernelImage image;
  try {
    image = read_kernel_image(file.path());
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
    return;
  }
  const KernelProfile profile = ::profile();
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
}

// A module of the image mutated (its .BTF, .BTF_ids, .symtab): rewritten for the slim kernel as
// --modules rewrites it, and read back on the slim base with every own type of the module in it.
void module_input(std::span<const std::uint8_t> mask) {
  const std::string bytes = mutated(g_module, mask);
  const fuzz::MemFile file({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  std::optional<KernelModule> module;
  try {
    module = read_kernel_module(file.path(), g_kernel);
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
    return;
  }
  if (!module) return;
  try {
    const SlimModule m = slim_module(g_kernel, *g_slim, *module);
    auto owner = std::make_shared<std::string>(m.btf);
    const auto out = Btf::parse("module.btf", owner,
                                {reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size()}, g_slim_base);
    if (out->own_count() != m.own + m.imported)
      finding("the rewritten module has " + std::to_string(out->own_count()) + " types, not the " +
              std::to_string(m.own + m.imported) + " written");
    if (m.own != module->btf->own_count())
      finding("the rewritten module kept " + std::to_string(m.own) + " of its " +
              std::to_string(module->btf->own_count()) + " own types");
  } catch (const InputError& e) {
    finding(std::string("rewriting a module it read failed: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const auto image_btf = load_btf_file(BTFSLIM_FUZZ_KERNEL, nullptr);
  g_image = prepare(BTFSLIM_FUZZ_KERNEL, *image_btf, false);
  std::istringstream paths(BTFSLIM_FUZZ_OBJECTS);
  for (std::string path; std::getline(paths, path, ':');)
    if (!path.empty()) g_objects.push_back(BpfObject::open(path));
  // The templates themselves must be taken: else every input is refused and nothing is fuzzed.
  const fuzz::MemFile file({reinterpret_cast<const std::uint8_t*>(g_image.bytes.data()), g_image.bytes.size()});
  try {
    g_kernel = read_kernel_image(file.path());
    g_slim.emplace(slim_kernel(g_kernel, profile()));
    auto padded = std::make_shared<std::string>(padded_btf(g_kernel, *g_slim));
    g_slim_base = Btf::parse("slim.btf", padded, {reinterpret_cast<const std::uint8_t*>(padded->data()), padded->size()});
    const auto module_btf = load_btf_file(BTFSLIM_FUZZ_MODULE, g_kernel.btf);
    g_module = prepare(BTFSLIM_FUZZ_MODULE, *module_btf, true);
    const fuzz::MemFile module({reinterpret_cast<const std::uint8_t*>(g_module.bytes.data()), g_module.bytes.size()});
    if (!read_kernel_module(module.path(), g_kernel)) finding("the template module has no BTF");
  } catch (const InputError& e) {
    finding(std::string("a template is refused: ") + e.what());
  }
  return 0;
}

// The first byte says which file the rest mutates: even, the image; odd, the module.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0)
    image_input({data + 1, size - 1});
  else
    module_input({data + 1, size - 1});
  return 0;
}
