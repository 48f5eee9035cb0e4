// Every form of input btfslim accepts loads, and loads as what it is: raw BTF (from a file or a pipe),
// an ELF file's .BTF (pahole, clang), split BTF with --base, big-endian BTF, the running kernel by
// shorthand or by default, a module under /sys/kernel/btf, and a .ko whose BTF is split on the running
// kernel without being told so.
//
// The oracle is bpftool's raw dump of the same input; big-endian input is held to its little-endian
// twin's dump.
#include "fixtures.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace btfslim::test {
namespace {

using nlohmann::json;

// Runs btfslim in `dir`, so that relative names (and the shorthand) resolve there.
RunResult btfslim_in(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", dir, btfslim_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

std::size_t type_count(const std::string& raw_dump) {
  std::size_t n = 0;
  std::istringstream in(raw_dump);
  for (std::string line; std::getline(in, line);) n += line.rfind('[', 0) == 0;
  return n;
}

// Loads `args` both ways btfslim reads: dump (compared with bpftool's) and measure (counting the same).
void check_loads_like_bpftool(const std::vector<std::string>& args, const std::vector<std::string>& bpftool_args) {
  std::vector<std::string> b{"btf", "dump", "file"};
  b.insert(b.end(), bpftool_args.begin(), bpftool_args.end());
  const std::string expected = bpftool(b);
  REQUIRE(type_count(expected) > 0);
  std::vector<std::string> dump{"dump"}, measure{"measure", "--format", "json"};
  dump.insert(dump.end(), args.begin(), args.end());
  measure.insert(measure.end(), args.begin(), args.end());
  CHECK(first_difference(ours(dump), expected) == "");
  CHECK(json::parse(ours(measure)).at("type_count") == type_count(expected));
}

}  // namespace

TEST_CASE("raw BTF loads from a file and from a pipe", "[inputs]") {
  const TempDir dir;
  write_file(dir.file("all_kinds.btf"), all_kinds_btf());
  check_loads_like_bpftool({dir.file("all_kinds.btf")}, {dir.file("all_kinds.btf")});

  // A FIFO cannot be mapped: it is read as a stream.
  REQUIRE(mkfifo(dir.file("pipe").c_str(), 0600) == 0);
  const RunResult r = run({"sh", "-c", "cat \"$1\" > \"$2\" & exec \"$3\" dump \"$2\"", "sh", dir.file("all_kinds.btf"),
                           dir.file("pipe"), btfslim_path()});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(first_difference(r.out, bpftool({"btf", "dump", "file", dir.file("all_kinds.btf")})) == "");
}

TEST_CASE("an ELF file's .BTF loads: pahole's and clang's", "[inputs]") {
  for (const std::string& file : {build_data_dir() + "/pahole_types.o", build_data_dir() + "/minimal.bpf.o"}) {
    INFO(file);
    check_loads_like_bpftool({file}, {file});
  }
}

TEST_CASE("split BTF loads on the base given with --base or -B", "[inputs]") {
  const TempDir dir;
  const SplitPair pair = split_btf(false);
  write_file(dir.file("base.btf"), pair.base);
  write_file(dir.file("split.btf"), pair.split);
  check_loads_like_bpftool({dir.file("split.btf"), "--base", dir.file("base.btf")},
                           {dir.file("split.btf"), "--base-btf", dir.file("base.btf")});
  check_loads_like_bpftool({"-B", dir.file("base.btf"), dir.file("split.btf")},
                           {dir.file("split.btf"), "--base-btf", dir.file("base.btf")});
}

TEST_CASE("big-endian BTF dumps as its little-endian twin", "[inputs]") {
  const TempDir dir;
  write_file(dir.file("le.btf"), all_kinds_btf(false));
  write_file(dir.file("be.btf"), all_kinds_btf(true));
  REQUIRE(read_file(dir.file("le.btf")) != read_file(dir.file("be.btf")));
  const std::string le = ours({"dump", dir.file("le.btf")});
  CHECK(first_difference(ours({"dump", dir.file("be.btf")}), le) == "");
  CHECK(first_difference(ours({"dump", "--format", "json", dir.file("be.btf")}),
                         ours({"dump", "--format", "json", dir.file("le.btf")})) == "");
  CHECK(json::parse(ours({"measure", "--format", "json", dir.file("be.btf")})).at("byte_order") == "big");

  // Split BTF on a base, both big-endian.
  const SplitPair le_pair = split_btf(false), be_pair = split_btf(true);
  write_file(dir.file("le_base.btf"), le_pair.base);
  write_file(dir.file("le_split.btf"), le_pair.split);
  write_file(dir.file("be_base.btf"), be_pair.base);
  write_file(dir.file("be_split.btf"), be_pair.split);
  CHECK(first_difference(ours({"dump", dir.file("be_split.btf"), "--base", dir.file("be_base.btf")}),
                         ours({"dump", dir.file("le_split.btf"), "--base", dir.file("le_base.btf")})) == "");
}

TEST_CASE("the shorthand vmlinux and no input at all mean the running kernel", "[inputs]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const std::string expected = bpftool({"btf", "dump", "file", vmlinux});
  const TempDir dir;

  RunResult r = btfslim_in(dir.path(), {"dump", "vmlinux"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(first_difference(r.out, expected) == "");
  // The shorthand says what it read: in CI, a vmlinux a failed build never wrote is not the host's.
  CHECK(r.err == "btfslim: note: no file 'vmlinux' here: reading the running kernel's " + vmlinux + "\n");

  r = btfslim_in(dir.path(), {"dump"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(first_difference(r.out, expected) == "");
  CHECK(r.err.empty());  // nothing given: the documented default, no note
  r = btfslim_in(dir.path(), {"measure", "--format", "json"});
  REQUIRE(r.status == 0);
  CHECK(json::parse(r.out).at("file") == vmlinux);

  // --strict-input: every command refuses each shorthand for the running kernel, in one line, and writes
  // nothing; a path to it is a file like any other.
  const std::string object = test_object("core_fields");
  const std::string out = dir.file("out.btf");
  struct Refused {
    std::vector<std::string> args;
    std::string line;
  };
  for (const Refused& c : std::vector<Refused>{
           {{"dump", "--strict-input", "vmlinux"}, "btfslim: vmlinux: no such file here (--strict-input takes files only)\n"},
           {{"measure", "vmlinux", "--strict-input"}, "btfslim: vmlinux: no such file here (--strict-input takes files only)\n"},
           {{"dump", "--strict-input"},
            "btfslim: input: none given, which means the running kernel's BTF (--strict-input takes files only)\n"},
           {{"check", "--strict-input", object},
            "btfslim: --btf: none given, which means the running kernel's BTF (--strict-input takes files only)\n"},
           {{"minimize", "--strict-input", "-o", out, object},
            "btfslim: --btf: none given, which means the running kernel's BTF (--strict-input takes files only)\n"},
           {{"minimize", "--strict-input", "--btf", "vmlinux", "-o", out, object},
            "btfslim: vmlinux: no such file here (--strict-input takes files only)\n"},
           {{"diff", "--strict-input", "vmlinux", vmlinux}, "btfslim: vmlinux: no such file here (--strict-input takes files only)\n"},
       }) {
    r = btfslim_in(dir.path(), c.args);
    INFO(c.args[0] << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == c.line);
    CHECK(!std::filesystem::exists(out));
  }
  r = btfslim_in(dir.path(), {"measure", "--strict-input", "--by", "kind", vmlinux});
  CHECK(r.status == 0);
  CHECK(r.err.empty());

  // A file called vmlinux here is that file, not the running kernel, strict or not, and needs no note.
  write_file(dir.file("vmlinux"), all_kinds_btf());
  for (const bool strict : {false, true}) {
    r = btfslim_in(dir.path(), strict ? std::vector<std::string>{"dump", "--strict-input", "vmlinux"}
                                      : std::vector<std::string>{"dump", "vmlinux"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(first_difference(r.out, bpftool({"btf", "dump", "file", dir.file("vmlinux")})) == "");
  }
}

TEST_CASE("a module name loads /sys/kernel/btf/NAME on the running vmlinux", "[inputs]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  {
    // A name that is neither a file here nor a loaded module: one line that says both.
    const TempDir empty;
    const RunResult r = btfslim_in(empty.path(), {"dump", "btfslim_no_such_module"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err ==
          "btfslim: btfslim_no_such_module: cannot open: no such file here, and no module of that name in "
          "/sys/kernel/btf (is it loaded?)\n");
  }
  std::string module;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/kernel/btf"))
    if (entry.path().filename() != "vmlinux") module = entry.path().filename().string();
  if (module.empty()) return skip("the running kernel has no module BTF under /sys/kernel/btf");
  INFO("module " << module);
  const std::string path = "/sys/kernel/btf/" + module;
  const std::string expected = bpftool({"--base-btf", vmlinux, "btf", "dump", "file", path});
  const TempDir dir;  // nothing called `module` here
  const RunResult r = btfslim_in(dir.path(), {"dump", module});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(first_difference(r.out, expected) == "");
  check_loads_like_bpftool({path}, {path, "--base-btf", vmlinux});
}

TEST_CASE("a .ko loads on the running vmlinux without --base", "[inputs]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const TempDir dir;
  const std::string ko = build_module(dir, vmlinux, ".modinfo");
  const std::string expected = bpftool({"--base-btf", vmlinux, "btf", "dump", "file", ko});
  REQUIRE(expected.find("STRUCT 'nf_demo_conn'") != std::string::npos);
  check_loads_like_bpftool({ko}, {ko, "--base-btf", vmlinux});

  // Its ids continue the kernel's, and measure says what it is split on.
  const std::size_t kernel_types = type_count(bpftool({"btf", "dump", "file", vmlinux}));
  std::string first_line = "[";  // built in steps: GCC 12 warns falsely on "[" + std::string (-Wrestrict)
  first_line += std::to_string(kernel_types + 1) + "] ";
  CHECK(expected.rfind(first_line, 0) == 0);
  const json m = json::parse(ours({"measure", "--format", "json", ko}));
  CHECK(m.at("split") == true);
  CHECK(m.at("base") == vmlinux);

  // The other section that marks a module.
  const std::string linkonce = build_module(dir, vmlinux, ".gnu.linkonce.this_module");
  CHECK(first_difference(ours({"dump", linkonce}), expected) == "");

  // Without a module section the split BTF needs --base; with it, it loads the same.
  const std::string object = build_module(dir, vmlinux, "");
  const RunResult r = btfslim({"dump", object});
  CHECK(r.status == 2);
  CHECK(r.err.rfind("btfslim: " + object + ": ", 0) == 0);
  CHECK(r.err.find("--base") != std::string::npos);
  CHECK(first_difference(ours({"dump", object, "--base", vmlinux}), expected) == "");
}

}  // namespace btfslim::test

namespace btfslim::test {
namespace {

// Bad input: exit 2, nothing on stdout, one line on stderr naming `file`, saying `why`.
void check_refused(const std::vector<std::string>& args, const std::string& file, const std::string& why) {
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("btfslim: " + file + ": ", 0) == 0);
  CHECK(r.err.find(why) != std::string::npos);
}

// A BPF object compiled from tests/bpf/NAME.bpf.c for `target` (bpf, bpfeb) into `dir`.
std::string compile_object(const TempDir& dir, const std::string& name, const std::string& target) {
  REQUIRE(have("clang-19"));
  // <linux/types.h> includes <asm/types.h>, under the multiarch include directory (as tests/meson.build says).
  const std::string multiarch = words_of(run({c_compiler(), "-print-multiarch"}).out).at(0);
  const std::string out = dir.file(name + "." + target + ".o");
  const RunResult r = run({"clang-19", "-target", target, "-g", "-O2", "-I/usr/include/" + multiarch, "-c",
                           source_data_dir() + "/bpf/" + name + ".bpf.c", "-o", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  return out;
}

}  // namespace

TEST_CASE("inputs that do not belong together are refused, naming the file and why", "[inputs]") {
  const TempDir dir;
  const std::string moved = core_target("moved");
  SECTION("a kernel module is not a BPF object") {
    const std::string vmlinux = running_vmlinux();
    if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
    const std::string ko = build_module(dir, vmlinux, ".modinfo");
    check_refused({"check", ko, "-B", vmlinux}, ko, "is a kernel module, not a BPF object");
    check_refused({"check", ko, "--btf", vmlinux}, ko, "is a kernel module, not a BPF object");
    check_refused({"minimize", "--btf", vmlinux, "-o", dir.file("out.btf"), ko}, ko, "is a kernel module");
    CHECK_FALSE(std::filesystem::exists(dir.file("out.btf")));
  }
  SECTION("an x86 object with .BTF is not a BPF object: e_machine must be EM_BPF") {
    const std::string x86 = build_data_dir() + "/pahole_types.o";  // gcc -g, then pahole -J
    check_refused({"check", x86, "--btf", moved}, x86, "is an ELF file for x86-64 (EM_X86_64), not a BPF object");
    check_refused({"minimize", "--btf", moved, "-o", dir.file("out.btf"), x86}, x86, "EM_BPF");
  }
  SECTION("a big-endian object on a little-endian kernel: byte order is the reason") {
    const std::string big = compile_object(dir, "core_fields", "bpfeb");
    check_refused({"check", big, "--btf", moved}, big, "byte order: a big-endian BPF object, and ");
    check_refused({"minimize", "--btf", moved, "-o", dir.file("out.btf"), test_object("core_fields"), big}, big,
                  "byte order: a big-endian BPF object, and " + moved + " is little-endian");
    CHECK_FALSE(std::filesystem::exists(dir.file("out.btf")));
    check_refused({"check", test_object("core_fields"), big, "--btf", moved, "--btf", core_target("missing")}, big,
                  "is little-endian: libbpf loads an object only on a kernel of its byte order");
    // Its little-endian twin checks.
    const std::string little = compile_object(dir, "core_fields", "bpfel");
    CHECK(btfslim({"check", little, "--btf", moved}).status != 2);
  }
  SECTION("a BPF object given as a kernel is noted") {
    const RunResult r = btfslim({"check", test_object("core_fields"), "--btf", test_object("core_guarded")});
    INFO(r.err);
    CHECK(r.status != 2);
    CHECK(r.err == "btfslim: note: " + test_object("core_guarded") +
                       " is a BPF object, not a kernel: its BTF holds only that object's types\n");
    const RunResult m = btfslim({"minimize", "--btf", test_object("core_guarded"), "-o", dir.file("m.btf"),
                                 test_object("core_fields")});
    CHECK(m.status == 0);
    CHECK(m.err.find("btfslim: note: " + test_object("core_guarded") + " is a BPF object, not a kernel") !=
          std::string::npos);
    // minimize's BTF-only ELF is made to be a kernel's BTF (libbpf's btf_custom_path): no note.
    REQUIRE(btfslim({"minimize", "--btf", moved, "--elf", "-o", dir.file("slim.o"), test_object("core_fields")}).status == 0);
    const RunResult slim = btfslim({"check", test_object("core_fields"), "--btf", dir.file("slim.o")});
    CHECK(slim.err.empty());
  }
  SECTION("a whole kernel is not split BTF: a base for it is refused, not read as split on it") {
    std::string why;
    const auto k = other_kernel(why);
    if (!k) return skip(why);
    check_refused({"dump", "-B", k->vmlinux, k->vmlinux}, k->vmlinux, "is a whole kernel's BTF (vmlinux), not split BTF");
    check_refused({"check", test_object("module_nat"), "--btf", k->vmlinux, "-B", k->vmlinux}, "--base",
                  "no --btf target is split BTF: " + k->vmlinux + " is a whole kernel's");
    // Among module targets, a whole kernel is read as itself, and the module on the base.
    const RunResult both = btfslim({"check", test_object("module_nat"), "--btf", k->vmlinux, "--btf",
                                    k->module("net/netfilter/nf_nat.ko"), "-B", k->vmlinux, "-f", "json"});
    INFO(both.err);
    CHECK(both.status == 1);
    CHECK(count_of(both.out, "\"status\":\"missing\"") == 1);  // nf_nat_packet, on vmlinux alone
    CHECK(count_of(both.out, "\"status\":\"ok\"") >= 2);       // on vmlinux + nf_nat: the attach, the read
  }
}

}  // namespace btfslim::test
