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

}  // namespace btfslim::test
