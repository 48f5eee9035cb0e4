#include "oracles.h"

#include "process.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <map>

namespace btfslim::test {

std::string bpftool_program() {
  if (have("bpftool")) return "bpftool";
  for (const char* path : {"/usr/sbin/bpftool", "/sbin/bpftool", "/usr/local/sbin/bpftool"})
    if (access(path, X_OK) == 0) return path;
  return "";
}

std::string bpftool(const std::vector<std::string>& args) {
  static std::map<std::vector<std::string>, std::string> cache;
  if (const auto it = cache.find(args); it != cache.end()) return it->second;
  const std::string program = bpftool_program();
  if (program.empty()) FAIL("bpftool is not installed (it is the oracle these tests compare with)");
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult r = run(argv);
  INFO("bpftool " << (args.empty() ? std::string() : args.back()) << ": " << r.err);
  REQUIRE(r.status == 0);
  return cache[args] = r.out;
}

std::string ours(const std::vector<std::string>& args) {
  const RunResult r = btfslim(args);
  INFO("btfslim stderr: " << r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());
  return r.out;
}

std::string c_compiler() {
  for (const char* cc : {"cc", "gcc"})
    if (have(cc)) return cc;
  return "";
}

std::string build_module(const TempDir& dir, const std::string& vmlinux, const std::string& module_section) {
  const std::string cc = c_compiler();
  REQUIRE(!cc.empty());
  const std::string object = dir.file("kmod_types.o");
  if (access(object.c_str(), F_OK) != 0) {
    RunResult r = run({cc, "-g", "-O0", "-c", source_data_dir() + "/data/kmod_types.c", "-o", object});
    INFO(cc << ": " << r.err);
    REQUIRE(r.status == 0);
    r = run({"pahole", "-J", "--btf_base", vmlinux, object});
    INFO("pahole: " << r.out << r.err);
    REQUIRE(r.status == 0);
  }
  if (module_section.empty()) return object;
  write_file(dir.file("modinfo"), std::string("license=GPL\0name=kmod_types\0", 29));
  const std::string ko = dir.file("kmod_types" + module_section + ".ko");
  const RunResult r = run({"objcopy", "--add-section", module_section + "=" + dir.file("modinfo"), object, ko});
  INFO("objcopy: " << r.err);
  REQUIRE(r.status == 0);
  return ko;
}

}  // namespace btfslim::test
