// `btfslim check` on what a loader resolves against kernel BTF besides CO-RE relocations ([check-loader]):
// kfunc and ksym externs, attach targets, struct_ops maps (include/btfslim/loader.h), held to the running
// kernel. Each tests/bpf/loader_*.bpf.c is one case (loader_attach one per program): libbpf 1.1.2 opens and
// loads it (no attach), and its verdict is the truth that `check`'s must equal, with a reason on every
// failing row.
//
// A load can also fail for reasons BTF does not decide, which `check` does not model: this kind of kernel
// may refuse every trampoline program (fentry, fexit, fmod_ret, lsm) with EPERM before verifying it, or
// have no data symbols in kallsyms for a typed ksym's address. Such a failure comes after libbpf resolved
// everything against BTF (it names no extern, attach target or struct_ops); the case then holds `check` to
// libbpf's resolution only ("BTF passed") and says so on a visible line. Where bpf() is not permitted, or
// the build had no running kernel BTF to compile the programs against, the tests skip visibly.
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "check_json.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using nlohmann::json;

// What libbpf's load gave, and whether BTF decided a failure.
struct Load {
  bool ok = false;
  int error = 0;
  bool btf_failure = false;  // libbpf refused while resolving against kernel BTF
  std::string log;           // its warnings
};

std::string* sink = nullptr;

int capture(enum libbpf_print_level level, const char* format, va_list args) {
  if (!sink || level == LIBBPF_DEBUG) return 0;
  char line[4096];
  const int n = std::vsnprintf(line, sizeof line, format, args);
  if (n > 0) sink->append(line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1));
  return n;
}

// libbpf's messages for a failure in the steps `check` models (libbpf 1.1.2's src/libbpf.c).
bool is_btf_failure(const std::string& log) {
  for (const char* m : {"not found in kernel or module BTFs", "incompatible with kernel", "not found in kernel BTF",
                        "incompatible types", "failed to find kernel BTF type ID", "struct_ops init_kern"})
    if (log.find(m) != std::string::npos) return true;
  return false;
}

// Opens and loads `object` on the running kernel: every program, or only `program`; `targets` are given
// to bpf_program__set_attach_target first, as a loader would.
Load libbpf_load(const std::string& object, const std::string& program = "",
                 const std::vector<std::pair<std::string, std::string>>& targets = {}) {
  Load load;
  sink = &load.log;
  const libbpf_print_fn_t previous = libbpf_set_print(capture);
  bpf_object* obj = bpf_object__open_file(object.c_str(), nullptr);
  if (obj) {
    bpf_program* p;
    bpf_object__for_each_program(p, obj) {
      if (!program.empty()) bpf_program__set_autoload(p, program == bpf_program__name(p));
      // libbpf looks the target up here, and fails without a message when the kernel lacks it.
      for (const auto& [prog, func] : targets)
        if (prog == bpf_program__name(p) && bpf_program__set_attach_target(p, 0, func.c_str()) != 0)
          load.log += "bpf_program__set_attach_target: failed to find kernel BTF type ID of '" + func + "'\n";
    }
    load.error = bpf_object__load(obj);
    load.ok = load.error == 0;
    bpf_object__close(obj);
  } else {
    load.error = -1;
    load.log += "bpf_object__open_file failed\n";
  }
  libbpf_set_print(previous);
  sink = nullptr;
  load.btf_failure = !load.ok && is_btf_failure(load.log);
  return load;
}

// `btfslim check OBJECT [ARGS...] --format json` on the running kernel: the object's record.
struct Ours {
  RunResult run;
  json object;
};

Ours check(const std::string& object, const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv{"check", object, "--format", "json"};
  argv.insert(argv.end(), args.begin(), args.end());
  Ours ours;
  ours.run = btfslim(argv);
  INFO("btfslim check " << object << "\nexit " << ours.run.status << "\nstderr: " << ours.run.err);
  REQUIRE((ours.run.status == 0 || ours.run.status == 1));
  const json doc = json::parse(ours.run.out);
  REQUIRE(doc["objects"].size() == 1);
  ours.object = object_on_kernel(doc["objects"][0]);
  CHECK(doc["failed"].get<bool>() == (ours.run.status == 1));
  return ours;
}

// Our rows that decide whether `program` loads: its attach target, and the object's externs and
// struct_ops maps (libbpf resolves them for the whole object). Every program's rows when `program` is "".
std::vector<json> rows_for(const Ours& ours, const std::string& program) {
  std::vector<json> rows;
  for (const json& r : ours.object["kernel_references"])
    if (program.empty() || r["reference_kind"] != "attach" || r.value("program", "") == program) rows.push_back(r);
  return rows;
}

bool any_fails(const std::vector<json>& rows) {
  for (const json& r : rows)
    if (r["fails"].get<bool>()) return true;
  return false;
}

std::string dump(const std::vector<json>& rows) {
  std::string s;
  for (const json& r : rows) s += r.dump() + "\n";
  return s;
}

// The programs' objects exist only where the build had the running kernel's BTF; bpf() only where this
// process may load programs.
bool usable(const std::string& object) {
  if (!std::filesystem::exists(object)) {
    skip("no " + object + ": the build had no running kernel BTF to compile the loader programs against");
    return false;
  }
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) {
    skip(why);
    return false;
  }
  return true;
}

// Holds `check`'s rows for one case to the kernel's load, and returns the load.
Load agree(const std::string& object, const std::string& program, const Ours& ours) {
  const Load truth = libbpf_load(object, program);
  const std::vector<json> rows = rows_for(ours, program);
  const bool we_fail = any_fails(rows);
  INFO(object << (program.empty() ? "" : " program " + program) << "\nlibbpf: "
              << (truth.ok ? "loaded" : "failed " + std::to_string(truth.error)) << "\n"
              << truth.log << "\nour rows:\n"
              << dump(rows));
  if (!truth.ok && !truth.btf_failure) {
    // Failed after the BTF steps: check must have passed them.
    std::printf("btfslim-test: NOTE: %s%s: the kernel refused it for a reason BTF does not decide (error %d); "
                "held to libbpf's BTF resolution only\n",
                object.c_str(), program.empty() ? "" : (" " + program).c_str(), truth.error);
    CHECK_FALSE(we_fail);
  } else {
    CHECK(we_fail == truth.btf_failure);
  }
  for (const json& r : rows)
    if (r["fails"].get<bool>()) CHECK_FALSE(r.value("reason", "").empty());
  return truth;
}

// The status of our row of `kind` named `name` (attach rows: of `program`).
std::string status_of(const Ours& ours, const std::string& kind, const std::string& name,
                      const std::string& program = "") {
  for (const json& r : ours.object["kernel_references"])
    if (r["reference_kind"] == kind && r["name"] == name && (program.empty() || r.value("program", "") == program))
      return r["status"];
  return "(no row)";
}

struct Case {
  const char* object;
  const char* kind;
  const char* name;
  const char* status;  // ours, on the running kernel
};

TEST_CASE("check's kfunc, ksym and struct_ops rows agree with the kernel's load, object by object",
          "[check-loader]") {
  const Case cases[] = {
      {"loader_kfuncs", "kfunc", "bpf_task_acquire", "ok"},
      {"loader_kfunc_weak", "kfunc", "bpf_btfslim_absent_kfunc", "absent"},
      {"loader_kfunc_missing", "kfunc", "bpf_btfslim_absent_kfunc", "missing"},
      {"loader_kfunc_proto", "kfunc", "bpf_task_acquire", "incompatible"},
      {"loader_ksyms", "ksym", "runqueues", "ok"},
      {"loader_ksym_missing", "ksym", "btfslim_absent_var", "missing"},
      {"loader_ksym_type", "ksym", "bpf_prog_active", "incompatible"},
      {"loader_struct_ops", "struct_ops", "tcp_congestion_ops", "ok"},
      {"loader_struct_ops_member", "struct_ops", "tcp_congestion_ops", "incompatible"},
      {"loader_struct_ops_absent", "struct_ops", "btfslim_absent_ops", "missing"},
  };
  for (const Case& c : cases) {
    const std::string object = test_object(c.object);
    if (!usable(object)) return;
    SECTION(c.object) {
      const Ours ours = check(object);
      INFO(ours.object.dump(2));
      CHECK(status_of(ours, c.kind, c.name) == c.status);
      const Load truth = agree(object, "", ours);
      // The exit status is the verdict: 1 exactly when a row fails (these objects have no relocations
      // that fail).
      CHECK((ours.run.status == 1) == any_fails(rows_for(ours, "")));
      if (truth.btf_failure) CHECK(ours.run.status == 1);
    }
  }
}

TEST_CASE("check's details: the kernel's types, weak and typeless externs, struct_ops members", "[check-loader]") {
  if (!usable(test_object("loader_ksyms"))) return;
  SECTION("a prototype that differs says where") {
    const Ours ours = check(test_object("loader_kfunc_proto"));
    const json& row = ours.object["kernel_references"][0];
    CHECK(row["name"] == "bpf_task_acquire");
    CHECK_THAT(row.value("reason", ""), Contains("2 parameters here, 1 in the kernel"));
    CHECK_THAT(row.value("resolved", ""), Contains("FUNC bpf_task_acquire"));
  }
  SECTION("a ksym of another type names both") {
    const Ours ours = check(test_object("loader_ksym_type"));
    CHECK_THAT(ours.object["kernel_references"][0].value("reason", ""),
               Contains("struct rq here, int in the kernel"));
  }
  SECTION("typed ksyms resolve to the kernel's VARs; a typeless one is not BTF's to decide") {
    const Ours ours = check(test_object("loader_ksyms"));
    CHECK(status_of(ours, "ksym", "bpf_prog_active") == "ok");
    CHECK(status_of(ours, "ksym", "vfs_read") == "unchecked");
    CHECK(ours.run.status == 0);
  }
  SECTION("weak externs the kernel lacks are absent, and the load goes on") {
    const Ours ours = check(test_object("loader_kfunc_weak"));
    CHECK(status_of(ours, "ksym", "btfslim_absent_weak_var") == "absent");
    for (const json& r : ours.object["kernel_references"])
      if (r["reference_kind"] != "attach") CHECK(r["weak"].get<bool>());
    CHECK(ours.run.status == 0);
  }
  SECTION("a struct_ops member the kernel lacks is named, and so is the map") {
    const Ours ours = check(test_object("loader_struct_ops_member"));
    const json& row = ours.object["kernel_references"][0];
    CHECK(row["map"] == "btfslim_ca");
    CHECK_THAT(row.value("reason", ""), Contains("member 'btfslim_absent_op' is not in the kernel's struct"));
    CHECK_THAT(row.value("reason", ""), Contains("the object sets it"));
  }
}

TEST_CASE("check's attach rows agree with the kernel's load, program by program", "[check-loader]") {
  const std::string object = test_object("loader_attach");
  if (!usable(object)) return;
  const Ours ours = check(object);
  INFO(ours.object.dump(2));
  CHECK(ours.run.status == 1);
  const char* const programs[] = {"fentry_ok",    "fentry_missing", "fexit_ok",         "fexit_missing",
                                  "fmod_ret_ok",  "fmod_ret_missing", "lsm_ok",         "lsm_missing",
                                  "lsm_sleepable_ok", "tp_btf_ok",  "tp_btf_missing",   "iter_ok",
                                  "iter_missing"};
  std::size_t rows = 0;
  for (const char* p : programs) {
    const std::string program = p;
    const bool missing = program.find("missing") != std::string::npos;
    bool found = false;
    for (const json& r : ours.object["kernel_references"]) {
      if (r.value("program", "") != program) continue;
      found = true;
      ++rows;
      CHECK(r["status"] == (missing ? "missing" : "ok"));
    }
    CHECK(found);
    const Load truth = agree(object, program, ours);
    if (missing) CHECK(truth.btf_failure);
  }
  CHECK(rows == std::size(programs));
  // The lookups carry libbpf's prefixes and kinds.
  for (const json& r : ours.object["kernel_references"]) {
    if (r["program"] == "lsm_ok") CHECK(r["lookup"] == "bpf_lsm_file_open");
    if (r["program"] == "tp_btf_ok") CHECK(r["lookup"] == "btf_trace_sched_switch");
    if (r["program"] == "tp_btf_ok") CHECK(r["lookup_kind"] == "TYPEDEF");
    if (r["program"] == "iter_ok") CHECK(r["lookup"] == "bpf_iter_task");
  }
}

TEST_CASE("attach targets a loader sets at run time: --attach-target and --no-attach", "[check-loader]") {
  const std::string object = test_object("loader_attach_late");
  if (!usable(object)) return;
  SECTION("a bare section is unchecked, a SEC(\"?...\") program's missing target does not fail") {
    const Ours ours = check(object);
    CHECK(status_of(ours, "attach", "", "bare") == "unchecked");
    CHECK(status_of(ours, "attach", "btfslim_absent_function", "optional") == "missing");
    // A libbpf-tools placeholder that no kernel has: its loader replaces it, so it is unchecked too.
    CHECK(status_of(ours, "attach", "dummy_file_read", "placeholder") == "unchecked");
    CHECK(ours.run.status == 0);
    // Named, it is held to the kernel like any other.
    for (const std::string target : {"do_unlinkat", "btfslim_absent_function"}) {
      const Ours named = check(object, {"--attach-target", "placeholder=" + target});
      CHECK(status_of(named, "attach", target, "placeholder") == (target == "do_unlinkat" ? "ok" : "missing"));
      const Load truth = libbpf_load(object, "placeholder", {{"placeholder", target}});
      INFO(target << ": " << truth.log);
      CHECK((truth.ok || !truth.btf_failure) == (target == "do_unlinkat"));
    }
    // libbpf refuses the bare section unless its loader names a target: not BTF's verdict.
    const Load plain = libbpf_load(object);
    CHECK_FALSE(plain.ok);
    CHECK_THAT(plain.log, Contains("no BTF-based attach target is specified"));
  }
  SECTION("--attach-target names the target, which is then held to the kernel like any other") {
    for (const std::string target : {"do_unlinkat", "btfslim_absent_function"}) {
      const Ours ours = check(object, {"--attach-target", "bare=" + target});
      CHECK(status_of(ours, "attach", target, "bare") ==
            (target == "do_unlinkat" ? "ok" : "missing"));
      const Load truth = libbpf_load(object, "bare", {{"bare", target}});
      const bool we_fail = any_fails(rows_for(ours, "bare"));
      INFO(target << ": " << truth.log);
      if (truth.ok || truth.btf_failure)
        CHECK(we_fail == truth.btf_failure);
      else
        CHECK_FALSE(we_fail);
      CHECK((ours.run.status == 1) == (target != "do_unlinkat"));
    }
  }
  SECTION("--no-attach reports attach targets without counting them") {
    const Ours ours = check(test_object("loader_attach"), {"--no-attach"});
    CHECK(ours.run.status == 0);
    for (const json& r : ours.object["kernel_references"]) {
      CHECK(r["status"] == "unchecked");
      CHECK_THAT(r.value("reason", ""), Contains("--no-attach"));
    }
  }
  SECTION("an --attach-target naming no program, or not PROG=FUNC, is one line and exit 2") {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"--attach-target", "nosuch=do_unlinkat"}, {"--attach-target", "bare"}, {"--attach-target", "=x"}}) {
      std::vector<std::string> argv{"check", object};
      argv.insert(argv.end(), args.begin(), args.end());
      const RunResult r = btfslim(argv);
      INFO(args[1] << ": " << r.err);
      CHECK(r.status == 2);
      CHECK(r.out.empty());
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK_THAT(r.err, Contains("--attach-target"));
    }
  }
}

TEST_CASE("kernel references in the table, the matrix and the summary lines", "[check-loader]") {
  const std::string object = test_object("loader_kfunc_missing");
  if (!usable(object)) return;
  SECTION("one target: rows with their reason, and a line that counts them") {
    const RunResult r = btfslim({"check", object});
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Contains("KIND"));
    CHECK_THAT(r.out, Contains("kfunc       bpf_btfslim_absent_kfunc"));
    CHECK_THAT(r.out, Contains("MISSING"));
    CHECK_THAT(r.out, Contains("no FUNC 'bpf_btfslim_absent_kfunc' in the kernel's BTF"));
    CHECK_THAT(r.out, Contains(file_name(object) + ": 2 kernel references: 1 ok, 1 missing (1 failing)"));
    CHECK_THAT(r.out, EndsWith("\n1 object x 1 kernel: 1 fail\n"));
  }
  SECTION("several targets: the cell counts it, and the list says what fails where") {
    const std::string vmlinux = running_vmlinux();
    const RunResult r = btfslim({"check", object, test_object("loader_kfuncs"), "--btf", vmlinux, "--btf", vmlinux});
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Contains("1 failing"));
    // The failure's row: owner, kind, verdict, then the name last; the reason below it.
    bool row = false;
    for (const std::string& line : lines_of(r.out))
      row = row || words_of(line) == std::vector<std::string>{"-", "kfunc", "MISSING", "bpf_btfslim_absent_kfunc"};
    INFO(r.out);
    CHECK(row);
    CHECK_THAT(r.out, Contains("no FUNC 'bpf_btfslim_absent_kfunc'"));
    CHECK_THAT(r.out, EndsWith("\n2 objects x 2 kernels: 1 object fails (2 of 4 object/kernel pairs)\n"));
  }
  SECTION("several targets in JSON: one result per target") {
    const std::string vmlinux = running_vmlinux();
    const RunResult r = btfslim({"check", object, "--btf", vmlinux, "--btf", vmlinux, "--format", "json"});
    const json doc = json::parse(r.out);
    const json& row = doc["objects"][0]["kernel_references"][0];
    REQUIRE(row["results"].size() == 2);
    for (const json& res : row["results"]) CHECK(res["status"] == "missing");
  }
}

TEST_CASE("a target without functions (a BTF for CO-RE only) decides no kernel reference", "[check-loader]") {
  const std::string object = test_object("loader_kfunc_missing");
  if (!std::filesystem::exists(object)) {
    skip("no " + object + ": the build had no running kernel BTF to compile the loader programs against");
    return;
  }
  // The CO-RE corpus's targets are made from a few C types: no FUNC, as in a minimized BTF.
  const std::string target = core_target("moved");
  const Ours ours = check(object, {"--btf", target});
  CHECK(ours.run.status == 0);
  REQUIRE(ours.object["kernel_references"].size() == 2);
  for (const json& r : ours.object["kernel_references"]) {
    CHECK(r["status"] == "unchecked");
    CHECK_THAT(r.value("reason", ""), Contains("no FUNC"));
  }
  // The table shows them as JSON does, each unchecked, and its line says why once.
  const RunResult table = btfslim({"check", object, "--btf", target});
  INFO(table.out);
  CHECK(table.status == 0);
  CHECK_THAT(table.out, Contains("PROGRAM / MAP"));
  std::size_t rows = 0;
  for (const std::string& line : lines_of(table.out)) {
    const std::vector<std::string> w = words_of(line);
    rows += w.size() == 5 && w[3] == "unchecked" && w[4] == "-";  // PROGRAM KIND NAME RESULT TARGET
  }
  CHECK(rows == 2);
  CHECK_THAT(table.out, Contains(file_name(object) + ": 2 kernel references: 0 ok, 2 unchecked; the target has no FUNC"));
  // An attach target a section names is unchecked there too, and shown.
  const std::string attach = test_object("loader_attach");
  const RunResult attach_table = btfslim({"check", attach, "--btf", target});
  const Ours attach_json = check(attach, {"--btf", target});
  INFO(attach_table.out);
  std::size_t attach_rows = 0;
  for (const std::string& line : lines_of(attach_table.out)) {
    const std::vector<std::string> w = words_of(line);
    attach_rows += w.size() >= 4 && w[1] == "attach" && w[3] == "unchecked";
  }
  CHECK(attach_rows == attach_json.object["kernel_references"].size());
  CHECK(attach_rows > 0);
}

TEST_CASE("kfuncs and attach targets a module has are found in its BTF, as libbpf looks there", "[check-loader]") {
  const std::string object = test_object("loader_kfunc_missing");
  const std::string vmlinux = running_vmlinux();
  if (!std::filesystem::exists(object) || vmlinux.empty()) {
    skip("no " + object + " or no running kernel BTF: the module BTF is split on it");
    return;
  }
  // A module's split BTF on the running vmlinux that has what vmlinux lacks: the kfunc loader_kfunc_missing
  // calls (void (void), as declared there) and a function to attach loader_attach_late's bare program to.
  BtfPtr base = parse_btf(vmlinux);
  BtfPtr module(btf__new_empty_split(base.get()));
  REQUIRE(module != nullptr);
  const int proto = btf__add_func_proto(module.get(), 0);
  REQUIRE(proto > 0);
  REQUIRE(btf__add_func(module.get(), "bpf_btfslim_absent_kfunc", BTF_FUNC_GLOBAL, proto) > 0);
  REQUIRE(btf__add_func(module.get(), "btfslim_module_function", BTF_FUNC_GLOBAL, proto) > 0);
  TempDir dir;
  const std::string path = dir.file("btfslim_module.btf");
  write_file(path, raw_bytes(module.get()));

  const Ours ours = check(object, {"--base", vmlinux, "--btf", path});
  CHECK(status_of(ours, "kfunc", "bpf_btfslim_absent_kfunc") == "ok");
  for (const json& r : ours.object["kernel_references"])
    if (r["reference_kind"] == "kfunc")  // named by the module it is in, as lsmod names it
      CHECK_THAT(r.value("resolved", ""), Contains("FUNC bpf_btfslim_absent_kfunc (btfslim_module.btf)"));
  CHECK(ours.run.status == 0);

  if (!std::filesystem::exists(test_object("loader_attach_late"))) return;
  const Ours late = check(test_object("loader_attach_late"),
                          {"--base", vmlinux, "--btf", path, "--attach-target", "bare=btfslim_module_function"});
  CHECK(status_of(late, "attach", "btfslim_module_function", "bare") == "ok");
}

}  // namespace
}  // namespace btfslim::test
