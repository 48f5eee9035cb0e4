// Writes the seed corpora of the fuzz targets, at build time, from what the tests build their inputs
// from: the BTF fixtures of tests/support/fixtures.cc (libbpf's btf__add_*), a few shapes made here,
// and the ELF files the build compiles (BPF objects from tests/bpf with clang-19, user-space objects
// through gcc -g and pahole -J). Seeds that long runs found worth keeping live in fuzz/corpus/TARGET.
//
//   make_seeds OUTDIR STAMP ELF...
//
// OUTDIR gets one directory per target: raw/ (standalone BTF: the fixtures, the loops below and the .BTF
// section of every ELF), split/ (split BTF on the fixtures' base), elf/ (every ELF, and one raw BTF for the
// loader's other path), budget/ (TOML files and measure's JSON of a fixture), core/ and minimize/ (the ELF
// files named *.bpf.o), libbpf/ (raw/ and split/ together), diff/ (pairs of BTF), compressed/ (BTF and an
// object in each format), reach/, core_libbpf/ and kernel/ (fuzz_reach's and fuzz_core_libbpf's templates
// and fuzz_kernel's image, unchanged).
// STAMP lists what was written, for meson to depend on (a directory is not a build output it tracks).
#include "fixtures.h"

#include "btfslim/compression.h"
#include "btfslim/error.h"
#include "btfslim/footprint.h"
#include "btfslim/input.h"
#include "btfslim/report.h"

#include <bpf/btf.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Free {
  void operator()(struct btf* b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<struct btf, Free>;

using btfslim::test::added;
using btfslim::test::raw_bytes;

// Reference loops are legal to encode and each reader must survive them; C cannot express them, so
// these are also what `dump -f c` must refuse: a struct holding itself by value, a typedef/const
// cycle, an array of itself, a function pointer taking itself, and one loop through a pointer that C
// can print.
std::string loops_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));    // 1
  const int self = added(btf__add_struct(t, "self", 8));               // 2
  added(btf__add_field(t, "me", self, 0, 0));
  added(btf__add_typedef(t, "cycle_t", 4));                             // 3 -> 4
  added(btf__add_const(t, 3));                                          // 4 -> 3
  added(btf__add_array(t, i32, 5, 2));                                  // 5: an array of itself
  const int proto = added(btf__add_func_proto(t, i32));                 // 6
  added(btf__add_func_param(t, "fn", 7));
  added(btf__add_ptr(t, proto));                                        // 7: pointer to 6
  const int list = added(btf__add_struct(t, "list", 16));               // 8
  added(btf__add_field(t, "next", 9, 0, 0));
  added(btf__add_field(t, "val", i32, 64, 0));
  added(btf__add_ptr(t, list));                                         // 9
  return raw_bytes(t);
}

// A split BTF on the fixtures' base with a record of most kinds, referring to base types and strings.
std::string split_kinds_btf() {
  const std::string base_raw = btfslim::test::split_btf(false).base;
  BtfPtr base(btf__new(base_raw.data(), static_cast<__u32>(base_raw.size())));
  if (!base) throw std::runtime_error("btf__new of the base failed");
  BtfPtr split(btf__new_empty_split(base.get()));
  struct btf* s = split.get();
  const int i32 = 1, skb = 3;  // the base's int and struct sk_buff
  const int skb_ptr = added(btf__add_ptr(s, skb));
  const int arr = added(btf__add_array(s, i32, i32, 2));
  const int st = added(btf__add_struct(s, "mod_state", 24));
  added(btf__add_field(s, "len", i32, 0, 4));  // "len" is a base string; a bitfield
  added(btf__add_field(s, "skb", skb_ptr, 64, 0));
  added(btf__add_field(s, "v", arr, 128, 0));
  added(btf__add_enum(s, "mod_mode", 4));
  added(btf__add_enum_value(s, "MOD_ON", 1));
  added(btf__add_fwd(s, "sk_buff", BTF_FWD_STRUCT));
  const int cst_ptr = added(btf__add_ptr(s, added(btf__add_const(s, st))));
  const int proto = added(btf__add_func_proto(s, i32));
  added(btf__add_func_param(s, "skb", skb_ptr));
  added(btf__add_func_param(s, "st", cst_ptr));
  const int fn = added(btf__add_func(s, "mod_rx", BTF_FUNC_GLOBAL, proto));
  const int var = added(btf__add_var(s, "mod_count", BTF_VAR_GLOBAL_ALLOCATED, i32));
  added(btf__add_datasec(s, ".data", 4));
  added(btf__add_datasec_var_info(s, var, 0, 4));
  added(btf__add_decl_tag(s, "kfunc", fn, -1));
  added(btf__add_type_tag(s, "rcu", skb));
  added(btf__add_float(s, "double", 8));
  added(btf__add_enum64(s, "mod_big", 8, true));
  added(btf__add_enum64_value(s, "MOD_HUGE", 0x100000000ULL));
  return raw_bytes(s);
}

std::vector<std::string> written;

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f.flush()) throw std::runtime_error("cannot write " + path.string());
  written.push_back(path.string());
}

std::string read(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (!f.good() && !f.eof()) throw std::runtime_error("cannot read " + path.string());
  return bytes;
}

// Budget files with every key, and the baseline they name: `measure --format json` of the footprint
// fixture, as the command writes it.
std::vector<std::pair<std::string, std::string>> budget_seeds() {
  const auto bytes = std::make_shared<std::string>(btfslim::test::footprint_btf(false));
  const auto btf = btfslim::Btf::parse("footprint.btf", bytes,
                                       {reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()});
  const btfslim::Footprint fp(*btf);
  char path[] = "/tmp/make_seeds.XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  {
    btfslim::OutputBuffer out(fd, path);
    btfslim::MeasureOptions o;
    o.format = btfslim::Format::Json;
    btfslim::print_measure(*btf, fp, o, out);
    out.flush();
  }
  ::close(fd);
  const std::string baseline = read(path);
  ::unlink(path);
  return {
      {"baseline.json", baseline},
      {"sizes.toml", R"([[budget]]
name = "vmlinux BTF"
input = "vmlinux"
message = "BTF is loaded on every boot"
total = "5.5 MiB"
kernel_memory = 7340032
kind.FUNC = "1 MiB"
kind.struct = "0.5 GiB"
type."struct task_struct" = "2 KiB"
type.node = "48 B"
type.lonely = "0.033KB"
)"},
      {"growth.toml", R"([[budget]]
name = "no growth"
input = "build/vmlinux"
base = "vmlinux"
baseline = "btf-baseline.json"
max_growth = "1%"
kernel_memory_growth = "20 B"
kind_growth.FUNC = "0.25 %"
kind_growth.DECL_TAG = "1 KB"

[[budget]]
name = 'second'
total = 196
)"},
      {"tables.toml", R"([[budget]]
name = "tables"
[budget.kind]
INT = "20"
FUNC_PROTO = "22 B"
[budget.type]
"struct node" = "47 B"

[[budget]]
name = """multi
line"""
message = "a | b <c> & 'd'"
total = "195 B"
)"},
  };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: make_seeds OUTDIR STAMP ELF...\n");
    return 2;
  }
  try {
    const fs::path out = argv[1];
    fs::remove_all(out);
    for (const char* d :
         {"raw", "split", "elf", "core", "minimize", "budget", "libbpf", "diff", "compressed", "reach", "kernel",
          "core_libbpf"})
      fs::create_directories(out / d);

    using namespace btfslim::test;
    write(out / "raw/all_kinds.btf", all_kinds_btf(false));
    write(out / "raw/all_kinds_be.btf", all_kinds_btf(true));
    write(out / "raw/small.btf", small_btf());
    write(out / "raw/footprint.btf", footprint_btf(false));
    write(out / "raw/footprint_tag.btf", footprint_btf(true));
    write(out / "raw/loops.btf", loops_btf());
    write(out / "raw/split_base.btf", split_btf(false).base);
    write(out / "raw/split_base_be.btf", split_btf(true).base);
    write(out / "split/split.btf", split_btf(false).split);
    write(out / "split/split_be.btf", split_btf(true).split);
    write(out / "split/split_kinds.btf", split_kinds_btf());
    write(out / "elf/small.btf", small_btf());
    for (const auto& [name, text] : budget_seeds()) write(out / "budget" / name, text);

    // diff: two BTFs after the 4-byte length of the first.
    const std::pair<std::string, std::string> pairs[] = {
        {footprint_btf(false), footprint_btf(true)},
        {all_kinds_btf(false), small_btf()},
        {split_btf(false).base, loops_btf()},
        {all_kinds_btf(true), all_kinds_btf(false)},
    };
    for (std::size_t i = 0; i < std::size(pairs); ++i) {
      const auto n = static_cast<std::uint32_t>(pairs[i].first.size());
      const std::string cut{static_cast<char>(n), static_cast<char>(n >> 8), static_cast<char>(n >> 16),
                            static_cast<char>(n >> 24)};
      write(out / "diff" / ("pair" + std::to_string(i)), cut + pairs[i].first + pairs[i].second);
    }
    // compressed: BTF and a BPF object in each format.
    for (const auto c : {btfslim::Compression::Gzip, btfslim::Compression::Xz, btfslim::Compression::Zstd}) {
      const std::string suffix(btfslim::compression_suffix(c));
      write(out / "compressed" / ("all_kinds.btf" + suffix), btfslim::compress(all_kinds_btf(false), c));
      write(out / "compressed" / ("split_base_be.btf" + suffix), btfslim::compress(split_btf(true).base, c));
    }

    // kernel: which file (0 the image, 1 the module), then a mask of zeros over its regions: the file itself.
    write(out / "kernel" / "image", std::string(4096, '\0'));
    write(out / "kernel" / "module", '\1' + std::string(8192, '\0'));

    int bpf_objects = 0;
    for (int i = 3; i < argc; ++i) {
      const fs::path elf = argv[i];
      const std::string name = elf.filename().string();
      const std::string bytes = read(elf);
      write(out / "elf" / name, bytes);
      if (name.ends_with(".bpf.o")) {
        write(out / "core" / name, bytes);
        write(out / "minimize" / name, bytes);
        // reach: the object's index among the .bpf.o files (fuzz_reach's templates are in this order), and
        // a mask of zeros as long as the object: the object itself, which mutations then change.
        // core_libbpf mutates the same templates (other regions of them): the same seeds, and each again
        // with the first byte's top bit set, which picks its other target (the running kernel).
        const std::string itself = std::string(1, static_cast<char>(bpf_objects++)) + std::string(bytes.size(), '\0');
        write(out / "reach" / name, itself);
        write(out / "core_libbpf" / name, itself);
        write(out / "core_libbpf" / (name + ".kernel"), static_cast<char>(itself[0] | 0x80) + itself.substr(1));
        if (name == "minimal.bpf.o") write(out / "compressed" / (name + ".xz"), btfslim::compress(bytes, btfslim::Compression::Xz));
      }
      // The .BTF section as a raw seed: BTF as compilers and pahole write it.
      const auto btf = btfslim::load_btf_file(elf.string(), nullptr);
      const auto raw = btf->raw();
      write(out / "raw" / (name + ".btf"), std::string(reinterpret_cast<const char*>(raw.data()), raw.size()));
    }

    // The differential target reads BTF both ways: every raw and split seed.
    for (const char* d : {"raw", "split"})
      for (const auto& f : fs::directory_iterator(out / d))
        write(out / "libbpf" / (std::string(d) + "_" + f.path().filename().string()), read(f.path()));

    std::string list;
    for (const auto& w : written) list += w + "\n";
    std::ofstream stamp(argv[2], std::ios::binary | std::ios::trunc);
    stamp << list;
    if (!stamp.flush()) throw std::runtime_error(std::string("cannot write ") + argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
