// Hostile inputs against bounded time and memory, and outputs that survive failures ([limits]).
//
// Each input is the shape an attacker would choose to make a reader loop or allocate: a chain of
// 300,000 modifiers, a cycle of 200,000 typedefs, structs, enums and prototypes at the largest vlen
// (65,535), a .BTF.ext that claims four billion records, and one that really holds 100,000. Every command
// that reads them must end (exit 0, or 2 with one line) within a wall-time limit and a peak RSS bound
// proportional to the input. The bounds are loose enough for the sanitized build (its shadow memory and
// quarantine) and a loaded 2-core CI machine, and tight enough that a quadratic walk or an allocation by
// a count read from the file fails them.
//
// Outputs: a write that fails (a file-size limit standing in for a full disk) and a process killed while
// writing must leave the previous output as it was and no temporary file.
#include "elf_image.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <random>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

// The binary under test is built with AddressSanitizer (scripts/test.sh runs these tests against it too).
bool sanitized() {
  static const bool asan = run({"sh", "-c", "ldd \"$1\" | grep -q libasan", "sh", btfslim_path()}).status == 0;
  return asan;
}

struct Bounds {
  double seconds;
  long rss_mib;
};

// What a command may cost on an input of `input_bytes`: a base for the process, plus a multiple of
// the input; the sanitized binary gets more of both.
Bounds bounds_for(std::size_t input_bytes) {
  const long input_mib = static_cast<long>(input_bytes >> 20) + 1;
  if (sanitized()) return {120, 400 + 40 * input_mib};
  return {30, 48 + 8 * input_mib};
}

std::string raw_of(const struct btf* b) {
  __u32 size = 0;
  const void* data = btf__raw_data(const_cast<struct btf*>(b), &size);
  REQUIRE(data != nullptr);
  return std::string(static_cast<const char*>(data), size);
}

// Runs every reading command on `path` and checks each ends in bounds: exit 0, or 2 with one line.
void every_command_ends(const std::string& path, const std::vector<std::vector<std::string>>& extra = {}) {
  const Bounds b = bounds_for(fs::file_size(path));
  std::vector<std::vector<std::string>> commands = {
      {"dump", path},
      {"dump", "--format", "json", path},
      {"dump", "--format", "c", path},
      {"measure", path},
      {"measure", "--format", "json", path},
      {"measure", "--by", "kind", path},
  };
  commands.insert(commands.end(), extra.begin(), extra.end());
  for (const auto& args : commands) {
    std::vector<std::string> argv{btfslim_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    const MeasuredRun r = run_measured(argv, b.seconds);
    std::string line;
    for (const auto& a : args) line += " " + a;
    INFO("btfslim" << line << ": exit " << r.status << " in " << r.seconds << " s, peak RSS " << r.peak_rss_kib / 1024
                   << " MiB (bounds " << b.seconds << " s, " << b.rss_mib << " MiB)\nstderr: " << r.err.substr(0, 300));
    CHECK(!r.timed_out);
    CHECK((r.status == 0 || r.status == 2));
    if (r.status == 2) CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.peak_rss_kib / 1024 <= b.rss_mib);
  }
}

TEST_CASE("a chain of 300,000 modifiers: every command ends in bounded time and memory", "[limits]") {
  const TempDir dir;
  BtfPtr b(btf__new_empty());
  int last = btf__add_int(b.get(), "int", 4, BTF_INT_SIGNED);
  for (int i = 0; i < 300000; ++i) last = (i % 3 == 0) ? btf__add_const(b.get(), last)
                                         : (i % 3 == 1) ? btf__add_volatile(b.get(), last)
                                                        : btf__add_ptr(b.get(), last);
  REQUIRE(last > 0);
  const int s = btf__add_struct(b.get(), "deep", 8);
  REQUIRE(btf__add_field(b.get(), "m", last, 0, 0) == 0);
  REQUIRE(btf__add_typedef(b.get(), "deep_t", s) > 0);
  const std::string path = dir.file("chain.btf");
  write_file(path, raw_of(b.get()));
  every_command_ends(path, {{"dump", "--format", "c", "--name", "deep_t", path},
                            {"measure", "--type", "deep", path}, {"measure", "--without", "typedef", path}});
}

TEST_CASE("a cycle of 200,000 typedefs: every command ends in bounded time and memory", "[limits]") {
  const TempDir dir;
  BtfPtr b(btf__new_empty());
  const int first = btf__add_typedef(b.get(), "t0", 2);  // refers to the next; the last refers back here
  for (int i = 1; i < 200000; ++i) {
    const std::string name = "t" + std::to_string(i);
    REQUIRE(btf__add_typedef(b.get(), name.c_str(), i + 1 < 200000 ? first + i + 1 : first) > 0);
  }
  const int s = btf__add_struct(b.get(), "loop", 8);
  REQUIRE(btf__add_field(b.get(), "m", first, 0, 0) == 0);
  REQUIRE(btf__add_ptr(b.get(), s) > 0);
  const std::string path = dir.file("cycle.btf");
  write_file(path, raw_of(b.get()));
  every_command_ends(path, {{"dump", "--format", "c", "--name", "loop", path}, {"measure", "--type", "loop", path}});
}

TEST_CASE("structs, enums and prototypes at the largest vlen: every command ends in bounded time and memory",
          "[limits]") {
  const TempDir dir;
  BtfPtr b(btf__new_empty());
  const int int_id = btf__add_int(b.get(), "int", 4, BTF_INT_SIGNED);
  constexpr int kVlen = 0xffff;
  for (int n = 0; n < 16; ++n) {
    const std::string name = "wide" + std::to_string(n);
    REQUIRE(btf__add_struct(b.get(), name.c_str(), kVlen * 4) > 0);
    for (int i = 0; i < kVlen; ++i) REQUIRE(btf__add_field(b.get(), "m", int_id, i * 32, 0) == 0);
  }
  for (int n = 0; n < 4; ++n) {
    const std::string name = "many" + std::to_string(n);
    REQUIRE(btf__add_enum(b.get(), name.c_str(), 4) > 0);
    for (int i = 0; i < kVlen; ++i) REQUIRE(btf__add_enum_value(b.get(), ("E" + std::to_string(n * kVlen + i)).c_str(), i) == 0);
    REQUIRE(btf__add_func_proto(b.get(), int_id) > 0);
    for (int i = 0; i < kVlen; ++i) REQUIRE(btf__add_func_param(b.get(), "p", int_id) == 0);
  }
  const std::string path = dir.file("wide.btf");
  write_file(path, raw_of(b.get()));
  INFO(fs::file_size(path) << " bytes");
  every_command_ends(path, {{"dump", "--format", "c", "--name", "wide3", path}, {"measure", "--type", "wide0", path}});
}

// core_fields.bpf.o with its .BTF.ext's CO-RE subsection rewritten: one block of `count` copies of its
// first record, or (claim) a first block whose record count says `count` with the bytes left as they are.
std::string with_core_records(const TempDir& dir, std::uint32_t count, bool claim) {
  const std::string source = test_object("core_fields");
  std::string image = read_file(source);
  const SectionPlace ext = elf_section(image, ".BTF.ext");
  const std::size_t hdr_len = get_u32(image, ext.offset + 4);
  const std::size_t core_off = get_u32(image, ext.offset + 24), core_len = get_u32(image, ext.offset + 28);
  const std::size_t core = ext.offset + hdr_len + core_off;
  REQUIRE(core_len >= 4 + 8 + 16);
  const std::uint32_t rec_size = get_u32(image, core);
  const std::string path = dir.file((claim ? "claims-" : "holds-") + std::to_string(count) + ".bpf.o");
  if (claim) {
    put_u32(image, core + 8, count);
    write_file(path, image);
    return path;
  }
  REQUIRE(hdr_len + core_off + core_len == ext.size);  // the CO-RE subsection is the last
  std::string section = image.substr(ext.offset, hdr_len + core_off);
  std::string block(12, '\0');
  put_u32(block, 0, rec_size);
  put_u32(block, 4, get_u32(image, core + 4));  // the first block's section name
  put_u32(block, 8, count);
  const std::string record = image.substr(core + 12, rec_size);
  section += block;
  section.reserve(section.size() + std::size_t{count} * rec_size);
  for (std::uint32_t i = 0; i < count; ++i) section += record;
  put_u32(section, 28, static_cast<std::uint32_t>(12 + std::size_t{count} * rec_size));
  write_file(dir.file("ext.bin"), section);
  const RunResult r = run({"llvm-objcopy-19", "--update-section", ".BTF.ext=" + dir.file("ext.bin"), source, path});
  INFO("llvm-objcopy-19: " << r.err);
  REQUIRE(r.status == 0);
  return path;
}

TEST_CASE("a .BTF.ext claiming four billion CO-RE records: one line, at once, no allocation", "[limits]") {
  const TempDir dir;
  const std::string obj = with_core_records(dir, 0xffffffffu, true);
  const Bounds b = bounds_for(fs::file_size(obj));
  for (const std::vector<std::string>& args : {std::vector<std::string>{"check", "--btf", core_target("moved"), obj},
                                              std::vector<std::string>{"minimize", "--btf", core_target("moved"), "-o",
                                                                       dir.file("out.btf"), obj}}) {
    std::vector<std::string> argv{btfslim_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    const MeasuredRun r = run_measured(argv, 10);
    INFO(args[0] << ": exit " << r.status << " in " << r.seconds << " s, " << r.peak_rss_kib / 1024 << " MiB: " << r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, StartsWith("btfslim: " + obj + ": "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.peak_rss_kib / 1024 <= b.rss_mib);
    CHECK(!fs::exists(dir.file("out.btf")));
  }
}

TEST_CASE("100,000 CO-RE relocations: check and minimize take time linear in them", "[limits]") {
  const TempDir dir;
  const std::string small = with_core_records(dir, 10000, false), large = with_core_records(dir, 100000, false);
  for (const std::string command : {"check", "minimize"}) {
    double seconds[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      const std::string& obj = i ? large : small;
      std::vector<std::string> argv{btfslim_path(), command, "--btf", core_target("moved")};
      if (command == std::string("minimize")) argv.insert(argv.end(), {"-o", dir.file("out.btf")});
      argv.push_back(obj);
      const Bounds b = bounds_for(fs::file_size(obj));
      const MeasuredRun r = run_measured(argv, b.seconds);
      seconds[i] = r.seconds;
      INFO(command << " " << obj << ": exit " << r.status << " in " << r.seconds << " s, " << r.peak_rss_kib / 1024
                   << " MiB\n" << r.err.substr(0, 300));
      CHECK(!r.timed_out);
      CHECK((r.status == 0 || r.status == 1));
      CHECK(r.peak_rss_kib / 1024 <= b.rss_mib + 64);  // + the report of 100,000 rows
    }
    // Ten times the relocations: well under a hundred times the time (quadratic would be that).
    INFO(command << ": " << seconds[0] << " s for 10,000 relocations, " << seconds[1] << " s for 100,000");
    CHECK(seconds[1] < 30 * std::max(seconds[0], 0.05));
  }
}

// ---- outputs ----

// The names in a directory (temporary files start with a dot).
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("a write that fails (a file-size limit as a full disk) leaves the old output and no temporary file",
          "[limits]") {
  const TempDir dir;
  const std::string out = dir.file("out.btf"), svg = dir.file("out.svg");
  write_file(out, "previous output");
  write_file(svg, "previous picture");
  write_file(dir.file("input.btf"), all_kinds_btf());
  // SIGXFSZ ignored: the write fails with EFBIG instead of killing the process, as ENOSPC would.
  const std::vector<std::vector<std::string>> commands = {
      {"minimize", "--btf", core_target("moved"), "-o", out, test_object("core_fields")},
      {"measure", "--svg", svg, dir.file("input.btf")},
  };
  for (const auto& args : commands) {
    std::vector<std::string> argv{"sh", "-c", "trap '' XFSZ; ulimit -f 0; exec \"$@\"", "sh", btfslim_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult r = run(argv);
    INFO(args[0] << ": exit " << r.status << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Contains("File too large"));
  }
  CHECK(read_file(out) == "previous output");
  CHECK(read_file(svg) == "previous picture");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"input.btf", "out.btf", "out.svg"});
}

TEST_CASE("a process killed at any moment leaves the old output or the whole new one, and no temporary file",
          "[limits]") {
  const std::string vmlinux = running_vmlinux();
  const TempDir dir;
  // A large output, so that some kills land while it is written: the SVG of the running kernel's BTF
  // (or of the all-kinds fixture), written over an older one again and again.
  const std::string input = vmlinux.empty() ? dir.file("input.btf") : vmlinux;
  if (vmlinux.empty()) write_file(input, all_kinds_btf());
  const std::string svg = dir.file("out.svg"), reference = dir.file("reference.svg");
  REQUIRE(btfslim({"measure", "--svg", reference, input}).status == 0);
  const std::string whole = read_file(reference);
  fs::remove(reference);
  write_file(svg, "previous picture");
  write_file(dir.file(".out.svg.btfslim"), "named by a process killed before its rename");
  const MeasuredRun timing = run_measured({btfslim_path(), "measure", "--svg", svg, input}, 60);
  REQUIRE(timing.status == 0);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"out.svg"});
  write_file(svg, "previous picture");

  std::mt19937 random(42);
  int killed = 0, named_not_renamed = 0;
  for (int i = 0; i < 24; ++i) {
    const double at = timing.seconds * std::uniform_real_distribution<double>(0.3, 1.2)(random);
    const MeasuredRun r = run_measured({btfslim_path(), "measure", "--svg", svg, input}, at);
    killed += r.timed_out;
    const std::string now = read_file(svg);
    INFO("run " << i << " killed after " << at << " s: " << (r.timed_out ? "killed" : "finished"));
    CHECK((now == "previous picture" || now == whole));
    // A kill between naming the finished file and renaming it (two system calls apart) leaves it,
    // complete, under the one name the next write of out.svg removes; anything else is a leak.
    const std::vector<std::string> names = names_in(dir.path());
    if (names.size() == 2 && r.timed_out && names[0] == ".out.svg.btfslim") {
      CHECK(read_file(dir.file(".out.svg.btfslim")) == whole);
      ++named_not_renamed;
    } else {
      CHECK(names == std::vector<std::string>{"out.svg"});
    }
    if (now == whole) write_file(svg, "previous picture");
  }
  INFO(killed << " of 24 runs killed, " << named_not_renamed << " between naming and renaming");
  CHECK(killed > 0);
  REQUIRE(btfslim({"measure", "--svg", svg, input}).status == 0);
  CHECK(read_file(svg) == whole);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"out.svg"});
}

}  // namespace
}  // namespace btfslim::test
