// `btfslim check` from the loader's side ([check-optional]): programs a loader may leave out (--optional,
// SEC("?...")) and alternatives it chooses between (one handler as fentry and kprobe, fexit and kretprobe,
// tp_btf and raw_tp: libbpf-tools' idiom), whose failures are shown but not counted, and the verdict's
// count of them. tests/bpf/check_*.bpf.c are the cases; the kernel's load is the truth where bpf() is
// permitted: libbpf 1.1.2 opens the object, turns off what check says a loader would not load
// (bpf_program__set_autoload), and loads it on the running kernel.
//
// A load can fail for what BTF does not decide: this kind of kernel may refuse every trampoline program
// (fentry, fexit) with EPERM before verifying it. A case then holds check to the relocations libbpf
// applied to the programs that load (none poisoned) and says so on a visible line.
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <bpf/libbpf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using nlohmann::json;

std::string* sink = nullptr;

int capture(enum libbpf_print_level level, const char* format, va_list args) {
  if (!sink || level == LIBBPF_DEBUG) return 0;
  char line[4096];
  const int n = std::vsnprintf(line, sizeof line, format, args);
  if (n > 0) sink->append(line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1));
  return n;
}

struct Load {
  bool ok = false;
  int error = 0;
  std::string log;
};

// Loads `object` on the running kernel with the programs in `off` turned off, as a loader does with
// bpf_program__set_autoload(false); a SEC("?...") program stays off unless named in `on`.
Load libbpf_load(const std::string& object, const std::set<std::string>& off, const std::set<std::string>& on = {}) {
  Load load;
  sink = &load.log;
  const libbpf_print_fn_t previous = libbpf_set_print(capture);
  if (bpf_object* obj = bpf_object__open_file(object.c_str(), nullptr)) {
    bpf_program* p;
    bpf_object__for_each_program(p, obj) {
      if (off.count(bpf_program__name(p))) bpf_program__set_autoload(p, false);
      if (on.count(bpf_program__name(p))) bpf_program__set_autoload(p, true);
    }
    load.error = bpf_object__load(obj);
    load.ok = load.error == 0;
    bpf_object__close(obj);
  } else {
    load.error = -1;
    load.log = "bpf_object__open_file failed";
  }
  libbpf_set_print(previous);
  sink = nullptr;
  return load;
}

// Whether the kernel refused for a reason of its own before verifying: the load reached the verifier
// with every relocation applied, and it is not a poisoned instruction that failed it.
bool refused_before_verifying(const Load& load) {
  return !load.ok && load.error == -EPERM && load.log.find("unknown#195896080") == std::string::npos &&
         load.log.find("invalid func") == std::string::npos;
}

bool usable(const std::string& object) {
  if (!std::filesystem::exists(object)) {
    skip("no " + object + ": the build had no running kernel BTF to compile the test programs against");
    return false;
  }
  return true;
}

// `btfslim check ARGS --format json`: the document.
json check_json(const std::vector<std::string>& args, int expect_status) {
  std::vector<std::string> argv{"check", "--format", "json"};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult r = btfslim(argv);
  INFO(command_line(argv) << "\nexit " << r.status << "\nstderr: " << r.err << "\nstdout: " << r.out.substr(0, 3000));
  REQUIRE(r.status == expect_status);
  return json::parse(r.out);
}

// The programs of the document's object `o` on kernel `t`: name -> {fails, used (null unless an
// alternative)}, with their roles.
struct Program {
  bool optional = false;
  std::string alternatives, variant;
  bool fails = false;
  json used;
};
std::map<std::string, Program> programs_of(const json& doc, std::size_t o = 0, std::size_t t = 0) {
  std::map<std::string, Program> out;
  for (const json& p : doc.at("objects").at(o).at("programs")) {
    Program& x = out[p.at("name")];
    x.optional = p.at("optional");
    x.alternatives = p.at("alternatives").is_null() ? "" : p.at("alternatives").get<std::string>();
    x.variant = p.at("variant").is_null() ? "" : p.at("variant").get<std::string>();
    x.fails = p.at("results").at(t).at("fails");
    x.used = p.at("results").at(t).at("used");
  }
  return out;
}

// The programs a loader would not load, as check decided them: unused alternatives and, where a glob
// made them optional, the failing optional ones.
std::set<std::string> left_out(const std::map<std::string, Program>& programs) {
  std::set<std::string> off;
  for (const auto& [name, p] : programs)
    if ((p.used.is_boolean() && !p.used.get<bool>()) || (p.optional && p.fails)) off.insert(name);
  return off;
}

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Holds check's choice to the kernel's load: with what check leaves out turned off, the object loads
// (or is refused for what BTF does not decide, with no poisoned relocation among those loaded).
void loads_as_chosen(const std::string& object, const std::set<std::string>& off) {
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  const Load load = libbpf_load(object, off);
  INFO(object << " with " << joined(off) << " off: " << (load.ok ? "loaded" : "failed " + std::to_string(load.error))
              << "\n" << load.log);
  if (load.ok) return;
  REQUIRE(refused_before_verifying(load));
  std::printf("btfslim-test: NOTE: %s: the kernel refused a program for a reason BTF does not decide (error %d); "
              "held to libbpf's relocations only\n", object.c_str(), load.error);
  std::vector<std::string> loaded;
  for (const std::string& p : libbpf_relocate(object, running_vmlinux()).programs)
    if (!off.count(p)) loaded.push_back(p);
  for (const LibbpfRelo& r : libbpf_relocate(object, running_vmlinux(), loaded).relocations)
    CHECK(r.outcome == LibbpfRelo::Patched);
}

// And the other way: with `program` kept (and `off` turned off), the object does not load.
void fails_with(const std::string& object, const std::set<std::string>& off, const std::string& program) {
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  const Load load = libbpf_load(object, off, {program});
  INFO(object << " with " << program << " on and " << joined(off) << " off:\n" << load.log);
  CHECK_FALSE(load.ok);
  if (!refused_before_verifying(load)) return;
  // Refused before the verifier saw the poisoned instruction: libbpf's relocation of the program must
  // have poisoned it.
  std::printf("btfslim-test: NOTE: %s %s: the kernel refused it for a reason BTF does not decide (error %d); "
              "held to libbpf's relocations only\n", object.c_str(), program.c_str(), load.error);
  bool poisoned = false;
  for (const LibbpfRelo& r : libbpf_relocate(object, running_vmlinux(), {program}).relocations)
    poisoned = poisoned || (r.program == program && r.outcome == LibbpfRelo::Poisoned);
  CHECK(poisoned);
}

}  // namespace

TEST_CASE("check-optional: a handler as fentry and kprobe loads when one variant does, as its loader sees it",
          "[check-optional]") {
  const std::string object = test_object("check_alternatives");
  if (running_vmlinux().empty() || !usable(object)) return;

  // The table: the relocation that fails is in an unused alternative; the programs' roles below.
  const RunResult r = btfslim({"check", object});
  INFO("exit " << r.status << "\n" << r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("poisoned (unused alternative)"));
  CHECK_THAT(r.out, Contains("1 object x 1 kernel: 0 fail (and 1 failure in optional programs or unused "
                             "alternatives, not counted)"));
  bool fentry_row = false, kprobe_row = false;
  for (const std::string& line : lines_of(r.out)) {
    const std::vector<std::string> w = words_of(line);
    if (w.size() < 2) continue;
    if (w[0] == "fentry_tcp_v4_connect" && line.find("fentry of tcp_v4_connect entry") != std::string::npos) {
      fentry_row = true;
      CHECK_THAT(line, Contains("fails (unused alternative)"));
    }
    if (w[0] == "tcp_v4_connect" && line.find("kprobe of tcp_v4_connect entry") != std::string::npos) {
      kprobe_row = true;
      CHECK_THAT(line, Contains("ok, used"));
    }
  }
  CHECK(fentry_row);
  CHECK(kprobe_row);
  CHECK_THAT(r.out, Contains("programs: 4 alternatives groups; 1 failure not counted"));

  // JSON: each program's role and, on the kernel, whether it fails and is used; the failing relocation
  // excused, the counts beside the ones that were there.
  const json doc = check_json({object}, 0);
  CHECK(doc["failure_count"] == 0);
  CHECK(doc["optional_failure_count"] == 1);
  CHECK(doc["objects"][0]["results"][0]["optional_failure_count"] == 1);
  CHECK(doc["objects"][0]["results"][0]["failing_relocation_count"] == 1);
  const auto programs = programs_of(doc);
  REQUIRE(programs.size() == 8);
  CHECK(programs.at("fentry_tcp_v4_connect").alternatives == "tcp_v4_connect entry");
  CHECK(programs.at("fentry_tcp_v4_connect").variant == "fentry");
  CHECK(programs.at("fentry_tcp_v4_connect").fails);
  CHECK(programs.at("fentry_tcp_v4_connect").used == false);
  CHECK(programs.at("tcp_v4_connect").variant == "kprobe");
  CHECK(programs.at("tcp_v4_connect").used == true);
  // Where both load, the one loaders try first: fentry, fexit, tp_btf.
  CHECK(programs.at("fentry_do_fsync").used == true);
  CHECK(programs.at("kprobe_do_fsync").used == false);
  CHECK(programs.at("fexit_do_fsync").alternatives == "do_fsync exit");
  CHECK(programs.at("fexit_do_fsync").used == true);
  CHECK(programs.at("kretprobe_do_fsync").used == false);
  CHECK(programs.at("sched_process_exit_btf").alternatives == "tracepoint sched_process_exit");
  CHECK(programs.at("sched_process_exit_btf").used == true);
  CHECK(programs.at("sched_process_exit_raw").variant == "raw_tp");
  bool excused = false;
  for (const json& rec : doc["objects"][0]["relocations"])
    if (rec["results"][0]["fails"] == true) {
      CHECK(rec["program"] == "fentry_tcp_v4_connect");
      CHECK(rec["results"][0]["excused"] == "unused alternative");
      excused = true;
    } else {
      CHECK(rec["results"][0]["excused"].is_null());
    }
  CHECK(excused);

  // The kernel: with the unused variants off the object loads; with the fentry variant kept it does not.
  const std::set<std::string> off = left_out(programs);
  CHECK(off == std::set<std::string>{"fentry_tcp_v4_connect", "kprobe_do_fsync", "kretprobe_do_fsync",
                                     "sched_process_exit_raw"});
  loads_as_chosen(object, off);
  std::set<std::string> fentry_kept = off;
  fentry_kept.erase("fentry_tcp_v4_connect");
  fentry_kept.insert("tcp_v4_connect");
  fails_with(object, fentry_kept, "fentry_tcp_v4_connect");
}

TEST_CASE("check-optional: a syscall as ksyscall and fentry, a function as kprobe.multi and fentry, are alternatives",
          "[check-optional]") {
  const std::string object = test_object("check_alternatives_syscall");
  if (running_vmlinux().empty() || !usable(object)) return;
  const RunResult r = btfslim({"check", object});
  INFO("exit " << r.status << "\n" << r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("programs: 2 alternatives groups; 2 failures not counted"));
  const json doc = check_json({object}, 0);
  CHECK(doc["optional_failure_count"] == 2);
  const auto programs = programs_of(doc);
  REQUIRE(programs.size() == 5);
  // ksyscall/openat and fentry on the syscall's function (__x64_sys_openat on x86) hook one syscall.
  CHECK(programs.at("fentry_openat").alternatives == "syscall openat entry");
  CHECK(programs.at("ksyscall_openat").alternatives == "syscall openat entry");
  CHECK(programs.at("ksyscall_openat").variant == "ksyscall");
  CHECK(programs.at("ksyscall_openat").used == true);
  CHECK(programs.at("fentry_openat").used == false);
  // A one-function kprobe.multi is a kprobe; one on a pattern is no variant of anything.
  CHECK(programs.at("multi_connect").alternatives == "tcp_v4_connect entry");
  CHECK(programs.at("multi_connect").variant == "kprobe.multi");
  CHECK(programs.at("multi_connect").used == true);
  CHECK(programs.at("fentry_connect").used == false);
  CHECK(programs.at("multi_tcp").alternatives.empty());
  CHECK(programs.at("multi_tcp").used.is_null());
  // The kernel: with the fentry variants off the object loads; with either kept it does not.
  const std::set<std::string> off = left_out(programs);
  CHECK(off == std::set<std::string>{"fentry_connect", "fentry_openat"});
  loads_as_chosen(object, off);
  fails_with(object, {"fentry_connect", "ksyscall_openat"}, "fentry_openat");
  fails_with(object, {"fentry_openat", "multi_connect"}, "fentry_connect");
}

TEST_CASE("check-optional: when every variant of a handler fails, the object fails", "[check-optional]") {
  const std::string object = test_object("check_alternatives_fail");
  if (running_vmlinux().empty() || !usable(object)) return;
  const RunResult r = btfslim({"check", object});
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  CHECK_THAT(r.out, Contains("FAILS (no variant loads)"));
  CHECK_THAT(r.out, Contains("1 object x 1 kernel: 1 fail\n"));
  const json doc = check_json({object}, 1);
  const auto programs = programs_of(doc);
  CHECK(programs.at("fentry_tcp_v4_connect").used == false);
  CHECK(programs.at("tcp_v4_connect").used == false);
  CHECK(doc["optional_failure_count"] == 0);
  CHECK(doc["objects"][0]["results"][0]["failing_relocation_count"] == 2);
  // Whichever variant its loader keeps, the kernel refuses it.
  fails_with(object, {"tcp_v4_connect"}, "fentry_tcp_v4_connect");
  fails_with(object, {"fentry_tcp_v4_connect"}, "tcp_v4_connect");
}

TEST_CASE("check-optional: --optional GLOB, by program name or section, and SEC(\"?...\") programs",
          "[check-optional]") {
  const std::string object = test_object("check_optional");
  const std::string alternatives = test_object("check_alternatives_fail");
  if (running_vmlinux().empty() || !usable(object)) return;

  // trace_rmdir is SEC("?..."): libbpf leaves it out unless told; trace_unlink counts.
  const json plain = check_json({object}, 1);
  CHECK(plain["failure_count"] == 1);
  CHECK(plain["optional_failure_count"] == 1);
  CHECK(programs_of(plain).at("trace_rmdir").optional);
  CHECK_FALSE(programs_of(plain).at("trace_unlink").optional);
  fails_with(object, {}, "trace_unlink");

  // Named optional: shown, not counted, and the exit status says the object loads, as it does with the
  // program turned off.
  const RunResult r = btfslim({"check", object, "--optional", "trace_unlink"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("poisoned (optional)"));
  CHECK_THAT(r.out, Contains("optional (--optional trace_unlink)"));
  CHECK_THAT(r.out, Contains("optional (SEC(\"?...\"))"));
  CHECK_THAT(r.out, Contains("1 object x 1 kernel: 0 fail (and 2 failures in optional programs or unused "
                             "alternatives, not counted)"));
  loads_as_chosen(object, {"trace_unlink"});

  // An optional variant does not make its group load: the other variant's failure still counts.
  CHECK(check_json({alternatives, "--optional", "fentry_*"}, 1)["optional_failure_count"] == 1);
  // Section globs: every fentry and kprobe program optional, nothing counts.
  const json both = check_json({alternatives, "--optional", "kprobe/*", "--optional", "fentry/*"}, 0);
  CHECK(both["optional_failure_count"] == 2);

  // A glob that names no program is a typo: refused in one line before any output.
  const RunResult typo = btfslim({"check", object, "--optional", "trace_unlnk"});
  CHECK(typo.status == 2);
  CHECK(typo.out.empty());
  CHECK(lines_of(typo.err).size() == 1);
  CHECK_THAT(typo.err, Contains("--optional") && Contains("trace_unlnk"));
}

TEST_CASE("check-optional: on several kernels, in every format, only failures that count fail",
          "[check-optional]") {
  const std::string object = test_object("check_alternatives");
  std::string why;
  const auto k61 = test_kernel("6.1", why);
  if (running_vmlinux().empty() || !usable(object)) return;
  if (!k61) return skip(why);

  // Debian's 6.1 has no do_fsync in BTF: its fentry and fexit variants are missing there, the kprobes used.
  const std::vector<std::string> kernels = {"--btf", running_vmlinux(), "--btf", k61->vmlinux};
  std::vector<std::string> args = kernels;
  args.push_back(object);
  const json doc = check_json(args, 0);
  CHECK(doc["failure_count"] == 0);
  CHECK(doc["optional_failure_count"] == 4);
  const auto on61 = programs_of(doc, 0, 1);
  CHECK(on61.at("fentry_do_fsync").fails);
  CHECK(on61.at("kprobe_do_fsync").used == true);
  CHECK(on61.at("kretprobe_do_fsync").used == true);
  for (const json& ref : doc["objects"][0]["kernel_references"])
    if (ref["name"] == "do_fsync") CHECK(ref["results"][1]["excused"] == "unused alternative");

  std::vector<std::string> table = {"check", object};
  table.insert(table.end(), kernels.begin(), kernels.end());
  const RunResult matrix = btfslim(table);
  INFO(matrix.out);
  CHECK(matrix.status == 0);
  CHECK_THAT(matrix.out, Contains("ok (1 not counted)") && Contains("ok (3 not counted)"));
  CHECK_THAT(matrix.out, Contains("missing (unused alternative)"));
  CHECK_THAT(matrix.out, Contains("1 object x 2 kernels: 0 objects fail (0 of 2 object/kernel pairs) (and 4 failures in "
                                  "optional programs"));
  CHECK_THAT(matrix.out, Contains("check_alternatives.bpf.o fails on both kernels (not counted: "));

  for (const char* format : {"junit", "github"}) {
    std::vector<std::string> ci = table;
    ci.insert(ci.end(), {"--format", format});
    const RunResult c = btfslim(ci);
    INFO(format << "\n" << c.out);
    CHECK(c.status == 0);
    CHECK(c.out.find("<failure") == std::string::npos);
    CHECK(c.out.find("::error") == std::string::npos);
    CHECK_THAT(c.out, Contains("0 objects fail (0 of 2 object/kernel pairs) (and 4 failures") ||
                          Contains("failures=\"0\""));
  }
}

}  // namespace btfslim::test
