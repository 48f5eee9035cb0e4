// `btfslim diff` end to end ([diff]): BTF built here with libbpf's btf__add_*, small enough that every
// size is worked out by hand (record bytes + the bytes of the strings a type names, each string's bytes
// split among the references that name it); the table is held to scripts/bloat-o-meter's own format
// strings ("%-40s %7s %7s %+7d"), the JSON is parsed, and the running kernel's BTF is diffed against
// itself and against a minimized BTF.
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using nlohmann::json;

int ok(int id) {
  REQUIRE(id >= 0);
  return id;
}

// A raw BTF built by `build`, written to `path`.
std::string write_btf(const TempDir& dir, const std::string& name, const std::function<void(struct btf*)>& build) {
  BtfPtr b(btf__new_empty());
  build(b.get());
  __u32 size = 0;
  const void* data = btf__raw_data(b.get(), &size);
  REQUIRE(data != nullptr);
  const std::string path = dir.file(name);
  write_file(path, std::string(static_cast<const char*>(data), size));
  return path;
}

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
    const int i = ok(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    ok(btf__add_struct(b, "task", 8));
    ok(btf__add_field(b, "pid", i, 0, 0));
    ok(btf__add_field(b, "tgid", i, 32, 0));
    ok(btf__add_struct(b, "gone", 4));
    ok(btf__add_field(b, "x", i, 0, 0));
  });
  p.new_path = write_btf(p.dir, "new.btf", [](struct btf* b) {
    const int i = ok(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    ok(btf__add_struct(b, "task", 12));
    ok(btf__add_field(b, "pid", i, 0, 0));
    ok(btf__add_field(b, "tgid", i, 32, 0));
    ok(btf__add_field(b, "prio", i, 64, 0));
    ok(btf__add_struct(b, "fresh", 4));
    ok(btf__add_field(b, "y", i, 0, 0));
  });
}

TEST_CASE("diff lists added, removed and grown types in bloat-o-meter's format", "[diff]") {
  Pair p;
  small_pair(p);
  const RunResult r = btfslim({"diff", p.old_path, p.new_path});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out == "add/remove: 1/1 grow/shrink: 1/0 up/down: 49/-31 (18)\n" + title("Type") +
                     row("struct fresh", "-", "32", 32) + row("struct task", "50", "67", 17) +
                     row("struct gone", "31", "-", -31) + "Total: Before=126, After=144, chg +14.29%\n");
  // The other way round: everything negated, the order by delta again.
  const RunResult back = btfslim({"diff", p.new_path, p.old_path});
  REQUIRE(back.status == 0);
  CHECK(back.out == "add/remove: 1/1 grow/shrink: 0/1 up/down: 31/-49 (-18)\n" + title("Type") +
                        row("struct gone", "-", "31", 31) + row("struct task", "67", "50", -17) +
                        row("struct fresh", "32", "-", -32) + "Total: Before=144, After=126, chg -12.50%\n");
  // The same bytes on every run.
  CHECK(btfslim({"diff", p.old_path, p.new_path}).out == r.out);
}

TEST_CASE("diff of a BTF with itself has no rows", "[diff]") {
  Pair p;
  small_pair(p);
  for (const std::string& path : {p.old_path, p.new_path}) {
    const RunResult r = btfslim({"diff", path, path});
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("Type") + "Total: Before=", 0) == 0);
    CHECK_THAT(r.out, Contains("chg +0.00%"));
  }
}

TEST_CASE("diff -c has one block per kind, header and strings in their own", "[diff]") {
  Pair p;
  small_pair(p);
  const RunResult r = btfslim({"diff", "-c", p.old_path, p.new_path});
  REQUIRE(r.status == 0);
  // INT 20 both; STRUCT 50 + 31 = 81 before, 67 + 32 = 99 after; header 24 and the leading "" 1 both.
  CHECK(r.out == "add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("INT") +
                     "Total: Before=20, After=20, chg +0.00%\n\n"
                     "add/remove: 1/1 grow/shrink: 1/0 up/down: 49/-31 (18)\n" +
                     title("STRUCT") + row("struct fresh", "-", "32", 32) + row("struct task", "50", "67", 17) +
                     row("struct gone", "31", "-", -31) + "Total: Before=81, After=99, chg +22.22%\n\n" +
                     "add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("Other") +
                     "Total: Before=25, After=25, chg +0.00%\n");
}

TEST_CASE("diff --format csv and json", "[diff]") {
  Pair p;
  small_pair(p);
  const RunResult csv = btfslim({"diff", "--format", "csv", p.old_path, p.new_path});
  REQUIRE(csv.status == 0);
  CHECK(csv.out ==
        "kind,name,old,new,delta\n"
        "STRUCT,struct fresh,,32,32\n"
        "STRUCT,struct task,50,67,17\n"
        "STRUCT,struct gone,31,,-31\n");

  const RunResult js = btfslim({"diff", "-f", "json", "-v", p.old_path, p.new_path});
  REQUIRE(js.status == 0);
  const json j = json::parse(js.out);
  CHECK(j["old"] == p.old_path);
  CHECK(j["new"] == p.new_path);
  CHECK(j["add"] == 1);
  CHECK(j["remove"] == 1);
  CHECK(j["grow"] == 1);
  CHECK(j["shrink"] == 0);
  CHECK(j["up"] == 49);
  CHECK(j["down"] == -31);
  CHECK(j["before"] == 126);
  CHECK(j["after"] == 144);
  CHECK(j["delta"] == 18);
  REQUIRE(j["rows"].size() == 3);
  CHECK(j["rows"][0] == json::parse(R"({"kind":"STRUCT","name":"struct fresh","old":null,"new":32,"delta":32,"changes":[]})"));
  CHECK(j["rows"][1]["name"] == "struct task");
  const json task_changes = {"record 36 -> 48 bytes, strings 14 -> 19 bytes", "size 8 -> 12",
                             "+ prio (int, 4 bytes at offset 8)"};
  CHECK(j["rows"][1]["changes"] == task_changes);
  CHECK(j["rows"][2]["new"].is_null());
  // Per kind: INT unchanged, STRUCT as the table's block, other = header + the leading "".
  REQUIRE(j["kinds"].size() == 3);
  CHECK(j["kinds"][0]["kind"] == "INT");
  CHECK(j["kinds"][0]["before"] == 20);
  CHECK(j["kinds"][1]["kind"] == "STRUCT");
  CHECK(j["kinds"][1]["before"] == 81);
  CHECK(j["kinds"][1]["after"] == 99);
  CHECK(j["kinds"][2]["kind"] == "other");
  CHECK(j["kinds"][2]["after"] == 25);
}

TEST_CASE("diff -v says which members were added, removed, resized and moved", "[diff]") {
  TempDir dir;
  // struct s {int a; int b; int c;} (12 bytes) -> struct s {int b; long a; int d; int e;} (24 bytes).
  const std::string old_path = write_btf(dir, "old.btf", [](struct btf* b) {
    const int i = ok(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    ok(btf__add_int(b, "long int", 8, BTF_INT_SIGNED));
    ok(btf__add_struct(b, "s", 12));
    ok(btf__add_field(b, "a", i, 0, 0));
    ok(btf__add_field(b, "b", i, 32, 0));
    ok(btf__add_field(b, "c", i, 64, 0));
  });
  const std::string new_path = write_btf(dir, "new.btf", [](struct btf* b) {
    const int i = ok(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    const int l = ok(btf__add_int(b, "long int", 8, BTF_INT_SIGNED));
    ok(btf__add_struct(b, "s", 24));
    ok(btf__add_field(b, "b", i, 0, 0));
    ok(btf__add_field(b, "a", l, 64, 0));
    ok(btf__add_field(b, "d", i, 128, 0));
    ok(btf__add_field(b, "e", i, 160, 0));
  });
  const RunResult r = btfslim({"diff", "-v", old_path, new_path});
  REQUIRE(r.status == 0);
  // s: 12 + 3 x 12 + "s" "a" "b" "c" 8 = 56 -> 12 + 4 x 12 + "s" "b" "a" "d" "e" 10 = 70.
  CHECK(r.out == "add/remove: 0/0 grow/shrink: 1/0 up/down: 14/0 (14)\n" + title("Type") +
                     row("struct s", "56", "70", 14) +
                     "    record 48 -> 60 bytes, strings 8 -> 10 bytes\n"
                     "    size 12 -> 24\n"
                     "    - c (int, 4 bytes at offset 8)\n"
                     "    > b: offset 4 -> 0\n"
                     "    ~ a: int -> long int (4 -> 8 bytes)\n"
                     "    > a: offset 0 -> 8\n"
                     "    + d (int, 4 bytes at offset 16)\n"
                     "    + e (int, 4 bytes at offset 20)\n"
                     "Total: Before=126, After=140, chg +11.11%\n");
}

// struct outer { union {int a; int b;}; struct {int c;} s; union {int d; int e;}; } with the anonymous
// types before outer (ids 2-4) or after it (ids 3-5), and in another order.
std::string anon_btf(const TempDir& dir, const std::string& name, bool anon_first, bool grow_second) {
  return write_btf(dir, name, [&](struct btf* b) {
    const int i = ok(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    auto add_anon = [&](int which) {
      if (which == 0) {
        ok(btf__add_union(b, "", 4));
        ok(btf__add_field(b, "a", i, 0, 0));
        ok(btf__add_field(b, "b", i, 0, 0));
      } else if (which == 1) {
        ok(btf__add_struct(b, "", 4));
        ok(btf__add_field(b, "c", i, 0, 0));
      } else {
        ok(btf__add_union(b, "", 4));
        ok(btf__add_field(b, "d", i, 0, 0));
        ok(btf__add_field(b, "e", i, 0, 0));
        if (grow_second) ok(btf__add_field(b, "f", i, 0, 0));
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
    ok(btf__add_struct(b, "outer", 12));
    ok(btf__add_field(b, "", u1, 0, 0));
    ok(btf__add_field(b, "s", st, 32, 0));
    ok(btf__add_field(b, "", u2, 64, 0));
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
  CHECK(same.out == "add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("Type") +
                        "Total: Before=" + std::to_string(read_file(a).size()) +
                        ", After=" + std::to_string(read_file(b).size()) + ", chg +0.00%\n");
  // The second unnamed union gains a member f: 12 bytes of record and "f" 2.
  const RunResult r = btfslim({"diff", a, grown});
  REQUIRE(r.status == 0);
  // union 2: 12 + 2 x 12 + "d" 2 + "e" 2 = 40 -> 12 + 3 x 12 + 6 = 54.
  CHECK(r.out == "add/remove: 0/0 grow/shrink: 1/0 up/down: 14/0 (14)\n" + title("Type") +
                     row("struct outer::(anon union)#2", "40", "54", 14) + "Total: Before=" +
                     std::to_string(read_file(a).size()) + ", After=" + std::to_string(read_file(grown).size()) +
                     ", chg " + [&] {
                       char pct[32];
                       std::snprintf(pct, sizeof pct, "%+.2f%%", 1400.0 / static_cast<double>(read_file(a).size()));
                       return std::string(pct);
                     }() + "\n");
  // The member named s is keyed by its name.
  const RunResult csv = btfslim({"diff", "-f", "csv", grown, a});
  CHECK(csv.out == "kind,name,old,new,delta\nUNION,struct outer::(anon union)#2,54,40,-14\n");
}

TEST_CASE("diff tells several types of one name apart by ordinal", "[diff]") {
  TempDir dir;
  const std::string one = write_btf(dir, "one.btf", [](struct btf* b) {
    const int i = ok(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    ok(btf__add_struct(b, "foo", 4));
    ok(btf__add_field(b, "x", i, 0, 0));
  });
  const std::string two = write_btf(dir, "two.btf", [](struct btf* b) {
    const int i = ok(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    ok(btf__add_struct(b, "foo", 4));
    ok(btf__add_field(b, "x", i, 0, 0));
    ok(btf__add_struct(b, "foo", 8));
    ok(btf__add_field(b, "x", i, 0, 0));
    ok(btf__add_field(b, "y", i, 32, 0));
    ok(btf__add_ptr(b, 2));
    ok(btf__add_ptr(b, 3));
  });
  const RunResult r = btfslim({"diff", "-f", "csv", one, two});
  REQUIRE(r.status == 0);
  // In two.btf "foo" and "x" are named twice: the first foo shrinks from 24 + 4 + 2 = 30 to 24 + 2 + 1 = 27;
  // foo#2 is 36 + 2 + 1 + "y" 2 = 41; the pointers are 12 each, both "struct foo *". The strings left
  // to [strings] are the leading "" on both sides: no row.
  CHECK(r.out ==
        "kind,name,old,new,delta\n"
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
        {"diff", junk}, {"diff", "-f", "xml", junk, junk}}) {
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
  const std::string empty = "add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("Type") +
                            "Total: Before=" + size + ", After=" + size + ", chg +0.00%\n";
  // Read once (the same file), and read twice (a copy): the same empty report.
  for (const std::string& other : {std::string("vmlinux"), copy}) {
    const RunResult r = btfslim({"diff", vmlinux, other});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out == empty);
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
  CHECK(j["before"] == read_file(vmlinux).size());
  CHECK(j["after"] == read_file(min).size());
  std::int64_t sum = 0;
  std::set<std::string> removed;
  for (const json& row : j["rows"]) {
    sum += row["delta"].get<std::int64_t>();
    if (row["new"].is_null()) removed.insert(row["name"].get<std::string>());
  }
  // The rows add up to the change, and what no CO-RE relocation of trace_exec reads is gone.
  CHECK(sum == j["delta"].get<std::int64_t>());
  CHECK(j["remove"] == removed.size());
  CHECK(removed.size() > 100000);
  for (const char* gone : {"struct sk_buff", "func vfs_read", "struct net_device", "typedef pid_t"}) {
    INFO(gone);
    CHECK(removed.count(gone) == 1);
  }
  // The table says the same.
  const RunResult table = btfslim({"diff", vmlinux, min});
  REQUIRE(table.status == 0);
  CHECK_THAT(table.out, Contains("\nstruct sk_buff "));
  CHECK_THAT(table.out, Contains("Total: Before=" + file_size(vmlinux) + ", After=" + file_size(min)));
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
    __u32 size = 0;
    const void* data = btf__raw_data(s.get(), &size);
    REQUIRE(data != nullptr);
    write_file(empty, std::string(static_cast<const char*>(data), size));
  }
  const RunResult same = btfslim({"diff", "--base", base, split, split});
  INFO(same.err);
  REQUIRE(same.status == 0);
  CHECK(same.out == "add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n" + title("Type") + "Total: Before=" +
                        file_size(split) + ", After=" + file_size(split) + ", chg +0.00%\n");
  // Only the split part counts, and names that resolve in the base ("len") cost it nothing:
  // nf_conn 48 + "nf_conn" 8 + "skb" 4 + "mark" 5 = 65; its typedef 12 + "nf_conn_t" 10; the pointer 12.
  const RunResult grown = btfslim({"diff", "-f", "csv", "-B", base, empty, split});
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
  CHECK(r.out.rfind("add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n", 0) == 0);
}

TEST_CASE("diff ends on crafted BTF: cycles without names, deep chains", "[diff]") {
  TempDir dir;
  // [1] int; [2] ptr -> [3] ptr -> [2]; [4] anonymous struct {p: ptr to [5]} and [5] {q: ptr to [4]}
  // through [6] and [7]; [8..5007] const chain ending at int; struct holder; struct voidy.
  auto build = [](bool reversed) {
    return [reversed](struct btf* b) {
      const int i = ok(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
      ok(btf__add_ptr(b, 3));
      ok(btf__add_ptr(b, 2));
      ok(btf__add_struct(b, "", 8));
      ok(btf__add_field(b, reversed ? "q" : "p", 6, 0, 0));
      ok(btf__add_struct(b, "", 8));
      ok(btf__add_field(b, reversed ? "p" : "q", 7, 0, 0));
      ok(btf__add_ptr(b, 5));
      ok(btf__add_ptr(b, 4));
      for (int k = 0; k < 5000; ++k) ok(btf__add_const(b, k == 0 ? i : 7 + k));
      ok(btf__add_struct(b, "holder", 8));
      ok(btf__add_field(b, "deep", 5007, 0, 0));
      // An unnamed member of type void, and a member more in one of them: a row for -v.
      ok(btf__add_struct(b, "voidy", 8));
      ok(btf__add_field(b, "", 0, 0, 0));
      if (reversed) ok(btf__add_field(b, "x", i, 32, 0));
    };
  };
  const std::string a = write_btf(dir, "a.btf", build(false));
  const std::string b = write_btf(dir, "b.btf", build(true));
  for (const auto& [x, y] : {std::pair{a, a}, std::pair{b, b}, std::pair{a, b}}) {
    const RunResult r = btfslim({"diff", "-v", x, y});
    INFO(x << " " << y << ": " << r.err);
    REQUIRE(r.status == 0);
    if (x == y) CHECK(r.out.rfind("add/remove: 0/0 grow/shrink: 0/0 up/down: 0/0 (0)\n", 0) == 0);
    if (x != y) CHECK_THAT(r.out, Contains("    + x (int, 4 bytes at offset 4)\n"));
    // The same report on every run.
    CHECK(btfslim({"diff", "-v", x, y}).out == r.out);
  }
}

}  // namespace
}  // namespace btfslim::test
