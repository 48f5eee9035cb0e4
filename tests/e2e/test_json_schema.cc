// One JSON vocabulary across the commands ([json-schema]): every command's JSON, on real inputs, held to
// README's Conventions, so that the commands stay in step as each one changes.
//
//   - a file is `file`: no `input`, `path`, `object`, and no `name` that holds a file;
//   - a number of things is `THING_count`, an unsigned integer: no bare `count`, and no number under a
//     plural noun (`"types": 12`), which names a list;
//   - a size is `WHAT_bytes`, a number: any key that speaks of a size or of bytes ends in `_bytes`
//     (`bytes_freed` is `saved_bytes`); a width in bits, as BTF gives bitfields, is `WHAT_bits`;
//   - a key that does not apply to a record is null (so that every record has every key): a size or a
//     count may be null;
//   - a kind is bpftool's upper-case name (`STRUCT`), a byte order `little` or `big`;
//   - a reference to a type is `type_id`, to several `type_ids` (not `targets`);
//   - a document's shape does not depend on how many inputs were given: `check` on 1 object x 1 kernel
//     and on 3 objects x 2 kernels has the same keys, `kernels` always an array.
// `dump --format json` is bpftool's format, kept as bpftool writes it: exempt. `minimize` writes no JSON.
//
// The inputs: the running kernel's BTF (the tests skip visibly without it), the second kernel when
// scripts/fetch-test-kernel.sh fetched it (else the CO-RE test targets), and the test build's objects.
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::set<std::string> kBpftoolKinds = {"VOID",     "INT",   "PTR",     "ARRAY",      "STRUCT",   "UNION",
                                             "ENUM",     "FWD",   "TYPEDEF", "VOLATILE",   "CONST",    "RESTRICT",
                                             "FUNC",     "FUNC_PROTO", "VAR", "DATASEC",   "FLOAT",    "DECL_TAG",
                                             "TYPE_TAG", "ENUM64"};
const std::set<std::string> kForbiddenKeys = {"input", "path", "object", "count", "targets", "bytes_freed"};

bool ends_with(const std::string& s, const std::string& end) { return s.ends_with(end); }
bool holds(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// What breaks the vocabulary in `doc`, one line each with its place ("/objects/0/file: ...").
// `files` are the paths the command was given: no `name` may hold one.
void vocabulary(const json& v, const std::string& where, const std::set<std::string>& files,
                std::vector<std::string>& wrong) {
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) vocabulary(v[i], where + "/" + std::to_string(i), files, wrong);
    return;
  }
  if (!v.is_object()) return;
  for (const auto& [key, value] : v.items()) {
    const std::string at = where + "/" + key;
    auto bad = [&](const std::string& why) { wrong.push_back(at + ": " + why + " (" + value.dump().substr(0, 80) + ")"); };
    if (kForbiddenKeys.count(key)) {
      bad("'" + key + "' is not in the vocabulary");
      vocabulary(value, at, files, wrong);
      continue;
    }
    if (key == "name" && value.is_string() && (files.count(value.get<std::string>()) || holds(value, "/")))
      bad("a file is 'file', not 'name'");
    if ((holds(key, "size") || holds(key, "bytes")) && !ends_with(key, "_bytes")) bad("a size is WHAT_bytes");
    if (ends_with(key, "_bytes") && !value.is_number() && !value.is_null()) bad("a size is a number");
    if (holds(key, "count") && !ends_with(key, "_count")) bad("a number of things is THING_count");
    if (value.is_number() && ends_with(key, "s") && !ends_with(key, "_bytes") && !ends_with(key, "_bits") &&
        key != "bytes")
      bad("a plural noun is a list: a number of things is THING_count");
    if (ends_with(key, "_count") && !value.is_number_unsigned() && !value.is_null())
      bad("a count is an unsigned integer");
    if ((holds(key, "endian") || key == "byteorder") && key != "byte_order") bad("byte order is 'byte_order'");
    if (key == "byte_order" && value != "little" && value != "big") bad("byte_order is \"little\" or \"big\"");
    if (key == "kind" && !value.is_null() && !(value.is_string() && kBpftoolKinds.count(value.get<std::string>())))
      bad("'kind' is bpftool's upper-case kind name");
    if (key == "type_id" && !value.is_number_unsigned()) bad("a type_id is an unsigned integer");
    if (key == "type_ids" && !(value.is_array() && std::all_of(value.begin(), value.end(),
                                                               [](const json& x) { return x.is_number_unsigned(); })))
      bad("type_ids is an array of unsigned integers");
    if (key == "file" && !value.is_string()) bad("a file is a string");
    vocabulary(value, at, files, wrong);
  }
}

// Runs `args` (exit 0 or 1), parses stdout as JSON, and fails listing every word out of the vocabulary.
json expect_vocabulary(const std::vector<std::string>& args, const std::set<std::string>& files) {
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\nexit " << r.status << "\nstderr: " << r.err);
  REQUIRE((r.status == 0 || r.status == 1));
  json doc;
  try {
    doc = json::parse(r.out);
  } catch (const json::exception& e) {
    FAIL("stdout is not JSON (" << e.what() << "):\n" << r.out.substr(0, 2000));
  }
  std::vector<std::string> wrong;
  vocabulary(doc, "", files, wrong);
  std::ostringstream s;
  for (std::size_t i = 0; i < wrong.size() && i < 40; ++i) s << "  " << wrong[i] << "\n";
  if (wrong.size() > 40) s << "  ... " << wrong.size() - 40 << " more\n";
  INFO(wrong.size() << " key(s) out of the vocabulary:\n" << s.str());
  CHECK(wrong.empty());
  return doc;
}

// Every key's place with array indices folded: "/objects/[]/relocations/[]/results/[]/status".
void key_paths(const json& v, const std::string& where, std::set<std::string>& paths) {
  if (v.is_array()) {
    for (const json& x : v) key_paths(x, where + "/[]", paths);
  } else if (v.is_object()) {
    for (const auto& [key, value] : v.items()) {
      paths.insert(where + "/" + key);
      key_paths(value, where + "/" + key, paths);
    }
  }
}

// Two kernels: the running one and the second real kernel, else the CO-RE test targets.
struct Kernels {
  std::string first, second;
  bool real = false;
};
Kernels kernels() {
  Kernels k;
  std::string why;
  const std::string running = running_vmlinux();
  const auto other = other_kernel(why);
  if (!running.empty() && other) return {running, other->vmlinux, true};
  return {core_target("moved"), core_target("missing"), false};
}

}  // namespace

TEST_CASE("json-schema: check speaks the vocabulary, in one shape for any number of objects and kernels",
          "[json-schema]") {
  const std::string running = running_vmlinux();
  // An object with CO-RE relocations and kernel references (kfuncs, attach targets): every record kind.
  const std::string with_refs = test_object("loader_kfuncs");
  if (running.empty() || !fs::exists(with_refs))
    return skip("no running kernel BTF, or no loader test objects: check's kernel references cannot be shown");
  const Kernels k = kernels();
  // check_alternatives: programs that are alternatives of one another, a failure that does not count.
  const std::vector<std::string> more = {test_object("core_fields"), test_object("loader_attach"),
                                         test_object("check_alternatives")};

  const json one = expect_vocabulary({"check", "--format", "json", "--btf", running, with_refs}, {running, with_refs});
  const json many = expect_vocabulary({"check", "--format", "json", "--btf", running, "--btf", k.second, with_refs,
                                       more[0], more[1], more[2]},
                                      {running, k.second, with_refs, more[0], more[1], more[2]});
  for (const json* doc : {&one, &many}) {
    REQUIRE(doc->at("kernels").is_array());
    REQUIRE(doc->at("objects").is_array());
    const std::size_t kernel_count = doc->at("kernels").size();
    CHECK(doc->at("kernel_count") == kernel_count);
    CHECK(doc->at("object_count") == doc->at("objects").size());
    // Failing objects beside failing object/kernel pairs; each kernel's name in the table beside its file.
    CHECK(doc->at("failing_object_count").is_number_unsigned());
    CHECK(doc->at("failing_object_count") <= doc->at("failure_count"));
    for (const json& kernel : doc->at("kernels")) {
      CHECK(kernel.at("short_name").is_string());
      CHECK((kernel.at("release").is_string() || kernel.at("release").is_null()));
    }
    for (const json& o : doc->at("objects")) {
      CHECK(o.at("results").size() == kernel_count);
      for (const char* records : {"relocations", "kernel_references"}) {
        for (const json& rec : o.at(records)) CHECK(rec.at("results").size() == kernel_count);
      }
    }
  }
  REQUIRE(!one["objects"][0]["relocations"].empty());
  REQUIRE(!one["objects"][0]["kernel_references"].empty());
  std::set<std::string> one_keys, many_keys;
  key_paths(one, "", one_keys);
  key_paths(many, "", many_keys);
  CHECK(one_keys == many_keys);
  CHECK(many["kernels"].size() == 2);
  CHECK(many["objects"].size() == 4);
  // The programs' roles, each program's result per kernel, and the failures that do not count.
  const json& alternatives = many["objects"][3];
  CHECK(many["optional_failure_count"].is_number_unsigned());
  for (const json& p : alternatives["programs"]) CHECK(p["results"].size() == many["kernels"].size());
  CHECK(alternatives["programs"][0]["alternatives"].is_string());
}

TEST_CASE("json-schema: measure speaks the vocabulary", "[json-schema]") {
  const Kernels k = kernels();
  expect_vocabulary({"measure", "--format", "json", k.first}, {k.first});
  expect_vocabulary({"measure", "--format", "json", "--all", core_target("moved")}, {core_target("moved")});
  // Every view of measure: each --by, one type, the BTF without some kinds, modules.
  for (const char* by : {"kind", "type", "prefix"})
    expect_vocabulary({"measure", "--format", "json", "--by", by, k.first}, {k.first});
  expect_vocabulary({"measure", "--format", "json", "--without", "func", k.first}, {k.first});
  if (k.real) expect_vocabulary({"measure", "--format", "json", "--type", "task_struct", k.first}, {k.first});
  std::string why;
  if (const auto other = other_kernel(why)) {
    const std::string module = other->module("net/netfilter/nf_conntrack.ko");
    for (const char* by : {"default", "type"})
      expect_vocabulary({"measure", "--format", "json", "--by", by, "--base", other->vmlinux, "--modules", module},
                        {other->vmlinux, module});
  }
}

TEST_CASE("json-schema: diff speaks the vocabulary", "[json-schema]") {
  const Kernels k = kernels();
  expect_vocabulary({"diff", "--format", "json", k.second, k.first}, {k.first, k.second});
}

TEST_CASE("json-schema: dedup speaks the vocabulary", "[json-schema]") {
  const TempDir dir;
  const std::string object = test_object("core_fields"), target = core_target("moved");
  expect_vocabulary({"dedup", "--format", "json", "-o", dir.file("out.btf"), target}, {target, dir.file("out.btf")});
  expect_vocabulary({"dedup", "--format", "json", "--check", object}, {object});
}

TEST_CASE("json-schema: budget speaks the vocabulary", "[json-schema]") {
  const TempDir dir;
  const Kernels k = kernels();
  const std::string baseline = dir.file("baseline.json"), config = dir.file("btfslim.toml");
  const RunResult saved = btfslim({"measure", "--format", "json", k.first});
  REQUIRE(saved.status == 0);
  write_file(baseline, saved.out);
  write_file(config, "[[budget]]\nname = \"kernel\"\ninput = \"" + k.first +
                         "\"\ntotal = \"64 MiB\"\nkernel_memory = \"1 KiB\"\nkind.STRUCT = \"16 MiB\"\n"
                         "\n[[budget]]\nname = \"growth\"\ninput = \"" + k.first + "\"\nbaseline = \"" + baseline +
                         "\"\nmax_growth = \"1%\"\n");
  expect_vocabulary({"budget", "--format", "json", "--config", config}, {k.first, config, baseline});
}

}  // namespace btfslim::test
