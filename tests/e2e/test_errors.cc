// Bad input through the real binary: every way a file or an argument can be wrong ends in exactly one
// line on stderr, "btfslim: FILE: problem", exit status 2 and nothing on stdout, for every command that
// reads BTF. The inputs are made here: a gcc object without BTF, ELF files broken by hand, a cut copy
// of the running kernel's BTF, libbpf-built split BTF.
#include "fixtures.h"
#include "process.h"

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;

const std::vector<std::string> kCommands = {"dump", "measure"};

// One rejected run: status 2, silent stdout, one line naming `subject` and containing `fragment`.
void expect_rejected(const RunResult& r, const std::string& what, const std::string& subject,
                     const std::string& fragment) {
  INFO(what << ": status " << r.status << "\nstdout: " << r.out.substr(0, 300) << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, StartsWith("btfslim: "));
  CHECK_THAT(r.err, EndsWith("\n"));
  CHECK_THAT(r.err, StartsWith("btfslim: " + subject + ": "));
  CHECK_THAT(r.err, Contains(fragment));
}

// Every command that reads BTF, with `extra` arguments after the input.
void expect_input_error(const std::string& input, const std::string& fragment,
                        const std::vector<std::string>& extra = {}, const std::string& subject = "") {
  for (const auto& command : kCommands) {
    std::vector<std::string> args{command, input};
    args.insert(args.end(), extra.begin(), extra.end());
    expect_rejected(btfslim(args), command + " " + input, subject.empty() ? input : subject, fragment);
  }
}

void put_u64(std::string& bytes, std::size_t off, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// An ELF relocatable object from gcc without -g: no DWARF, so no .BTF.
std::string object_without_btf(const TempDir& dir) {
  const std::string src = dir.file("plain.c");
  const std::string obj = dir.file("plain.o");
  write_file(src, "int counter;\nint bump(void) { return ++counter; }\n");
  const RunResult r = run({have("gcc") ? "gcc" : "cc", "-c", src, "-o", obj});
  INFO("gcc: " << r.err);
  REQUIRE(r.status == 0);
  return obj;
}

TEST_CASE("a missing file", "[errors]") {
  TempDir dir;
  expect_input_error(dir.file("missing.btf"), "cannot open: no such file");
  // What the no-argument case reports when /sys/kernel/btf/vmlinux is absent is the same kind of line:
  // a missing explicit path names the path.
  expect_input_error("/nonexistent/sys/kernel/btf/vmlinux", "no such file");
}

TEST_CASE("a file name with a line break still gives one line, the name escaped", "[errors]") {
  TempDir dir;
  const std::string path = dir.file("two\nlines.btf");
  write_file(path, "not btf at all");
  for (const auto& command : kCommands) {
    const RunResult r = btfslim({command, path});
    INFO(command << ": status " << r.status << ", stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, StartsWith("btfslim: " + dir.file("two\\nlines.btf") + ": ") && Contains("bad magic"));
  }
}

TEST_CASE("a directory", "[errors]") {
  TempDir dir;
  expect_input_error(dir.path(), "is a directory");
}

TEST_CASE("not a regular file", "[errors]") { expect_input_error("/dev/null", "is not a regular file"); }

TEST_CASE("an empty file", "[errors]") {
  TempDir dir;
  write_file(dir.file("empty.btf"), "");
  expect_input_error(dir.file("empty.btf"), "empty file");
}

TEST_CASE("a file of garbage", "[errors]") {
  TempDir dir;
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>((i * 7919 + 13) % 251));
  write_file(dir.file("garbage"), garbage);
  expect_input_error(dir.file("garbage"), "bad magic");
  write_file(dir.file("short"), "\x9f");
  expect_input_error(dir.file("short"), "too short for a BTF header");
  write_file(dir.file("text"), "hello, world\n");
  expect_input_error(dir.file("text"), "not BTF");
}

TEST_CASE("a truncated copy of the running kernel's BTF", "[errors]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const std::string bytes = read_file(vmlinux);
  REQUIRE(bytes.size() > 4096);
  TempDir dir;
  for (const std::size_t len : {std::size_t{10}, std::size_t{100}, bytes.size() / 2, bytes.size() - 1}) {
    const std::string path = dir.file("vmlinux-" + std::to_string(len));
    write_file(path, bytes.substr(0, len));
    expect_input_error(path, "truncated");
  }
}

TEST_CASE("an ELF file without .BTF", "[errors]") {
  TempDir dir;
  expect_input_error(object_without_btf(dir), "ELF file has no .BTF section");
}

TEST_CASE("a corrupt ELF file", "[errors]") {
  TempDir dir;
  SECTION("ELF magic, then garbage") {
    std::string bytes = "\x7f" "ELF";
    for (int i = 0; i < 200; ++i) bytes.push_back(static_cast<char>((i * 131 + 7) % 256));
    write_file(dir.file("bad.o"), bytes);
    expect_input_error(dir.file("bad.o"), "not a valid ELF file");
    write_file(dir.file("tiny.o"), "\x7f" "ELF\x02\x01");
    expect_input_error(dir.file("tiny.o"), "too short for an ELF header");
  }
  SECTION("a real ELF whose section header table lies past the end") {
    std::string bytes = read_file(object_without_btf(dir));
    REQUIRE(bytes.size() > 64);
    REQUIRE(bytes[4] == 2);  // ELFCLASS64: e_shoff is the u64 at 0x28
    REQUIRE(bytes[5] == 1);  // little-endian
    put_u64(bytes, 0x28, bytes.size() + 4096);
    write_file(dir.file("shoff.o"), bytes);
    expect_input_error(dir.file("shoff.o"), "section header table");
  }
  SECTION("an ELF with .BTF cut short") {
    const std::string elf = build_data_dir() + "/pahole_types.o";
    const std::string bytes = read_file(elf);
    write_file(dir.file("half.o"), bytes.substr(0, bytes.size() / 2));
    expect_input_error(dir.file("half.o"), "truncated");
  }
}

TEST_CASE("a file btfslim may not read", "[errors]") {
  TempDir dir;
  const std::string path = dir.file("secret.btf");
  write_file(path, small_btf());
  REQUIRE(chmod(path.c_str(), 0600) == 0);
  REQUIRE(chmod(dir.path().c_str(), 0755) == 0);
  std::vector<std::string> prefix;
  if (geteuid() == 0) {
    // root reads anything: run the binary as nobody instead.
    prefix = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    const RunResult probe = run({prefix[0], prefix[1], prefix[2], prefix[3], btfslim_path(), "--version"});
    if (probe.status != 0) return skip("cannot run btfslim as nobody with setpriv: " + probe.err);
  } else {
    REQUIRE(chmod(path.c_str(), 0) == 0);
  }
  for (const auto& command : kCommands) {
    std::vector<std::string> argv = prefix;
    argv.insert(argv.end(), {btfslim_path(), command, path});
    expect_rejected(run(argv), command + " unreadable", path, "permission denied");
  }
}

TEST_CASE("split BTF without its base", "[errors]") {
  TempDir dir;
  const SplitPair pair = split_btf();
  const std::string split = dir.file("module.btf");
  write_file(split, pair.split);
  write_file(dir.file("base.btf"), pair.base);
  expect_input_error(split, "pass --base");

  // With its base it reads, which is what the message suggests.
  for (const auto& command : kCommands) {
    const RunResult r = btfslim({command, split, "--base", dir.file("base.btf")});
    INFO(command << ": " << r.err);
    CHECK(r.status == 0);
  }
}

TEST_CASE("--base that is not BTF", "[errors]") {
  TempDir dir;
  const SplitPair pair = split_btf();
  const std::string split = dir.file("module.btf");
  write_file(split, pair.split);
  write_file(dir.file("garbage"), std::string(256, '\x55'));
  expect_input_error(split, "bad magic", {"--base", dir.file("garbage")}, dir.file("garbage"));
  expect_input_error(split, "no such file", {"--base", dir.file("missing")}, dir.file("missing"));
  expect_input_error(split, "is a directory", {"--base", dir.path()}, dir.path());
  expect_input_error(split, "ELF file has no .BTF section", {"--base", object_without_btf(dir)},
                     dir.file("plain.o"));
}

TEST_CASE("unknown commands and options", "[errors]") {
  struct Case {
    std::vector<std::string> args;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{}, "subcommand is required"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"--frobnicate"}, "unknown option '--frobnicate'"},
      {{"dump", "--frobnicate"}, "--frobnicate"},
      {{"measure", "--frobnicate", "x"}, "--frobnicate"},
      {{"dump", "--format", "xml", "x"}, "xml"},
      {{"measure", "--format", "xml", "x"}, "xml"},
      {{"dump", "a", "b"}, "b"},
  };
  for (const Case& c : cases) {
    const RunResult r = btfslim(c.args);
    std::string line;
    for (const auto& a : c.args) line += " " + a;
    INFO("btfslim" << line << ": status " << r.status << ", stdout: " << r.out << ", stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, StartsWith("btfslim: ") && Contains(c.fragment));
  }
}

TEST_CASE("counts: a whole number, said so in one line", "[errors]") {
  const TempDir dir;
  const std::string btf = dir.file("f.btf");
  write_file(btf, footprint_btf());
  const std::string object = test_object("core_fields");
  for (const std::string command : {"measure", "diff", "dedup"}) {
    for (const std::string bad : {"abc", "-1", "1.5", "99999999999999999999999"}) {
      std::vector<std::string> args{command, btf};
      if (command == "diff") args.push_back(btf);
      args.insert(args.end(), {"-n", bad});
      const RunResult r = btfslim(args);
      INFO(command << " -n " << bad);
      expect_rejected(r, command + " -n " + bad, "--top", bad == "99999999999999999999999" ? "too large" : "is not a whole number");
      CHECK(r.err.find("Could not convert") == std::string::npos);
    }
  }
  for (const std::string bad : {"0", "-2", "x", "100000"}) {
    const RunResult r = btfslim({"minimize", "--btf", btf, "--btf", btf, "-o", dir.file("out"), "-j", bad, object});
    expect_rejected(r, "minimize -j " + bad, "--jobs", bad == "x" || bad == "-2" ? "is not a whole number from 1 up"
                                                       : bad == "0"            ? "0 is too small: it takes 1 or more"
                                                                               : "too large: it takes at most 4096");
    CHECK(r.err.size() < 120);  // not CLI11's range of two 300-digit numbers
  }
  CHECK(btfslim({"measure", btf, "-n", "0"}).status == 0);
}

TEST_CASE("strict inputs: no --btf is named as --btf, not as an input", "[errors]") {
  const std::string object = test_object("core_fields");
  expect_rejected(btfslim({"check", "--strict-input", object}), "check --strict-input", "--btf",
                  "none given, which means the running kernel's BTF (--strict-input takes files only)");
  const TempDir dir;
  expect_rejected(btfslim({"minimize", "--strict-input", "-o", dir.file("out.btf"), object}), "minimize --strict-input",
                  "--btf", "none given");
}

TEST_CASE("kinds are comma-separated: a kind left as the input says so (--kind, --without)", "[errors]") {
  const TempDir dir;
  const std::string btf = dir.file("f.btf");
  write_file(btf, footprint_btf());
  expect_rejected(btfslim({"dump", "--kind", "struct", "union"}), "dump --kind struct union", "union",
                  "--kind takes its kinds comma-separated (--kind struct,union)");
  expect_rejected(btfslim({"measure", "--kind", "struct", "union"}), "measure --kind struct union", "union",
                  "--kind takes its kinds comma-separated");
  expect_rejected(btfslim({"measure", "--without", "func", "func_proto"}), "measure --without func func_proto",
                  "func_proto", "--without takes its kinds comma-separated");
  CHECK(btfslim({"dump", "--kind", "struct,union", btf}).status == 0);
  // Help spells the option as it is used.
  for (const std::string command : {"dump", "measure"}) {
    const RunResult help = btfslim({command, "--help"});
    INFO(help.out);
    CHECK_THAT(help.out, Contains("--kind KINDS"));
    CHECK_THAT(help.out, Contains("comma-separated"));
    CHECK(help.out.find("--kind TEXT") == std::string::npos);
    CHECK(help.out.find("--kind KINDS ...") == std::string::npos);
  }
}

TEST_CASE("a bare name of two kinds asks for the kind: --type and budget type limits", "[errors]") {
  const TempDir dir;
  const std::string btf = dir.file("clash.btf");
  write_file(btf, kind_clash_btf());
  expect_rejected(btfslim({"measure", btf, "--type", "vmpressure"}), "measure --type vmpressure", btf,
                  "--type 'vmpressure' names a STRUCT [2] and a FUNC [4]: say which, as 'struct vmpressure' or "
                  "'func vmpressure'");
  CHECK(btfslim({"measure", btf, "--type", "struct vmpressure"}).status == 0);
  CHECK(btfslim({"measure", btf, "--type", "func vmpressure"}).status == 0);
  CHECK(btfslim({"measure", btf, "--type", "used_by_both"}).status == 0);

  const std::string config = dir.file("btfslim.toml");
  write_file(config, "[[budget]]\nname = \"clash\"\ninput = \"clash.btf\"\ntype.vmpressure = \"1 KiB\"\n");
  const RunResult r = btfslim({"budget", "--config", config});
  expect_rejected(r, "budget", config + ":4", "budget 'clash': type 'vmpressure' in " + btf +
                                                   " names a STRUCT [2] and a FUNC [4]: say which");
  write_file(config, "[[budget]]\nname = \"clash\"\ninput = \"clash.btf\"\ntype.\"struct vmpressure\" = \"1 KiB\"\n");
  CHECK(btfslim({"budget", "--config", config}).status == 0);
}

TEST_CASE("a budget's missing baseline is reported at the line that names it", "[errors]") {
  const TempDir dir;
  write_file(dir.file("f.btf"), footprint_btf());
  const std::string config = dir.file("btfslim.toml");
  write_file(config, "[[budget]]\nname = \"growth\"\ninput = \"f.btf\"\n# saved by measure\nbaseline = \"gone.json\"\n"
                     "max_growth = \"1%\"\n");
  expect_rejected(btfslim({"budget", "--config", config}), "budget", config + ":5",
                  "budget 'growth': baseline " + dir.file("gone.json") + ": ");
}

}  // namespace
}  // namespace btfslim::test
