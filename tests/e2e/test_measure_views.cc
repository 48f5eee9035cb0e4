// `btfslim measure` views run as the real binary: --type, --without, --by prefix/type, --modules,
// --kernel-model, --svg, on BTF the test builds (figures known by hand) and on the running kernel.
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <memory>

namespace bt = btfslim::test;
using btfslim::test::BtfPtr;
using btfslim::test::TempDir;
using nlohmann::json;

namespace {

std::string raw(struct btf* b) {
  __u32 size = 0;
  const void* data = btf__raw_data(b, &size);
  return std::string(static_cast<const char*>(data), size);
}

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
  CHECK(t["retained_types"] == 2);
  CHECK(t["closure_bytes"].get<double>() == Approx(119));
  CHECK(t["closure_types"] == 5);
  CHECK(t["referrers"].empty());
  REQUIRE(t["keeps_alive"].size() == 1);
  CHECK(t["keeps_alive"][0]["id"] == 5);

  j = run_json({"measure", "--type", "struct node", "--format", "json", file});
  REQUIRE(j["types"].size() == 1);
  t = j["types"][0];
  CHECK(t["id"] == 3);
  CHECK(t["closure_bytes"].get<double>() == Approx(80));
  CHECK(t["referrers"] == json::array({2, 4}));

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
  CHECK(j["removed_of_those_kinds"] == 1);
  CHECK(j["removed_only_kept_alive_by_them"] == 1);
  CHECK(j["removed_bytes"].get<double>() == Approx(39));
  CHECK(j["remaining_bytes"].get<double>() == Approx(24 + 132 + 40 - 39));
  const auto table = bt::btfslim({"measure", "--without", "FUNC,FUNC_PROTO", file});
  CHECK(table.status == 0);
  CHECK_THAT(table.out, Catch::Contains("without FUNC,FUNC_PROTO"));
  CHECK(bt::btfslim({"measure", "--without", "bogus", file}).status == 2);
}

TEST_CASE("measure --by type and --by prefix in CSV add up", "[measure-views]") {
  TempDir dir;
  const std::string file = dir.file("hand.btf");
  btfslim::test::write_file(file, hand_btf());
  const auto r = bt::btfslim({"measure", "--by", "type", "--format", "csv", "-n", "3", "--sort", "own", file});
  REQUIRE(r.status == 0);
  // Rows: header line, 3 types, [4 others], [header], [unreferenced strings], TOTAL. Own bytes add up.
  std::vector<std::string> lines;
  std::string line;
  for (char c : r.out) {
    if (c == '\n') lines.push_back(line), line.clear();
    else line += c;
  }
  REQUIRE(lines.size() == 8);
  CHECK(lines[1].rfind("3,STRUCT,node,36,48,", 0) == 0);
  CHECK(lines[2].rfind("7,STRUCT,lonely,24,33,", 0) == 0);
  std::uint64_t sum = 0;
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
    // own_bytes is the 5th column
    std::size_t pos = 0;
    for (int c = 0; c < 4; ++c) pos = lines[i].find(',', pos) + 1;
    sum += std::stoull(lines[i].substr(pos));
  }
  CHECK(lines.back() == ",,TOTAL,,196,,");
  CHECK(sum == 196);

  const auto p = bt::btfslim({"measure", "--by", "prefix", "--format", "csv", file});
  REQUIRE(p.status == 0);
  CHECK_THAT(p.out, Catch::Contains("node,2,67"));  // node (48) and node_t (19)
}

TEST_CASE("measure --modules finds types several modules carry", "[measure-views]") {
  TempDir dir;
  BtfPtr base(btf__new_empty());
  btf__add_int(base.get(), "int", 4, BTF_INT_SIGNED);  // 1
  btfslim::test::write_file(dir.file("base.btf"), raw(base.get()));
  auto module = [&](const std::string& name, bool with_shared) {
    BtfPtr m(btf__new_empty_split(base.get()));
    if (with_shared) {
      btf__add_struct(m.get(), "shared_stats", 8);  // the same in both modules
      btf__add_field(m.get(), "rx", 1, 0, 0);
      btf__add_field(m.get(), "tx", 1, 32, 0);
    }
    btf__add_struct(m.get(), ("own_" + name).c_str(), 4);
    btf__add_field(m.get(), "x", 1, 0, 0);
    btfslim::test::write_file(dir.file(name + ".btf"), raw(m.get()));
  };
  module("alpha", true);
  module("beta", true);
  module("gamma", false);
  const auto j = run_json({"measure", "--base", dir.file("base.btf"), "--format", "json", "--modules",
                           dir.file("alpha.btf"), dir.file("beta.btf"), dir.file("gamma.btf")});
  REQUIRE(j["modules"].size() == 3);
  REQUIRE(j["duplicates"].size() == 1);
  const auto d = j["duplicates"][0];
  CHECK(d["name"] == "shared_stats");
  CHECK(d["copies"] == 2);
  // record 12 + 2 * 12, strings "shared_stats" "rx" "tx" = 13 + 3 + 3
  CHECK(d["bytes_each"].get<double>() == Approx(36 + 19));
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
  btfslim::test::write_file(dir.file("small.btf"), btfslim::test::small_btf());
  const auto r = bt::btfslim({"measure", "--kernel-model", "module", "--resident-base", dir.file("small.btf"), path});
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("0 B resident until first use"));
  CHECK_THAT(r.out, Catch::Contains("with resident base"));
  CHECK(bt::btfslim({"measure", "--resident-base", dir.file("small.btf"), path}).status == 2);
  const auto j = run_json({"measure", "--kernel-model", "module", "--resident-base", dir.file("small.btf"), "--format",
                           "json", "--by", "kind", path});
  const auto whole = j["kernel_memory_as_module"];
  CHECK(whole["parts"]["data_copied"] == true);
  CHECK(whole["parts"]["data_bytes"] == j["file_bytes"]);
  const auto resident = j["kernel_memory_resident_base"];
  CHECK(resident["parts"]["data_bytes"].get<std::uint64_t>() == btfslim::test::small_btf().size());
  CHECK(j["kernel_memory_rest_as_module"]["parts"]["data_bytes"].get<std::uint64_t>() ==
        j["file_bytes"].get<std::uint64_t>() - btfslim::test::small_btf().size());
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
