// The kernel boot test ([kernel-boot]): a vmlinux whose .BTF `btfslim minimize --kernel` replaced (and
// whose .BTF_ids it renumbered) must still be a kernel that boots and loads the BPF programs it was
// minimized for, as the original does. Only a boot shows that: the kernel checks its own BTF at boot,
// resolves kfunc sets, LSM hooks and the verifier's own type ids through .BTF_ids, looks up by name what
// its sources and its own data name (struct_ops stubs, since 6.9), and types every attach target and
// every pointer a program walks from its BTF.
//
// Two kernels, each with its symbol table (scripts/fetch-test-kernel.sh): Debian's 6.1 and 6.12 cloud
// kernels, booted under qemu without KVM (boot/boot.sh) with an initramfs of busybox and a static libbpf
// loader (boot/make-initramfs.sh, boot/loader.c) that loads each object (open + load, nothing attached)
// and prints one line per object, the sha256 of /sys/kernel/btf/vmlinux and the kernel's BPF/BTF
// messages. The objects are the test programs
// (boot/progs, one per kind of use of kernel BTF so that a failure does not hide another's result),
// compiled here for each kernel on a vmlinux.h that btfslim writes from it, and the shared corpus's
// little-endian objects (real projects' builds, corpus_dir(): MANIFEST.tsv) as
// they are. The profile is every object but outside.bpf.o, which attaches where none of the others does.
//
// The original kernel must load every test program (a corpus object loads or fails as it may). A kernel
// minimized for the profile must load the same profile objects (and fail the same way on any the original
// fails), fail outside.bpf.o, expose the new .BTF exactly, log nothing about BPF or BTF that the original
// does not, and still be read by bpftool. The modules case runs on 6.1
// only: 6.12's modules are .ko.xz, which --modules does not read yet. Each boot takes 10 to 20 s under
// TCG, the corpus's loads included.
#include "process.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOutside = "outside.bpf.o";
// Each boot is killed after this; a boot with every object takes about 10 s here.
constexpr const char* kBootTimeoutSeconds = "90";

// What the guest printed between its markers.
struct Guest {
  std::string release;
  std::map<std::string, std::string> loads;  // object -> "ok", or "fail ERRNO why"
  std::string btf;                           // "SIZE SHA256", or "none"
  std::set<std::string> dmesg;
  std::map<std::string, std::string> insmods;  // module -> "ok", or "fail why"
  std::set<std::string> module_btf;            // modules under /sys/kernel/btf
  double seconds = 0;
  std::string log;
};

// The last `n` lines of `text`.
std::string tail_lines(const std::string& text, size_t n) {
  size_t pos = text.size();
  while (n-- > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos);
}

Guest parse_console(const std::string& console) {
  Guest g;
  std::string text;
  std::copy_if(console.begin(), console.end(), std::back_inserter(text), [](char c) { return c != '\r'; });
  g.log = text;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    // The start marker may follow the firmware's last words on the same line.
    if (const size_t start = line.find("BTFSLIM-BOOT START "); start != std::string::npos) {
      inside = true;
      g.release = line.substr(start + std::string("BTFSLIM-BOOT START ").size());
      continue;
    }
    if (!inside) continue;
    if (line == "BTFSLIM-BOOT END") break;
    if (line.rfind("LOAD ", 0) == 0) {
      const size_t space = line.find(' ', 5);
      g.loads[line.substr(5, space - 5)] = space == std::string::npos ? "" : line.substr(space + 1);
    } else if (line.rfind("BTF ", 0) == 0) {
      g.btf = line.substr(4);
    } else if (line.rfind("INSMOD ", 0) == 0) {
      const size_t space = line.find(' ', 7);
      g.insmods[line.substr(7, space - 7)] = space == std::string::npos ? "" : line.substr(space + 1);
    } else if (line.rfind("MODBTF ", 0) == 0) {
      g.module_btf.insert(line.substr(7, line.find(' ', 7) - 7));
    } else if (line.rfind("DMESG ", 0) == 0) {
      g.dmesg.insert(line.substr(6));
    }
  }
  return g;
}

// Boots `vmlinux` with `initrd`; the guest's report, or a failed REQUIRE with the console's last lines.
Guest boot(const std::string& vmlinux, const std::string& initrd, const std::string& log) {
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = run({"env", std::string("BOOT_TIMEOUT=") + kBootTimeoutSeconds, "sh",
                           source_data_dir() + "/boot/boot.sh", vmlinux, initrd, log});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string console;
  if (fs::exists(log)) console = read_file(log);
  INFO("boot.sh " << vmlinux << ": exit " << r.status << ", " << seconds << " s\n"
                  << r.err << "console, last lines:\n" << tail_lines(console, 25));
  REQUIRE(r.status == 0);
  Guest g = parse_console(console);
  g.seconds = seconds;
  std::printf("btfslim-test: kernel-boot: %s booted and loaded %zu objects in %.1f s\n", vmlinux.c_str(),
              g.loads.size(), seconds);
  return g;
}

// "SIZE SHA256" of a file, as the guest prints it for /sys/kernel/btf/vmlinux.
std::string size_and_sha256(const std::string& path) {
  const RunResult r = run({"sha256sum", path});
  REQUIRE(r.status == 0);
  return std::to_string(fs::file_size(path)) + " " + r.out.substr(0, r.out.find(' '));
}

// The .BTF section of an ELF file, as the kernel exposes it (the whole section, padding included).
std::string btf_section(const std::string& elf, const std::string& out) {
  const RunResult r = run({"objcopy", "-O", "binary", "--only-section=.BTF", elf, out});
  INFO("objcopy " << elf << ": " << r.err);
  REQUIRE(r.status == 0);
  REQUIRE(fs::file_size(out) > 0);
  return out;
}

// Type ids differ between a kernel and its minimized self; a reason that names one ("func_proto [12]
// incompatible with kernel [4567]") names it in brackets.
std::string without_type_ids(const std::string& why) {
  static const std::regex id(R"(\[[0-9]+\])");
  return std::regex_replace(why, id, "[ID]");
}

// Everything a kernel's test cases share, made once: the objects, the initramfs, and the original's boot.
struct Prepared {
  TempDir dir;
  std::string series;  // "6.1", "6.12"
  std::string vmlinux;
  std::vector<std::string> profile;  // object paths: the test programs (sorted), then the corpus's
  std::vector<std::string> corpus;   // the corpus's of them
  std::string outside;
  std::string initrd;
  std::string arch_include;  // -I for <asm/types.h>
  Guest original;
};

// The shared corpus's little-endian objects (MANIFEST.tsv: file, ..., endianness), copied into `dir` under
// names that say their project (the loader prints base names); none where there is no corpus.
std::vector<std::string> corpus_objects(const std::string& dir) {
  std::vector<std::string> out;
  for (const CorpusEntry& e : corpus_manifest()) {
    if (!e.little_endian) continue;
    const fs::path file(e.file);
    const std::string copy = dir + "/corpus-" + file.parent_path().string() + "-" + file.filename().string();
    fs::copy_file(e.path, copy, fs::copy_options::overwrite_existing);
    out.push_back(copy);
  }
  return out;
}

// Compiles a test program for the prepared kernel (on its vmlinux.h, in p.dir) into `dir`.
std::string compile(const Prepared& p, const fs::path& source, const std::string& dir) {
  const std::string object = dir + "/" + source.stem().string() + ".o";  // x.bpf.c -> x.bpf.o
  const RunResult cc = run({"clang-19", "-target", "bpf", "-g", "-O2", "-Wall", "-D__TARGET_ARCH_x86",
                            "-I" + p.dir.path(), p.arch_include, "-c", source.string(), "-o", object});
  INFO("clang-19 " << source << ":\n" << cc.err);
  REQUIRE(cc.status == 0);
  return object;
}

// Why this machine cannot run the test on kernel `series`, or "".
std::string unavailable_reason(const std::string& series, std::string& vmlinux) {
  for (const char* program : {"qemu-system-x86_64", "busybox", "cpio", "clang-19", "bpftool", "objcopy", "sha256sum"})
    if (!have(program)) return std::string("no ") + program + " (scripts/setup.sh installs it)";
  if (!fs::exists(build_data_dir() + "/boot-loader"))
    return "no " + build_data_dir() + "/boot-loader (the static loader is built only where libbpf.a, libelf.a and libz.a are)";
  std::string why;
  vmlinux = kernel_with_symbols(series, why);
  return vmlinux.empty() ? why : "";
}

std::unique_ptr<Prepared> prepare(const std::string& series, const std::string& vmlinux) {
  auto p = std::make_unique<Prepared>();
  p->series = series;
  p->vmlinux = vmlinux;

  // The programs are for the kernel booted, whatever this machine runs: its vmlinux.h, from its BTF.
  const RunResult header = btfslim({"dump", "--format", "c", vmlinux});
  INFO("btfslim dump --format c " << vmlinux << ": " << header.err);
  REQUIRE(header.status == 0);
  write_file(p->dir.file("vmlinux.h"), header.out);
  // <linux/bpf.h> (the programs without vmlinux.h) includes <asm/types.h>, under the multiarch directory.
  const RunResult multiarch = run({"cc", "-print-multiarch"});
  REQUIRE(multiarch.status == 0);
  p->arch_include = "-I/usr/include/" + multiarch.out.substr(0, multiarch.out.find('\n'));

  std::vector<fs::path> sources;
  for (const auto& entry : fs::directory_iterator(source_data_dir() + "/boot/progs"))
    if (entry.path().string().ends_with(".bpf.c")) sources.push_back(entry.path());
  std::sort(sources.begin(), sources.end());
  REQUIRE(!sources.empty());
  std::vector<std::string> objects;
  for (const fs::path& source : sources) {
    const std::string object = compile(*p, source, p->dir.path());
    objects.push_back(object);
    if (source.stem().string() + ".o" == kOutside)
      p->outside = object;
    else
      p->profile.push_back(object);
  }
  REQUIRE(!p->outside.empty());
  p->corpus = corpus_objects(p->dir.path());
  p->profile.insert(p->profile.end(), p->corpus.begin(), p->corpus.end());
  objects.insert(objects.end(), p->corpus.begin(), p->corpus.end());

  p->initrd = p->dir.file("initrd.cpio");
  std::vector<std::string> make{"sh", source_data_dir() + "/boot/make-initramfs.sh", p->initrd,
                                build_data_dir() + "/boot-loader"};
  make.insert(make.end(), objects.begin(), objects.end());
  const RunResult initramfs = run(make);
  INFO("make-initramfs.sh: " << initramfs.err);
  REQUIRE(initramfs.status == 0);

  p->original = boot(vmlinux, p->initrd, p->dir.file("original.log"));
  return p;
}

// A kernel's shared set-up, or nullptr after a visible skip.
const Prepared* prepared(const std::string& series) {
  static std::map<std::string, std::unique_ptr<Prepared>> done;
  static std::map<std::string, std::string> skipped;
  if (const auto it = done.find(series); it != done.end() && it->second) return it->second.get();
  if (skipped.count(series)) {
    skip(skipped[series]);
    return nullptr;
  }
  std::string vmlinux;
  if (std::string why = unavailable_reason(series, vmlinux); !why.empty()) {
    skipped[series] = why;
    skip(why);
    return nullptr;
  }
  done[series] = prepare(series, vmlinux);  // a failed REQUIRE leaves it null: the next case tries again, and fails too
  return done[series].get();
}

std::string name_of(const std::string& path) { return fs::path(path).filename().string(); }

bool in(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

void original_boots(const std::string& series) {
  const Prepared* p = prepared(series);
  if (!p) return;
  const Guest& g = p->original;
  INFO("console:\n" << g.log);
  CHECK(g.release.rfind(series + ".", 0) == 0);
  std::vector<std::string> all = p->profile;
  all.push_back(p->outside);
  CHECK(g.loads.size() == all.size());
  std::size_t corpus_ok = 0;
  for (const std::string& object : all) {
    INFO(name_of(object));
    CHECK(g.loads.count(name_of(object)) == 1);
    if (!g.loads.count(name_of(object))) continue;
    if (in(p->corpus, object)) {
      corpus_ok += g.loads.at(name_of(object)) == "ok";
      std::printf("btfslim-test: kernel-boot: Linux %s: %s %s\n", series.c_str(), name_of(object).c_str(),
                  g.loads.at(name_of(object)).substr(0, 160).c_str());
    } else
      CHECK(g.loads.at(name_of(object)) == "ok");  // the test programs are written to load
  }
  std::printf("btfslim-test: kernel-boot: Linux %s loads %zu of the corpus's %zu objects\n", series.c_str(), corpus_ok,
              p->corpus.size());
  // The kernel exposes its .BTF as it is in the file.
  CHECK(g.btf == size_and_sha256(btf_section(p->vmlinux, p->dir.file("original.btf"))));
}

void slim_boots(const std::string& series) {
  const Prepared* p = prepared(series);
  if (!p) return;
  TempDir dir;
  const std::string slim = dir.file("vmlinux-slim");

  // The interface: the kernel to rewrite, the output, the objects it must keep loading.
  std::vector<std::string> args{"minimize", "--kernel", p->vmlinux, "-o", slim};
  args.insert(args.end(), p->profile.begin(), p->profile.end());
  const RunResult minimize = btfslim(args);
  INFO("btfslim minimize --kernel: exit " << minimize.status << "\nstdout: " << minimize.out << "\nstderr: "
                                          << minimize.err);
  REQUIRE(minimize.status == 0);
  REQUIRE(fs::exists(slim));
  // The report's size rows and what it keeps for the kernel's lookups, for the test log.
  std::istringstream report(minimize.out);
  for (std::string line; std::getline(report, line);)
    if (line.find("slim, relinked") != std::string::npos || line.find("looked up by name") != std::string::npos ||
        line.find("names its image") != std::string::npos)
      std::printf("btfslim-test: kernel-boot: Linux %s: %s\n", series.c_str(), line.c_str());

  // Every object, the outside one too, on the minimized kernel.
  const Guest g = boot(slim, p->initrd, dir.file("slim.log"));
  const Guest& original = p->original;
  INFO("console of the minimized kernel:\n" << g.log);
  CHECK(g.release == original.release);

  // The profile loads as on the original; a failure fails the same way (type ids aside).
  for (const std::string& object : p->profile) {
    const std::string name = name_of(object);
    INFO(name);
    REQUIRE(original.loads.count(name) == 1);
    REQUIRE(g.loads.count(name) == 1);
    CHECK(without_type_ids(g.loads.at(name)) == without_type_ids(original.loads.at(name)));
  }
  // What the profile does not need is gone: the outside object's attach target.
  REQUIRE(g.loads.count(kOutside) == 1);
  CHECK(g.loads.at(kOutside).rfind("fail ", 0) == 0);
  CHECK(g.loads.at(kOutside).find("vfs_fsync_range") != std::string::npos);

  // The kernel exposes exactly the new .BTF (with its padding), and complains of nothing new.
  CHECK(g.btf == size_and_sha256(btf_section(slim, dir.file("slim.btf"))));
  CHECK(g.btf != original.btf);
  for (const std::string& line : g.dmesg) {
    INFO("a kernel message only the minimized kernel logs: " << line);
    CHECK(original.dmesg.count(line) == 1);
  }

  // bpftool reads it.
  const RunResult bpftool = run({"bpftool", "btf", "dump", "file", slim});
  INFO("bpftool btf dump file " << slim << ": " << bpftool.err);
  CHECK(bpftool.status == 0);
  CHECK(!bpftool.out.empty());
}

TEST_CASE("the original 6.1 kernel boots under qemu and loads every test program", "[kernel-boot]") {
  original_boots("6.1");
}

TEST_CASE("a 6.1 kernel minimized for the profile boots and loads what the original loads, and no more",
          "[kernel-boot]") {
  slim_boots("6.1");
}

TEST_CASE("the original 6.12 kernel boots under qemu and loads every test program", "[kernel-boot]") {
  original_boots("6.12");
}

// 6.12 looks up each struct_ops' stub functions by name at boot: without them the slim kernel printed
// "Cannot find the stub function bpf_tcp_ca_ssthresh in btf" and struct_ops.bpf.o failed with -524.
TEST_CASE("a 6.12 kernel minimized for the profile boots and loads what the original loads, and no more",
          "[kernel-boot]") {
  slim_boots("6.12");
}

// The modules of each kernel's tree, rewritten by minimize --kernel --modules for the slim image: 6.1's
// are .ko, 6.12's .ko.xz as Debian ships them, written back as xz and handed to the kernel's own
// decompressor (the loader's finit_module). nf_conntrack, nf_nat and what they need, loaded in order, then
// programs on a function of each: nf_ct_delete (compiled for the kernel) and nf_nat_packet (module_nat,
// which reads its connection's status through the module's BTF; in the profile, as its tool would be).
void modules_boot(const std::string& series) {
  const Prepared* p = prepared(series);
  if (!p) return;
  std::string why;
  const auto kernel = test_kernel(series, why);
  if (!kernel) return skip(why);
  const std::string suffix = series == "6.1" ? ".ko" : ".ko.xz";
  TempDir dir;
  const std::string out = dir.file("slim");
  const std::string nat = test_object("module_nat");
  std::vector<std::string> args{"minimize", "--kernel", p->vmlinux, "--modules", kernel->modules, "-o", out, nat};
  args.insert(args.end(), p->profile.begin(), p->profile.end());
  const RunResult minimize = btfslim(args);
  INFO("btfslim minimize --kernel --modules: exit " << minimize.status << "\nstdout: " << minimize.out
                                                    << "\nstderr: " << minimize.err);
  REQUIRE(minimize.status == 0);
  CHECK(minimize.out.find("attach 'nf_nat_packet' is module nf_nat's") != std::string::npos);

  std::vector<std::string> modules;
  for (const char* m : {"lib/libcrc32c", "net/ipv4/netfilter/nf_defrag_ipv4", "net/ipv6/netfilter/nf_defrag_ipv6",
                        "net/netfilter/nf_conntrack", "net/netfilter/nf_nat"})
    modules.push_back(m + suffix);
  const std::string program = compile(*p, source_data_dir() + "/boot/modprogs/fentry_module.bpf.c", dir.path());
  auto guest = [&](const std::string& vmlinux, const std::string& tree, const std::string& name) {
    std::vector<std::string> make{"sh", source_data_dir() + "/boot/make-initramfs.sh"};
    for (const std::string& m : modules) {
      make.push_back("-m");
      make.push_back(tree + "/kernel/" + m);
    }
    const std::string initrd = dir.file(name + ".cpio");
    make.insert(make.end(), {initrd, build_data_dir() + "/boot-loader", program, nat});
    const RunResult initramfs = run(make);
    INFO("make-initramfs.sh: " << initramfs.err);
    REQUIRE(initramfs.status == 0);
    return boot(vmlinux, initrd, dir.file(name + ".log"));
  };
  const Guest original = guest(p->vmlinux, kernel->modules, "original-modules");
  const Guest slim = guest(out + "/vmlinux", out, "slim-modules");
  INFO("console of the original:\n" << original.log << "\nconsole of the minimized kernel:\n" << slim.log);
  for (const std::string& m : modules) {
    const std::string file = fs::path(m).filename().string(), name = file.substr(0, file.find(".ko"));
    INFO(m);
    REQUIRE(original.insmods.count(file) == 1);
    REQUIRE(slim.insmods.count(file) == 1);
    CHECK(original.insmods.at(file) == "ok");
    CHECK(slim.insmods.at(file) == "ok");
    // Its BTF is there: the kernel read it on the slim base (a misfit would leave it out).
    CHECK(original.module_btf.count(name) == 1);
    CHECK(slim.module_btf.count(name) == 1);
  }
  for (const std::string& object : {name_of(program), name_of(nat)}) {
    INFO(object);
    REQUIRE(original.loads.count(object) == 1);
    REQUIRE(slim.loads.count(object) == 1);
    CHECK(original.loads.at(object) == "ok");
    CHECK(slim.loads.at(object) == "ok");
  }
  for (const std::string& line : slim.dmesg) {
    INFO("a kernel message only the minimized kernel logs: " << line);
    CHECK(original.dmesg.count(line) == 1);
  }
}

TEST_CASE("Linux 6.1: modules rewritten for the minimized kernel load with their BTF, as the originals on the original",
          "[kernel-boot]") {
  modules_boot("6.1");
}

TEST_CASE("Linux 6.12: compressed modules rewritten for the minimized kernel load with their BTF, as the originals",
          "[kernel-boot]") {
  modules_boot("6.12");
}

}  // namespace
}  // namespace btfslim::test
