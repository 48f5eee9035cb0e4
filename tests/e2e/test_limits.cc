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
// Outputs: a write that fails (a file-size limit, a full disk) must be one line naming the file, exit 2,
// and leave the previous output as it was, no temporary file and no part of the new output, whatever
// the command and wherever it writes (stdout, -o FILE, a batch's directory, the step summary); a reader
// that stops early ends btfslim quietly. A process killed while writing must leave the previous output
// or the whole new one, and no temporary file.
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
#include <map>
#include <memory>
#include <random>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

// The binary under test is built with AddressSanitizer (scripts/test.sh runs these tests against it too).
bool sanitized() { return sanitized_binary(); }

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
  write_file(path, raw_bytes(b.get()));
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
  write_file(path, raw_bytes(b.get()));
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
  write_file(path, raw_bytes(b.get()));
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

// Every file under `dir` with its bytes (directories as "DIR/"): what a failed command must leave as it was.
std::map<std::string, std::string> contents_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().lexically_relative(dir).string();
    if (e.is_directory())
      out[name + "/"] = "";
    else
      out[name] = read_file(e.path().string());
  }
  return out;
}

// Runs btfslim with `args` under a file-size limit (`ulimit -f` blocks of 512 bytes, or "unlimited"),
// SIGXFSZ at its default as a shell leaves it, stdout to the file `to` unless it is "" (then captured),
// and with `env` (NAME=VALUE) in the environment without any GITHUB_STEP_SUMMARY of the machine running
// the tests.
RunResult limited(const std::string& blocks, const std::vector<std::string>& args, const std::string& to = "",
                  const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{"sh", "-c", "ulimit -f \"$1\"; to=$2; shift 2; "
                                "if [ -n \"$to\" ]; then exec \"$@\" > \"$to\"; else exec \"$@\"; fi",
                                "sh", blocks, to, "env", "-u", "GITHUB_STEP_SUMMARY"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(btfslim_path());
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// The inputs and the older outputs every command that writes is tried on.
struct WriteFixture {
  TempDir dir;
  std::string input = dir.file("input.btf"), other = dir.file("other.btf"), budget = dir.file("btfslim.toml");
  std::string out = dir.file("out.btf"), svg = dir.file("out.svg"), dedup = dir.file("dedup.btf");
  std::string kernels = dir.file("kernels"), batch = dir.file("batch"), summary = dir.file("summary.md");
  std::string stdout_file = dir.file("stdout.txt");

  WriteFixture() {
    write_file(input, all_kinds_btf());
    write_file(other, footprint_btf());
    write_file(budget, "[[budget]]\nname = \"all\"\ninput = \"input.btf\"\ntotal = \"1 MiB\"\n");
    write_file(out, "previous output");
    write_file(svg, "previous picture");
    write_file(dedup, "previous dedup");
    // A batch of two kernels, the first with an older output.
    fs::create_directories(kernels);
    fs::copy_file(core_target("moved"), kernels + "/a.o");
    fs::copy_file(core_target("moved"), kernels + "/b.o");
    fs::create_directories(batch);
    write_file(batch + "/a.o", "previous batch output");
    write_file(summary, "previous summary\n");
    write_file(stdout_file, "");  // as the shell makes it
  }

  // Every command that writes to stdout.
  std::vector<std::vector<std::string>> to_stdout() const {
    const std::string moved = core_target("moved"), obj = test_object("core_fields");
    std::vector<std::vector<std::string>> commands = {
        {"dump", input},
        {"dump", "--format", "json", input},
        {"dump", "--format", "c", input},
        {"measure", input},
        {"measure", "--format", "json", input},
        {"measure", "--format", "csv", input},
        {"measure", "--type", "1", input},
        {"check", "--btf", moved, obj},
        {"check", "--format", "json", "--btf", moved, obj},
        {"minimize", "--btf", moved, "-o", "-", obj},
        {"diff", input, other},
        {"diff", "--format", "json", input, other},
        {"diff", "--format", "csv", input, other},
        {"dedup", "-o", "-", input},
        {"dedup", "--check", input},
        // What CLI11 and the help command print, through iostreams rather than btfslim's own writer.
        {"--help"},
        {"--version"},
        {"help"},
        {"help", "minimize"},
        {"dump", "--help"},
    };
    for (const std::string format : {"text", "json", "junit", "github"})
      commands.push_back({"budget", "--config", budget, "--format", format});
    return commands;
  }

  // Every command that writes a file, with the file its error must name.
  std::vector<std::pair<std::vector<std::string>, std::string>> to_files() const {
    const std::string moved = core_target("moved"), obj = test_object("core_fields");
    return {
        {{"minimize", "--btf", moved, "-o", out, obj}, out},
        {{"minimize", "--btf", moved, "--elf", "-o", out, obj}, out},  // built in a memory file first
        {{"measure", "--svg", svg, input}, svg},
        {{"dedup", "-o", dedup, input}, dedup},
        {{"minimize", "--btf", kernels, "-o", batch, obj}, batch + "/a.o"},
        {{"minimize", "--btf", kernels, "-o", batch, "--jobs", "1", obj}, batch + "/a.o"},
    };
  }
};

// One line on stderr, exit 2, naming `subject` and saying `reason`, with nothing on stdout.
void expect_write_error(const RunResult& r, const std::string& subject, const std::string& reason) {
  INFO("exit " << r.status << "\nstdout: " << r.out.substr(0, 300) << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, StartsWith("btfslim: " + subject + ": "));
  CHECK_THAT(r.err, Contains(reason));
}

TEST_CASE("under a file-size limit, every command that writes says so in one line and leaves no part of an output",
          "[limits]") {
  const WriteFixture f;
  const auto before = contents_of(f.dir.path());
  // readlink(/proc/self/fd/1) gives the path without symbolic links.
  const std::string shown = "stdout (" + fs::canonical(f.stdout_file).string() + ")";

  SECTION("stdout to a file: named with its path, and left as the shell made it") {
    for (const auto& args : f.to_stdout()) {
      INFO(command_line(args));
      const RunResult r = limited("0", args, f.stdout_file);
      expect_write_error(r, shown, "write error: File too large");
      CHECK(contents_of(f.dir.path()) == before);
    }
  }

  SECTION("a file named on the command line, or appended to: the older one as it was, no temporary") {
    for (const auto& [args, target] : f.to_files()) {
      INFO(command_line(args));
      const RunResult r = limited("0", args);
      expect_write_error(r, target, "write error: File too large");
      CHECK(r.out.empty());
      CHECK(contents_of(f.dir.path()) == before);
    }
    // A batch into a tree it makes: the directories it made for outputs it could not write go too.
    const RunResult tree = limited("0", {"minimize", "--btf", f.kernels, "-o", f.dir.file("new/tree"),
                                         test_object("core_fields")});
    expect_write_error(tree, f.dir.file("new/tree/a.o"), "write error: File too large");
    CHECK(contents_of(f.dir.path()) == before);
    // The step summary a budget appends to, with the report on stdout (a pipe, no limit there).
    const RunResult r = limited("0", {"budget", "--config", f.budget, "--format", "github"}, "",
                                {"GITHUB_STEP_SUMMARY=" + f.summary});
    expect_write_error(r, f.summary, "cannot append the step summary: File too large");
    CHECK(contents_of(f.dir.path()) == before);
  }

  SECTION("a limit reached part of the way: what the file held before btfslim began is kept") {
    // Above 512 bytes: the first block is written, the rest fails.
    REQUIRE(btfslim({"dump", f.input}).out.size() > 1024);
    const RunResult r = run({"sh", "-c", "ulimit -f 1; { printf 'kept\\n'; exec \"$@\"; } > \"$0\"", f.stdout_file,
                             btfslim_path(), "dump", f.input});
    expect_write_error(r, shown, "write error: File too large");
    CHECK(read_file(f.stdout_file) == "kept\n");
    // Appended to (>>), where other writers may have appended since, nothing is cut off.
    write_file(f.stdout_file, "kept\n");
    const RunResult appended = run({"sh", "-c", "ulimit -f 1; exec \"$@\" >> \"$0\"", f.stdout_file, btfslim_path(),
                                    "dump", f.input});
    expect_write_error(appended, shown, "write error: File too large");
    CHECK(fs::file_size(f.stdout_file) == 512);
    // The step summary, 500 bytes long: the table appended is cut off at 512, then taken back.
    const std::string older(500, 's');
    write_file(f.summary, older);
    const RunResult summary = run({"sh", "-c", "ulimit -f 1; exec \"$@\"", "sh", "env",
                                   "GITHUB_STEP_SUMMARY=" + f.summary, btfslim_path(), "budget", "--config", f.budget,
                                   "--format", "github"});
    expect_write_error(summary, f.summary, "cannot append the step summary: File too large");
    CHECK(read_file(f.summary) == older);
  }
}

TEST_CASE("a full disk (/dev/full): every command that writes says so in one line, exit 2", "[limits]") {
  const WriteFixture f;
  const auto before = contents_of(f.dir.path());
  for (const auto& args : f.to_stdout()) {
    INFO(command_line(args));
    const RunResult r = limited("unlimited", args, "/dev/full");
    expect_write_error(r, "stdout", "write error: No space left on device");
    CHECK(contents_of(f.dir.path()) == before);
  }
  // The report of a command that wrote its file: the file is whole, the report's loss is the error.
  for (const auto& [args, target] : f.to_files()) {
    INFO(command_line(args));
    const RunResult r = limited("unlimited", args, "/dev/full");
    expect_write_error(r, "stdout", "write error: No space left on device");
    CHECK(read_file(target) != before.at(fs::path(target).lexically_relative(f.dir.path()).string()));
  }
  const RunResult r = limited("unlimited", {"budget", "--config", f.budget, "--format", "github"}, "",
                              {"GITHUB_STEP_SUMMARY=/dev/full"});
  expect_write_error(r, "/dev/full", "cannot append the step summary: No space left on device");
}

// 20,000 structs of one member each: more output than a pipe holds, from every command that prints types.
std::string many_types_btf() {
  BtfPtr b(btf__new_empty());
  const int int_id = btf__add_int(b.get(), "int", 4, BTF_INT_SIGNED);
  bool added = int_id > 0;
  for (int i = 0; i < 20000; ++i)
    added = added && btf__add_struct(b.get(), ("s" + std::to_string(i)).c_str(), 4) > 0 &&
            btf__add_field(b.get(), "m", int_id, 0, 0) == 0;
  REQUIRE(added);
  return raw_bytes(b.get());
}

TEST_CASE("a reader that stops early (| head -c 1) ends btfslim quietly, by SIGPIPE", "[limits]") {
  const TempDir dir;
  const std::string input = dir.file("many.btf");
  write_file(input, many_types_btf());
  const std::vector<std::vector<std::string>> commands = {
      {"dump", input},
      {"dump", "--format", "json", input},
      {"dump", "--format", "c", input},
      {"measure", "--all", "--by", "type", "--format", "csv", input},
      {"diff", dir.file("small.btf"), input},
      {"dedup", "-o", "-", input},
  };
  write_file(dir.file("small.btf"), small_btf());
  // btfslim's exit status through `| head -c 1`, SIGPIPE at its default as a shell gives it (whatever the
  // test runner's is), or ignored by the shell before.
  auto through_head = [&](const std::vector<std::string>& args, bool ignore_sigpipe) {
    std::vector<std::string> argv{"env", "--default-signal=PIPE", "bash", "-c",
                                  std::string(ignore_sigpipe ? "trap '' PIPE; " : "") +
                                      "\"$@\" | head -c 1 > /dev/null; exit \"${PIPESTATUS[0]}\"",
                                  "bash", btfslim_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  };
  for (const auto& args : commands) {
    INFO(command_line(args));
    REQUIRE(btfslim(args).out.size() > 4 * 65536);  // four times what a pipe holds
    const RunResult r = through_head(args, false);
    INFO("exit " << r.status << "\nstderr: " << r.err);
    CHECK(r.status == 128 + 13);  // SIGPIPE, as cat or seq
    CHECK(r.err.empty());
    // With SIGPIPE ignored, the closed pipe is a write error like any other (as in coreutils).
    const RunResult ignored = through_head(args, true);
    expect_write_error(ignored, "stdout", "write error: Broken pipe");
  }
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
