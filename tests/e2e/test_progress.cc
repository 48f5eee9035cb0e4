// The progress line of long work ([progress]): check against many kernels, minimize --kernel --modules
// and measure --all --closure draw one on stderr when it is a terminal (script(1) gives the command a
// pseudo-terminal here), never in a pipe, and not with --quiet; what they print on stdout is the same
// either way. (minimize's batches have theirs tested in [minimize-batch].)
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

// The command run on a pseudo-terminal: what the terminal got (stdout and stderr together, each "\n"
// as "\r\n").
RunResult on_terminal(const std::vector<std::string>& args) {
  std::string cmd = "'" + btfslim_path() + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  return run({"script", "-qec", cmd, "/dev/null"});
}

// The bar's own bytes: "] N/N UNIT", full as drawn last, and the erasing of the line ("\r" + CSI K).
bool drew_bar(const std::string& terminal, const std::string& unit) {
  return std::regex_search(terminal, std::regex("\\] ([0-9]+)/\\1 " + unit)) &&
         terminal.find("\r\x1b[K") != std::string::npos;
}

// Any bar at all: "] DONE/TOTAL UNIT".
bool any_bar(const std::string& terminal, const std::string& unit) {
  return std::regex_search(terminal, std::regex("\\] [0-9]+/[0-9]+ " + unit));
}

// Checks the three ways of running `args`: in a pipe (no control bytes), on a terminal (the bar of `unit`,
// e.g. "kernels", drawn full at the end), and on a terminal with --quiet (none).
void check_progress(const std::vector<std::string>& args, const std::string& unit, int status = 0) {
  const RunResult piped = btfslim(args);
  INFO("btfslim " << args[0] << " ...: exit " << piped.status << "\n" << piped.err);
  REQUIRE(piped.status == status);
  CHECK(piped.err.find('\r') == std::string::npos);
  CHECK(piped.err.find('\x1b') == std::string::npos);
  CHECK(piped.out.find('\x1b') == std::string::npos);

  if (!have("script")) return skip("no script(1): the progress line on a terminal is not tested");
  const RunResult shown = on_terminal(args);
  INFO("on a terminal (its start):\n" << shown.out.substr(0, 3000));
  CHECK(shown.status == status);
  CHECK(drew_bar(shown.out, unit));

  std::vector<std::string> quiet = args;
  quiet.insert(quiet.begin() + 1, "--quiet");
  const RunResult q = on_terminal(quiet);
  INFO("on a terminal with --quiet (its start):\n" << q.out.substr(0, 3000));
  CHECK(q.status == status);
  CHECK(q.out.find('\x1b') == std::string::npos);
  CHECK(!any_bar(q.out, unit));
}

TEST_CASE("check against many kernels draws a progress line on a terminal only", "[progress]") {
  std::vector<std::string> args{"check"};
  const std::vector<std::string> targets = core_corpus_targets();
  for (const std::string& t : targets) args.insert(args.end(), {"--btf", t});
  for (const std::string& o : core_corpus_objects()) args.push_back(o);
  // core_errors fails on every kernel: exit status 1 either way.
  check_progress(args, "kernels", 1);
  CHECK(targets.size() == 4);
}

TEST_CASE("measure --all --closure draws a progress line on a terminal only", "[progress]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux: no BTF with enough types for closures to take seconds");
  // The structs alone are more than ten thousand types, the fewest the line is drawn for.
  check_progress({"measure", vmlinux, "--kind", "struct", "--all", "--closure", "-f", "json"}, "closures");
}

TEST_CASE("minimize --kernel --modules draws a progress line on a terminal only", "[progress]") {
  std::string why;
  const std::string kernel = other_kernel_with_symbols(why);
  if (kernel.empty()) return skip(why);
  const auto other = other_kernel(why);
  if (!other) return skip(why);
  // A dozen of the kernel's modules, at their paths under a tree of their own.
  const TempDir dir;
  const std::string modules = dir.file("modules");
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(other->modules)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.find(".ko") == std::string::npos) continue;
    const fs::path to = fs::path(modules) / fs::relative(e.path(), other->modules);
    fs::create_directories(to.parent_path());
    fs::copy_file(e.path(), to);
    if (++n == 12) break;
  }
  REQUIRE(n == 12);
  // Each run writes its own output directory.
  int run_number = 0;
  auto args = [&] {
    return std::vector<std::string>{"minimize", "--kernel", kernel, "--modules", modules,
                                    "-o", dir.file("out" + std::to_string(++run_number))};
  };
  const RunResult piped = btfslim(args());
  INFO(piped.err);
  REQUIRE(piped.status == 0);
  CHECK(piped.err.find('\x1b') == std::string::npos);
  if (!have("script")) return skip("no script(1): the progress line on a terminal is not tested");
  const RunResult shown = on_terminal(args());
  INFO(shown.out);
  CHECK(shown.status == 0);
  CHECK(drew_bar(shown.out, "modules"));
  CHECK_THAT(shown.out, Contains("12/12 modules"));
  std::vector<std::string> quiet = args();
  quiet.insert(quiet.begin() + 1, "-q");
  const RunResult q = on_terminal(quiet);
  CHECK(q.status == 0);
  CHECK(q.out.find('\x1b') == std::string::npos);
}

}  // namespace
}  // namespace btfslim::test
