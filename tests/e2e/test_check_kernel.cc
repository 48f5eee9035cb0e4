// `btfslim check` against the kernel's own verdict (support/kernel_oracle.h): for every program of the
// test objects on their test targets, and of the real-world corpus (../shared/corpus, or
// BTFSLIM_TEST_CORPUS) on the running kernel, libbpf's load (open + load, no attach) says whether it
// loads; check's JSON must say the same, program by program:
//   a program fails on check's word when a relocation poisoned on that target lists it among the
//   programs that reach it, or when a relocation of its own or of .text (which libbpf relocates for
//   every program) is ambiguous or an error.
// Programs that fail for another reason than CO-RE (an attach target, a kfunc, a map the kernel will
// not make) are left out, and listed; objects libbpf cannot open (legacy 'maps' sections) and
// big-endian objects (this kernel cannot load them) are skipped, visibly. 0 false alarms (check fails
// what loads) and 0 misses (check passes what the kernel rejects) are required.
#include "kernel_oracle.h"
#include "libbpf_oracle.h"
#include "process.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "check_json.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What check says about each program of one object on one target: program -> why it fails ("" = loads).
struct CheckVerdict {
  int status = -1;
  std::map<std::string, std::string> fails;
};

CheckVerdict check_verdict(const std::string& object, const std::string& target,
                           const std::vector<std::string>& programs) {
  std::vector<std::string> args{"check", object, "--format", "json"};
  if (!target.empty()) args.insert(args.end(), {"--btf", target});
  const RunResult r = btfslim(args);
  INFO("btfslim check " << object << " " << target << "\nexit " << r.status << "\nstderr: " << r.err);
  REQUIRE((r.status == 0 || r.status == 1));
  const json doc = json::parse(r.out);
  CheckVerdict v;
  v.status = r.status;
  for (const std::string& p : programs) v.fails[p] = "";
  for (const json& rel : relocations_on_kernel(doc["objects"][0])) {
    const std::string status = rel.value("status", "");
    const std::string what = rel.value("program", "") + " insn #" + std::to_string(rel.value("insn_idx", 0)) + " " +
                              rel.value("relocation_kind", "") + " " + rel.value("accessor", "") + ": " + status;
    if (status == "poisoned") {
      for (const json& p : rel.value("programs", json::array()))
        if (v.fails[p.get<std::string>()].empty()) v.fails[p.get<std::string>()] = what;
    } else if (status == "ambiguous" || status == "error") {
      for (auto& [p, why] : v.fails)
        if (why.empty() && (rel.value("section", "") == ".text" || rel.value("program", "") == p)) why = what;
    }
  }
  return v;
}

struct Tally {
  int agree = 0, false_alarms = 0, misses = 0, excluded = 0;
  std::vector<std::string> disagreements, exclusions;
};

// Compares check with the kernel for each program of `object` on `target`; false when skipped.
bool compare(const std::string& object, const std::string& target, Tally& t) {
  const ObjectLoad& load = kernel_load(object, target);
  if (!load.available) {
    skip(load.unavailable_reason);
    return false;
  }
  if (!load.opened) {
    skip("libbpf 1.1.2 cannot open " + object + ", so the kernel gives no verdict: " +
         load.open_error.substr(0, load.open_error.find('\n', load.open_error.find('\n') + 1)));
    return false;
  }
  std::vector<std::string> names;
  for (const ProgramLoad& p : load.programs) names.push_back(p.name);
  const CheckVerdict ours = check_verdict(object, target, names);
  const std::string where = fs::path(object).filename().string() + " on " +
                            (target.empty() ? std::string("the running kernel") : fs::path(target).filename().string());
  bool any_excluded = false, kernel_fails = false;
  for (const ProgramLoad& p : load.programs) {
    if (p.outcome == ProgramLoad::Other) {
      ++t.excluded;
      any_excluded = true;
      t.exclusions.push_back(where + ": " + p.name + ": " + p.reason);
      continue;
    }
    const bool kernel = p.outcome != ProgramLoad::Loaded;
    kernel_fails |= kernel;
    const std::string& why = ours.fails.at(p.name);
    const bool check = !why.empty();
    if (check == kernel) {
      ++t.agree;
    } else if (check) {
      ++t.false_alarms;
      t.disagreements.push_back(where + ": " + p.name + ": false alarm: the kernel loads it, check says " + why);
    } else {
      ++t.misses;
      t.disagreements.push_back(where + ": " + p.name + ": miss: the kernel says " + outcome_name(p.outcome) +
                                ", check passes it\n" + p.log.substr(p.log.size() > 1500 ? p.log.size() - 1500 : 0));
    }
  }
  // The object's verdict, where every program has one: exit 1 exactly when some program fails.
  if (!any_excluded) {
    INFO(where);
    CHECK(ours.status == (kernel_fails ? 1 : 0));
  }
  return true;
}

void report(const std::string& what, const Tally& t) {
  std::printf("btfslim-test: %s: %d programs agree with the kernel, %d false alarms, %d misses, %d left out "
              "(failing for reasons other than CO-RE)\n",
              what.c_str(), t.agree, t.false_alarms, t.misses, t.excluded);
  for (const std::string& e : t.exclusions) std::printf("btfslim-test:   left out: %s\n", e.c_str());
  std::string all;
  for (const std::string& d : t.disagreements) all += d + "\n";
  INFO(all);
  CHECK(t.false_alarms == 0);
  CHECK(t.misses == 0);
}

}  // namespace

TEST_CASE("check agrees with the kernel on every idiom of guarding a CO-RE read", "[check-kernel]") {
  const std::string object = test_object("core_deadcode");
  Tally t;
  for (const char* name : {"deadcode_old", "deadcode_new"}) {
    if (!compare(object, core_target(name), t)) return;
  }
  report("core_deadcode", t);
  CHECK(t.excluded == 0);

  // What the kernel says, spelt out: on old only the *_fails programs fail, on new none.
  const ObjectLoad& old_load = kernel_load(object, core_target("deadcode_old"));
  const ObjectLoad& new_load = kernel_load(object, core_target("deadcode_new"));
  std::set<std::string> failing;
  for (const ProgramLoad& p : old_load.programs)
    if (p.outcome != ProgramLoad::Loaded) failing.insert(p.name);
  CHECK(failing == std::set<std::string>{"flag_to_global_fails", "in_loop_hoisted_fails", "unguarded_fails",
                                         "ignored_fails", "wrong_guard_fails", "data_guard_fails",
                                         "after_call_fails"});
  CHECK(old_load.programs.size() == 22);
  for (const ProgramLoad& p : new_load.programs) CHECK(p.outcome == ProgramLoad::Loaded);
}

TEST_CASE("check agrees with the kernel on the CO-RE test objects and the trace programs", "[check-kernel]") {
  Tally t;
  std::vector<std::string> objects = core_corpus_objects();
  objects.push_back(test_object("core_guarded"));
  for (const std::string& object : objects)
    for (const std::string& target : core_corpus_targets())
      if (!compare(object, target, t)) return;
  if (!running_vmlinux().empty())
    for (const std::string& object : trace_objects())
      if (!compare(object, "", t)) return;
  report("the CO-RE test objects", t);
}

TEST_CASE("check agrees with the kernel on the real-world corpus", "[check-kernel]") {
  const std::vector<CorpusEntry> corpus = corpus_manifest();
  if (corpus.empty()) {
    skip("no corpus (set BTFSLIM_TEST_CORPUS)");
    return;
  }
  if (running_vmlinux().empty()) {
    skip("no /sys/kernel/btf/vmlinux: the corpus is checked against the running kernel");
    return;
  }
  Tally t;
  int objects = 0;
  for (const CorpusEntry& e : corpus) {
    if (!e.little_endian) {
      skip(e.file + ": big-endian, this kernel cannot load it");
      continue;
    }
    if (!e.has_btf_ext || e.programs == 0) continue;  // nothing to load or relocate
    if (!compare(e.path, "", t)) {
      if (!kernel_load(e.path, "").available) return;
      continue;
    }
    ++objects;
  }
  report("the corpus (" + std::to_string(objects) + " objects)", t);
}

}  // namespace btfslim::test
