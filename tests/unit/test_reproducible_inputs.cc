// The inputs the build compiles for the tests (tests/meson.build: the BPF objects, the pahole ELF files)
// are the same bytes wherever the checkout and the build directory are ([robust]).
//
// The mutation tests draw fixed-seed offsets over these objects' sections, so that a failure reproduces.
// That holds only if the objects do not change with the path: clang writes the source's path into .BTF
// for line info and the compilation directory into the DWARF, and a longer path moves every byte after
// it. A seed that passed in one checkout then tests other mutants in another, and fails there (issue 15).
// tests/meson.build compiles the BPF sources through tools/same-bytes-cc.sh, which compiles a copy at a
// path of fixed length (clang's type order moves with the lengths of the paths it reads), and gives gcc
// both roots mapped to fixed names (-ffile-prefix-map). These tests fail when an object still holds the
// source or the build directory, and when the script gives other bytes for another checkout.
#include "process.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;

// `dir` as a path inside an object: followed by '/' or ending a string, so that a short directory name
// ("/b") does not match a longer one that merely starts like it ("/bin").
bool holds_directory(const std::string& bytes, const std::string& dir) {
  return bytes.find(dir + '/') != std::string::npos || bytes.find(dir + '\0') != std::string::npos;
}

TEST_CASE("compiled test inputs do not say where they were built", "[robust]") {
  // The directories as the test sees them and as the compiler saw them (meson resolves symbolic links).
  std::set<std::string> dirs;
  for (const fs::path& tests_dir : {fs::path(source_data_dir()), fs::path(build_data_dir())}) {
    const fs::path root = tests_dir.parent_path();  // the source tree's and the build's tests/ are one level down
    dirs.insert(root.string());
    dirs.insert(fs::weakly_canonical(root).string());
  }
  // What the maps write: a checkout or build at exactly these names is where the objects say it is, and
  // the root ("/") is in every path.
  for (const char* mapped : {"/btfslim", "/btfslim/build", "/", ""}) dirs.erase(mapped);

  std::set<std::string> objects;
  for (const fs::directory_entry& e : fs::directory_iterator(build_data_dir()))
    if (e.is_regular_file() && e.path().extension() == ".o") objects.insert(e.path().filename().string());
  // The unit tests' own inputs are always there; the end-to-end corpus when the build has made it.
  REQUIRE(objects.count("minimal.bpf.o"));
  REQUIRE(objects.count("pahole_types.o"));

  for (const std::string& name : objects) {
    const std::string bytes = read_file(build_data_dir() + "/" + name);
    for (const std::string& dir : dirs) {
      INFO(name << " holds " << dir << ": compile it by its absolute path with tests/meson.build's prefix_maps");
      CHECK_FALSE(holds_directory(bytes, dir));
    }
  }
}

// Two checkouts, one at a short path and one at a long one, each with its build directory (where the
// trace programs' vmlinux.h is) elsewhere: the object is the same bytes. trace_exit.bpf.c on vmlinux.h is
// the input whose type order moved with the path (its many FWD types) before the copy.
TEST_CASE("same-bytes-cc.sh gives the same object for checkouts at different paths", "[robust]") {
  const std::string header = build_data_dir() + "/vmlinux.h";
  if (!fs::exists(header)) return skip("no vmlinux.h (the machine has no kernel BTF): nothing to compile");
  const std::string script = source_data_dir() + "/tools/same-bytes-cc.sh";
  const std::string source = source_data_dir() + "/bpf/trace_exit.bpf.c";
  const TempDir dir;

  std::vector<std::string> objects;
  for (const std::string& place : {std::string("a"), std::string(120, 'p') + "/checkout-at-a-long-path"}) {
    const fs::path root = fs::path(dir.path()) / place;
    const fs::path build = fs::path(dir.path()) / ("build-" + std::to_string(objects.size()));
    fs::create_directories(root / "tests/bpf");
    fs::create_directories(build / "tests");
    fs::copy_file(source, root / "tests/bpf/trace_exit.bpf.c");
    fs::copy_file(header, build / "tests/vmlinux.h");
    const std::string out = dir.file("out" + std::to_string(objects.size()) + ".o");
    const RunResult r = run({script, root.string(), build.string(), (root / "tests/bpf/trace_exit.bpf.c").string(),
                             out, (build / "tests/vmlinux.h").string(), "--", "clang-19", "-target", "bpf", "-g",
                             "-O2", "-D__TARGET_ARCH_x86"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    objects.push_back(read_file(out));
  }
  CHECK(objects[0].size() == objects[1].size());
  CHECK(objects[0] == objects[1]);
}

}  // namespace
}  // namespace btfslim::test
