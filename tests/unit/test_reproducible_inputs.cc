// The inputs the build compiles for the tests (tests/meson.build: the BPF objects, the pahole ELF files)
// are the same bytes wherever the checkout and the build directory are ([robust]).
//
// The mutation tests draw fixed-seed offsets over these objects' sections, so that a failure reproduces.
// That holds only if the objects do not change with the path: clang writes the source's path into .BTF
// for line info and the compilation directory into the DWARF, and a longer path moves every byte after
// it. A seed that passed in one checkout then tests other mutants in another, and fails there (issue 15).
// tests/meson.build compiles each source by its absolute path with both roots mapped to fixed names
// (-ffile-prefix-map); this test fails when an object still holds the source or the build directory.
#include "process.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>

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

}  // namespace
}  // namespace btfslim::test
