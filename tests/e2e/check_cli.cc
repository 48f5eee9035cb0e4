// The [check-cli] tests' shared helpers (check_cli.h).
#include "check_cli.h"

#include "check_json.h"
#include "libbpf_oracle.h"
#include "text.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <tuple>

namespace btfslim::test {

using nlohmann::json;

namespace {

// The fields of a relocation record that do not depend on the target.
const std::vector<std::string> kRecordFields = {"section",  "program",         "relo_idx",      "insn_off", "insn_idx",
                                                "relocation_kind", "local_type_id", "access",   "accessor"};

}  // namespace

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


namespace {

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

}  // namespace

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

std::string verdict_of(const json& result) {
  const std::string status = result.value("status", "");
  if (status == "poisoned" && !result.value("reachable", true)) return "poisoned (dead code)";
  // A failure in an optional program or an unused alternative: in lower case, saying which.
  if (result.contains("excused") && result["excused"].is_string())
    return status + " (" + result["excused"].get<std::string>() + ")";
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
                   bool strict, bool failures_only) {
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

}  // namespace btfslim::test
