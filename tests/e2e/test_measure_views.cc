// `btfslim measure` views run as the real binary: --type, --without, --by prefix/type, --modules,
// --kernel-model, --svg, on BTF the test builds (figures known by hand) and on the running kernel.
#include "csv.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>

namespace bt = btfslim::test;
using btfslim::test::BtfPtr;
using btfslim::test::raw_bytes;
using btfslim::test::TempDir;
using nlohmann::json;

namespace {

std::string hand_btf() { return btfslim::test::footprint_btf(); }

json run_json(const std::vector<std::string>& args) {
  const auto r = bt::btfslim(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("measure --type shows own, retained, closure, referrers and what it keeps alive", "[measure-views]") {
  TempDir dir;
  const std::string file = dir.file("hand.btf");
  btfslim::test::write_file(file, hand_btf());
  auto j = run_json({"measure", "--type", "walk", "--format", "json", file});
  REQUIRE(j["types"].size() == 1);
  auto t = j["types"][0];
  CHECK(t["id"] == 6);
  CHECK(t["kind"] == "FUNC");
  CHECK(t["own_bytes"].get<double>() == Approx(17));
  CHECK(t["retained_bytes"].get<double>() == Approx(39));
  CHECK(t["retained_type_count"] == 2);
  CHECK(t["closure_bytes"].get<double>() == Approx(119));
  CHECK(t["closure_type_count"] == 5);
  CHECK(t["referrer_type_ids"].empty());
  REQUIRE(t["keeps_alive"].size() == 1);
  CHECK(t["keeps_alive"][0]["type_id"] == 5);

  j = run_json({"measure", "--type", "struct node", "--format", "json", file});
  REQUIRE(j["types"].size() == 1);
  t = j["types"][0];
  CHECK(t["id"] == 3);
  CHECK(t["closure_bytes"].get<double>() == Approx(80));
  CHECK(t["referrer_type_ids"] == json::array({2, 4}));

  const auto table = bt::btfslim({"measure", "--type", "node_t", file});
  CHECK(table.status == 0);
  CHECK_THAT(table.out, Catch::Contains("[4] TYPEDEF 'node_t'"));
  CHECK_THAT(table.out, Catch::Contains("closure"));

  // A name that matches nothing is an error in every view that takes a type, never an empty table.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"measure", "--type", "no_such_type", file},
        std::vector<std::string>{"measure", "--type", "union node", file},
        std::vector<std::string>{"measure", "--name", "no_such_*", file},
        std::vector<std::string>{"measure", "--name", "walk", "--name", "struct walk", file}}) {
    const auto missing = bt::btfslim(args);
    INFO(args[2] << " " << args[3] << ": " << missing.err);
    CHECK(missing.status == 2);
    CHECK_THAT(missing.err, Catch::StartsWith("btfslim: " + file + ": ") && Catch::Contains("no type matches"));
    CHECK(missing.out.empty());
  }
  const auto named = bt::btfslim({"measure", "--by", "type", "--name", "struct node", "--format", "csv", file});
  CHECK(named.status == 0);
  CHECK_THAT(named.out, Catch::Contains("node"));
}

TEST_CASE("measure --without removes the kinds and what only they keep alive", "[measure-views]") {
  TempDir dir;
  const std::string file = dir.file("hand.btf");
  btfslim::test::write_file(file, hand_btf());
  const auto j = run_json({"measure", "--without", "func", "--format", "json", file});
  CHECK(j["file"] == file);
  CHECK(j["removed_type_count"] == 2);
  CHECK(j["removed_of_those_kinds_count"] == 1);
  CHECK(j["removed_kept_alive_only_by_them_count"] == 1);
  CHECK(j["saved_bytes"].get<double>() == Approx(39));
  CHECK(j["remaining_bytes"].get<double>() == Approx(24 + 132 + 40 - 39));
  const auto table = bt::btfslim({"measure", "--without", "FUNC,FUNC_PROTO", file});
  CHECK(table.status == 0);
  CHECK_THAT(table.out, Catch::Contains("without FUNC,FUNC_PROTO"));
  CHECK(bt::btfslim({"measure", "--without", "bogus", file}).status == 2);
  // CSV: whole bytes per kind whose columns add up to the TOTAL row.
  const auto csv = bt::parse_csv(bt::btfslim({"measure", "--without", "func", "-f", "csv", file}).out);
  REQUIRE(csv.size() >= 3);
  CHECK(csv.back()[0] == "TOTAL");
  for (std::size_t column = 1; column < 5; ++column) {
    std::uint64_t sum = 0;
    for (std::size_t i = 1; i + 1 < csv.size(); ++i) sum += std::stoull(csv[i][column]);
    CHECK(sum == std::stoull(csv.back()[column]));
  }
  CHECK(csv.back()[2] == "39");
}

TEST_CASE("measure --by type and --by prefix in CSV add up", "[measure-views]") {
  TempDir dir;
  const std::string file = dir.file("hand.btf");
  btfslim::test::write_file(file, hand_btf());
  const auto r = bt::btfslim({"measure", "--by", "type", "--format", "csv", "-n", "3", "--sort", "own", file});
  REQUIRE(r.status == 0);
  // Rows: header line, 3 types, [4 others], [header], [unreferenced strings], TOTAL. Own bytes add up.
  const auto lines = bt::parse_csv(r.out);
  REQUIRE(lines.size() == 8);
  CHECK(std::vector<std::string>(lines[1].begin(), lines[1].begin() + 5) ==
        std::vector<std::string>{"3", "STRUCT", "node", "36", "48"});
  CHECK(lines[2][2] == "lonely");
  std::uint64_t sum = 0;
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) sum += std::stoull(lines[i][4]);
  CHECK(lines.back() == std::vector<std::string>{"", "", "TOTAL", "", "196", "", ""});
  CHECK(sum == 196);

  const auto p = bt::btfslim({"measure", "--by", "prefix", "--format", "csv", file});
  REQUIRE(p.status == 0);
  CHECK_THAT(p.out, Catch::Contains("node,2,67"));  // node (48) and node_t (19)
  // The rows add up to the TOTAL, the blob, as the table's do.
  const auto prefixes = bt::parse_csv(p.out);
  std::uint64_t prefix_sum = 0;
  for (std::size_t i = 1; i + 1 < prefixes.size(); ++i) prefix_sum += std::stoull(prefixes[i][2]);
  CHECK(prefixes.back() == std::vector<std::string>{"TOTAL", "", "196"});
  CHECK(prefix_sum == 196);
}

TEST_CASE("measure --modules finds types several modules carry", "[measure-views]") {
  TempDir dir;
  BtfPtr base(btf__new_empty());
  btf__add_int(base.get(), "int", 4, BTF_INT_SIGNED);  // 1
  btfslim::test::write_file(dir.file("base.btf"), raw_bytes(base.get()));
  auto module = [&](const std::string& name, bool with_shared) {
    BtfPtr m(btf__new_empty_split(base.get()));
    if (with_shared) {
      btf__add_struct(m.get(), "shared_stats", 8);  // the same in both modules
      btf__add_field(m.get(), "rx", 1, 0, 0);
      btf__add_field(m.get(), "tx", 1, 32, 0);
    }
    btf__add_struct(m.get(), ("own_" + name).c_str(), 4);
    btf__add_field(m.get(), "x", 1, 0, 0);
    btfslim::test::write_file(dir.file(name + ".btf"), raw_bytes(m.get()));
  };
  module("alpha", true);
  module("beta", true);
  module("gamma", false);
  const auto j = run_json({"measure", "--base", dir.file("base.btf"), "--format", "json", "--modules",
                           dir.file("alpha.btf"), dir.file("beta.btf"), dir.file("gamma.btf")});
  REQUIRE(j["modules"].size() == 3);
  CHECK(j["module_count"] == 3);
  // Largest first: alpha and beta carry shared_stats, gamma does not; names as lsmod shows them.
  CHECK(j["modules"][2]["module"] == "gamma.btf");
  CHECK(j["modules"][2]["file"] == dir.file("gamma.btf"));
  REQUIRE(j["duplicates"].size() == 1);
  const auto d = j["duplicates"][0];
  CHECK(d["name"] == "shared_stats");
  CHECK(d["copy_count"] == 2);
  CHECK(d["modules"] == json::array({"alpha.btf", "beta.btf"}));
  // record 12 + 2 * 12, strings "shared_stats" "rx" "tx" = 13 + 3 + 3
  CHECK(d["each_bytes"].get<double>() == Approx(36 + 19));
  CHECK(d["saved_bytes"].get<double>() == Approx(36 + 19));
  const auto table = bt::btfslim({"measure", "--base", dir.file("base.btf"), "--modules", dir.file("alpha.btf"),
                              dir.file("beta.btf")});
  CHECK(table.status == 0);
  CHECK_THAT(table.out, Catch::Contains("STRUCT shared_stats"));
}

TEST_CASE("measure --kernel-model module with a resident base", "[measure-views]") {
  const std::string path = btfslim::test::running_vmlinux();
  if (path.empty()) return btfslim::test::skip("no /sys/kernel/btf/vmlinux on this machine");
  TempDir dir;
  // A resident base is part of the kernel measured: a minimized BTF of it.
  const std::string object = btfslim::test::test_object("trace_exec");
  if (!std::filesystem::exists(object)) return btfslim::test::skip("no trace_exec.bpf.o");
  REQUIRE(bt::btfslim({"minimize", "--btf", path, "-o", dir.file("small.btf"), object}).status == 0);
  const std::size_t small = bt::read_file(dir.file("small.btf")).size();
  const auto r = bt::btfslim({"measure", "--kernel-model", "module", "--resident-base", dir.file("small.btf"), path});
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("0 B resident until first use"));
  CHECK_THAT(r.out, Catch::Contains("with resident base"));
  CHECK(bt::btfslim({"measure", "--resident-base", dir.file("small.btf"), path}).status == 2);
  const auto j = run_json({"measure", "--kernel-model", "module", "--resident-base", dir.file("small.btf"), "--format",
                           "json", "--by", "kind", path});
  const auto whole = j["kernel_memory_as_module"];
  CHECK(whole["data_copied"] == true);
  CHECK(whole["data_bytes"] == j["file_bytes"]);
  const auto resident = j["kernel_memory_resident_base"];
  CHECK(resident["data_bytes"].get<std::uint64_t>() == small);
  CHECK(j["kernel_memory_rest_as_module"]["data_bytes"].get<std::uint64_t>() == j["file_bytes"].get<std::uint64_t>() - small);
  // A made-up BTF is no part of the kernel: refused, before anything is printed.
  bt::write_file(dir.file("made-up.btf"), btfslim::test::small_btf());
  const auto wrong = bt::btfslim({"measure", "--kernel-model", "module", "--resident-base", dir.file("made-up.btf"), path});
  CHECK(wrong.status == 2);
  CHECK(wrong.out.empty());
  CHECK_THAT(wrong.err, Catch::Contains("is no resident base of"));
}

TEST_CASE("measure --svg writes a complete picture, atomically", "[measure-views]") {
  const std::string path = btfslim::test::running_vmlinux();
  if (path.empty()) return btfslim::test::skip("no /sys/kernel/btf/vmlinux on this machine");
  TempDir dir;
  const auto r = bt::btfslim({"measure", "--svg", dir.file("btf.svg"), path});
  REQUIRE(r.status == 0);
  const std::string svg = btfslim::test::read_file(dir.file("btf.svg"));
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK_THAT(svg, Catch::EndsWith("</svg>\n"));
  CHECK_THAT(svg, Catch::Contains("FUNC"));
  // An unwritable destination is an input error and leaves nothing behind.
  const auto bad = bt::btfslim({"measure", "--svg", dir.file("no/such/dir/btf.svg"), path});
  CHECK(bad.status == 2);
  CHECK_THAT(bad.err, Catch::Contains("btf.svg"));
}

namespace {

constexpr const char* kCommaName = "pair,with\"quote";
constexpr const char* kLongName = "a_struct_whose_name_is_far_longer_than_any_column_would_hold_by_itself";

// A BTF whose names test CSV quoting and table widths: a comma and a quote in one, 70 characters in
// another.
std::string awkward_btf() {
  BtfPtr b(btf__new_empty());
  const int i32 = btf__add_int(b.get(), "int", 4, BTF_INT_SIGNED);
  btf__add_struct(b.get(), kCommaName, 4);
  btf__add_field(b.get(), "a", i32, 0, 0);
  btf__add_struct(b.get(), kLongName, 8);
  btf__add_field(b.get(), "a", i32, 0, 0);
  btf__add_field(b.get(), "b", i32, 32, 0);
  return raw_bytes(b.get());
}

// Every record of a view's CSV has the header's width; returns the records.
std::vector<std::vector<std::string>> check_csv(const std::vector<std::string>& args) {
  const auto r = bt::btfslim(args);
  INFO(bt::command_line(args) << "\n" << r.err);
  REQUIRE(r.status == 0);
  std::vector<std::vector<std::string>> records;
  REQUIRE_NOTHROW(records = bt::parse_csv(r.out));
  REQUIRE(records.size() >= 2);
  for (std::size_t i = 1; i < records.size(); ++i) {
    INFO("record " << i);
    CHECK(records[i].size() == records[0].size());
  }
  return records;
}

bool has_row(const std::vector<std::vector<std::string>>& records, std::size_t column, const std::string& value) {
  for (const auto& r : records)
    if (r.size() > column && r[column] == value) return true;
  return false;
}

}  // namespace

TEST_CASE("every measure view writes RFC 4180 CSV, JSON and a table", "[measure-views]") {
  TempDir dir;
  const std::string file = dir.file("awkward.btf");
  btfslim::test::write_file(file, awkward_btf());
  const std::string hand = dir.file("hand.btf");
  btfslim::test::write_file(hand, hand_btf());
  BtfPtr base(btf__new_empty());
  btf__add_int(base.get(), "int", 4, BTF_INT_SIGNED);
  btfslim::test::write_file(dir.file("base.btf"), raw_bytes(base.get()));
  for (const char* name : {"mod,one", "mod_two"}) {
    BtfPtr m(btf__new_empty_split(base.get()));
    btf__add_struct(m.get(), kCommaName, 4);
    btf__add_field(m.get(), "x", 1, 0, 0);
    btfslim::test::write_file(dir.file(name), raw_bytes(m.get()));
  }
  const std::vector<std::vector<std::string>> views{
      {file},
      {"--by", "kind", file},
      {"--by", "type", file},
      {"--by", "type", "--all", "--closure", file},
      {"--by", "prefix", file},
      {"--type", "int", hand},
      {"--without", "func", hand},
      {"--base", dir.file("base.btf"), "--modules", dir.file("mod,one"), dir.file("mod_two")},
  };
  for (const auto& view : views) {
    std::vector<std::string> args{"measure"};
    args.insert(args.end(), view.begin(), view.end());
    INFO(bt::command_line(args));
    auto csv = args;
    csv.insert(csv.end(), {"--format", "csv"});
    check_csv(csv);
    auto js = args;
    js.insert(js.end(), {"--format", "json"});
    const auto j = bt::btfslim(js);
    REQUIRE(j.status == 0);
    CHECK_NOTHROW(json::parse(j.out));
    const auto table = bt::btfslim(args);
    CHECK(table.status == 0);
    CHECK(!table.out.empty());
  }
  // Names with a comma and a quote come back whole.
  CHECK(has_row(check_csv({"measure", "--by", "type", "--format", "csv", file}), 2, kCommaName));
  CHECK(has_row(check_csv({"measure", "--by", "prefix", "--format", "csv", file}), 0, kCommaName));
  CHECK(has_row(check_csv({"measure", "--base", dir.file("base.btf"), "--format", "csv", "--modules",
                           dir.file("mod,one"), dir.file("mod_two")}),
                0, "mod,one"));
  // A CSV row that is a total, and one that folds the rest.
  const auto folded = check_csv({"measure", "--by", "type", "-n", "1", "--format", "csv", file});
  CHECK(has_row(folded, 2, "[2 others]"));
  CHECK(folded.back()[2] == "TOTAL");
}

TEST_CASE("measure --by type folds thousands of others into one quoted CSV field", "[measure-views]") {
  const std::string path = btfslim::test::running_vmlinux();
  if (path.empty()) return btfslim::test::skip("no /sys/kernel/btf/vmlinux on this machine");
  const auto records = check_csv({"measure", "--by", "type", "-n", "3", "--format", "csv", path});
  REQUIRE(records.size() > 5);
  const auto& others = records[4];
  CHECK(others[2].rfind("[", 0) == 0);
  CHECK_THAT(others[2], Catch::EndsWith(" others]"));
  CHECK(others[2].find(',') != std::string::npos);  // "[125,824 others]": one field all the same
}

TEST_CASE("measure tables are never cut in a pipe, and fit COLUMNS with the name cut last", "[measure-views]") {
  TempDir dir;
  const std::string file = dir.file("awkward.btf");
  btfslim::test::write_file(file, awkward_btf());
  const auto piped = bt::btfslim({"measure", file});
  REQUIRE(piped.status == 0);
  CHECK_THAT(piped.out, Catch::Contains(kLongName));
  for (const char* columns : {"250", "80"}) {
    const auto r = bt::run({"env", std::string("COLUMNS=") + columns, bt::btfslim_path(), "measure", file});
    INFO("COLUMNS=" << columns << "\n" << r.out);
    REQUIRE(r.status == 0);
    if (std::string(columns) == "250") {
      CHECK(r.out == piped.out);  // wide enough: the same as a pipe gets
      continue;
    }
    CHECK_THAT(r.out, !Catch::Contains(kLongName));
    CHECK_THAT(r.out, Catch::Contains("a_struct_whose_name_is_\xe2\x80\xa6") || Catch::Contains("\xe2\x80\xa6"));
    for (const auto& line : bt::lines_of(r.out)) {
      if (line.find("TOTAL") != 0 && line.find("[") != 0) continue;  // the table rows that are ours
      std::size_t width = 0;
      for (const char c : line) width += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
      CHECK(width <= 80);
    }
  }
}

TEST_CASE("measure models a BPF object's BTF as loaded with BPF_BTF_LOAD", "[measure-views]") {
  const std::string object = bt::build_data_dir() + "/minimal.bpf.o";
  const auto j = run_json({"measure", "--format", "json", object});
  const auto km = j["kernel_memory"];
  CHECK(km["model"] == "BPF_BTF_LOAD");
  CHECK(km["data_copied"] == true);
  CHECK(km["data_bytes"] == j["file_bytes"]);
  const std::uint64_t slots = j["type_count"].get<std::uint64_t>() + 1;  // void too
  CHECK(km["type_slot_count"] == slots);
  CHECK(km["resolved_bytes"] == slots * 2 * 4);  // resolved_ids and resolved_sizes, a u32 each
  CHECK(km["total_bytes"].get<std::uint64_t>() == km["data_bytes"].get<std::uint64_t>() +
                                                      km["type_array_bytes"].get<std::uint64_t>() +
                                                      km["resolved_bytes"].get<std::uint64_t>());
  const auto table = bt::btfslim({"measure", object});
  CHECK_THAT(table.out, Catch::Contains("loaded as BPF_BTF_LOAD"));
  CHECK_THAT(table.out, !Catch::Contains("in the kernel image"));
  // A raw BTF is still modelled as vmlinux's.
  TempDir dir;
  btfslim::test::write_file(dir.file("hand.btf"), hand_btf());
  CHECK(run_json({"measure", "--format", "json", dir.file("hand.btf")})["kernel_memory"]["model"] == "vmlinux");
}

TEST_CASE("measure --modules on a real modules tree: lsmod names, largest first, -n, TOTAL, aligned", "[measure-views]") {
  std::string why;
  const auto kernel = bt::other_kernel(why);
  if (!kernel) return bt::skip(why);
  const auto r = bt::btfslim({"measure", "--base", kernel->vmlinux, "-n", "5", "--modules", kernel->modules});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto lines = bt::lines_of(r.out);
  REQUIRE(lines.size() > 8);
  CHECK(lines[0].rfind("MODULE ", 0) == 0);
  for (std::size_t i = 1; i <= 7; ++i) {
    INFO(lines[i]);
    CHECK(lines[i].size() == lines[0].size());  // aligned: every row as wide as the header
    CHECK(lines[i].find('/') == std::string::npos);
    CHECK(lines[i].find(".ko") == std::string::npos);
  }
  CHECK_THAT(lines[6], Catch::StartsWith("["));
  CHECK_THAT(lines[6], Catch::Contains(" others]"));
  CHECK(lines[7].rfind("TOTAL ", 0) == 0);

  const auto records = check_csv({"measure", "--base", kernel->vmlinux, "-n", "5", "--format", "csv", "--modules",
                                  kernel->modules});
  REQUIRE(records.size() == 1 + 5 + 1 + 1);
  std::uint64_t sum = 0, previous = UINT64_MAX;
  for (std::size_t i = 1; i <= 6; ++i) {
    const std::uint64_t bytes = std::stoull(records[i][3]);
    if (i <= 5) CHECK(bytes <= previous);  // largest first
    previous = bytes;
    sum += bytes;
    CHECK(records[i][0].find('-') == std::string::npos);  // as lsmod: '-' reads '_'
  }
  CHECK(records.back()[0] == "TOTAL");
  CHECK(std::stoull(records.back()[3]) == sum);

  const auto j = run_json({"measure", "--base", kernel->vmlinux, "--all", "--format", "json", "--modules",
                           kernel->modules});
  CHECK(j["modules"].size() == j["module_count"].get<std::size_t>());
  CHECK(j["module_count"].get<std::size_t>() > 1000);
  bool found = false;
  bool renamed = false;
  for (const auto& m : j["modules"]) {
    found = found || m["module"] == "nf_nat";
    renamed = renamed || m["module"] == "vport_gre";  // vport-gre.ko, as lsmod shows it
  }
  CHECK(found);
  CHECK(renamed);
}

TEST_CASE("measure --svg labels what fits, and its kind strip is the kind table", "[measure-views]") {
  const std::string path = btfslim::test::running_vmlinux();
  if (path.empty()) return btfslim::test::skip("no /sys/kernel/btf/vmlinux on this machine");
  TempDir dir;
  REQUIRE(bt::btfslim({"measure", "--svg", dir.file("btf.svg"), "--by", "kind", path}).status == 0);
  const std::string svg = bt::read_file(dir.file("btf.svg"));
  CHECK_THAT(svg, Catch::Contains("class=\"legend\""));
  CHECK_THAT(svg, Catch::Contains("a box's width is"));
  // Every kind of the table is in the strip with the table's bytes and the table's figure.
  const auto kinds = check_csv({"measure", "--by", "kind", "--format", "csv", path});
  const auto table = bt::btfslim({"measure", "--by", "kind", path});
  std::size_t compared = 0;
  for (std::size_t i = 1; i + 1 < kinds.size(); ++i) {
    const std::string& kind = kinds[i][0];
    const std::string at = "data-kind=\"" + kind + "\" data-bytes=\"";
    const std::size_t p = svg.find(at);
    if (p == std::string::npos) continue;  // under a pixel wide
    INFO(kind);
    const std::size_t b = p + at.size();
    CHECK(svg.substr(b, svg.find('"', b) - b) == kinds[i][4]);
    const std::string figure_at = "data-figure=\"";
    const std::size_t f = svg.find(figure_at, b) + figure_at.size();
    const std::string figure = svg.substr(f, svg.find('"', f) - f);
    bool in_table = false;
    for (const auto& line : bt::lines_of(table.out))
      in_table = in_table || (line.rfind(kind + " ", 0) == 0 && line.find(" " + figure + " ") != std::string::npos);
    CHECK(in_table);
    ++compared;
  }
  CHECK(compared >= 5);
  // Types wide enough carry their names; the largest by retained bytes are listed by name.
  std::size_t labelled = 0;
  for (std::size_t p = 0; (p = svg.find("<g class=\"type\">", p)) != std::string::npos; ++p)
    labelled += svg.find("<text", p) < svg.find("</g>", p);
  CHECK(labelled >= 8);
  const auto top = check_csv({"measure", "--by", "type", "-n", "1", "--format", "csv", path});
  CHECK_THAT(svg, Catch::Contains(" own  [" + top[1][0] + "] " + top[1][1] + " "));
}

TEST_CASE("measure --modules walks directories, compressed modules too", "[measure-views]") {
  std::string why;
  const auto kernel = bt::other_kernel(why);
  if (!kernel) return bt::skip(why);
  TempDir dir;
  std::filesystem::create_directories(dir.file("tree/sub"));
  std::filesystem::copy_file(kernel->module("net/netfilter/nf_nat.ko"), dir.file("tree/nf_nat.ko"));
  std::filesystem::copy_file(kernel->module("net/openvswitch/vport-gre.ko"), dir.file("tree/sub/vport-gre.ko"));
  if (!bt::have("xz")) return bt::skip("no xz");
  REQUIRE(bt::run({"sh", "-c", "xz -c \"$1\" > \"$2\"", "sh", kernel->module("net/netfilter/nf_conntrack.ko"),
                   dir.file("tree/sub/packed.ko.xz")})
              .status == 0);
  const auto r = bt::btfslim({"measure", "--base", kernel->vmlinux, "--format", "csv", "--modules", dir.file("tree")});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto records = bt::parse_csv(r.out);
  REQUIRE(records.size() == 5);  // header, three modules, TOTAL
  CHECK((has_row(records, 0, "nf_nat") && has_row(records, 0, "vport_gre") && has_row(records, 0, "packed")));
  CHECK(r.err.empty());
  // A file named as compressed that is not is one line naming it, and nothing is printed.
  bt::write_file(dir.file("tree/sub/bad.ko.xz"), "not xz");
  const auto bad = bt::btfslim({"measure", "--base", kernel->vmlinux, "--modules", dir.file("tree")});
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "btfslim: " + dir.file("tree/sub/bad.ko.xz") + ": is named .xz but is not xz-compressed\n");
}

TEST_CASE("budget's kernel_memory of a BPF object is measure's BPF_BTF_LOAD figure", "[measure-views]") {
  TempDir dir;
  std::filesystem::copy_file(bt::build_data_dir() + "/minimal.bpf.o", dir.file("minimal.bpf.o"));
  const auto j = run_json({"measure", "--format", "json", dir.file("minimal.bpf.o")});
  const std::uint64_t kernel = j["kernel_memory"]["total_bytes"].get<std::uint64_t>();
  for (const std::uint64_t limit : {kernel, kernel - 1}) {
    bt::write_file(dir.file("btfslim.toml"),
                   "[[budget]]\nname = \"object\"\ninput = \"minimal.bpf.o\"\nkernel_memory = " +
                       std::to_string(limit) + "\n");
    const auto r = bt::btfslim({"budget", "--config", dir.file("btfslim.toml")});
    INFO(limit << ": " << r.out << r.err);
    CHECK(r.status == (limit == kernel ? 0 : 1));
  }
}
