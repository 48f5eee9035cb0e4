// `btfslim check` against libbpf 1.1.2 (support/libbpf_oracle.h): for every object of the CO-RE corpus
// and every target BTF, and for the trace programs against the running kernel, each relocation libbpf
// processed must have our record with the same program and relo #, and agree with it:
//   libbpf patched  -> "status": "ok" and "value" = the new value libbpf wrote
//   libbpf poisoned -> "status": "poisoned"
//   libbpf failed   -> "status": "ambiguous" or "error"
// and the same section, kind, local type id, instruction index and matching target ids. libbpf stops
// at an object's first failure; the programs of that object are then also relocated one at a time
// (core_errors gives every case its own program and types, so that they do not depend on each other).
// A mismatch prints one line per relocation, libbpf's outcome beside ours.
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "check_json.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

using nlohmann::json;

// Our relocation records for `object` against `btf`, by (program, relo #).
struct Ours {
  RunResult run;
  std::map<std::pair<std::string, int>, json> records;
};

Ours check_json(const std::string& object, const std::string& btf) {
  Ours ours;
  ours.run = btfslim({"check", object, "--btf", btf, "--format", "json"});
  INFO("btfslim check " << object << " --btf " << btf << " --format json\nexit " << ours.run.status
                        << "\nstderr: " << ours.run.err);
  REQUIRE((ours.run.status == 0 || ours.run.status == 1));
  json doc;
  try {
    doc = json::parse(ours.run.out);
  } catch (const json::exception& e) {
    FAIL("stdout is not JSON (" << e.what() << "):\n" << ours.run.out.substr(0, 2000));
  }
  REQUIRE(doc.contains("objects"));
  REQUIRE(doc["objects"].size() == 1);
  const json obj = object_on_kernel(doc["objects"][0]);
  CHECK(obj.value("file", "") == object);
  for (const json& r : obj.value("relocations", json::array())) {
    const auto key = std::make_pair(r.value("program", ""), r.value("relo_idx", -1));
    if (!ours.records.emplace(key, r).second)
      FAIL("two records for " << key.first << " relo #" << key.second << ": " << r.dump());
  }
  return ours;
}

std::string describe_libbpf(const LibbpfRelo& x) {
  std::ostringstream s;
  s << outcome_name(x.outcome);
  if (x.insn_idx >= 0) s << " insn #" << x.insn_idx;
  if (x.outcome == LibbpfRelo::Patched) s << " -> " << x.value;
  if (x.outcome == LibbpfRelo::Failed) s << " (" << x.error << ")";
  if (!x.reason.empty() && x.outcome != LibbpfRelo::Patched) s << ": " << x.reason;
  return s.str();
}

std::string describe_ours(const json& r) {
  std::ostringstream s;
  s << r.value("status", "?");
  if (r.contains("insn_idx")) s << " insn #" << r["insn_idx"];
  if (r.contains("value")) s << " -> " << r["value"];
  if (r.contains("reason")) s << ": " << r["reason"].get<std::string>();
  return s.str();
}

std::vector<std::uint64_t> sorted_ids(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Where our record for libbpf's `x` differs from it: "" when it agrees, else one line saying how.
std::string difference(const LibbpfRelo& x, const json& r) {
  std::vector<std::string> what;
  const std::string status = r.value("status", "");
  switch (x.outcome) {
    case LibbpfRelo::Patched:
      if (status != "ok") what.push_back("status");
      else if (!r.contains("value") || !r["value"].is_number_integer())
        what.push_back("value missing");
      else if (r["value"].get<std::uint64_t>() != x.value) what.push_back("value");
      break;
    case LibbpfRelo::Poisoned:
      if (status != "poisoned") what.push_back("status");
      break;
    case LibbpfRelo::Failed:
      if (status != "ambiguous" && status != "error") what.push_back("status");
      break;
  }
  if (!x.section.empty() && r.value("section", "") != x.section) what.push_back("section " + r.value("section", ""));
  if (!x.kind.empty() && r.value("relocation_kind", "") != x.kind)
    what.push_back("relocation_kind " + r.value("relocation_kind", ""));
  if (!x.kind.empty() && r.value("local_type_id", 0u) != x.local_type_id) what.push_back("local_type_id");
  if (x.insn_idx >= 0 && r.value("insn_idx", -1) != x.insn_idx) what.push_back("insn_idx");
  std::vector<std::uint64_t> targets;
  for (const json& t : r.value("type_ids", json::array()))
    if (t.is_number()) targets.push_back(t.get<std::uint64_t>());
  if (sorted_ids(targets) != sorted_ids(std::vector<std::uint64_t>(x.matching_targets.begin(), x.matching_targets.end())))
    what.push_back("type_ids " + r.value("type_ids", json::array()).dump());
  if (what.empty()) return "";
  std::ostringstream s;
  s << x.program << " relo #" << x.relo_idx << " [" << x.section << "] " << x.kind << " " << x.local_spec
    << "\n      libbpf: " << describe_libbpf(x) << "\n      ours:   " << describe_ours(r) << "\n      differ: ";
  for (std::size_t i = 0; i < what.size(); ++i) s << (i ? ", " : "") << what[i];
  return s.str();
}

// Compares libbpf with ours for one object and target; appends the differences. false when bpf() is
// unavailable (the caller skips).
bool compare(const std::string& object, const std::string& btf, std::vector<std::string>& differences) {
  const LibbpfRelocation& theirs = libbpf_relocate(object, btf);
  if (!theirs.available) return false;
  const std::string label = file_name(object) + " against " + file_name(btf) + ": ";
  {
    INFO(label << "libbpf's log:\n" << theirs.log);
    REQUIRE(theirs.relocated);
  }
  const Ours ours = check_json(object, btf);

  std::set<std::pair<std::string, int>> compared;
  auto compare_run = [&](const LibbpfRelocation& run) {
    for (const LibbpfRelo& x : run.relocations) {
      if (!compared.insert({x.program, x.relo_idx}).second) continue;
      const auto it = ours.records.find({x.program, x.relo_idx});
      if (it == ours.records.end()) {
        differences.push_back(label + x.program + " relo #" + std::to_string(x.relo_idx) + " [" + x.section + "] " +
                              x.kind + " " + x.local_spec + "\n      libbpf: " + describe_libbpf(x) +
                              "\n      ours:   no such record");
        continue;
      }
      if (const std::string d = difference(x, it->second); !d.empty()) differences.push_back(label + d);
    }
  };
  compare_run(theirs);

  if (!theirs.failed) {
    // libbpf went through every record of every section: we must have as many, no more.
    std::size_t records = 0;
    for (const auto& [section, n] : theirs.section_counts) records += static_cast<std::size_t>(n);
    if (ours.records.size() != records)
      differences.push_back(label + "libbpf relocated " + std::to_string(records) + " records, we report " +
                            std::to_string(ours.records.size()));
  } else {
    // libbpf stopped at the first failure: the rest, one program at a time.
    for (const std::string& program : theirs.programs) {
      const LibbpfRelocation& alone = libbpf_relocate(object, btf, {program});
      INFO(label << "libbpf's log for " << program << " alone:\n" << alone.log);
      REQUIRE(alone.relocated);
      compare_run(alone);
    }
  }
  return true;
}

void report(const std::vector<std::string>& differences, std::size_t runs) {
  if (differences.empty()) return;
  std::ostringstream s;
  s << differences.size() << " relocation(s) differ from libbpf 1.1.2 over " << runs << " object/target pairs:\n";
  for (std::size_t i = 0; i < differences.size() && i < 200; ++i) s << "  " << differences[i] << "\n";
  if (differences.size() > 200) s << "  ... and " << differences.size() - 200 << " more\n";
  FAIL(s.str());
}

}  // namespace

TEST_CASE("check agrees with libbpf on every relocation of the CO-RE corpus", "[check]") {
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  std::vector<std::string> differences;
  std::size_t runs = 0;
  for (const std::string& object : core_corpus_objects())
    for (const std::string& btf : core_corpus_targets()) {
      compare(object, btf, differences);
      ++runs;
    }
  report(differences, runs);
}

TEST_CASE("check agrees with libbpf on the trace programs against the running kernel", "[check]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  if (trace_objects().empty())
    return skip("the trace_*.bpf.o objects were not built (no kernel BTF at configure time)");
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  std::vector<std::string> differences;
  for (const std::string& object : trace_objects()) compare(object, vmlinux, differences);
  report(differences, trace_objects().size());
}

TEST_CASE("check exits 0 when libbpf patches everything, 1 when it poisons or fails anything", "[check]") {
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  for (const std::string& object : core_corpus_objects())
    for (const std::string& btf : core_corpus_targets()) {
      const LibbpfRelocation& theirs = libbpf_relocate(object, btf);
      const bool all_patched =
          !theirs.failed && std::all_of(theirs.relocations.begin(), theirs.relocations.end(),
                                        [](const LibbpfRelo& x) { return x.outcome == LibbpfRelo::Patched; });
      const RunResult r = btfslim({"check", object, "--btf", btf});
      INFO(file_name(object) << " against " << file_name(btf) << ": exit " << r.status << "\n"
                             << r.out << r.err);
      CHECK(r.status == (all_patched ? 0 : 1));
    }
}

}  // namespace btfslim::test
