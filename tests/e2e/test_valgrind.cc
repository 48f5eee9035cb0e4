// The release binary under valgrind's memcheck on real data ([valgrind]): every command on the running
// kernel's BTF (or, without one, a pahole-encoded ELF the tests build) must run without a single
// memcheck error: no invalid read or write, no use of uninitialised memory, no definite leak. The
// sanitized build is not run here (ASan and valgrind do not mix; scripts/test.sh runs its own pass).
#include "libbpf_oracle.h"
#include "oracles.h"
#include "process.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;

TEST_CASE("every command runs clean under valgrind memcheck", "[valgrind]") {
  if (sanitized_binary()) return skip("the binary under test is built with AddressSanitizer: valgrind cannot run it");
  REQUIRE(have("valgrind"));  // scripts/setup.sh installs it
  const TempDir dir;
  const std::string vmlinux = running_vmlinux();
  const std::string input = vmlinux.empty() ? build_data_dir() + "/core_target_moved.o" : vmlinux;
  std::vector<std::string> objects = vmlinux.empty() ? std::vector<std::string>{} : trace_objects();
  if (objects.empty()) objects = core_corpus_objects();
  const std::string target = vmlinux.empty() ? input : vmlinux;

  std::vector<std::vector<std::string>> commands = {
      {"measure", input},
      {"measure", "--format", "json", "--svg", dir.file("m.svg"), input},
      {"dump", input},
      {"dump", "--format", "c", "--kind", "struct", "--name", "t*", input},
      {"diff", input, input},
  };
  std::vector<std::string> check{"check", "--btf", target}, minimize{"minimize", "--btf", target, "-o", dir.file("min.btf")};
  check.insert(check.end(), objects.begin(), objects.end());
  minimize.insert(minimize.end(), objects.begin(), objects.end());
  commands.push_back(check);
  commands.push_back(minimize);
  commands.push_back({"dump", dir.file("min.btf")});
  // budget: a limit of each kind (total, kernel memory, kind, type, growth), one exceeded (exit 1), in JUnit.
  write_file(dir.file("b.json"), run({btfslim_path(), "measure", "--format", "json", input}).out);
  write_file(dir.file("btfslim.toml"), "[[budget]]\nname = \"v\"\nbaseline = \"b.json\"\ntotal = 1\nkernel_memory = \"1 GiB\"\n"
                                       "kind.STRUCT = \"1 GiB\"\ntype.\"1\" = \"1 GiB\"\nmax_growth = \"1%\"\n");
  commands.push_back({"budget", "--config", dir.file("btfslim.toml"), "--format", "junit", input});

  for (const auto& args : commands) {
    std::vector<std::string> argv{"valgrind", "--tool=memcheck", "--error-exitcode=99", "--leak-check=full",
                                  "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite", "--quiet",
                                  btfslim_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult r = run(argv);
    std::string line;
    for (const auto& a : args) line += " " + a;
    INFO("valgrind btfslim" << line << ": exit " << r.status << "\n" << r.err.substr(0, 3000));
    CHECK((r.status == 0 || r.status == 1));  // check exits 1 when a relocation fails on the kernel
  }
}

// The big arrays come from a pool of huge pages (src/output/memory.cc), which memcheck can neither check
// nor count; under valgrind they come from malloc. Without it, measure's largest request on a kernel is
// under 256 KiB (the record offsets, the names and their marks are each more).
TEST_CASE("under valgrind the pool's arrays come from malloc, for memcheck to check and count", "[valgrind]") {
  if (sanitized_binary()) return skip("the binary under test is built with AddressSanitizer: valgrind cannot run it");
  REQUIRE(have("valgrind"));
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no kernel BTF here: no array is big enough for the pool");
  const RunResult r = run({"valgrind", "--tool=memcheck", "--trace-malloc=yes", btfslim_path(), "measure", "--by", "kind", vmlinux});
  REQUIRE(r.status == 0);
  std::size_t largest = 0, big = 0;
  for (std::size_t at = r.err.find("alloc("); at != std::string::npos; at = r.err.find("alloc(", at + 1)) {
    // "malloc(1288552)" or "calloc(1,1288552)": the last number before the parenthesis closes.
    const std::size_t close = r.err.find(')', at);
    if (close == std::string::npos) break;
    const std::string args = r.err.substr(at + 6, close - at - 6);
    const std::size_t comma = args.rfind(',');
    const std::size_t bytes = std::strtoull(args.c_str() + (comma == std::string::npos ? 0 : comma + 1), nullptr, 10);
    largest = std::max(largest, bytes);
    big += bytes >= 256 * 1024;
  }
  INFO("largest request " << largest << " bytes");
  CHECK(big >= 3);
}

}  // namespace
}  // namespace btfslim::test
