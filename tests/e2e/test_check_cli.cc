// `btfslim check` as a user meets it on the command line ([check-cli]): several targets give a matrix
// of objects by kernels, files named by their shortest unique suffix, then what fails where and the
// verdict line, and in JSON per-target results that agree with single-target runs; --failures-only
// keeps what fails; GitHub workflow commands and JUnit XML for CI; a directory stands for every BTF
// file under it; a poisoned read in dead code does not fail, unless --strict;
// objects with nothing to relocate get a note; broken objects get one line on stderr and exit 2; and
// the output is the same from run to run.
//
// The inputs are the test build's CO-RE corpus (tests/bpf/core_*.bpf.c, core_guarded.bpf.c for the
// guards) and its targets (tests/data/core_target_*.c), types_only.bpf.o for an object with .BTF and no
// .BTF.ext, and copies of minimal.bpf.o patched here. The values themselves are held to libbpf in
// test_check.cc; here a single-target run of the same object and target is the reference.
#include "archives.h"
#include "check_json.h"
#include "elf_image.h"
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <tuple>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using nlohmann::json;

std::string no_ext_object() { return build_data_dir() + "/types_only.bpf.o"; }
std::string guarded_object() { return test_object("core_guarded"); }

// The CO-RE corpus with the guarded reads.
std::vector<std::string> corpus_objects() {
  std::vector<std::string> objects = core_corpus_objects();
  objects.push_back(guarded_object());
  return objects;
}

// Runs check with `args` and parses its JSON; the run must end in 0 or 1.
json check_json(std::vector<std::string> args) {
  args.insert(args.begin(), "check");
  args.insert(args.end(), {"--format", "json"});
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\nexit " << r.status << "\nstderr: " << r.err);
  REQUIRE((r.status == 0 || r.status == 1));
  CHECK(r.err.empty());
  json doc;
  try {
    doc = json::parse(r.out);
  } catch (const json::exception& e) {
    FAIL("stdout is not JSON (" << e.what() << "):\n" << r.out.substr(0, 2000));
  }
  REQUIRE(doc.contains("objects"));
  CHECK(doc.value("failed", false) == (r.status == 1));
  REQUIRE(doc.at("kernels").is_array());
  return doc;
}

// The files of the document's kernels, in order.
std::vector<std::string> kernel_files(const json& doc) {
  std::vector<std::string> files;
  for (const json& k : doc.at("kernels")) files.push_back(k.at("file"));
  return files;
}

// The JSON object of `obj` checked against `btf` alone, run once per argument set.
const json& single(const std::string& obj, const std::string& btf, bool strict) {
  static std::map<std::tuple<std::string, std::string, bool>, json> runs;
  const auto key = std::make_tuple(obj, btf, strict);
  if (const auto it = runs.find(key); it != runs.end()) return it->second;
  std::vector<std::string> args{obj, "--btf", btf};
  if (strict) args.push_back("--strict");
  const json doc = check_json(args);
  INFO(command_line(args));
  CHECK(kernel_files(doc) == std::vector<std::string>{btf});
  REQUIRE(doc["objects"].size() == 1);
  return runs.emplace(key, object_on_kernel(doc["objects"][0])).first->second;
}

// The fields of a relocation record that do not depend on the target.
const std::vector<std::string> kRecordFields = {"section",  "program",         "relo_idx",      "insn_off", "insn_idx",
                                                "relocation_kind", "local_type_id", "access",   "accessor"};

// A single-target record without its target-independent fields: what a multi-target "results" entry
// must hold (its nulls left out).
json result_part(const json& record) {
  json r = record;
  for (const auto& f : kRecordFields) r.erase(f);
  return r;
}

std::size_t failing_count(const json& single_object) {
  std::size_t n = 0;
  for (const json& r : single_object["relocations"])
    if (r.value("fails", false)) ++n;
  return n;
}

// A multi-target JSON document against single-target runs of every object/target pair: the same
// records, and per record one result per target, in target order, equal to the single run's.
void expect_agrees_with_single_runs(const json& doc, const std::vector<std::string>& objects,
                                    const std::vector<std::string>& targets, bool strict) {
  CHECK(kernel_files(doc) == targets);
  REQUIRE(doc["objects"].size() == objects.size());
  std::vector<std::string> differences;
  bool any_fails = false;
  for (std::size_t o = 0; o < objects.size(); ++o) {
    const json m = without_nulls(doc["objects"][o]);
    CHECK(m.value("file", "") == objects[o]);
    const json& relos = m["relocations"];
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const json& s = single(objects[o], targets[t], strict);
      const std::string pair = objects[o] + " on " + targets[t];
      if (m.value("has_btf_ext", true) != s.value("has_btf_ext", true) || m.value("note", "") != s.value("note", ""))
        differences.push_back(pair + ": has_btf_ext or note differ");
      if (relos.size() != s["relocations"].size()) {
        differences.push_back(pair + ": " + std::to_string(relos.size()) + " records, the single run has " +
                              std::to_string(s["relocations"].size()));
        continue;
      }
      for (std::size_t i = 0; i < relos.size(); ++i) {
        const json& mr = relos[i];
        const json& sr = s["relocations"][i];
        for (const auto& f : kRecordFields)
          if (mr.value(f, json()) != sr.value(f, json()))
            differences.push_back(pair + " record #" + std::to_string(i) + ": " + f + " " + mr.value(f, json()).dump() +
                                  ", single run " + sr.value(f, json()).dump());
        if (!mr.contains("results") || mr["results"].size() != targets.size()) {
          differences.push_back(pair + " record #" + std::to_string(i) + ": results " + mr.value("results", json()).dump());
          continue;
        }
        // No per-target field may leak into the record itself.
        for (const char* f : {"status", "value", "reason", "reachable", "programs", "fails"})
          if (mr.contains(f)) differences.push_back(pair + " record #" + std::to_string(i) + " has '" + f + "' outside results");
        const json expected = result_part(sr);
        if (without_nulls(mr["results"][t]) != expected)
          differences.push_back(pair + " record #" + std::to_string(i) + " (" + sr.value("accessor", "") +
                                "):\n      results[" + std::to_string(t) + "]: " + mr["results"][t].dump() +
                                "\n      single run: " + expected.dump());
        any_fails = any_fails || sr.value("fails", false);
      }
    }
  }
  CHECK(doc.value("failed", !any_fails) == any_fails);
  if (differences.empty()) return;
  std::ostringstream s;
  s << differences.size() << " difference(s) from single-target runs:\n";
  for (std::size_t i = 0; i < differences.size() && i < 50; ++i) s << "  " << differences[i] << "\n";
  FAIL(s.str());
}

// The table of several targets: a header of kernels, one row per object, then per object and set of
// kernels its failures share the failing relocations and kernel references, then the verdict line.
struct Matrix {
  std::vector<std::string> kernels;  // the header's columns
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;  // object, cells
  struct Failing {
    std::string heading;               // "OBJ fails on 2 of 3 kernels: a, b"
    std::string object;                // OBJ
    std::vector<std::string> kernels;  // the kernels the heading names
    std::vector<std::string> lines;    // a row, with its reason after a line break when it has one
  };
  std::vector<Failing> failing;
  std::string verdict;  // "N objects x M kernels: K objects fail (P of N*M object/kernel pairs)"
};

// The kernels a heading's "fails on ..." names, of `all`: "both kernels", "all 3 kernels", "1 of 3
// kernels: a", "2 of 3 kernels: all but c".
std::vector<std::string> kernels_named(const std::string& phrase, const std::vector<std::string>& all) {
  if (phrase == "both kernels" || phrase == "all " + std::to_string(all.size()) + " kernels") return all;
  const std::string of = " of " + std::to_string(all.size()) + " kernels: ";
  const std::size_t at = phrase.find(of);
  INFO("a list of kernels: " << phrase);
  REQUIRE(at != std::string::npos);
  const std::size_t count = std::stoul(phrase.substr(0, at));
  std::string list = phrase.substr(at + of.size());
  const bool but = list.starts_with("all but ");
  if (but) list = list.substr(8);
  std::vector<std::string> named;
  for (std::size_t from = 0;;) {
    const std::size_t comma = list.find(", ", from);
    named.push_back(list.substr(from, comma - from));
    if (comma == std::string::npos) break;
    from = comma + 2;
  }
  std::vector<std::string> kernels;
  for (const std::string& k : all)
    if ((std::find(named.begin(), named.end(), k) != named.end()) != but) kernels.push_back(k);
  CHECK(kernels.size() == count);
  return kernels;
}

Matrix parse_matrix(const std::string& out) {
  Matrix m;
  std::vector<std::string> lines = lines_of(out);
  REQUIRE(!lines.empty());
  m.verdict = lines.back();
  lines.pop_back();
  if (lines.empty()) return m;  // --failures-only, and nothing fails
  std::vector<std::string> header = words_of(lines[0]);
  REQUIRE(!header.empty());
  CHECK(header[0] == "OBJECT");
  m.kernels.assign(header.begin() + 1, header.end());
  std::size_t i = 1;
  for (; i < lines.size() && !lines[i].empty(); ++i) {
    const std::vector<std::string> w = words_of(lines[i]);
    REQUIRE(!w.empty());
    std::vector<std::string> cells;
    for (std::size_t k = 1; k < w.size(); ++k) {
      // "N failing" is two words.
      if (k + 1 < w.size() && w[k + 1] == "failing") {
        cells.push_back(w[k] + " failing");
        ++k;
      } else {
        cells.push_back(w[k]);
      }
    }
    m.rows.push_back({w[0], cells});
  }
  for (; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty()) continue;
    if (line.starts_with("  ")) {
      INFO("a failure before any heading: " << line);
      REQUIRE(!m.failing.empty());
      std::vector<std::string>& rows = m.failing.back().lines;
      if (line[2] != ' ') {
        rows.push_back(line);
      } else {
        INFO("a reason before any row: " << line);
        REQUIRE(!rows.empty());
        rows.back() += "\n" + line;
      }
    } else if (line.starts_with("KERNEL ")) {
      // The legend of kernels named by their release: up to the next blank line.
      while (i + 1 < lines.size() && !lines[i + 1].empty()) ++i;
    } else {
      INFO("a heading line: " << line);
      const std::size_t at = line.find(" fails on ");
      REQUIRE(at != std::string::npos);
      m.failing.push_back({line, line.substr(0, at), kernels_named(line.substr(at + 10), m.kernels), {}});
    }
  }
  return m;
}

// Whether `line` holds `pieces` in this order.
bool holds_in_order(const std::string& line, const std::vector<std::string>& pieces) {
  std::size_t at = 0;
  for (const auto& p : pieces) {
    at = line.find(p, at);
    if (at == std::string::npos) return false;
    at += p.size();
  }
  return true;
}

// How the tables name files whose names differ: by their names alone.
std::vector<std::string> shown_names(const std::vector<std::string>& paths) {
  std::vector<std::string> names;
  for (const std::string& p : paths) names.push_back(file_name(p));
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  INFO("these tests name files whose names differ");
  REQUIRE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  return names;
}

// A failing relocation's verdict as the tables print it.
std::string verdict_of(const json& rec) {
  const std::string status = rec.value("status", "");
  if (status == "poisoned" && !rec.value("reachable", true)) return "poisoned (dead code)";
  std::string upper = status;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

// "3 objects x 1 kernel: 2 fail"; "3 objects x 2 kernels: 2 objects fail (3 of 6 object/kernel pairs)".
std::string verdict_line(std::size_t objects, std::size_t kernels, std::size_t failing_objects,
                         std::size_t failing_pairs) {
  const std::string lead = std::to_string(objects) + (objects == 1 ? " object" : " objects") + " x " +
                           std::to_string(kernels) + (kernels == 1 ? " kernel" : " kernels") + ": ";
  if (kernels == 1) return lead + std::to_string(failing_pairs) + " fail";
  return lead + std::to_string(failing_objects) + (failing_objects == 1 ? " object fails (" : " objects fail (") +
         std::to_string(failing_pairs) + " of " + std::to_string(objects * kernels) + " object/kernel pairs)";
}

// The matrix of `objects` on `targets` against single-target runs of each pair; with `failures_only`,
// only the objects that fail somewhere.
void expect_matrix(const RunResult& r, const std::vector<std::string>& objects, const std::vector<std::string>& targets,
                   bool strict, bool failures_only = false) {
  INFO("stdout:\n" << r.out << "stderr: " << r.err);
  const Matrix m = parse_matrix(r.out);
  const std::vector<std::string> object_names = shown_names(objects), kernel_names = shown_names(targets);
  std::vector<std::size_t> rows;  // the objects shown
  std::size_t failures = 0, failing_objects = 0;
  for (std::size_t o = 0; o < objects.size(); ++o) {
    bool fails = false;
    for (const std::string& t : targets) {
      const bool pair_fails = failing_count(single(objects[o], t, strict)) != 0;
      failures += pair_fails;
      fails = fails || pair_fails;
    }
    failing_objects += fails;
    if (fails || !failures_only) rows.push_back(o);
  }
  CHECK(m.verdict == verdict_line(objects.size(), targets.size(), failing_objects, failures));
  CHECK(r.status == (failures ? 1 : 0));
  if (rows.empty()) {
    CHECK(m.rows.empty());
    return;
  }
  CHECK(m.kernels == kernel_names);
  REQUIRE(m.rows.size() == rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const std::size_t o = rows[k];
    CHECK(m.rows[k].first == object_names[o]);
    REQUIRE(m.rows[k].second.size() == targets.size());
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const json& s = single(objects[o], targets[t], strict);
      const std::size_t n = failing_count(s);
      const std::string cell = s.contains("note") ? "-" : n == 0 ? "ok" : std::to_string(n) + " failing";
      INFO(objects[o] << " on " << targets[t]);
      CHECK(m.rows[k].second[t] == cell);
    }
  }
  // Each failing relocation of each object on each kernel (as its single run has it) is a row under
  // exactly one of the object's headings, one that names the kernel; no row is there for a kernel
  // it does not fail on; an object's headings name different sets of kernels.
  std::size_t listed = 0, expected = 0;
  for (const Matrix::Failing& f : m.failing) {
    listed += f.lines.size() * f.kernels.size();
    INFO(f.heading);
    CHECK(std::count_if(m.failing.begin(), m.failing.end(), [&](const Matrix::Failing& g) {
            return g.object == f.object && g.kernels == f.kernels;
          }) == 1);
  }
  for (const std::size_t o : rows)
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const json& s = single(objects[o], targets[t], strict);
      INFO(objects[o] << " on " << targets[t]);
      for (const json& rec : s["relocations"]) {
        if (!rec.value("fails", false)) continue;
        ++expected;
        // Program, instruction, kind, verdict, and the accessor last; the reason on the next line.
        std::vector<std::string> pieces{rec.value("program", ""), "insn #" + std::to_string(rec.value("insn_idx", -1)) + " ",
                                        rec.value("relocation_kind", ""), verdict_of(rec),
                                        rec.value("accessor", "") + (rec.contains("reason") ? "\n" : "")};
        if (rec.contains("reason")) pieces.push_back(rec.value("reason", ""));
        std::size_t found = 0;
        for (const Matrix::Failing& f : m.failing) {
          if (f.object != object_names[o] ||
              std::find(f.kernels.begin(), f.kernels.end(), kernel_names[t]) == f.kernels.end())
            continue;
          for (const std::string& line : f.lines) found += holds_in_order(line, pieces);
        }
        INFO("record: " << rec.dump());
        CHECK(found == 1);
      }
    }
  CHECK(listed == expected);
}

// ---- ELF patching ----

// minimal.bpf.o (little-endian, as clang -target bpf writes on these hosts) and where in it the
// .BTF.ext subsections' first block headers {section name, record count} are.
struct Minimal {
  std::string image;
  std::size_t ext = 0;         // .BTF.ext
  std::size_t func_block = 0;  // func_info's first block header
  std::size_t core_block = 0;  // core_relo's first block header
};

Minimal minimal_object() {
  Minimal m;
  m.image = read_file(build_data_dir() + "/minimal.bpf.o");
  REQUIRE(m.image.compare(0, 4, "\x7f" "ELF") == 0);
  REQUIRE(m.image[5] == 1);  // ELFDATA2LSB
  const ElfLayout layout = elf_layout(m.image);
  REQUIRE(layout.sections.count(".BTF.ext") == 1);
  m.ext = layout.sections.at(".BTF.ext").offset;
  REQUIRE(get_u32(m.image, m.ext) == 0x0001eb9f);  // magic, version 1, no flags
  const std::size_t hdr_len = get_u32(m.image, m.ext + 4);
  REQUIRE(hdr_len >= 32);
  REQUIRE(get_u32(m.image, m.ext + 12) > 0);  // func_info_len
  REQUIRE(get_u32(m.image, m.ext + 28) > 0);  // core_relo_len
  m.func_block = m.ext + hdr_len + get_u32(m.image, m.ext + 8) + 4;
  m.core_block = m.ext + hdr_len + get_u32(m.image, m.ext + 24) + 4;
  return m;
}

// One rejected run: status 2, nothing on stdout, one line "btfslim: FILE: ..." holding `fragment`.
void expect_rejected(const std::vector<std::string>& args, const std::string& file, const std::string& fragment) {
  for (const char* format : {"table", "json"}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--format", format});
    const RunResult r = btfslim(a);
    INFO(command_line(a) << "\nstatus " << r.status << "\nstdout: " << r.out.substr(0, 300) << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, EndsWith("\n"));
    CHECK_THAT(r.err, StartsWith("btfslim: " + file + ": "));
    CHECK_THAT(r.err, Contains(fragment));
  }
}

// The table row of a relocation: program, kind and, last, the accessor on one line.
std::string row_of(const std::string& out, const std::string& program, const std::string& kind,
                   const std::string& accessor) {
  std::string found;
  for (const std::string& line : lines_of(out)) {
    const std::vector<std::string> w = words_of(line);
    if (w.size() >= 4 && w[0] == program && w[2] == kind && line.ends_with("  " + accessor)) {
      INFO("two rows for " << program << " " << kind << " " << accessor << ":\n" << out);
      CHECK(found.empty());
      found = line;
    }
  }
  INFO("no row for " << program << " " << kind << " " << accessor << " in:\n" << out);
  CHECK(!found.empty());
  return found;
}

// The JSON record of a relocation, by program, kind and access string.
const json& record_of(const json& object, const std::string& program, const std::string& kind,
                      const std::string& access) {
  const json* found = nullptr;
  for (const json& r : object["relocations"])
    if (r.value("program", "") == program && r.value("relocation_kind", "") == kind && r.value("access", "") == access) {
      INFO("two records for " << program << " " << kind << " " << access);
      REQUIRE(found == nullptr);
      found = &r;
    }
  INFO("no record for " << program << " " << kind << " " << access << " in " << object.dump());
  REQUIRE(found != nullptr);
  return *found;
}

}  // namespace

TEST_CASE("several targets: a matrix of targets by objects, then what fails where", "[check-cli]") {
  // Every corpus object and an ELF with nothing to relocate, on every corpus target: cells that are ok,
  // that fail, and that have nothing to check.
  std::vector<std::string> objects = corpus_objects();
  objects.push_back(no_ext_object());
  const std::vector<std::string> targets = core_corpus_targets();
  for (const bool strict : {false, true}) {
    std::vector<std::string> args{"check"};
    args.insert(args.end(), objects.begin(), objects.end());
    for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
    if (strict) args.push_back("--strict");
    const RunResult r = btfslim(args);
    INFO(command_line(args));
    CHECK(r.err.empty());
    expect_matrix(r, objects, targets, strict);
  }
}

TEST_CASE("several targets in JSON: per relocation one result per target, as single-target runs give", "[check-cli]") {
  std::vector<std::string> objects = corpus_objects();
  objects.push_back(no_ext_object());
  const std::vector<std::string> targets = core_corpus_targets();
  for (const bool strict : {false, true}) {
    std::vector<std::string> args = objects;
    for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
    if (strict) args.push_back("--strict");
    INFO(command_line(args));
    expect_agrees_with_single_runs(check_json(args), objects, targets, strict);
  }
  // The order of the targets is the order given, the same target twice is two columns.
  const std::vector<std::string> reordered{core_target("missing"), core_target("moved"), core_target("missing")};
  std::vector<std::string> args{guarded_object(), test_object("core_fields")};
  for (const auto& t : reordered) args.insert(args.end(), {"--btf", t});
  expect_agrees_with_single_runs(check_json(args), {guarded_object(), test_object("core_fields")}, reordered, false);
}

TEST_CASE("a directory as --btf: every BTF or ELF file under it, sorted; other files skipped", "[check-cli]") {
  TempDir dir;
  const std::string kernels = dir.file("kernels");
  std::filesystem::create_directories(kernels + "/b");
  std::filesystem::create_directories(kernels + "/c/d");
  std::filesystem::create_directories(kernels + "/e");  // an empty directory inside: nothing
  // Raw BTF (the .BTF of an ELF target), an ELF with .BTF, and one deeper down; made out of order, so
  // that the order of creation is not the order of the names.
  write_file(kernels + "/c/d/errors.o", read_file(core_target("errors")));
  const std::string moved = read_file(core_target("moved"));
  const ElfLayout layout = elf_layout(moved);
  REQUIRE(layout.sections.count(".BTF") == 1);
  const SectionPlace btf = layout.sections.at(".BTF");
  write_file(kernels + "/a.btf", moved.substr(btf.offset, btf.size));
  write_file(kernels + "/b/missing.o", read_file(core_target("missing")));
  // Not BTF: skipped without a word.
  write_file(kernels + "/README", "BTF of the kernels we ship to\n");
  write_file(kernels + "/b/empty", "");
  write_file(kernels + "/b/short", "\x9f\xeb");
  write_file(kernels + "/c/notes.json", "{}\n");
  const std::vector<std::string> found{kernels + "/a.btf", kernels + "/b/missing.o", kernels + "/c/d/errors.o"};
  const std::vector<std::string> objects{test_object("core_fields"), guarded_object()};

  SECTION("alone") {
    std::vector<std::string> args = objects;
    args.insert(args.end(), {"--btf", kernels});
    expect_agrees_with_single_runs(check_json(args), objects, found, false);
    std::vector<std::string> table{"check"};
    table.insert(table.end(), args.begin(), args.end());
    const RunResult r = btfslim(table);
    CHECK(r.err.empty());
    expect_matrix(r, objects, found, false);
  }
  SECTION("after a file, in the order given") {
    std::vector<std::string> args = objects;
    args.insert(args.end(), {"--btf", core_target("moved"), "--btf", kernels});
    std::vector<std::string> all{core_target("moved")};
    all.insert(all.end(), found.begin(), found.end());
    expect_agrees_with_single_runs(check_json(args), objects, all, false);
  }
  SECTION("a directory with one BTF file in it is that one target") {
    TempDir one;
    std::filesystem::create_directories(one.file("x/y"));
    write_file(one.file("x/y/missing.o"), read_file(core_target("missing")));
    write_file(one.file("x/notes"), "not BTF\n");
    std::vector<std::string> args = objects;
    args.insert(args.end(), {"--btf", one.file("x")});
    const json doc = check_json(args);
    // One target named by a directory: the JSON still says which file it was.
    const std::string file = one.file("x/y/missing.o");
    CHECK(kernel_files(doc) == std::vector<std::string>{file});
  }
  SECTION("an empty directory, or one with no BTF file, is one line and exit 2") {
    TempDir empty;
    expect_rejected({"check", test_object("core_fields"), "--btf", empty.path()}, empty.path(), "no BTF files");
    std::filesystem::create_directories(empty.file("sub"));
    write_file(empty.file("sub/README"), "nothing here\n");
    expect_rejected({"check", test_object("core_fields"), "--btf", empty.path()}, empty.path(), "no BTF files");
    // Even beside a good target: nothing is printed before the error.
    expect_rejected({"check", test_object("core_fields"), "--btf", core_target("moved"), "--btf", empty.path()}, empty.path(),
                    "no BTF files");
  }
}

TEST_CASE("dead code: a poisoned read no program reaches does not fail; --strict fails it", "[check-cli]") {
  // core_guarded.bpf.c: guarded_read reads c and a, each behind bpf_core_field_exists of the same
  // field; type_guarded_read reads sizes___guarded.ptr_field behind bpf_core_type_exists of its struct;
  // unguarded_read reads a with no check. The missing target lacks c and struct sizes; the errors
  // target lacks both structs. (test_check_kernel.cc holds the verdicts to the kernel's, on many more
  // idioms.)
  const std::string obj = guarded_object();
  const std::string missing = core_target("missing");
  const std::string errors = core_target("errors");
  const std::string accessor_c = "struct existence___guarded.c";
  const std::string accessor_a = "struct existence___guarded.a";
  const std::string accessor_ptr = "struct sizes___guarded.ptr_field";

  SECTION("everything there: exit 0") {
    const RunResult r = btfslim({"check", obj, "--btf", core_target("moved")});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Contains("7 relocations: 7 ok\n"));
  }
  SECTION("the only poisoned reads are dead: exit 0, 1 with --strict") {
    const RunResult plain = btfslim({"check", obj, "--btf", missing});
    const RunResult strict = btfslim({"check", obj, "--btf", missing, "--strict"});
    INFO("without:\n" << plain.out << plain.err << "with:\n" << strict.out << strict.err);
    CHECK(plain.status == 0);
    CHECK(strict.status == 1);
    for (const RunResult* r : {&plain, &strict}) {
      CHECK_THAT(row_of(r->out, "guarded_read", "byte_off", accessor_c), Contains("poisoned (dead code)"));
      CHECK_THAT(row_of(r->out, "guarded_read", "field_exists", accessor_c), Contains(" 0 (was 1) "));
      CHECK_THAT(row_of(r->out, "type_guarded_read", "byte_off", accessor_ptr), Contains("poisoned (dead code)"));
      CHECK_THAT(row_of(r->out, "unguarded_read", "byte_off", accessor_a), !Contains("POISONED"));
      CHECK_THAT(r->out, Contains("7 relocations: 5 ok, 2 poisoned in dead code\n"));
      CHECK_THAT(r->out, !Contains("POISONED"));
    }

    const json without = single(obj, missing, false);
    const json with = single(obj, missing, true);
    for (const json* doc : {&without, &with}) {
      const json& c = record_of(*doc, "guarded_read", "byte_off", "0:1");
      CHECK(c.value("status", "") == "poisoned");
      CHECK(c.value("reachable", true) == false);
      CHECK(c.value("programs", json::array()).empty());
      CHECK(c.value("fails", false) == (doc == &with));
      const json& ptr = record_of(*doc, "type_guarded_read", "byte_off", "0:0");
      CHECK(ptr.value("status", "") == "poisoned");
      CHECK(ptr.value("reachable", true) == false);
      CHECK(ptr.value("fails", false) == (doc == &with));
      CHECK(record_of(*doc, "type_guarded_read", "type_exists", "0").value("value", -1) == 0);
      CHECK(record_of(*doc, "guarded_read", "field_exists", "0:1").value("value", -1) == 0);
      CHECK(record_of(*doc, "unguarded_read", "byte_off", "0:0").value("status", "") == "ok");
    }
  }
  SECTION("a poisoned read a program reaches fails: exit 1, and JSON names the program") {
    const RunResult r = btfslim({"check", obj, "--btf", errors});
    INFO(r.out << r.err);
    CHECK(r.status == 1);
    CHECK_THAT(row_of(r.out, "guarded_read", "byte_off", accessor_c), Contains("poisoned (dead code)"));
    CHECK_THAT(row_of(r.out, "guarded_read", "byte_off", accessor_a), Contains("poisoned (dead code)"));
    CHECK_THAT(row_of(r.out, "type_guarded_read", "byte_off", accessor_ptr), Contains("poisoned (dead code)"));
    CHECK_THAT(row_of(r.out, "unguarded_read", "byte_off", accessor_a), Contains("POISONED"));
    CHECK_THAT(r.out, Contains("7 relocations: 3 ok, 1 poisoned, 3 poisoned in dead code\n"));

    const json& doc = single(obj, errors, false);
    for (const char* access : {"0:0", "0:1"}) {
      const json& g = record_of(doc, "guarded_read", "byte_off", access);
      CHECK(g.value("status", "") == "poisoned");
      CHECK(g.value("reachable", true) == false);
      CHECK(g.value("fails", true) == false);
    }
    const json& ptr = record_of(doc, "type_guarded_read", "byte_off", "0:0");
    CHECK(ptr.value("reachable", true) == false);
    CHECK(ptr.value("fails", true) == false);
    const json& u = record_of(doc, "unguarded_read", "byte_off", "0:0");
    CHECK(u.value("status", "") == "poisoned");
    CHECK(u.value("reachable", false) == true);
    CHECK(u.value("programs", json()) == json::array({"unguarded_read"}));
    CHECK(u.value("fails", false) == true);
  }
  SECTION("in the matrix, the dead cells are ok, and fail with --strict") {
    const std::vector<std::string> targets{core_target("moved"), missing, errors};
    for (const bool strict : {false, true}) {
      std::vector<std::string> args{"check", obj};
      for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
      if (strict) args.push_back("--strict");
      const RunResult r = btfslim(args);
      INFO(command_line(args) << "\n" << r.out << r.err);
      const Matrix m = parse_matrix(r.out);
      REQUIRE(m.rows.size() == 1);
      CHECK(m.rows[0].second ==
            std::vector<std::string>{"ok", strict ? "2 failing" : "ok", strict ? "4 failing" : "1 failing"});
      CHECK(r.status == 1);
      if (strict)
        CHECK_THAT(r.out, Contains("poisoned (dead code)"));
      else
        CHECK_THAT(r.out, !Contains("dead code"));
    }
  }
  SECTION("--allow-missing is accepted, does nothing, and says so") {
    const RunResult r = btfslim({"check", obj, "--btf", missing, "--allow-missing"});
    CHECK(r.status == 0);
    CHECK(r.out == btfslim({"check", obj, "--btf", missing}).out);
    CHECK(r.err ==
          "btfslim: note: --allow-missing is deprecated and does nothing: a poisoned relocation in dead code no longer "
          "fails the check (--strict fails it)\n");
  }
  SECTION("libbpf poisons exactly what check says it does") {
    if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
    for (const std::string& btf : core_corpus_targets()) {
      const LibbpfRelocation& theirs = libbpf_relocate(obj, btf);
      INFO("against " << btf << ", libbpf's log:\n" << theirs.log);
      REQUIRE(theirs.relocated);
      CHECK(!theirs.failed);
      const json& ours = single(obj, btf, false);
      CHECK(theirs.relocations.size() == ours["relocations"].size());
      for (const LibbpfRelo& x : theirs.relocations) {
        const json* rec = nullptr;
        for (const json& r : ours["relocations"])
          if (r.value("program", "") == x.program && r.value("relo_idx", -1) == x.relo_idx) rec = &r;
        INFO(x.program << " relo #" << x.relo_idx << ": " << x.line);
        REQUIRE(rec != nullptr);
        CHECK(rec->value("status", "") == (x.outcome == LibbpfRelo::Patched ? "ok" : "poisoned"));
        if (x.outcome == LibbpfRelo::Patched) CHECK(rec->value("value", std::uint64_t{0} - 1) == x.value);
      }
    }
  }
}

TEST_CASE("objects with nothing to relocate are noted, not errors", "[check-cli]") {
  TempDir dir;
  // minimal.bpf.o with an empty core_relo subsection: .BTF.ext, func_info and line_info, no CO-RE records.
  Minimal m = minimal_object();
  put_u32(m.image, m.ext + 28, 0);
  const std::string no_core = dir.file("no_core.bpf.o");
  write_file(no_core, m.image);
  const std::string moved = core_target("moved");

  struct Case {
    std::string object, note;
    bool has_ext;
    std::string kernel_refs;  // what the table shows of them: minimal.bpf.o has a tp_btf program
  };
  const std::string on_switch =
      "  PROGRAM / MAP  KIND        NAME          RESULT     TARGET\n"
      "  on_switch      attach      sched_switch  unchecked  -\n"
      "no_core.bpf.o: 1 kernel references: 0 ok, 1 unchecked; the target has no FUNC: a BTF for CO-RE only "
      "(minimized, or no kernel's), which cannot say what the kernel lacks\n";
  for (const Case& c : {Case{no_ext_object(), "no .BTF.ext: nothing to relocate", false, ""},
                        Case{no_core, "no CO-RE relocations", true, on_switch}}) {
    const RunResult r = btfslim({"check", c.object, "--btf", moved});
    INFO(c.object << "\n" << r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == file_name(c.object) + " on " + file_name(moved) + "\n  " + c.note + "\n" + c.kernel_refs +
                       "\n1 object x 1 kernel: 0 fail\n");

    const json doc = check_json({c.object, "--btf", moved});
    REQUIRE(doc["objects"].size() == 1);
    const json& o = doc["objects"][0];
    CHECK(o.value("has_btf_ext", !c.has_ext) == c.has_ext);
    CHECK(o.value("note", "") == c.note);
    CHECK(o["relocations"] == json::array());
    CHECK(doc.value("failed", true) == false);
  }
  // Beside an object that resolves everywhere, on several targets: "-" cells, exit 0.
  const RunResult r = btfslim({"check", no_ext_object(), no_core, guarded_object(), "--btf", moved, "--btf",
                               core_target("moved.clang")});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  const Matrix matrix = parse_matrix(r.out);
  CHECK(matrix.kernels == std::vector<std::string>{"core_target_moved.o", "core_target_moved.clang.o"});
  REQUIRE(matrix.rows.size() == 3);
  const std::vector<std::pair<std::string, std::vector<std::string>>> rows = {
      {"types_only.bpf.o", {"-", "-"}}, {"no_core.bpf.o", {"-", "-"}}, {"core_guarded.bpf.o", {"ok", "ok"}}};
  CHECK(matrix.rows == rows);
  CHECK(matrix.failing.empty());
  CHECK(matrix.verdict == "3 objects x 2 kernels: 0 objects fail (0 of 6 object/kernel pairs)");
}

TEST_CASE("bad objects and targets: one line naming the file, exit 2, nothing on stdout", "[check-cli]") {
  TempDir dir;
  const std::string good = test_object("core_fields");
  const std::string moved = core_target("moved");
  auto expect_bad_object = [&](const std::string& path, const std::string& fragment) {
    expect_rejected({"check", path, "--btf", moved}, path, fragment);
    // After a good object and with several targets: still nothing printed for the good one.
    expect_rejected({"check", good, path, "--btf", moved, "--btf", core_target("missing")}, path, fragment);
  };

  SECTION("a missing object") { expect_bad_object(dir.file("absent.bpf.o"), "no such file"); }
  SECTION("an object that is not ELF") {
    const std::string path = dir.file("text.bpf.o");
    write_file(path, "SEC(\"kprobe\") int prog(void *ctx) { return 0; }\n");
    expect_bad_object(path, "not an ELF file");
  }
  SECTION("an ELF without .BTF") {
    // gcc without -g: the host's machine, not EM_BPF, which is said first.
    const std::string src = dir.file("plain.c");
    const std::string plain = dir.file("plain.o");
    write_file(src, "int counter;\nint bump(void) { return ++counter; }\n");
    const char* cc = std::getenv("BTFSLIM_TEST_CC");
    const RunResult built = run({cc && *cc ? cc : "cc", "-c", src, "-o", plain});
    INFO(built.err);
    REQUIRE(built.status == 0);
    expect_bad_object(plain, ", not a BPF object: a BPF object's ELF header says EM_BPF");

    // A BPF object whose .BTF is renamed: .BTF.ext without the types it refers to.
    Minimal m = minimal_object();
    const ElfLayout layout = elf_layout(m.image);
    REQUIRE(layout.sections.count(".BTF") == 1);
    const std::size_t name = layout.shstrtab + layout.sections.at(".BTF").name;
    REQUIRE(m.image.compare(name, 5, std::string(".BTF\0", 5)) == 0);
    m.image[name + 3] = 'X';
    const ElfLayout renamed = elf_layout(m.image);
    REQUIRE(renamed.sections.count(".BTF") == 0);
    REQUIRE(renamed.sections.count(".BTF.ext") == 1);
    const std::string path = dir.file("no_btf.bpf.o");
    write_file(path, m.image);
    expect_bad_object(path, "no .BTF section");
  }
  SECTION(".BTF.ext with a bad magic") {
    Minimal m = minimal_object();
    m.image[m.ext] = 0x34;
    m.image[m.ext + 1] = 0x12;
    const std::string path = dir.file("bad_magic.bpf.o");
    write_file(path, m.image);
    expect_bad_object(path, "bad magic");
  }
  SECTION(".BTF.ext with a record count that runs past the section") {
    const Minimal m = minimal_object();
    struct Case {
      const char* name;
      std::size_t block;
      std::uint32_t count;
    };
    const std::uint32_t core_count = get_u32(m.image, m.core_block + 4);
    const std::uint32_t func_count = get_u32(m.image, m.func_block + 4);
    REQUIRE(core_count > 0);
    REQUIRE(func_count > 0);
    for (const Case& c : {Case{"core_one_more", m.core_block, core_count + 1},
                          Case{"core_huge", m.core_block, 0xffffffffu},
                          Case{"core_wraps_32_bits", m.core_block, 0x10000000u},  // * 16 bytes = 2^32
                          Case{"func_one_more", m.func_block, func_count + 1}}) {
      std::string image = m.image;
      put_u32(image, c.block + 4, c.count);
      const std::string path = dir.file(std::string(c.name) + ".bpf.o");
      write_file(path, image);
      INFO(c.name);
      expect_bad_object(path, "invalid record count");
    }
  }
  SECTION("targets that cannot be read") {
    expect_rejected({"check", good, "--btf", dir.file("absent.btf")}, dir.file("absent.btf"), "no such file");
    const std::string junk = dir.file("junk.btf");
    write_file(junk, "hello, world\n");
    expect_rejected({"check", good, "--btf", moved, "--btf", junk}, junk, "not BTF");
  }
}

TEST_CASE("check prints the same bytes every time", "[check-cli]") {
  TempDir dir;
  const std::string kernels = dir.file("kernels");
  std::filesystem::create_directories(kernels + "/z");
  for (const char* name : {"moved", "missing", "errors", "moved.clang"})
    write_file(kernels + "/z/" + name + ".o", read_file(core_target(name)));
  write_file(kernels + "/" + std::string("errors.o"), read_file(core_target("errors")));

  std::vector<std::string> objects = corpus_objects();
  objects.push_back(no_ext_object());
  std::vector<std::vector<std::string>> runs;
  std::vector<std::string> many{"check"};
  many.insert(many.end(), objects.begin(), objects.end());
  for (const auto& t : core_corpus_targets()) many.insert(many.end(), {"--btf", t});
  runs.push_back(many);
  std::vector<std::string> dir_run{"check"};
  dir_run.insert(dir_run.end(), objects.begin(), objects.end());
  dir_run.insert(dir_run.end(), {"--btf", kernels, "--strict"});
  runs.push_back(dir_run);
  for (const auto& t : core_corpus_targets()) {
    std::vector<std::string> one{"check"};
    one.insert(one.end(), objects.begin(), objects.end());
    one.insert(one.end(), {"--btf", t});
    runs.push_back(one);
  }
  for (const auto& base : runs)
    for (const char* format : {"table", "json"}) {
      std::vector<std::string> args = base;
      args.insert(args.end(), {"--format", format});
      const RunResult first = btfslim(args);
      const RunResult second = btfslim(args);
      INFO(command_line(args) << "\nexit " << first.status << "\nstderr: " << first.err);
      REQUIRE((first.status == 0 || first.status == 1));
      CHECK(!first.out.empty());
      CHECK(second.status == first.status);
      CHECK(second.err == first.err);
      CHECK(second.out == first.out);
    }
}

namespace {

// The raw BTF in an ELF file's .BTF section.
std::string btf_section(const std::string& elf_path) {
  const std::string image = read_file(elf_path);
  const ElfLayout layout = elf_layout(image);
  REQUIRE(layout.sections.count(".BTF") == 1);
  const SectionPlace& s = layout.sections.at(".BTF");
  return image.substr(s.offset, s.size);
}

}  // namespace

TEST_CASE("btfhub archives: each raw BTF member is a target, as if extracted", "[check-cli]") {
  TempDir dir;
  const std::string moved = btf_section(core_target("moved")), missing = btf_section(core_target("missing"));
  write_file(dir.file("moved.btf"), moved);
  write_file(dir.file("missing.btf"), missing);
  std::filesystem::create_directories(dir.file("hub/ubuntu/22.04/x86_64"));
  std::filesystem::create_directories(dir.file("hub/fedora/38/x86_64"));
  const std::string a1 = dir.file("hub/ubuntu/22.04/x86_64/5.15.0-moved.btf.tar.xz");
  const std::string a2 = dir.file("hub/fedora/38/x86_64/6.2.9-missing.btf.tar");
  write_archive(a1, {{"5.15.0-moved.btf", moved}}, true);
  write_archive(a2, {{"README", "not BTF"}, {"6.2.9-missing.btf", missing}}, false);

  const std::string obj = test_object("core_fields");
  const json doc = check_json({obj, "--btf", dir.file("hub")});
  // Sorted paths: fedora before ubuntu; members named after their archive.
  const std::vector<std::string> expected_targets = {a2 + ":6.2.9-missing.btf", a1 + ":5.15.0-moved.btf"};
  CHECK(kernel_files(doc) == expected_targets);
  REQUIRE(doc["objects"].size() == 1);
  // Each member gives what the same BTF gives as a file.
  const std::vector<std::string> files = {dir.file("missing.btf"), dir.file("moved.btf")};
  const json& relocations = doc["objects"][0]["relocations"];
  for (std::size_t t = 0; t < files.size(); ++t) {
    const json& alone = single(obj, files[t], false);
    REQUIRE(alone["relocations"].size() == relocations.size());
    for (std::size_t i = 0; i < relocations.size(); ++i) {
      const json got = without_nulls(relocations[i]["results"][t]);
      INFO(expected_targets[t] << " relocation " << i);
      CHECK(got == result_part(alone["relocations"][i]));
    }
  }
  // The archive named directly works too.
  const json direct = check_json({obj, "--btf", a1});
  CHECK(kernel_files(direct) == std::vector<std::string>{a1 + ":5.15.0-moved.btf"});

  // What cannot be used: one line, exit 2.
  const std::string corrupt = dir.file("corrupt.btf.tar.xz");
  write_file(corrupt, read_file(a1).substr(0, 40));
  expect_rejected({"check", obj, "--btf", corrupt}, corrupt, "archive");
  const std::string empty = dir.file("empty.tar");
  write_archive(empty, {{"README", "no BTF here"}}, false);
  expect_rejected({"check", obj, "--btf", empty}, empty, "no raw BTF");
}

}  // namespace btfslim::test

namespace btfslim::test {
namespace {

// btfslim with COLUMNS set, as on a terminal that wide.
RunResult btfslim_columns(std::size_t columns, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env", "COLUMNS=" + std::to_string(columns), btfslim_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("--failures-only: only the objects that fail, only what fails them, and the whole verdict", "[check-cli]") {
  std::vector<std::string> objects = corpus_objects();
  objects.push_back(no_ext_object());
  const std::vector<std::string> targets = core_corpus_targets();
  SECTION("the matrix") {
    std::vector<std::string> args{"check", "--failures-only"};
    args.insert(args.end(), objects.begin(), objects.end());
    for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
    const RunResult r = btfslim(args);
    INFO(command_line(args));
    expect_matrix(r, objects, targets, false, true);
    // Something fails and something does not: the option left rows out.
    CHECK(parse_matrix(r.out).rows.size() < objects.size());
    CHECK(!parse_matrix(r.out).rows.empty());
  }
  SECTION("one target: the failing objects, each with its failing rows only") {
    const std::string errors = core_target("errors");
    std::vector<std::string> args{"check", "--failures-only", "--btf", errors};
    args.insert(args.end(), objects.begin(), objects.end());
    const RunResult r = btfslim(args);
    const RunResult all = btfslim({"check", "--btf", errors, guarded_object()});
    INFO(r.out);
    CHECK(r.status == 1);
    std::size_t failing_objects = 0, failures = 0;
    for (const std::string& o : objects) {
      const std::size_t n = failing_count(single(o, errors, false));
      failures += n;
      CHECK((r.out.find(file_name(o) + " on " + file_name(errors) + "\n") != std::string::npos) == (n != 0));
      failing_objects += n != 0;
    }
    REQUIRE(failures > 0);
    // Every relocation row shown fails.
    std::size_t rows = 0;
    for (const std::string& line : lines_of(r.out)) {
      const std::vector<std::string> w = words_of(line);
      if (line.starts_with("  ") && w.size() >= 5 && std::isdigit(static_cast<unsigned char>(w[1][0]))) {
        ++rows;
        CHECK((holds_in_order(line, {"POISONED"}) || holds_in_order(line, {"AMBIGUOUS"}) || holds_in_order(line, {"ERROR"})));
      }
    }
    CHECK(rows == failures);
    CHECK_THAT(r.out, EndsWith("\n" + verdict_line(objects.size(), 1, failing_objects, failing_objects) + "\n"));
    // Without the option the same object shows its passing rows too.
    CHECK_THAT(all.out, Contains("poisoned (dead code)"));
    CHECK_THAT(r.out, !Contains("poisoned (dead code)"));
  }
  SECTION("JSON: the failing objects, every kernel") {
    std::vector<std::string> args = objects;
    for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
    const json all = check_json(args);
    args.push_back("--failures-only");
    const json failing = check_json(args);
    CHECK(failing["kernels"] == all["kernels"]);
    CHECK(failing["failure_count"] == all["failure_count"]);
    json expected = json::array();
    for (const json& o : all["objects"])
      if (o["failure_count"].get<std::size_t>() > 0) expected.push_back(o);
    CHECK(failing["objects"] == expected);
  }
}

TEST_CASE("the matrix names files by their shortest unique suffix and fits COLUMNS", "[check-cli]") {
  TempDir dir;
  // The same kernel file name in two directories, and one long enough to need its own width.
  for (const char* d : {"a/boot", "b/boot"}) std::filesystem::create_directories(dir.file(d));
  write_file(dir.file("a/boot/vmlinux"), read_file(core_target("moved")));
  write_file(dir.file("b/boot/vmlinux"), read_file(core_target("errors")));
  const std::string long_name = dir.file("long-release-name-6.1.0-27-cloud.o");
  write_file(long_name, read_file(core_target("missing")));
  const std::vector<std::string> objects = corpus_objects();
  std::vector<std::string> args{"check"};
  args.insert(args.end(), objects.begin(), objects.end());
  for (const std::string& k : {dir.file("a/boot/vmlinux"), dir.file("b/boot/vmlinux"), long_name})
    args.insert(args.end(), {"--btf", k});

  const RunResult piped = btfslim(args);
  INFO(piped.out);
  const Matrix m = parse_matrix(piped.out);
  CHECK(m.kernels == std::vector<std::string>{"a/boot/vmlinux", "b/boot/vmlinux", file_name(long_name)});
  REQUIRE(m.rows.size() == objects.size());
  for (std::size_t o = 0; o < objects.size(); ++o) CHECK(m.rows[o].first == file_name(objects[o]));
  // In a pipe nothing is cut or folded: one header.
  CHECK(count_of(piped.out, "OBJECT ") == 1);

  // 60 columns: the kernels fold into blocks, each line of the matrix within the width, each kernel once.
  const RunResult narrow = btfslim_columns(60, args);
  INFO(narrow.out);
  CHECK(narrow.status == piped.status);
  std::vector<std::string> kernels_shown;
  std::size_t headers = 0;
  for (const std::string& line : lines_of(narrow.out)) {
    if (line.starts_with("OBJECT ")) {
      ++headers;
      const std::vector<std::string> w = words_of(line);
      kernels_shown.insert(kernels_shown.end(), w.begin() + 1, w.end());
    }
    if (line.find(" fails on ") != std::string::npos) break;  // the list of failures
    CHECK(line.size() <= 60);
  }
  CHECK(headers >= 2);
  CHECK(kernels_shown == m.kernels);
  // The list of failures and the verdict are the same however wide.
  CHECK(narrow.out.substr(narrow.out.find("\n\n", narrow.out.rfind("OBJECT "))) ==
        piped.out.substr(piped.out.find("\n\n")));
}

TEST_CASE("--format github: an annotation per failing object and kernel, escaped; --format junit", "[check-cli]") {
  TempDir dir;
  // An object whose path holds what workflow commands escape in a property: ',' and ':'.
  const std::string odd = dir.file("odd,name:x.bpf.o");
  write_file(odd, read_file(guarded_object()));
  const std::vector<std::string> objects{odd, test_object("core_fields"), test_object("core_errors")};
  const std::vector<std::string> targets{core_target("moved"), core_target("errors")};
  std::vector<std::string> base{"check"};
  base.insert(base.end(), objects.begin(), objects.end());
  for (const auto& t : targets) base.insert(base.end(), {"--btf", t});

  std::size_t failures = 0, failing_objects = 0;
  for (const std::string& o : objects) {
    std::size_t kernels = 0;
    for (const std::string& t : targets) kernels += failing_count(single(o, t, false)) != 0;
    failures += kernels;
    failing_objects += kernels != 0;
  }
  REQUIRE(failures > 0);
  const std::string verdict = verdict_line(objects.size(), targets.size(), failing_objects, failures);
  // An annotation for each object and set of kernels its failures share: a heading of the table's.
  const std::size_t groups = parse_matrix(btfslim(base).out).failing.size();
  REQUIRE(groups > 0);

  std::vector<std::string> args = base;
  args.insert(args.end(), {"--format", "github"});
  const RunResult r = btfslim(args);
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(!lines.empty());
  CHECK(lines.back() == "btfslim check: " + verdict);
  std::size_t annotations = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& line = lines[i];
    REQUIRE_THAT(line, StartsWith("::error file="));
    ++annotations;
    const std::size_t props = std::string("::error ").size(), end = line.find("::", props);
    REQUIRE(end != std::string::npos);
    const std::string properties = line.substr(props, end - props), message = line.substr(end + 2);
    // Properties are separated by ','; one inside a value would be escaped.
    CHECK(count_of(properties, ",") == 1);
    CHECK_THAT(properties, StartsWith("file="));
    const std::string file = properties.substr(5, properties.find(',') - 5);
    bool known = false;
    for (const std::string& o : objects) {
      std::string escaped;
      for (const char c : o) escaped += c == ',' ? "%2C" : c == ':' ? "%3A" : std::string(1, c);
      known = known || escaped == file;
    }
    INFO(file);
    CHECK(known);
    // The message: "OBJ fails on KERNELS: N failing", then one failure per line, line breaks as %0A.
    CHECK(message.find('\n') == std::string::npos);
    CHECK_THAT(message, Contains(" failing%0A"));
  }
  CHECK(annotations == groups);
  CHECK_THAT(r.out, Contains("file=" + dir.path() + "/odd%2Cname%3Ax.bpf.o,"));

  args = base;
  args.insert(args.end(), {"--format", "junit"});
  const RunResult x = btfslim(args);
  INFO(x.out);
  CHECK(x.status == 1);
  CHECK_THAT(x.out, StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"btfslim check\" tests=\"" +
                                   std::to_string(objects.size() * targets.size()) + "\" failures=\"" +
                                   std::to_string(failures) + "\""));
  CHECK(count_of(x.out, "<testsuite ") == targets.size());
  CHECK(count_of(x.out, "<testcase ") == objects.size() * targets.size());
  CHECK(count_of(x.out, "<failure ") == failures);
  args.push_back("--failures-only");
  CHECK(count_of(btfslim(args).out, "<testcase ") == failures);

  // $GITHUB_STEP_SUMMARY: with --format github the verdict and a row per failing object and kernel
  // are appended to what earlier steps wrote; with another format the file is left alone.
  const std::string summary = dir.file("summary.md");
  write_file(summary, "earlier step\n");
  auto with_summary = [&](const std::string& format) {
    std::vector<std::string> argv{"env", "GITHUB_STEP_SUMMARY=" + summary, btfslim_path()};
    argv.insert(argv.end(), base.begin(), base.end());
    argv.insert(argv.end(), {"--format", format});
    return run(argv);
  };
  CHECK(with_summary("github").out == r.out);
  const std::string md = read_file(summary);
  INFO(md);
  CHECK_THAT(md, StartsWith("earlier step\n### btfslim check: " + verdict +
                            "\n\n| | Object | Kernel | Failing | First failure |\n"));
  CHECK(count_of(md, "\n| :x: | ") == groups);
  CHECK_THAT(md, Contains("| :x: | odd,name:x.bpf.o | "));
  CHECK(with_summary("table").status == 1);
  CHECK(read_file(summary) == md);
}

}  // namespace btfslim::test
