// `btfslim diff` on layouts ([diff]): every way a type's layout can change (size, members, bitfields,
// member types, enumerators, pointer targets, prototypes) and a member renamed rather than replaced,
// each said once per type in the table, member by member with -v, and in CSV and JSON; the CSV is RFC
// 4180 in every view and the table fits the terminal. BTF built here with libbpf's btf__add_*.
#include "csv.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using nlohmann::json;

// OLD and NEW differ in every way a layout can:
//   struct s {u32 x; struct foo *p; int flags:3; int gone;} (24 bytes)
//     -> {u64 x; struct bar *p; int flags:4 (4 bits on); int fresh;} (32 bytes);
//   enum e {A = 0, B = 1, C = 2} (4 bytes) -> ENUM64 e {A = 0, B = 5, D = 3} (8 bytes);
//   typedef handle_t u32 -> u64; int f(int a, int b) -> long int f(int a, u64 b, int c).
std::string layout_btf(const TempDir& dir, const std::string& name, bool after) {
  return write_btf(dir, name, [after](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    const int u = added(btf__add_int(b, "unsigned int", 4, 0));
    const int ull = added(btf__add_int(b, "long long unsigned int", 8, 0));
    const int l = added(btf__add_int(b, "long int", 8, BTF_INT_SIGNED));
    const int u32 = added(btf__add_typedef(b, "u32", u));
    const int u64 = added(btf__add_typedef(b, "u64", ull));
    const int foo = added(btf__add_struct(b, "foo", 4));
    added(btf__add_field(b, "a", i, 0, 0));
    const int bar = added(btf__add_struct(b, "bar", 4));
    added(btf__add_field(b, "b", i, 0, 0));
    const int pfoo = added(btf__add_ptr(b, foo));
    const int pbar = added(btf__add_ptr(b, bar));
    added(btf__add_struct(b, "s", after ? 32 : 24));
    added(btf__add_field(b, "x", after ? u64 : u32, 0, 0));
    added(btf__add_field(b, "p", after ? pbar : pfoo, 64, 0));
    added(btf__add_field(b, "flags", i, after ? 132 : 128, after ? 4 : 3));
    if (after)
      added(btf__add_field(b, "fresh", i, 192, 0));
    else
      added(btf__add_field(b, "gone", i, 160, 0));
    if (after) {
      added(btf__add_enum64(b, "e", 8, false));
      added(btf__add_enum64_value(b, "A", 0));
      added(btf__add_enum64_value(b, "B", 5));
      added(btf__add_enum64_value(b, "D", 3));
    } else {
      added(btf__add_enum(b, "e", 4));
      added(btf__add_enum_value(b, "A", 0));
      added(btf__add_enum_value(b, "B", 1));
      added(btf__add_enum_value(b, "C", 2));
    }
    added(btf__add_typedef(b, "handle_t", after ? u64 : u32));
    const int proto = added(btf__add_func_proto(b, after ? l : i));
    added(btf__add_func_param(b, "a", i));
    added(btf__add_func_param(b, "b", after ? u64 : i));
    if (after) added(btf__add_func_param(b, "c", i));
    added(btf__add_func(b, "f", BTF_FUNC_GLOBAL, proto));
  });
}

TEST_CASE("diff shows every kind of layout change: size, members, bitfields, types, enumerators, targets, prototypes", "[diff]") {
  TempDir dir;
  const std::string before = layout_btf(dir, "before.btf", false), after = layout_btf(dir, "after.btf", true);
  const RunResult r = btfslim({"diff", "-v", before, after});
  INFO(r.err);
  REQUIRE(r.status == 0);
  // Types with a layout on both sides: 4 ints, 3 typedefs, 3 structs, the enum (ENUM and ENUM64 are one
  // type) and the function.
  CHECK(r.out ==
        "enum e: ENUM -> ENUM64; size 4 -> 8; 1 enumerator added, 1 removed, 1 revalued\n"
        "    - C = 2\n"
        "    ~ B: value 1 -> 5\n"
        "    + D = 3\n"
        "func f: returns int -> long int; 1 parameter added, 1 retyped\n"
        "    ~ b: int -> u64\n"
        "    + c: int\n"
        "struct s: size 24 -> 32; 1 member added, 1 removed, 1 moved, 2 retyped, 1 resized\n"
        "    - gone: int at offset 20\n"
        "    ~ x: u32 -> u64\n"
        "    ~ p: struct foo * -> struct bar *\n"
        "    ~ flags: bitfield 3 -> 4 bits\n"
        "    ~ flags: bit 128 -> 132\n"
        "    + fresh: int at offset 24\n"
        "typedef handle_t: u32 -> u64\n"
        "total: 4 changed, 0 added, 0 removed, of 12 types on both sides\n");
  // Without -v, the first line of each.
  const RunResult brief = btfslim({"diff", before, after});
  REQUIRE(brief.status == 0);
  CHECK(brief.out ==
        "enum e: ENUM -> ENUM64; size 4 -> 8; 1 enumerator added, 1 removed, 1 revalued\n"
        "func f: returns int -> long int; 1 parameter added, 1 retyped\n"
        "struct s: size 24 -> 32; 1 member added, 1 removed, 1 moved, 2 retyped, 1 resized\n"
        "typedef handle_t: u32 -> u64\n"
        "total: 4 changed, 0 added, 0 removed, of 12 types on both sides\n");
  // The other way, the prototype loses its third parameter.
  const RunResult back = btfslim({"diff", "-v", after, before});
  REQUIRE(back.status == 0);
  CHECK_THAT(back.out, Contains("func f: returns long int -> int; 1 parameter removed, 1 retyped\n"
                                "    ~ b: u64 -> int\n"
                                "    - c: int\n"));
  // --by member: the same changes, one a line, with their type; -n 3 folds the rest.
  const RunResult members = btfslim({"diff", "--by", "member", "-n", "3", before, after});
  REQUIRE(members.status == 0);
  CHECK(members.out ==
        "enum e - C = 2\n"
        "enum e ~ B: value 1 -> 5\n"
        "enum e + D = 3\n"
        "[10 others]\n"
        "total: 13 changes in 4 types\n");

  // The JSON has every change with its numbers.
  const RunResult js = btfslim({"diff", "-f", "json", before, after});
  REQUIRE(js.status == 0);
  const json j = json::parse(js.out);
  REQUIRE(j["layout_changes"].size() == 4);
  const json& e = j["layout_changes"][0];
  CHECK(e["old_kind"] == "ENUM");
  CHECK(e["new_kind"] == "ENUM64");
  CHECK(e["delta_bytes"] == 4);
  const json& s = j["layout_changes"][2];
  CHECK(s["name"] == "struct s");
  CHECK(s["old_size_bytes"] == 24);
  CHECK(s["new_size_bytes"] == 32);
  REQUIRE(s["changes"].size() == 6);
  CHECK(s["changes"][3]["change"] == "resized");
  CHECK(s["changes"][3]["old_bitfield_bits"] == 3);
  CHECK(s["changes"][3]["new_bitfield_bits"] == 4);
  CHECK(s["changes"][4]["change"] == "moved");
  CHECK(s["changes"][4]["old_bit_offset"] == 128);
  CHECK(s["changes"][4]["new_bit_offset"] == 132);
  CHECK(s["changes"][2]["old_type"] == "struct foo *");
  CHECK(s["changes"][2]["new_type"] == "struct bar *");
  // Every change object has the same keys, whatever the change.
  const std::set<std::string> keys = {"change", "member", "old_member", "old_type", "new_type", "old_bit_offset", "new_bit_offset",
                                      "old_bitfield_bits", "new_bitfield_bits", "old_value", "new_value", "old_member"};
  const std::set<std::string> type_keys = {"name", "status", "old_kind", "new_kind", "old_type_id", "new_type_id",
                                           "old_size_bytes", "new_size_bytes", "delta_bytes", "summary", "changes"};
  for (const json& t : j["layout_changes"]) {
    std::set<std::string> have;
    for (const auto& [k, v] : t.items()) have.insert(k);
    CHECK(have == type_keys);
    for (const json& c : t["changes"]) {
      std::set<std::string> ck;
      for (const auto& [k, v] : c.items()) ck.insert(k);
      CHECK(ck == keys);
    }
  }
  std::set<std::string> top;
  for (const auto& [k, v] : j.items()) top.insert(k);
  CHECK(top == std::set<std::string>{"old", "new", "compared_count", "changed_count", "added_count", "removed_count",
                                     "layout_changes", "footprint", "kinds", "other", "types"});
}

// A member under another name at the same place with the same type is renamed; with another type too,
// or at another place, it is one removed and one added; unnamed members are never paired.
//   struct r {int flags; u32 pad; long int len; union {int a;}; int spare; int tail:3;}
//     -> {int state; u64 wide; long int size; union {int a;}; int spare2:4; int end:3;}
std::string rename_btf(const TempDir& dir, const std::string& name, bool after) {
  return write_btf(dir, name, [after](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    const int u = added(btf__add_int(b, "unsigned int", 4, 0));
    const int l = added(btf__add_int(b, "long int", 8, BTF_INT_SIGNED));
    const int u32 = added(btf__add_typedef(b, "u32", u));
    const int u64 = added(btf__add_typedef(b, "u64", l));
    const int un = added(btf__add_union(b, nullptr, 4));
    added(btf__add_field(b, "a", i, 0, 0));
    added(btf__add_struct(b, "r", 32));
    added(btf__add_field(b, after ? "state" : "flags", i, 0, 0));          // renamed
    added(btf__add_field(b, after ? "wide" : "pad", after ? u64 : u32, 32, 0));  // another type: removed + added
    added(btf__add_field(b, after ? "size" : "len", l, 64, 0));          // renamed
    added(btf__add_field(b, nullptr, un, 128, 0));                        // unnamed, unchanged
    added(btf__add_field(b, after ? "spare2" : "spare", i, 160, after ? 4 : 0));  // another width: not renamed
    added(btf__add_field(b, after ? "end" : "tail", i, 192, 3));          // a bitfield renamed
  });
}

TEST_CASE("diff tells a renamed member from one removed and another added", "[diff]") {
  TempDir dir;
  const std::string before = rename_btf(dir, "before.btf", false), after = rename_btf(dir, "after.btf", true);
  const RunResult r = btfslim({"diff", "-v", before, after});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out ==
        "struct r: 2 members added, 2 removed, 3 renamed\n"
        "    - pad: u32 at offset 4\n"
        "    - spare: int at offset 20\n"
        "    ~ state: renamed from flags\n"
        "    + wide: u64 at offset 4\n"
        "    ~ size: renamed from len\n"
        "    + spare2: int:4 at bit 160\n"
        "    ~ end: renamed from tail\n"
        "total: 1 changed, 0 added, 0 removed, of 7 types on both sides\n");
  // The other way round, the same pairs.
  const RunResult back = btfslim({"diff", "--by", "member", after, before});
  REQUIRE(back.status == 0);
  CHECK_THAT(back.out, Contains("struct r ~ flags: renamed from state\n"));
  CHECK_THAT(back.out, Contains("struct r ~ tail: renamed from end\n"));
  CHECK_THAT(back.out, Contains("struct r - wide: u64 at offset 4\n"));

  // JSON: the old name in old_member, null for any other change; the type and place on both sides.
  const RunResult js = btfslim({"diff", "-f", "json", before, after});
  REQUIRE(js.status == 0);
  const json j = json::parse(js.out);
  REQUIRE(j["layout_changes"].size() == 1);
  const json& changes = j["layout_changes"][0]["changes"];
  REQUIRE(changes.size() == 7);
  CHECK(changes[0]["change"] == "removed");
  CHECK(changes[0]["old_member"].is_null());
  CHECK(changes[2]["change"] == "renamed");
  CHECK(changes[2]["member"] == "state");
  CHECK(changes[2]["old_member"] == "flags");
  CHECK(changes[2]["old_type"] == "int");
  CHECK(changes[2]["new_type"] == "int");
  CHECK(changes[2]["old_bit_offset"] == 0);
  CHECK(changes[2]["new_bit_offset"] == 0);
  CHECK(changes[6]["old_bitfield_bits"] == 3);
  CHECK(changes[6]["new_bitfield_bits"] == 3);

  // CSV: a count of renamed members by type, the old name by member.
  const RunResult types = btfslim({"diff", "-f", "csv", before, after});
  REQUIRE(types.status == 0);
  CHECK_THAT(types.out, Contains(",renamed_count,summary\n"));
  CHECK_THAT(types.out, Contains(",2,2,0,0,0,0,3,\"2 members added, 2 removed, 3 renamed\"\n"));
  const RunResult members = btfslim({"diff", "--by", "member", "-f", "csv", before, after});
  REQUIRE(members.status == 0);
  CHECK_THAT(members.out, Contains(",old_value,new_value,old_member\n"));
  CHECK_THAT(members.out, Contains("struct r,state,renamed,int,int,0,0,0,0,,,flags\n"));
  CHECK_THAT(members.out, Contains("struct r,wide,added,,u64,,32,,0,,,\n"));
}

TEST_CASE("diff's CSV is RFC 4180 in every view: a header, the same number of fields on every line", "[diff]") {
  TempDir dir;
  const std::string before = layout_btf(dir, "before.btf", false), after = layout_btf(dir, "after.btf", true);
  struct View {
    const char* by;
    std::size_t columns;
    std::size_t records;  // the header included
  };
  for (const View& v : {View{"type", 17, 5}, View{"member", 12, 14}, View{"kind", 5, 0}}) {
    INFO(v.by);
    const RunResult r = btfslim({"diff", "-f", "csv", "--by", v.by, before, after});
    REQUIRE(r.status == 0);
    const auto records = parse_csv(r.out);
    REQUIRE(records.size() >= 2);
    CHECK(records[0].size() == v.columns);
    if (v.records) CHECK(records.size() == v.records);
    for (const auto& rec : records) CHECK(rec.size() == v.columns);
    if (std::string(v.by) == "type") {
      // The summary holds commas and semicolons: quoted, and whole after parsing.
      CHECK(records[3][0] == "struct s");
      CHECK(records[3].back() == "size 24 -> 32; 1 member added, 1 removed, 1 moved, 2 retyped, 1 resized");
      CHECK(records[3][6] == "24");
      CHECK(records[3][7] == "32");
      CHECK(records[3][8] == "8");
    }
    if (std::string(v.by) == "member") {
      CHECK(records[0] == std::vector<std::string>{"type", "member", "change", "old_type", "new_type", "old_bit_offset",
                                                   "new_bit_offset", "old_bitfield_bits", "new_bitfield_bits",
                                                   "old_value", "new_value", "old_member"});
      CHECK(records[1] == std::vector<std::string>{"enum e", "C", "removed", "", "", "", "", "", "", "2", "", ""});
    }
  }
}

TEST_CASE("diff's table fits COLUMNS, a pipe gets it whole; names from the inputs are escaped", "[diff]") {
  TempDir dir;
  const std::string before = layout_btf(dir, "before.btf", false), after = layout_btf(dir, "after.btf", true);
  const RunResult whole = btfslim({"diff", before, after});
  REQUIRE(whole.status == 0);
  const RunResult narrow = run({"env", "COLUMNS=40", btfslim_path(), "diff", before, after});
  REQUIRE(narrow.status == 0);
  std::istringstream in(narrow.out);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) CHECK(line.size() <= 40);
  CHECK(lines == 5);
  CHECK_THAT(narrow.out, Contains("struct s: size 24 -> 32; 1 member add...\n"));
  CHECK_THAT(whole.out, Contains("1 resized\n"));

  // A member whose name holds a line break and an escape: one line, escaped.
  const std::string odd_a = write_btf(dir, "odd_a.btf", [](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    added(btf__add_struct(b, "o\x1b[31m", 8));
    added(btf__add_field(b, "x\ny", i, 0, 0));
  });
  const std::string odd_b = write_btf(dir, "odd_b.btf", [](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    added(btf__add_struct(b, "o\x1b[31m", 8));
    added(btf__add_field(b, "x\ny", i, 32, 0));
  });
  const RunResult odd = btfslim({"diff", "-v", odd_a, odd_b});
  REQUIRE(odd.status == 0);
  CHECK(odd.out.find('\x1b') == std::string::npos);
  CHECK(std::count(odd.out.begin(), odd.out.end(), '\n') == 3);
}

}  // namespace
}  // namespace btfslim::test
