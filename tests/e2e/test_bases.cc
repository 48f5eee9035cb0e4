// Split BTF read against the base it was built on ([bases]): a module of another kernel, read with the
// running kernel as its implicit base, is refused in one line by every command that reads BTF, and
// reads as bpftool reads it once that kernel's vmlinux is given; split BTF that does not fit the base
// it is given (names into the middle of the base's strings, type ids past the last type) is refused
// too. The other kernel is Debian's 6.1 cloud kernel, fetched once by scripts/fetch-test-kernel.sh
// into a cache outside the checkout (the tests skip visibly without it); the hand-made misfits are
// libbpf-built (support/fixtures.cc). Last, `measure --modules` with no files on this machine.
#include "fixtures.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using nlohmann::json;

void expect_refused(const RunResult& r, const std::string& what, const std::string& line) {
  INFO(what << ": status " << r.status << "\nstdout: " << r.out.substr(0, 300) << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == line);
}

// The message for a module of `release` read on the running kernel.
std::string other_release_line(const std::string& ko, const std::string& release) {
  return "btfslim: " + ko + ": split BTF built on another base (vermagic " + release + ", running " +
         running_release() + "): pass that kernel's vmlinux with --base\n";
}

// A few modules of the other kernel, of different sizes and subsystems.
const std::vector<std::string> kModules = {"net/netfilter/nf_conntrack.ko", "fs/configfs/configfs.ko",
                                           "drivers/net/virtio_net.ko"};

TEST_CASE("a module of another kernel is refused without --base, in every command", "[bases]") {
  std::string why;
  const auto kernel = other_kernel(why);
  if (!kernel) return skip(why);
  if (running_vmlinux().empty()) return skip("no /sys/kernel/btf/vmlinux: a .ko has no implicit base here");
  const std::string object = test_object("minimal");
  for (const std::string& m : kModules) {
    const std::string ko = kernel->module(m);
    REQUIRE(fs::exists(ko));
    const std::string line = other_release_line(ko, kernel->release);
    expect_refused(btfslim({"dump", ko}), "dump", line);
    expect_refused(btfslim({"measure", ko}), "measure", line);
    expect_refused(btfslim({"measure", "--modules", ko}), "measure --modules", line);
    expect_refused(btfslim({"check", object, "--btf", ko}), "check --btf", line);
    expect_refused(btfslim({"diff", ko, ko}), "diff", line);
    expect_refused(btfslim({"dedup", "--check", ko}), "dedup --check", line);
  }
}

TEST_CASE("a module of another kernel reads as bpftool reads it on that kernel's vmlinux", "[bases]") {
  std::string why;
  const auto kernel = other_kernel(why);
  if (!kernel) return skip(why);
  const std::string object = test_object("minimal");
  for (const std::string& m : kModules) {
    const std::string ko = kernel->module(m);
    INFO(ko);
    const std::string expected = bpftool({"--base-btf", kernel->vmlinux, "btf", "dump", "file", ko});
    CHECK(first_difference(ours({"dump", ko, "--base", kernel->vmlinux}), expected) == "");
    CHECK_THAT(ours({"measure", ko, "--base", kernel->vmlinux}), StartsWith(ko + ": split BTF"));
    CHECK(!ours({"diff", ko, ko, "--base", kernel->vmlinux}).empty());
    // Verdicts, not errors: check may find the object's relocations unmet in a module.
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"check", object, "--btf", ko, "--base", kernel->vmlinux},
          std::vector<std::string>{"dedup", "--check", ko, "--base", kernel->vmlinux}}) {
      const RunResult r = btfslim(args);
      INFO(args.front() << ": " << r.err);
      CHECK((r.status == 0 || r.status == 1));
      CHECK(r.err.empty());
    }
  }
}

TEST_CASE("a module read on the wrong base given with --base is refused in one line", "[bases]") {
  std::string why;
  const auto kernel = other_kernel(why);
  if (!kernel) return skip(why);
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux: no second base to misread the module on");
  const std::string ko = kernel->module(kModules.front());
  for (const std::string command : {"dump", "measure"}) {
    const RunResult r = btfslim({command, ko, "--base", vmlinux});
    INFO(command << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, StartsWith("btfslim: " + ko + ": split BTF built on another base than " + vmlinux + " (type ["));
    CHECK_THAT(r.err, Contains("): pass the BTF it was built on with --base"));
  }
}

TEST_CASE("a .ko whose vermagic names the running release loads on it; another release is refused", "[bases]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const TempDir dir;
  const std::string ko = build_module(dir, vmlinux, ".modinfo");
  auto with_modinfo = [&](const std::string& name, const std::string& modinfo) {
    write_file(dir.file(name + ".modinfo"), modinfo);
    const std::string out = dir.file(name + ".ko");
    const RunResult r = run({"objcopy", "--update-section", ".modinfo=" + dir.file(name + ".modinfo"), ko, out});
    INFO("objcopy: " << r.err);
    REQUIRE(r.status == 0);
    return out;
  };
  using namespace std::string_literals;
  const std::string expected = bpftool({"--base-btf", vmlinux, "btf", "dump", "file", ko});
  const std::string same = with_modinfo("same", "license=GPL\0vermagic="s + running_release() + " SMP mod_unload \0"s);
  CHECK(first_difference(ours({"dump", same}), expected) == "");
  const std::string other = with_modinfo("other", "license=GPL\0vermagic=5.10.0-99-other SMP mod_unload \0"s);
  expect_refused(btfslim({"dump", other}), "dump", other_release_line(other, "5.10.0-99-other"));
  // Given the base, the user has said what it was built on.
  CHECK(first_difference(ours({"dump", other, "--base", vmlinux}), expected) == "");
}

TEST_CASE("split BTF that does not fit its base is refused: names inside base strings, ids past the end", "[bases]") {
  const TempDir dir;
  const SplitPair pair = split_btf();
  const Misfits misfits = split_btf_misfits();
  const std::string split = dir.file("split.btf"), base = dir.file("base.btf");
  const std::string shifted = dir.file("shifted.btf"), fewer = dir.file("fewer.btf");
  write_file(split, pair.split);
  write_file(base, pair.base);
  write_file(shifted, misfits.shifted_strings);
  write_file(fewer, misfits.fewer_types);
  REQUIRE(btfslim({"dump", split, "--base", base}).status == 0);
  for (const std::string command : {"dump", "measure"}) {
    // [5] STRUCT nf_conn's member "len" is the base's string at 13, inside "sk_buff_head" there.
    expect_refused(btfslim({command, split, "--base", shifted}), command + " on shifted strings",
                   "btfslim: " + split + ": split BTF built on another base than " + shifted +
                       " (type [5] STRUCT: member name offset 13 points into the middle of a string of the base): "
                       "pass the BTF it was built on with --base\n");
    // One base type instead of three: the split's ids start at 2 and [4] TYPEDEF's 5 is past them.
    expect_refused(btfslim({command, split, "--base", fewer}), command + " on fewer types",
                   "btfslim: " + split + ": split BTF built on another base than " + fewer +
                       " (type [4] TYPEDEF: its type refers to type 5, past the last type [4]): "
                       "pass the BTF it was built on with --base\n");
  }
  // dedup, check and diff read their split inputs through the same parser.
  expect_refused(btfslim({"dedup", "--check", split, "--base", shifted}), "dedup",
                 "btfslim: " + split + ": split BTF built on another base than " + shifted +
                     " (type [5] STRUCT: member name offset 13 points into the middle of a string of the base): "
                     "pass the BTF it was built on with --base\n");
}

TEST_CASE("measure --modules reads a kernel's 1,100 modules on its vmlinux, and the fit checks cost little",
          "[bases]") {
  std::string why;
  const auto kernel = other_kernel(why);
  if (!kernel) return skip(why);
  std::vector<std::string> modules;
  for (const auto& e : fs::recursive_directory_iterator(kernel->modules))
    if (e.path().extension() == ".ko") modules.push_back(e.path().string());
  std::sort(modules.begin(), modules.end());
  REQUIRE(modules.size() > 1000);
  std::vector<std::string> args{"measure", "--format", "json", "--all", "--base", kernel->vmlinux, "--modules"};
  args.insert(args.end(), modules.begin(), modules.end());
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = btfslim(args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.err);
  REQUIRE(r.status == 0);
  INFO(modules.size() << " modules in " << seconds << " s");
  const json report = json::parse(r.out);
  REQUIRE(report.at("modules").size() == modules.size());
  CHECK(report.at("module_count") == modules.size());
  std::set<std::string> files;
  for (const json& m : report.at("modules")) files.insert(m.at("file").get<std::string>());
  CHECK(files.count(modules.front()) == 1);
  // Generous: about 2 s on a loaded 2-core machine, the fit checks a small part of that.
  CHECK(seconds < 30);
}

TEST_CASE("measure --modules with no files reads every loaded module, or says there is none", "[bases]") {
  if (running_vmlinux().empty()) return skip("no /sys/kernel/btf on this machine");
  bool any = false;
  for (const auto& e : fs::directory_iterator("/sys/kernel/btf")) any = any || e.path().filename() != "vmlinux";
  const RunResult r = btfslim({"measure", "--modules"});
  INFO(r.out << r.err);
  if (!any) {
    expect_refused(r, "measure --modules",
                   "btfslim: /sys/kernel/btf: holds no module BTF (no module with BTF is loaded, or the kernel has "
                   "none): name module files after --modules\n");
    return;
  }
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Contains("/sys/kernel/btf/"));
}

}  // namespace
}  // namespace btfslim::test
