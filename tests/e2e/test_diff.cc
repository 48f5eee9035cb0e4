// `btfslim diff` end to end ([diff]): BTF built here with libbpf's btf__add_*, small enough that every
// size is worked out by hand (record bytes + the bytes of the strings a type names, each string's bytes
// split among the references that name it); the table is held to scripts/bloat-o-meter's own format
// strings ("%-40s %7s %7s %+7d"), the JSON is parsed, and the running kernel's BTF is diffed against
// itself and against a minimized BTF. Layout changes type by type: test_diff_layout.cc.
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using nlohmann::json;

// bloat-o-meter's lines, from its format strings.
std::string row(const std::string& name, const std::string& old_size, const std::string& new_size, int delta) {
  char line[512];
  std::snprintf(line, sizeof line, "%-40s %7s %7s %+7d\n", name.c_str(), old_size.c_str(), new_size.c_str(), delta);
  return line;
}
std::string title(const std::string& word) {
  char line[512];
  std::snprintf(line, sizeof line, "%-40s %7s %7s %7s\n", word.c_str(), "old", "new", "delta");
  return line;
}

// OLD: [1] int, [2] struct task {int pid; int tgid;} (8 bytes), [3] struct gone {int x;}.
//   int 16 + "int" 4 = 20; task 36 + "task" 5 + "pid" 4 + "tgid" 5 = 50; gone 24 + "gone" 5 + "x" 2 = 31;
//   strings "" int task pid tgid gone x = 26 bytes; 24 + 76 + 26 = 126.
// NEW: [1] int, [2] struct task {pid; tgid; prio} (12 bytes), [3] struct fresh {int y;}.
//   int 20; task 48 + 5 + 4 + 5 + "prio" 5 = 67; fresh 24 + "fresh" 6 + "y" 2 = 32;
//   strings 32 bytes; 24 + 88 + 32 = 144.
struct Pair {
  TempDir dir;
  std::string old_path, new_path;
};

void small_pair(Pair& p) {
  p.old_path = write_btf(p.dir, "old.btf", [](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    added(btf__add_struct(b, "task", 8));
    added(btf__add_field(b, "pid", i, 0, 0));
    added(btf__add_field(b, "tgid", i, 32, 0));
    added(btf__add_struct(b, "gone", 4));
    added(btf__add_field(b, "x", i, 0, 0));
  });
  p.new_path = write_btf(p.dir, "new.btf", [](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    added(btf__add_struct(b, "task", 12));
    added(btf__add_field(b, "pid", i, 0, 0));
    added(btf__add_field(b, "tgid", i, 32, 0));
    added(btf__add_field(b, "prio", i, 64, 0));
    added(btf__add_struct(b, "fresh", 4));
    added(btf__add_field(b, "y", i, 0, 0));
  });
}

TEST_CASE("diff shows one line per type whose layout changed, then the added and removed", "[diff]") {
  Pair p;
  small_pair(p);
  const RunResult r = btfslim({"diff", p.old_path, p.new_path});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out ==
        "struct task: size 8 -> 12; 1 member added\n"
        "struct fresh: added\n"
        "struct gone: removed\n"
        "total: 1 changed, 1 added, 1 removed, of 2 types on both sides\n");
  // The other way round.
  const RunResult back = btfslim({"diff", p.new_path, p.old_path});
  REQUIRE(back.status == 0);
  CHECK(back.out ==
        "struct task: size 12 -> 8; 1 member removed\n"
        "struct gone: added\n"
        "struct fresh: removed\n"
        "total: 1 changed, 1 added, 1 removed, of 2 types on both sides\n");
  // --by type is the default; the same bytes on every run.
  CHECK(btfslim({"diff", "--by", "type", p.old_path, p.new_path}).out == r.out);
  // -n folds the rest into [N others]; the total is still the last line.
  CHECK(btfslim({"diff", "-n", "1", p.old_path, p.new_path}).out ==
        "struct task: size 8 -> 12; 1 member added\n"
        "[2 others]\n"
        "total: 1 changed, 1 added, 1 removed, of 2 types on both sides\n");
  // --by member: one line per member change.
  CHECK(btfslim({"diff", "--by", "member", p.old_path, p.new_path}).out ==
        "struct task + prio: int at offset 8\n"
        "total: 1 changes in 1 types\n");
}

TEST_CASE("diff --by kind is the footprint in bloat-o-meter's format", "[diff]") {
  Pair p;
  small_pair(p);
  const RunResult r = btfslim({"diff", "--by", "kind", "-n", "2", p.old_path, p.new_path});
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("add/remove: 1/1 grow/shrink: 1/0 up/down: 49/-31 (18)\n" + title("STRUCT") +
                             row("struct fresh", "-", "32", 32) + row("struct task", "50", "67", 17) +
                             row("[1 others]", "31", "0", -31) + "Total: Before=81, After=99, chg +22.22%\n"));
}

TEST_CASE("diff of a BTF with itself has no rows", "[diff]") {
  Pair p;
  small_pair(p);
  for (const std::string& path : {p.old_path, p.new_path}) {
    const RunResult r = btfslim({"diff", path, path});
    REQUIRE(r.status == 0);
    CHECK(r.out == "total: 0 changed, 0 added, 0 removed, of 3 types on both sides\n");
    const RunResult k = btfslim({"diff", "--by", "kind", path, path});
    REQUIRE(k.status == 0);
    CHECK(k.out.rfind("add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("INT"), 0) == 0);
    CHECK_THAT(k.out, Contains("chg +0.00%"));
  }
}

TEST_CASE("diff --by kind has one block per kind, header and strings in their own", "[diff]") {
  Pair p;
  small_pair(p);
  const RunResult r = btfslim({"diff", "--by", "kind", p.old_path, p.new_path});
  // The old spelling --by-kind still works (hidden); -c is a config file's letter, not diff's.
  CHECK(btfslim({"diff", "--by-kind", p.old_path, p.new_path}).out == r.out);
  CHECK(btfslim({"diff", "-c", p.old_path, p.new_path}).status == 2);
  REQUIRE(r.status == 0);
  // INT 20 both; STRUCT 50 + 31 = 81 before, 67 + 32 = 99 after; header 24 and the leading "" 1 both.
  CHECK(r.out == "add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("INT") +
                     "Total: Before=20, After=20, chg +0.00%\n\n"
                     "add/remove: 1/1 grow/shrink: 1/0 up/down: 49/-31 (18)\n" +
                     title("STRUCT") + row("struct fresh", "-", "32", 32) + row("struct task", "50", "67", 17) +
                     row("struct gone", "31", "-", -31) + "Total: Before=81, After=99, chg +22.22%\n\n" +
                     "add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("Other") +
                     "Total: Before=25, After=25, chg +0.00%\n"
                     "\nTotal: Before=126, After=144, chg +14.29%\n");
}

TEST_CASE("diff --format csv and json", "[diff]") {
  Pair p;
  small_pair(p);
  const RunResult csv = btfslim({"diff", "--by", "kind", "--format", "csv", p.old_path, p.new_path});
  REQUIRE(csv.status == 0);
  CHECK(csv.out ==
        "kind,name,old_bytes,new_bytes,delta_bytes\n"
        "STRUCT,struct fresh,,32,32\n"
        "STRUCT,struct task,50,67,17\n"
        "STRUCT,struct gone,31,,-31\n");
  const RunResult types = btfslim({"diff", "-f", "csv", p.old_path, p.new_path});
  REQUIRE(types.status == 0);
  CHECK(types.out ==
        "name,status,old_kind,new_kind,old_type_id,new_type_id,old_size_bytes,new_size_bytes,delta_bytes,"
        "added_count,removed_count,moved_count,retyped_count,resized_count,revalued_count,renamed_count,summary\n"
        "struct task,changed,STRUCT,STRUCT,2,2,8,12,4,1,0,0,0,0,0,0,size 8 -> 12; 1 member added\n"
        "struct fresh,added,,STRUCT,,3,,4,,0,0,0,0,0,0,0,\n"
        "struct gone,removed,STRUCT,,3,,4,,,0,0,0,0,0,0,0,\n");
  const RunResult members = btfslim({"diff", "-f", "csv", "--by", "member", p.old_path, p.new_path});
  REQUIRE(members.status == 0);
  CHECK(members.out ==
        "type,member,change,old_type,new_type,old_bit_offset,new_bit_offset,old_bitfield_bits,new_bitfield_bits,"
        "old_value,new_value,old_member\n"
        "struct task,prio,added,,int,,64,,0,,,\n");

  // JSON: one document for every view, so --by with it would be ignored: refused in one line.
  const RunResult js = btfslim({"diff", "-f", "json", p.old_path, p.new_path});
  REQUIRE(js.status == 0);
  const RunResult by = btfslim({"diff", "-f", "json", "--by", "kind", p.old_path, p.new_path});
  CHECK(by.status == 2);
  CHECK(by.out.empty());
  CHECK(std::count(by.err.begin(), by.err.end(), '\n') == 1);
  const json j = json::parse(js.out);
  CHECK(j["old"] == json({{"file", p.old_path}, {"type_count", 3}, {"size_bytes", 126}}));
  CHECK(j["new"] == json({{"file", p.new_path}, {"type_count", 3}, {"size_bytes", 144}}));
  CHECK(j["compared_count"] == 2);
  CHECK(j["changed_count"] == 1);
  CHECK(j["added_count"] == 1);
  CHECK(j["removed_count"] == 1);
  REQUIRE(j["layout_changes"].size() == 3);
  CHECK(j["layout_changes"][0] == json::parse(R"({"name":"struct task","status":"changed","old_kind":"STRUCT",
    "new_kind":"STRUCT","old_type_id":2,"new_type_id":2,"old_size_bytes":8,"new_size_bytes":12,"delta_bytes":4,
    "summary":"size 8 -> 12; 1 member added","changes":[{"change":"added","member":"prio","old_member":null,"old_type":null,
    "new_type":"int","old_bit_offset":null,"new_bit_offset":64,"old_bitfield_bits":null,"new_bitfield_bits":0,
    "old_value":null,"new_value":null}]})"));
  CHECK(j["layout_changes"][1] == json::parse(R"({"name":"struct fresh","status":"added","old_kind":null,
    "new_kind":"STRUCT","old_type_id":null,"new_type_id":3,"old_size_bytes":null,"new_size_bytes":4,
    "delta_bytes":null,"summary":"","changes":[]})"));
  CHECK(j["layout_changes"][2]["status"] == "removed");
  const json footprint = {{"added_count", 1}, {"removed_count", 1}, {"grown_count", 1}, {"shrunk_count", 0},
                          {"up_bytes", 49}, {"down_bytes", -31}, {"old_bytes", 126}, {"new_bytes", 144},
                          {"delta_bytes", 18}};
  CHECK(j["footprint"] == footprint);
  REQUIRE(j["types"].size() == 3);
  CHECK(j["types"][0] == json::parse(R"({"kind":"STRUCT","name":"struct fresh","old_bytes":null,"new_bytes":32,"delta_bytes":32})"));
  CHECK(j["types"][2]["new_bytes"].is_null());
  // Per kind: INT unchanged, STRUCT as the table's block; other = header + the leading "".
  REQUIRE(j["kinds"].size() == 2);
  CHECK(j["kinds"][0]["kind"] == "INT");
  CHECK(j["kinds"][0]["old_bytes"] == 20);
  CHECK(j["kinds"][1]["kind"] == "STRUCT");
  CHECK(j["kinds"][1]["old_bytes"] == 81);
  CHECK(j["kinds"][1]["new_bytes"] == 99);
  CHECK(j["other"]["new_bytes"] == 25);
}

TEST_CASE("diff -v says which members were added, removed, resized and moved", "[diff]") {
  TempDir dir;
  // struct s {int a; int b; int c;} (12 bytes) -> struct s {int b; long a; int d; int e;} (24 bytes).
  const std::string old_path = write_btf(dir, "old.btf", [](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    added(btf__add_int(b, "long int", 8, BTF_INT_SIGNED));
    added(btf__add_struct(b, "s", 12));
    added(btf__add_field(b, "a", i, 0, 0));
    added(btf__add_field(b, "b", i, 32, 0));
    added(btf__add_field(b, "c", i, 64, 0));
  });
  const std::string new_path = write_btf(dir, "new.btf", [](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    const int l = added(btf__add_int(b, "long int", 8, BTF_INT_SIGNED));
    added(btf__add_struct(b, "s", 24));
    added(btf__add_field(b, "b", i, 0, 0));
    added(btf__add_field(b, "a", l, 64, 0));
    added(btf__add_field(b, "d", i, 128, 0));
    added(btf__add_field(b, "e", i, 160, 0));
  });
  const RunResult r = btfslim({"diff", "-v", old_path, new_path});
  REQUIRE(r.status == 0);
  CHECK(r.out ==
        "struct s: size 12 -> 24; 2 members added, 1 removed, 2 moved, 1 retyped\n"
        "    - c: int at offset 8\n"
        "    ~ b: offset 4 -> 0\n"
        "    ~ a: int -> long int\n"
        "    ~ a: offset 0 -> 8\n"
        "    + d: int at offset 16\n"
        "    + e: int at offset 20\n"
        "total: 1 changed, 0 added, 0 removed, of 3 types on both sides\n");
}

// struct outer { union {int a; int b;}; struct {int c;} s; union {int d; int e;}; } with the anonymous
// types before outer (ids 2-4) or after it (ids 3-5), and in another order.
std::string anon_btf(const TempDir& dir, const std::string& name, bool anon_first, bool grow_second) {
  return write_btf(dir, name, [&](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    auto add_anon = [&](int which) {
      if (which == 0) {
        added(btf__add_union(b, "", 4));
        added(btf__add_field(b, "a", i, 0, 0));
        added(btf__add_field(b, "b", i, 0, 0));
      } else if (which == 1) {
        added(btf__add_struct(b, "", 4));
        added(btf__add_field(b, "c", i, 0, 0));
      } else {
        added(btf__add_union(b, "", 4));
        added(btf__add_field(b, "d", i, 0, 0));
        added(btf__add_field(b, "e", i, 0, 0));
        if (grow_second) added(btf__add_field(b, "f", i, 0, 0));
      }
    };
    // Ids of union 1, struct s and union 2.
    int u1, st, u2;
    if (anon_first) {
      // In the order union 2, struct, union 1.
      u2 = 2, st = 3, u1 = 4;
      add_anon(2);
      add_anon(1);
      add_anon(0);
    } else {
      u1 = 3, st = 4, u2 = 5;
    }
    added(btf__add_struct(b, "outer", 12));
    added(btf__add_field(b, "", u1, 0, 0));
    added(btf__add_field(b, "s", st, 32, 0));
    added(btf__add_field(b, "", u2, 64, 0));
    if (!anon_first) {
      add_anon(0);
      add_anon(1);
      add_anon(2);
    }
  });
}

TEST_CASE("diff keys anonymous types by where they are used: renumbering is no change", "[diff]") {
  TempDir dir;
  const std::string a = anon_btf(dir, "a.btf", false, false);
  const std::string b = anon_btf(dir, "b.btf", true, false);
  const std::string grown = anon_btf(dir, "grown.btf", true, true);
  REQUIRE(read_file(a) != read_file(b));
  const RunResult same = btfslim({"diff", a, b});
  REQUIRE(same.status == 0);
  CHECK(same.out == "total: 0 changed, 0 added, 0 removed, of 5 types on both sides\n");
  // The second unnamed union gains a member f: 12 bytes of record and "f" 2.
  CHECK(btfslim({"diff", a, grown}).out ==
        "struct outer::(anon union)#2: 1 member added\n"
        "total: 1 changed, 0 added, 0 removed, of 5 types on both sides\n");
  const RunResult r = btfslim({"diff", "--by", "kind", "-n", "0", a, grown});
  REQUIRE(r.status == 0);
  // union 2: 12 + 2 x 12 + "d" 2 + "e" 2 = 40 -> 12 + 3 x 12 + 6 = 54.
  CHECK_THAT(r.out, Contains("add/remove: 0/0 grow/shrink: 1/0 up/down: 14/0 (14)\n" + title("UNION") +
                                 row("struct outer::(anon union)#2", "40", "54", 14)));
  // The member named s is keyed by its name.
  const RunResult csv = btfslim({"diff", "--by", "kind", "-f", "csv", grown, a});
  CHECK(csv.out == "kind,name,old_bytes,new_bytes,delta_bytes\nUNION,struct outer::(anon union)#2,54,40,-14\n");
}

TEST_CASE("diff tells several types of one name apart by ordinal", "[diff]") {
  TempDir dir;
  const std::string one = write_btf(dir, "one.btf", [](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    added(btf__add_struct(b, "foo", 4));
    added(btf__add_field(b, "x", i, 0, 0));
  });
  const std::string two = write_btf(dir, "two.btf", [](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    added(btf__add_struct(b, "foo", 4));
    added(btf__add_field(b, "x", i, 0, 0));
    added(btf__add_struct(b, "foo", 8));
    added(btf__add_field(b, "x", i, 0, 0));
    added(btf__add_field(b, "y", i, 32, 0));
    added(btf__add_ptr(b, 2));
    added(btf__add_ptr(b, 3));
  });
  const RunResult r = btfslim({"diff", "--by", "kind", "-f", "csv", one, two});
  REQUIRE(r.status == 0);
  // In two.btf "foo" and "x" are named twice: the first foo shrinks from 24 + 4 + 2 = 30 to 24 + 2 + 1 = 27;
  // foo#2 is 36 + 2 + 1 + "y" 2 = 41; the pointers are 12 each, both "struct foo *". The strings left
  // to [strings] are the leading "" on both sides: no row.
  CHECK(r.out ==
        "kind,name,old_bytes,new_bytes,delta_bytes\n"
        "STRUCT,struct foo#2,,41,41\n"
        "PTR,struct foo *,,12,12\n"
        "PTR,struct foo *#2,,12,12\n"
        "STRUCT,struct foo,30,27,-3\n");
}

TEST_CASE("diff refuses bad input with one line and status 2", "[diff]") {
  TempDir dir;
  const std::string junk = dir.file("junk.btf");
  write_file(junk, "not BTF at all");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"diff", dir.file("missing.btf"), junk}, {"diff", junk, junk}, {"diff", "/bin/true", "/bin/true"},
        {"diff", junk}, {"diff", "-f", "xml", junk, junk}, {"diff", "--by", "name", junk, junk},
        {"diff", "-c", junk, junk}}) {
    const RunResult r = btfslim(args);
    INFO(args[1]);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.rfind("btfslim: ", 0) == 0);
  }
}

std::string file_size(const std::string& path) { return std::to_string(read_file(path).size()); }

TEST_CASE("diff of the running kernel's BTF with itself is empty", "[diff]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  TempDir dir;
  const std::string copy = dir.file("vmlinux.btf");
  write_file(copy, read_file(vmlinux));
  const std::string size = file_size(vmlinux);
  const std::string empty = "add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("Other") +
                            "Total: Before=";
  // Read once (the same file), and read twice (a copy): the same empty report.
  for (const std::string& other : {std::string("vmlinux"), copy}) {
    const RunResult r = btfslim({"diff", vmlinux, other});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("total: 0 changed, 0 added, 0 removed, of ", 0) == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    const RunResult k = btfslim({"diff", "--by", "kind", vmlinux, other});
    REQUIRE(k.status == 0);
    CHECK(k.out.find("\n" + empty) != std::string::npos);
    CHECK_THAT(k.out, !Contains("grow/shrink: 1") && Contains("Total: Before=" + size + ", After=" + size + ", chg +0.00%\n"));
  }
}

TEST_CASE("diff of the running kernel's BTF against a minimized one lists what was removed", "[diff]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const std::string object = build_data_dir() + "/trace_exec.bpf.o";
  if (read_file(object).empty()) return skip("trace_exec.bpf.o was not built");
  TempDir dir;
  const std::string min = dir.file("min.btf");
  REQUIRE(btfslim({"minimize", "--btf", vmlinux, "-o", min, object}).status == 0);

  const RunResult r = btfslim({"diff", "-f", "json", vmlinux, min});
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  CHECK(j["footprint"]["old_bytes"] == read_file(vmlinux).size());
  CHECK(j["footprint"]["new_bytes"] == read_file(min).size());
  std::int64_t sum = 0;
  std::set<std::string> removed;
  for (const json& row : j["types"]) {
    sum += row["delta_bytes"].get<std::int64_t>();
    if (row["new_bytes"].is_null()) removed.insert(row["name"].get<std::string>());
  }
  // The rows add up to the change, and what no CO-RE relocation of trace_exec reads is gone.
  CHECK(sum == j["footprint"]["delta_bytes"].get<std::int64_t>());
  CHECK(j["footprint"]["removed_count"] == removed.size());
  CHECK(removed.size() > 100000);
  for (const char* gone : {"struct sk_buff", "func vfs_read", "struct net_device", "typedef pid_t"}) {
    INFO(gone);
    CHECK(removed.count(gone) == 1);
  }
  // The table says the same.
  const RunResult table = btfslim({"diff", "--by", "kind", vmlinux, min});
  REQUIRE(table.status == 0);
  CHECK_THAT(table.out, Contains("\nstruct sk_buff "));
  // The layout: task_struct kept, most of its members gone, the kept ones where they were.
  const RunResult layout = btfslim({"diff", vmlinux, min});
  REQUIRE(layout.status == 0);
  CHECK_THAT(layout.out, Contains("\nstruct task_struct: ") && Contains("struct sk_buff: removed\n"));
  const std::size_t at = layout.out.find("\nstruct task_struct: ");
  CHECK_THAT(layout.out.substr(at, layout.out.find('\n', at + 1) - at), Contains(" removed") && !Contains(" moved"));
  CHECK_THAT(table.out, Contains("Total: Before=" + file_size(vmlinux) + ", After=" + file_size(min)));
}

TEST_CASE("diff of two kernels shows task_struct's layout change, whole and minimized", "[diff]") {
  std::string why;
  const auto other = other_kernel(why);
  if (!other) return skip(why);
  const std::string running = running_vmlinux();
  if (running.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");

  // Whole: the 6.1 vmlinux against the running kernel's.
  const RunResult whole = btfslim({"diff", "-v", other->vmlinux, running});
  INFO(whole.err);
  REQUIRE(whole.status == 0);
  const std::size_t at = whole.out.find("\nstruct task_struct: ");
  REQUIRE(at != std::string::npos);
  const std::string line = whole.out.substr(at + 1, whole.out.find('\n', at + 1) - at - 1);
  INFO(line);
  CHECK_THAT(line, Contains("struct task_struct: size ") && Contains(" moved"));
  CHECK_THAT(whole.out, Contains("\n    ~ pid: offset "));

  // Minimized: the same object for each kernel keeps task_struct at each kernel's size and offsets.
  TempDir dir;
  const std::string object = test_object("trace_exec");
  const std::string old_min = dir.file("old.btf"), new_min = dir.file("new.btf");
  REQUIRE(btfslim({"minimize", "--btf", other->vmlinux, "-o", old_min, object}).status == 0);
  REQUIRE(btfslim({"minimize", "--btf", running, "-o", new_min, object}).status == 0);
  const RunResult r = btfslim({"diff", "-f", "json", old_min, new_min});
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  const json* task = nullptr;
  for (const json& t : j["layout_changes"])
    if (t["name"] == "struct task_struct") task = &t;
  REQUIRE(task != nullptr);
  CHECK(task->at("status") == "changed");
  CHECK(task->at("old_size_bytes") != task->at("new_size_bytes"));
  std::size_t moved = 0;
  for (const json& c : task->at("changes")) moved += c["change"] == "moved";
  CHECK(moved >= 1);
}
}  // namespace
}  // namespace btfslim::test

namespace btfslim::test {
namespace {

TEST_CASE("diff reads split BTF on its base, and ELF files' .BTF", "[diff]") {
  TempDir dir;
  const SplitPair pair = split_btf();
  const std::string base = dir.file("base.btf"), split = dir.file("split.btf"), empty = dir.file("empty.btf");
  write_file(base, pair.base);
  write_file(split, pair.split);
  {
    BtfPtr b(btf__new(pair.base.data(), static_cast<__u32>(pair.base.size())));
    REQUIRE(b != nullptr);
    BtfPtr s(btf__new_empty_split(b.get()));
    write_file(empty, raw_bytes(s.get()));
  }
  const RunResult same = btfslim({"diff", "--by", "kind", "--base", base, split, split});
  INFO(same.err);
  REQUIRE(same.status == 0);
  CHECK_THAT(same.out, Contains("Total: Before=" + file_size(split) + ", After=" + file_size(split) + ", chg +0.00%\n") &&
                           !Contains("grow/shrink: 1"));
  // Only the split part counts, and names that resolve in the base ("len") cost it nothing:
  // nf_conn 48 + "nf_conn" 8 + "skb" 4 + "mark" 5 = 65; its typedef 12 + "nf_conn_t" 10; the pointer 12.
  const RunResult grown = btfslim({"diff", "--by", "kind", "-f", "csv", "-B", base, empty, split});
  REQUIRE(grown.status == 0);
  CHECK_THAT(grown.out, Contains("STRUCT,struct nf_conn,,65,65\n"));
  CHECK_THAT(grown.out, Contains("TYPEDEF,typedef nf_conn_t,,22,22\n"));
  CHECK_THAT(grown.out, Contains("PTR,struct sk_buff *,,12,12\n"));
  // Without the base, the split file is refused in one line.
  const RunResult no_base = btfslim({"diff", split, split});
  CHECK(no_base.status == 2);
  CHECK(std::count(no_base.err.begin(), no_base.err.end(), '\n') == 1);

  // An ELF file's .BTF (pahole -J output) against itself: nothing changed, the section's bytes in total.
  const std::string elf = build_data_dir() + "/pahole_types.o";
  const RunResult r = btfslim({"diff", elf, elf});
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("total: 0 changed, 0 added, 0 removed, of ", 0) == 0);
}

TEST_CASE("diff ends on crafted BTF: cycles without names, deep chains", "[diff]") {
  TempDir dir;
  // [1] int; [2] ptr -> [3] ptr -> [2]; [4] anonymous struct {p: ptr to [5]} and [5] {q: ptr to [4]}
  // through [6] and [7]; [8..5007] const chain ending at int; struct holder; struct voidy.
  auto build = [](bool reversed) {
    return [reversed](struct btf* b) {
      const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
      added(btf__add_ptr(b, 3));
      added(btf__add_ptr(b, 2));
      added(btf__add_struct(b, "", 8));
      added(btf__add_field(b, reversed ? "q" : "p", 6, 0, 0));
      added(btf__add_struct(b, "", 8));
      added(btf__add_field(b, reversed ? "p" : "q", 7, 0, 0));
      added(btf__add_ptr(b, 5));
      added(btf__add_ptr(b, 4));
      for (int k = 0; k < 5000; ++k) added(btf__add_const(b, k == 0 ? i : 7 + k));
      added(btf__add_struct(b, "holder", 8));
      added(btf__add_field(b, "deep", 5007, 0, 0));
      // An unnamed member of type void, and a member more in one of them: a row for -v.
      added(btf__add_struct(b, "voidy", 8));
      added(btf__add_field(b, "", 0, 0, 0));
      if (reversed) added(btf__add_field(b, "x", i, 32, 0));
    };
  };
  const std::string a = write_btf(dir, "a.btf", build(false));
  const std::string b = write_btf(dir, "b.btf", build(true));
  for (const auto& [x, y] : {std::pair{a, a}, std::pair{b, b}, std::pair{a, b}}) {
    const RunResult r = btfslim({"diff", "-v", x, y});
    INFO(x << " " << y << ": " << r.err);
    REQUIRE(r.status == 0);
    if (x == y) CHECK(r.out.rfind("total: 0 changed", 0) == 0);
    if (x != y) CHECK_THAT(r.out, Contains("    + x: int at offset 4\n"));
    // The same report on every run.
    CHECK(btfslim({"diff", "-v", x, y}).out == r.out);
  }
}

}  // namespace
}  // namespace btfslim::test
