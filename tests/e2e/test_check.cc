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
#include "elf_image.h"
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
using Catch::Matchers::Contains;

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
      if (const std::string d = relocation_difference(x, it->second); !d.empty()) differences.push_back(label + d);
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

// Calls `each(section, record)` for every CO-RE record of the object `image` (the bytes of `original`),
// `record` its offset in `image`: for a test to rewrite records in place.
template <typename Each>
void for_each_core_record(std::string& image, const std::string& original, Each&& each) {
  // .BTF.ext: the header's core_relo offset (at 24) past its length (at 4), then the record size and the
  // blocks (section name, count, records of insn_off, type_id, access_str_off, kind).
  const SectionPlace ext = elf_section(image, ".BTF.ext");
  const BtfPtr btf = parse_btf(original);
  std::size_t at = ext.offset + get_u32(image, ext.offset + 4) + get_u32(image, ext.offset + 24);
  const std::uint32_t record_size = get_u32(image, at);
  at += 4;
  while (at < ext.offset + ext.size) {
    const std::string section = btf__name_by_offset(btf.get(), get_u32(image, at));
    const std::uint32_t count = get_u32(image, at + 4);
    at += 8;
    for (std::uint32_t i = 0; i < count; ++i) each(section, at + std::size_t{i} * record_size);
    at += std::size_t{count} * record_size;
  }
}

TEST_CASE("check agrees with libbpf where a local_type_id record points at the second half of a 64-bit load",
          "[check]") {
  // Found by fuzz_core_libbpf (fuzz/corpus/core_libbpf/local-type-id-on-ldimm64-half): libbpf patches the
  // instruction of a local_type_id relocation as of any other, and fails on what is not a well-formed
  // load; btfslim answered with the local id without looking at the instruction.
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  const std::string original = test_object("core_types");
  std::string image = read_file(original);
  bool patched = false;
  for_each_core_record(image, original, [&](const std::string& section, std::size_t record) {
    if (patched || section != "raw_tp/sys_exit" || get_u32(image, record + 12) != 6) return;  // BPF_CORE_TYPE_ID_LOCAL
    put_u32(image, record, 8);  // the first instruction is a 64-bit load: its second half
    patched = true;
  });
  REQUIRE(patched);
  const TempDir dir;
  const std::string object = dir.file("core_types.ldimm64-half.bpf.o");
  write_file(object, image);
  std::vector<std::string> differences;
  compare(object, core_target("moved"), differences);
  report(differences, 1);
  const RunResult r = btfslim({"check", object, "--btf", core_target("moved")});
  CHECK(r.status == 1);
  CHECK_THAT(r.out, Contains("the relocated instruction is not a 64-bit immediate load"));
}

TEST_CASE("check agrees with libbpf where two records name one instruction", "[check]") {
  // Found by fuzz_core_libbpf (fuzz/corpus/core_libbpf/two-records-one-insn): libbpf writes each result
  // into the instruction before the next record comes to it, so a second record checks the value the
  // first wrote, not the compiler's. btfslim judged every record on the code as compiled. Here the
  // second record of each section is moved onto the first one's instruction: field existence, byte
  // offsets, sizes and enum values, on targets where they move, vanish or stay.
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  std::vector<std::string> targets = {core_target("moved"), core_target("missing"), core_target("errors")};
  if (const std::string vmlinux = running_vmlinux(); !vmlinux.empty()) targets.push_back(vmlinux);
  const TempDir dir;
  std::vector<std::string> differences;
  std::size_t runs = 0;
  for (const char* name : {"core_fields", "core_enums", "core_types"}) {
    const std::string original = test_object(name);
    std::string image = read_file(original);
    std::map<std::string, std::size_t> first;  // by section: its first record
    std::size_t moved = 0;
    for_each_core_record(image, original, [&](const std::string& section, std::size_t record) {
      const auto [it, fresh] = first.try_emplace(section, record);
      if (fresh || it->second == SIZE_MAX) return;
      put_u32(image, record, get_u32(image, it->second));
      it->second = SIZE_MAX;  // one record moved a section
      ++moved;
    });
    REQUIRE(moved > 0);
    const std::string object = dir.file(std::string(name) + ".shared-insn.bpf.o");
    write_file(object, image);
    for (const std::string& target : targets) {
      compare(object, target, differences);
      ++runs;
    }
  }
  report(differences, runs);
  // The finding itself: existence checked on a kernel without the struct. The first record writes 0 where
  // the compiler wrote 1, and the second, expecting 1, fails the load.
  std::string image = read_file(test_object("core_fields"));
  std::size_t first = SIZE_MAX;
  for_each_core_record(image, test_object("core_fields"), [&](const std::string& section, std::size_t record) {
    if (section != "tp/sched/sched_process_exec") return;
    if (first == SIZE_MAX) {
      first = record;
    } else if (first != 0) {
      put_u32(image, record, get_u32(image, first));
      first = 0;
    }
  });
  const std::string object = dir.file("core_fields.existence.bpf.o");
  write_file(object, image);
  const RunResult r = btfslim({"check", object, "--btf", core_target("errors")});  // no struct existence
  CHECK(r.status == 1);
  CHECK_THAT(r.out, Contains("unexpected instruction value: got 0, expected 1"));
}

TEST_CASE("check reads access strings as libbpf's sscanf does: white space, signs, a negative first index", "[check]") {
  // Found by fuzz_core_libbpf: libbpf reads each index with sscanf("%d"), so "1 0" is 1:0 (finding 9,
  // fuzz/corpus/core_libbpf/access-with-white-space) and "-1:2" takes the element before the one
  // pointed at, at a 32-bit bit offset that wraps (finding 11); btfslim refused both. Every access
  // string of the objects is rewritten in place, one way per object: its colons made blanks, and
  // "0:A:..." made "-A:..." (the first index negative) or "+0:..." cut to fit.
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  std::vector<std::string> targets = {core_target("moved"), core_target("missing")};
  if (const std::string vmlinux = running_vmlinux(); !vmlinux.empty()) targets.push_back(vmlinux);
  const TempDir dir;
  std::vector<std::string> differences;
  std::size_t runs = 0;
  using Rewrite = std::string (*)(const std::string&);
  const std::pair<const char*, Rewrite> rewrites[] = {
      {"blanks", [](const std::string& a) {
         std::string b = a;
         std::replace(b.begin(), b.end(), ':', ' ');
         return b;
       }},
      {"negative", [](const std::string& a) { return a.size() > 2 && a.starts_with("0:") ? "-" + a.substr(2) : a; }},
      {"plus", [](const std::string& a) { return a.size() > 3 && a.starts_with("0:") ? "+0" + a.substr(3) : a; }},
  };
  // core_fields: the enum objects' access strings are single indexes, which none of these rewrites.
  for (const char* name : {"core_fields"}) {
    const std::string original = test_object(name);
    for (const auto& [how, rewrite] : rewrites) {
      std::string image = read_file(original);
      const SectionPlace btf = elf_section(image, ".BTF");
      const std::size_t strings = btf.offset + get_u32(image, btf.offset + 4) + get_u32(image, btf.offset + 16);
      std::set<std::uint32_t> done;
      std::size_t changed = 0;
      for_each_core_record(image, original, [&](const std::string&, std::size_t record) {
        const std::uint32_t off = get_u32(image, record + 8);
        if (!done.insert(off).second) return;
        const std::string access(image.c_str() + strings + off);
        const std::string now = rewrite(access);
        if (now == access) return;
        REQUIRE(now.size() <= access.size());
        image.replace(strings + off, access.size(), now + std::string(access.size() - now.size(), '\0'));
        ++changed;
      });
      if (changed == 0) continue;
      const std::string object = dir.file(std::string(name) + "." + how + ".bpf.o");
      write_file(object, image);
      for (const std::string& target : targets) {
        compare(object, target, differences);
        ++runs;
      }
    }
  }
  CHECK(runs > 0);
  report(differences, runs);
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
