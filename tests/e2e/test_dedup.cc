// `btfslim dedup` end to end ([dedup]): the BTF it writes is byte for byte what libbpf's btf__dedup makes
// of the same inputs (merged with btf__add_btf), and its report counts exactly what went. The inputs are
// built here with btf__add_* so that every count is known beforehand: one BTF with five duplicates of
// known kinds and sizes (both byte orders), two BTFs sharing two types, a base with two split BTFs that
// repeat base types and share one of their own (the output must stay split: read back by our reader and
// by bpftool with the base), and a loop of modifiers libbpf cannot deduplicate. Then the test build's
// BPF objects merged, the running kernel's vmlinux (nothing to remove), the kernel loading the output,
// --check's exit statuses, JSON, -o - and the refusals.
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using nlohmann::json;

// Record sizes: 12 bytes of header plus the kind's trailing data.
constexpr std::uint64_t kInt = 16, kPtr = 12, kTypedef = 12, kFunc = 12;
constexpr std::uint64_t struct_bytes(int members) { return 12 + 12 * members; }
constexpr std::uint64_t proto_bytes(int params) { return 12 + 8 * params; }

// [1] int, [2] struct point {x, y}, [3] point *, [4] typedef point_t, [5] int area(point *p),
// [6] func area, [7] struct other {v}; then copies of the first five: [8] int, [9] struct point,
// [10] point * (to [9]), [11] typedef point_t (to [9]), [12] proto int(point *p) (on [8], [10]).
// libbpf folds [8]..[12] into [1]..[5]: one INT, STRUCT, PTR, TYPEDEF and FUNC_PROTO removed.
std::string dups_btf(bool big_endian = false) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  auto add_point_family = [&](bool with_func) {
    const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
    const int point = added(btf__add_struct(t, "point", 8));
    added(btf__add_field(t, "x", i32, 0, 0));
    added(btf__add_field(t, "y", i32, 32, 0));
    const int ptr = added(btf__add_ptr(t, point));
    added(btf__add_typedef(t, "point_t", point));
    const int proto = added(btf__add_func_proto(t, i32));
    added(btf__add_func_param(t, "p", ptr));
    if (with_func) {
      added(btf__add_func(t, "area", BTF_FUNC_GLOBAL, proto));
      added(btf__add_struct(t, "other", 4));
      added(btf__add_field(t, "v", i32, 0, 0));
    }
  };
  add_point_family(true);
  add_point_family(false);
  return raw_bytes(t, big_endian);
}

// Two inputs sharing int and struct point; each with a type of its own.
std::string merge_x_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));  // 1
  const int point = added(btf__add_struct(t, "point", 8));           // 2
  added(btf__add_field(t, "x", i32, 0, 0));
  added(btf__add_field(t, "y", i32, 32, 0));
  added(btf__add_ptr(t, point));  // 3
  return raw_bytes(t);
}
std::string merge_y_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  const int u8 = added(btf__add_int(t, "unsigned char", 1, 0));    // 1
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));  // 2
  const int point = added(btf__add_struct(t, "point", 8));           // 3
  added(btf__add_field(t, "x", i32, 0, 0));
  added(btf__add_field(t, "y", i32, 32, 0));
  added(btf__add_struct(t, "line", 17));  // 4
  added(btf__add_field(t, "a", point, 0, 0));
  added(btf__add_field(t, "b", point, 64, 0));
  added(btf__add_field(t, "colour", u8, 128, 0));
  return raw_bytes(t);
}

// A base [1] int, [2] struct point, [3] point *; split A repeats all three as [4]..[6] and adds
// [7] struct shared {v} and [8] struct mod_a {shared s; point *p}; split B has [4] struct shared {v} and
// [5] struct mod_b {shared s; point *p (the base's)}.
struct SplitInputs {
  std::string base, a, b;
};
SplitInputs split_inputs() {
  BtfPtr base(btf__new_empty());
  struct btf* t = base.get();
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  const int point = added(btf__add_struct(t, "point", 8));
  added(btf__add_field(t, "x", i32, 0, 0));
  added(btf__add_field(t, "y", i32, 32, 0));
  const int base_ptr = added(btf__add_ptr(t, point));

  BtfPtr a(btf__new_empty_split(t));
  struct btf* s = a.get();
  const int a_i32 = added(btf__add_int(s, "int", 4, BTF_INT_SIGNED));
  const int a_point = added(btf__add_struct(s, "point", 8));
  added(btf__add_field(s, "x", a_i32, 0, 0));
  added(btf__add_field(s, "y", a_i32, 32, 0));
  const int a_ptr = added(btf__add_ptr(s, a_point));
  const int a_shared = added(btf__add_struct(s, "shared", 4));
  added(btf__add_field(s, "v", a_i32, 0, 0));
  added(btf__add_struct(s, "mod_a", 16));
  added(btf__add_field(s, "s", a_shared, 0, 0));
  added(btf__add_field(s, "p", a_ptr, 64, 0));

  BtfPtr b(btf__new_empty_split(t));
  struct btf* u = b.get();
  const int b_shared = added(btf__add_struct(u, "shared", 4));
  added(btf__add_field(u, "v", i32, 0, 0));
  added(btf__add_struct(u, "mod_b", 16));
  added(btf__add_field(u, "s", b_shared, 0, 0));
  added(btf__add_field(u, "p", base_ptr, 64, 0));
  return {raw_bytes(t), raw_bytes(s), raw_bytes(u)};
}

// [1] const -> [2], [2] volatile -> [1]: valid records, but a loop libbpf's dedup refuses (ELOOP).
std::string loop_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  const int c = added(btf__add_const(t, 3));
  added(btf__add_volatile(t, c));
  return raw_bytes(t);
}

// The oracle: libbpf alone, parsing each file, appending the others to the first, deduplicating.
std::string libbpf_dedup(const std::vector<std::string>& paths, const std::string& base = "") {
  BtfPtr base_btf;
  if (!base.empty()) base_btf.reset(btf__parse(base.c_str(), nullptr));
  BtfPtr first(btf__parse_split(paths.front().c_str(), base_btf.get()));
  REQUIRE(first != nullptr);
  for (std::size_t i = 1; i < paths.size(); ++i) {
    BtfPtr more(btf__parse(paths[i].c_str(), nullptr));
    REQUIRE(more != nullptr);
    REQUIRE(btf__add_btf(first.get(), more.get()) >= 0);
  }
  REQUIRE(btf__dedup(first.get(), nullptr) == 0);
  return raw_bytes(first.get());
}

json dedup_json(const std::vector<std::string>& args, int expected_status = 0) {
  std::vector<std::string> full = {"dedup", "--format", "json"};
  full.insert(full.end(), args.begin(), args.end());
  const RunResult r = btfslim(full);
  INFO(command_line(full) << "\n" << r.out << r.err);
  REQUIRE(r.status == expected_status);
  REQUIRE(r.err.empty());
  return json::parse(r.out);
}

const json& kind_row(const json& report, const std::string& kind) {
  for (const json& k : report["kinds"])
    if (k["kind"] == kind) return k;
  FAIL("no row for kind " << kind);
  throw std::logic_error("unreachable");
}

// The (kind, name) -> copies rows of the duplicates list.
std::map<std::string, std::tuple<int, int, int>> duplicates_of(const json& report) {
  std::map<std::string, std::tuple<int, int, int>> out;
  for (const json& d : report["duplicates"])
    out[d["kind"].get<std::string>() + " " + d["name"].get<std::string>()] = {d["copy_count"], d["removed_count"], d["saved_bytes"]};
  return out;
}

// Strings of a raw little-endian BTF: its string section's size from the header.
std::uint32_t string_section_size(const std::string& raw) {
  std::uint32_t len;
  std::memcpy(&len, raw.data() + 20, 4);
  return len;
}

// BTF_KIND_* of bpftool's kind name ("STRUCT"), as the JSON report spells kinds.
std::optional<int> parse_kind_number(const std::string& name) {
  static const char* const names[] = {"UNKNOWN", "INT",      "PTR",   "ARRAY",      "STRUCT", "UNION",   "ENUM",
                                      "FWD",     "TYPEDEF",  "VOLATILE", "CONST",   "RESTRICT", "FUNC", "FUNC_PROTO",
                                      "VAR",     "DATASEC",  "FLOAT", "DECL_TAG",   "TYPE_TAG", "ENUM64"};
  for (int k = 0; k < static_cast<int>(sizeof names / sizeof *names); ++k)
    if (name == names[k]) return k;
  return std::nullopt;
}

// Named (kind, name) pairs of a BTF, as libbpf reads it (own types only for split BTF).
std::multiset<std::string> named_types(const struct btf* b) {
  std::multiset<std::string> out;
  const struct btf* base = btf__base_btf(b);
  for (__u32 id = base ? btf__type_cnt(base) : 1; id < btf__type_cnt(b); ++id) {
    const btf_type* t = btf__type_by_id(b, id);
    const char* name = btf__name_by_offset(b, t->name_off);
    if (name && *name) out.insert(std::to_string(btf_kind(t)) + " " + name);
  }
  return out;
}

// ---- one input with known duplicates ----

TEST_CASE("dedup removes exactly the known duplicates, per kind, with their bytes", "[dedup]") {
  TempDir dir;
  const std::string in = dir.file("dups.btf"), out = dir.file("out.btf");
  const std::string raw = dups_btf();
  write_file(in, raw);
  const json r = dedup_json({in, "-o", out});

  // 12 types in, 7 out: the second int, point, point *, point_t and prototype went.
  CHECK(r["before"]["type_count"] == 12);
  CHECK(r["after"]["type_count"] == 7);
  CHECK(r["removed_count"] == 5);
  const std::uint64_t freed = kInt + struct_bytes(2) + kPtr + kTypedef + proto_bytes(1);
  // Every string is still referenced and was already unique: only records go.
  CHECK(r["saved_bytes"] == freed);
  CHECK(r["before"]["size_bytes"] == raw.size());
  CHECK(r["after"]["size_bytes"] == raw.size() - freed);
  CHECK(fs::file_size(out) == raw.size() - freed);
  CHECK(r["strings"]["before_bytes"] == string_section_size(raw));
  CHECK(r["strings"]["after_bytes"] == string_section_size(raw));
  CHECK(r["header"]["before_bytes"] == 24);
  CHECK(r["header"]["after_bytes"] == 24);
  CHECK(r["deduplicated"] == false);
  CHECK(r["byte_order"] == "little");

  struct Expect {
    const char* kind;
    int before, after;
    std::uint64_t bytes_each;
  };
  for (const Expect& e : {Expect{"INT", 2, 1, kInt}, Expect{"STRUCT", 3, 2, 0}, Expect{"PTR", 2, 1, kPtr},
                          Expect{"TYPEDEF", 2, 1, kTypedef}, Expect{"FUNC_PROTO", 2, 1, proto_bytes(1)},
                          Expect{"FUNC", 1, 1, kFunc}}) {
    INFO(e.kind);
    const json& k = kind_row(r, e.kind);
    CHECK(k["before"]["type_count"] == e.before);
    CHECK(k["after"]["type_count"] == e.after);
    CHECK(k["removed_count"] == e.before - e.after);
    if (e.bytes_each) {
      CHECK(k["before"]["size_bytes"] == e.before * e.bytes_each);
      CHECK(k["saved_bytes"] == (e.before - e.after) * e.bytes_each);
    }
  }
  // Two points and other {v}: 2 x 36 + 24 bytes before, one point fewer after.
  CHECK(kind_row(r, "STRUCT")["before"]["size_bytes"] == 2 * struct_bytes(2) + struct_bytes(1));
  CHECK(kind_row(r, "STRUCT")["saved_bytes"] == struct_bytes(2));
  // Only kinds that occur get a row.
  CHECK(r["kinds"].size() == 6);

  // Named types by (kind, name): the anonymous pointer and prototype are only in the kind rows. The
  // largest freed first.
  const auto dups = duplicates_of(r);
  CHECK(dups.size() == 3);
  CHECK(dups.at("STRUCT point") == std::tuple<int, int, int>{2, 1, struct_bytes(2)});
  CHECK(dups.at("INT int") == std::tuple<int, int, int>{2, 1, kInt});
  CHECK(dups.at("TYPEDEF point_t") == std::tuple<int, int, int>{2, 1, kTypedef});
  CHECK(r["duplicates"][0]["name"] == "point");
  CHECK(r["duplicates"][1]["name"] == "int");
  CHECK(r["duplicates"][2]["name"] == "point_t");

  // What was written is libbpf's btf__dedup of the input, byte for byte.
  CHECK(read_file(out) == libbpf_dedup({in}));
}

TEST_CASE("dedup's table says the same as its JSON", "[dedup]") {
  TempDir dir;
  const std::string in = dir.file("dups.btf"), out = dir.file("out.btf");
  write_file(in, dups_btf());
  const RunResult r = btfslim({"dedup", in, "-o", out});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  std::istringstream lines(r.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  REQUIRE(rows.size() >= 4);
  CHECK(rows[0] == "input:   " + in + ": 12 types, " + std::to_string(fs::file_size(in)) + " bytes");
  CHECK(rows[1] == "output:  " + out + ": 7 types, " + std::to_string(fs::file_size(out)) + " bytes, little-endian");
  CHECK_THAT(rows[2], StartsWith("removed: 5 of 12 types (41.7%), 96 of "));
  // Kind rows: KIND BEFORE AFTER REMOVED BYTES-BEFORE BYTES-AFTER FREED, the most freed first.
  auto row_of = [&](const std::string& label) {
    for (const auto& line : rows)
      if (line.rfind(label + " ", 0) == 0) {
        std::istringstream words(line.substr(label.size()));
        std::vector<std::string> w;
        for (std::string x; words >> x;) w.push_back(x);
        return w;
      }
    FAIL("no row " << label);
    return std::vector<std::string>{};
  };
  CHECK(row_of("STRUCT") == std::vector<std::string>{"3", "2", "1", "96", "60", "36"});
  CHECK(row_of("FUNC_PROTO") == std::vector<std::string>{"2", "1", "1", "40", "20", "20"});
  CHECK(row_of("INT") == std::vector<std::string>{"2", "1", "1", "32", "16", "16"});
  CHECK(row_of("FUNC") == std::vector<std::string>{"1", "1", "0", "12", "12", "0"});
  CHECK(row_of("TOTAL")[2] == "5");
  CHECK(row_of("TOTAL")[5] == "96");
  const auto kind_header = std::find_if(rows.begin(), rows.end(), [](const std::string& l) { return l.rfind("KIND", 0) == 0; });
  REQUIRE(kind_header != rows.end());
  CHECK_THAT(kind_header[1], StartsWith("STRUCT "));
  CHECK_THAT(kind_header[2], StartsWith("FUNC_PROTO "));
  // The duplicated types, largest freed first.
  CHECK(row_of("point") == std::vector<std::string>{"STRUCT", "2", "1", "36"});
  CHECK(row_of("point_t") == std::vector<std::string>{"TYPEDEF", "2", "1", "12"});

  // -n 1: one row, the rest folded.
  const RunResult top = btfslim({"dedup", in, "-o", out, "-n", "1"});
  REQUIRE(top.status == 0);
  CHECK_THAT(top.out, Contains("point ") && !Contains("point_t") && Contains("[2 others]"));
}

TEST_CASE("dedup keeps a big-endian input big-endian", "[dedup]") {
  TempDir dir;
  const std::string le = dir.file("le.btf"), be = dir.file("be.btf");
  write_file(le, dups_btf(false));
  write_file(be, dups_btf(true));
  const json r = dedup_json({be, "-o", dir.file("be.out")});
  CHECK(r["byte_order"] == "big");
  CHECK(r["removed_count"] == 5);
  const std::string out = read_file(dir.file("be.out"));
  REQUIRE(out.size() > 2);
  CHECK(static_cast<unsigned char>(out[0]) == 0xeb);  // the magic 0xeB9F, most significant byte first
  CHECK(static_cast<unsigned char>(out[1]) == 0x9f);
  REQUIRE(btfslim({"dedup", le, "-o", dir.file("le.out")}).status == 0);
  // The same types in either order.
  CHECK(ours({"dump", dir.file("be.out")}) == ours({"dump", dir.file("le.out")}));
  CHECK(out.size() == fs::file_size(dir.file("le.out")));
}

TEST_CASE("dedup's JSON has one shape, in the shared vocabulary, for one input or several", "[dedup]") {
  TempDir dir;
  const std::string x = dir.file("x.btf"), y = dir.file("y.btf");
  write_file(x, merge_x_btf());
  write_file(y, merge_y_btf());
  auto keys = [](const json& j) {
    std::set<std::string> k;
    for (const auto& [key, value] : j.items()) k.insert(key);
    return k;
  };
  const std::set<std::string> top = {"inputs", "split", "base", "output", "written", "byte_order", "before", "after",
                                     "removed_count", "saved_bytes", "deduplicated", "btf_ext", "kinds", "strings",
                                     "header", "duplicates"};
  const json one = dedup_json({x, "-o", dir.file("one.btf")});
  const json two = dedup_json({x, y, "-o", dir.file("two.btf")});
  for (const json* j : {&one, &two}) {
    CHECK(keys(*j) == top);
    CHECK((*j)["base"].is_null());
    CHECK((*j)["btf_ext"].is_null());
    CHECK((*j)["byte_order"] == "little");
    CHECK(keys((*j)["before"]) == std::set<std::string>{"type_count", "size_bytes"});
    CHECK(keys((*j)["strings"]) == std::set<std::string>{"before_bytes", "after_bytes"});
    for (const json& in : (*j)["inputs"]) CHECK(keys(in) == std::set<std::string>{"file", "type_count", "size_bytes"});
    for (const json& k : (*j)["kinds"])
      CHECK(keys(k) == std::set<std::string>{"kind", "before", "after", "removed_count", "saved_bytes"});
    CHECK((*j)["saved_bytes"] == (*j)["before"]["size_bytes"].get<std::uint64_t>() - (*j)["after"]["size_bytes"].get<std::uint64_t>());
  }
  CHECK(one["inputs"].size() == 1);
  CHECK(one["inputs"][0]["file"] == x);
  CHECK(two["inputs"].size() == 2);
  REQUIRE(!two["duplicates"].empty());
  CHECK(keys(two["duplicates"][0]) == std::set<std::string>{"kind", "name", "copy_count", "removed_count", "saved_bytes"});
  // --check writes nothing: output is null.
  const json check = dedup_json({"--check", x}, 0);
  CHECK(check["output"].is_null());
  CHECK(check["written"] == false);
}

// ---- merging ----

TEST_CASE("dedup merges inputs and folds the types they share", "[dedup]") {
  TempDir dir;
  const std::string x = dir.file("x.btf"), y = dir.file("y.btf"), out = dir.file("out.btf");
  const std::string xr = merge_x_btf(), yr = merge_y_btf();
  write_file(x, xr);
  write_file(y, yr);
  const json r = dedup_json({x, y, "-o", out});
  REQUIRE(r["inputs"].size() == 2);
  CHECK(r["inputs"][0]["type_count"] == 3);
  CHECK(r["inputs"][1]["type_count"] == 4);
  CHECK(r["before"]["type_count"] == 7);
  // y's int and point are x's.
  CHECK(r["after"]["type_count"] == 5);
  CHECK(r["removed_count"] == 2);
  CHECK(kind_row(r, "INT")["removed_count"] == 1);
  CHECK(kind_row(r, "STRUCT")["removed_count"] == 1);
  CHECK(kind_row(r, "STRUCT")["saved_bytes"] == struct_bytes(2));
  CHECK(kind_row(r, "PTR")["removed_count"] == 0);
  // Strings: both sections before, the distinct names after ("" int x y point unsigned char line a b colour).
  const std::uint64_t strings_after =
      1 + std::string("int").size() + 1 + 2 + 2 + std::string("point").size() + 1 + std::string("unsigned char").size() +
      1 + std::string("line").size() + 1 + 2 + 2 + std::string("colour").size() + 1;
  CHECK(r["strings"]["before_bytes"] == string_section_size(xr) + string_section_size(yr));
  CHECK(r["strings"]["after_bytes"] == strings_after);
  CHECK(r["header"]["before_bytes"] == 48);
  CHECK(r["header"]["after_bytes"] == 24);
  CHECK(r["saved_bytes"] == kInt + struct_bytes(2) + 24 + (string_section_size(xr) + string_section_size(yr) - strings_after));
  CHECK(r["after"]["size_bytes"] == fs::file_size(out));
  const auto dups = duplicates_of(r);
  CHECK(dups.size() == 2);
  CHECK(dups.at("STRUCT point") == std::tuple<int, int, int>{2, 1, struct_bytes(2)});
  CHECK(dups.at("INT int") == std::tuple<int, int, int>{2, 1, kInt});
  // libbpf's own merge and dedup.
  CHECK(read_file(out) == libbpf_dedup({x, y}));
  // What y's line points at is x's point now.
  CHECK_THAT(ours({"dump", out, "--name", "line"}), Contains("'a' type_id=2 bits_offset=0"));
}

TEST_CASE("dedup merges the test build's BPF objects into fewer types than they hold together", "[dedup]") {
  std::vector<std::string> objects;
  for (const char* name : {"core_fields", "core_bitfields", "core_types", "core_enums", "core_errors", "minimal"})
    objects.push_back(test_object(name));
  for (const std::string& name : {std::string("trace_exec"), std::string("trace_exit"), std::string("trace_sched_switch"),
                                  std::string("trace_tcp_connect")})
    if (fs::exists(test_object(name))) objects.push_back(test_object(name));
  TempDir dir;
  const std::string out = dir.file("objects.btf");
  std::vector<std::string> args = objects;
  args.insert(args.end(), {"-o", out});
  const json r = dedup_json(args);
  std::uint64_t sum = 0;
  std::multiset<std::string> named_before;
  for (const std::string& o : objects) {
    BtfPtr b(btf__parse(o.c_str(), nullptr));
    REQUIRE(b != nullptr);
    sum += btf__type_cnt(b.get()) - 1;
    for (const auto& n : named_types(b.get())) named_before.insert(n);
  }
  BtfPtr merged(btf__parse(out.c_str(), nullptr));
  REQUIRE(merged != nullptr);
  const std::uint64_t after = btf__type_cnt(merged.get()) - 1;
  INFO(objects.size() << " objects: " << sum << " types together, " << after << " after dedup");
  CHECK(r["before"]["type_count"] == sum);
  CHECK(r["after"]["type_count"] == after);
  CHECK(after < sum);
  CHECK(r["removed_count"] == sum - after);
  // Every named (kind, name) of the objects is still there, and the duplicates list accounts for every
  // named copy that went.
  const std::multiset<std::string> named_after = named_types(merged.get());
  std::uint64_t named_removed = 0;
  // (A forward declaration may go: dedup resolves it to the struct or union of its name.)
  const std::string fwd = std::to_string(BTF_KIND_FWD) + " ";
  for (const std::string& n : std::set<std::string>(named_before.begin(), named_before.end())) {
    INFO(n);
    if (n.rfind(fwd, 0) == 0 && named_after.count(n) == 0) {
      const std::string name = n.substr(fwd.size());
      CHECK(named_after.count(std::to_string(BTF_KIND_STRUCT) + " " + name) +
                named_after.count(std::to_string(BTF_KIND_UNION) + " " + name) >= 1);
    } else {
      CHECK(named_after.count(n) >= 1);
    }
    named_removed += named_before.count(n) - named_after.count(n);
  }
  std::uint64_t listed = 0;
  for (const json& d : r["duplicates"]) listed += d["removed_count"].get<std::uint64_t>();
  CHECK(listed == named_removed);
  CHECK(named_removed > 0);
  // Byte for byte libbpf's merge and dedup, and nothing left to remove.
  CHECK(read_file(out) == libbpf_dedup(objects));
  const RunResult again = btfslim({"dedup", "--check", out});
  INFO(again.out << again.err);
  CHECK(again.status == 0);
}

// ---- split BTF ----

TEST_CASE("dedup keeps split inputs split on their base", "[dedup]") {
  TempDir dir;
  const SplitInputs s = split_inputs();
  const std::string base = dir.file("base.btf"), a = dir.file("a.btf"), b = dir.file("b.btf");
  write_file(base, s.base);
  write_file(a, s.a);
  write_file(b, s.b);

  SECTION("one split input: its copies of base types fold into the base") {
    const std::string out = dir.file("a.out");
    const json r = dedup_json({a, "--base", base, "-o", out});
    CHECK(r["split"] == true);
    CHECK(r["base"] == base);
    CHECK(r["before"]["type_count"] == 5);
    CHECK(r["after"]["type_count"] == 2);
    CHECK(kind_row(r, "INT")["removed_count"] == 1);
    CHECK(kind_row(r, "STRUCT")["removed_count"] == 1);
    CHECK(kind_row(r, "PTR")["removed_count"] == 1);
    CHECK(read_file(out) == libbpf_dedup({a}, base));
    CHECK(ours({"dump", out, "--base", base}) ==
          "[4] STRUCT 'shared' size=4 vlen=1\n"
          "\t'v' type_id=1 bits_offset=0\n"
          "[5] STRUCT 'mod_a' size=16 vlen=2\n"
          "\t's' type_id=4 bits_offset=0\n"
          "\t'p' type_id=3 bits_offset=64\n");
  }

  SECTION("two split inputs merge into one split BTF on the same base") {
    const std::string out = dir.file("ab.out");
    const json r = dedup_json({a, b, "-B", base, "-o", out});
    CHECK(r["before"]["type_count"] == 7);
    // int, point and point * fold into the base; b's shared into a's.
    CHECK(r["after"]["type_count"] == 3);
    CHECK(kind_row(r, "STRUCT")["before"]["type_count"] == 5);
    CHECK(kind_row(r, "STRUCT")["after"]["type_count"] == 3);
    CHECK(kind_row(r, "INT")["after"]["type_count"] == 0);
    CHECK(kind_row(r, "PTR")["after"]["type_count"] == 0);
    const auto dups = duplicates_of(r);
    CHECK(dups.at("STRUCT shared") == std::tuple<int, int, int>{2, 1, struct_bytes(1)});
    CHECK(dups.at("STRUCT point") == std::tuple<int, int, int>{1, 1, struct_bytes(2)});
    CHECK(dups.at("INT int") == std::tuple<int, int, int>{1, 1, kInt});
    const std::string expected =
        "[4] STRUCT 'shared' size=4 vlen=1\n"
        "\t'v' type_id=1 bits_offset=0\n"
        "[5] STRUCT 'mod_a' size=16 vlen=2\n"
        "\t's' type_id=4 bits_offset=0\n"
        "\t'p' type_id=3 bits_offset=64\n"
        "[6] STRUCT 'mod_b' size=16 vlen=2\n"
        "\t's' type_id=4 bits_offset=0\n"
        "\t'p' type_id=3 bits_offset=64\n";
    // Our reader, and bpftool's, with the base: only the split part was written.
    CHECK(ours({"dump", out, "--base", base}) == expected);
    CHECK(bpftool({"-B", base, "btf", "dump", "file", out}) == expected);
    BtfPtr base_btf(btf__parse(base.c_str(), nullptr));
    BtfPtr split(btf__parse_split(out.c_str(), base_btf.get()));
    REQUIRE(split != nullptr);
    CHECK(btf__type_cnt(split.get()) == 7);
    // Deduplicating the output again removes nothing.
    CHECK(btfslim({"dedup", "--check", out, "--base", base}).status == 0);
  }

  SECTION("the output may not be the base") {
    const std::string before = read_file(base);
    const RunResult r = btfslim({"dedup", a, "--base", base, "-o", dir.path() + "/./base.btf"});
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("is the base"));
    CHECK(read_file(base) == before);
  }
}

// Kernel modules as the kernel build makes their BTF: gcc -g, then pahole -J on the running vmlinux
// (split BTF), then a .modinfo section, which is what makes btfslim read an ELF file as a module.
std::string build_module(const TempDir& dir, const std::string& name) {
  std::string source =
      "struct list_head { struct list_head *next, *prev; };\n"
      "struct shared_thing { int a; long b; struct list_head link; };\n"
      "struct NAME_state { struct shared_thing t; unsigned int flags; };\n"
      "struct NAME_state NAME_var;\n"
      "int NAME_fn(struct NAME_state *s) { return s->t.a + (int)s->flags; }\n";
  for (std::size_t at; (at = source.find("NAME")) != std::string::npos;) source.replace(at, 4, name);
  const std::string c = dir.file(name + ".c"), ko = dir.file(name + ".ko");
  write_file(c, source);
  const char* cc = std::getenv("BTFSLIM_TEST_CC");
  for (const std::vector<std::string>& step :
       {std::vector<std::string>{cc ? cc : "cc", "-g", "-O0", "-c", c, "-o", ko},
        std::vector<std::string>{"pahole", "-J", "--btf_base", running_vmlinux(), ko},
        std::vector<std::string>{"objcopy", "--add-section", ".modinfo=/dev/null", ko}}) {
    const RunResult r = run(step);
    INFO(step.front() << ": " << r.out << r.err);
    REQUIRE(r.status == 0);
  }
  return ko;
}

TEST_CASE("dedup merges modules split on the running vmlinux into one split BTF", "[dedup]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine: no modules are built on it");
  TempDir dir;
  const std::string a = build_module(dir, "mod_a"), b = build_module(dir, "mod_b"), out = dir.file("mods.btf");
  const json r = dedup_json({a, b, "-o", out});
  CHECK(r["split"] == true);
  CHECK(r["base"] == vmlinux);
  // pahole already folded list_head into vmlinux's; the modules share struct shared_thing (and whatever
  // else this compiler describes the same in both).
  BtfPtr base(btf__parse(vmlinux.c_str(), nullptr));
  BtfPtr ma(btf__parse_split(a.c_str(), base.get())), mb(btf__parse_split(b.c_str(), base.get()));
  BtfPtr merged(btf__parse_split(out.c_str(), base.get()));
  REQUIRE((ma && mb && merged));
  const __u32 base_types = btf__type_cnt(base.get());
  CHECK(r["before"]["type_count"] == btf__type_cnt(ma.get()) + btf__type_cnt(mb.get()) - 2 * base_types);
  CHECK(r["after"]["type_count"] == btf__type_cnt(merged.get()) - base_types);
  CHECK(r["removed_count"] >= 1);
  const auto dups = duplicates_of(r);
  CHECK(dups.at("STRUCT shared_thing") == std::tuple<int, int, int>{2, 1, struct_bytes(3)});
  const std::multiset<std::string> in_a = named_types(ma.get()), in_b = named_types(mb.get());
  for (const json& d : r["duplicates"]) {
    const std::string key = std::to_string(*parse_kind_number(d["kind"].get<std::string>())) + " " + d["name"].get<std::string>();
    INFO(d.dump());
    CHECK((in_a.count(key) == 1 && in_b.count(key) == 1));
  }
  // bpftool reads the split output on vmlinux, as our reader does.
  const std::string dump = bpftool({"-B", vmlinux, "btf", "dump", "file", out});
  CHECK(static_cast<std::uint64_t>(std::count(dump.begin(), dump.end(), '[')) == r["after"]["type_count"].get<std::uint64_t>());
  CHECK(dump == ours({"dump", out, "--base", vmlinux}));
  CHECK(dump.find("STRUCT 'shared_thing' size=32 vlen=3") != std::string::npos);
  CHECK(dump.find("STRUCT 'shared_thing'") == dump.rfind("STRUCT 'shared_thing'"));

  // A module and a standalone BTF are not merged.
  const std::string standalone = dir.file("x.btf");
  write_file(standalone, merge_x_btf());
  const RunResult mixed = btfslim({"dedup", a, standalone, "--check"});
  INFO(mixed.err);
  CHECK(mixed.status == 2);
  CHECK_THAT(mixed.err, Contains(standalone + ": is standalone BTF while " + a + " is split"));
}

// ---- --check ----

TEST_CASE("dedup --check exits 1 with duplicates and 0 without, writing nothing", "[dedup]") {
  TempDir dir;
  const std::string in = dir.file("dups.btf"), clean = dir.file("clean.btf");
  write_file(in, dups_btf());
  REQUIRE(btfslim({"dedup", in, "-o", clean}).status == 0);
  const auto files_before = std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator());

  const RunResult dirty = btfslim({"dedup", "--check", in});
  INFO(dirty.out << dirty.err);
  CHECK(dirty.status == 1);
  CHECK(dirty.err.empty());
  CHECK_THAT(dirty.out, Contains("output:  not written (--check): 7 types"));
  CHECK_THAT(dirty.out, Contains("check: dedup would remove 5 types (96 bytes): not deduplicated"));

  const RunResult ok = btfslim({"dedup", "--check", clean});
  INFO(ok.out << ok.err);
  CHECK(ok.status == 0);
  CHECK_THAT(ok.out, Contains("check: no duplicate types: deduplicated"));
  CHECK_THAT(ok.out, Contains("removed: 0 of 7 types"));

  const json j = dedup_json({"--check", in}, 1);
  CHECK(j["deduplicated"] == false);
  CHECK(j["written"] == false);
  CHECK(j["removed_count"] == 5);
  CHECK(dedup_json({"--check", clean}, 0)["deduplicated"] == true);
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == files_before);
}

// ---- the running kernel ----

TEST_CASE("dedup: the running kernel's vmlinux has nothing to remove", "[dedup]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine: dedup is not run on a kernel's BTF");
  const RunResult r = btfslim({"dedup", "--check", "vmlinux"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("check: no duplicate types: deduplicated"));
  TempDir dir;
  const std::string out = dir.file("vmlinux.btf");
  const json j = dedup_json({vmlinux, "-o", out});
  CHECK(j["removed_count"] == 0);
  CHECK(j["duplicates"].empty());
  BtfPtr in(btf__parse(vmlinux.c_str(), nullptr));
  CHECK(j["after"]["type_count"] == btf__type_cnt(in.get()) - 1);
  CHECK(read_file(out) == libbpf_dedup({vmlinux}));
}

TEST_CASE("dedup: the kernel loads the output (btf__load_into_kernel)", "[dedup]") {
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  TempDir dir;
  const std::string x = dir.file("x.btf"), y = dir.file("y.btf"), dups = dir.file("dups.btf");
  write_file(x, merge_x_btf());
  write_file(y, merge_y_btf());
  write_file(dups, dups_btf());
  // (Not the BPF objects: clang leaves their DATASEC sizes 0 for libbpf to fill in, which the kernel refuses.)
  std::vector<std::vector<std::string>> runs = {{dups}, {x, y}};
  if (!running_vmlinux().empty()) runs.push_back({running_vmlinux()});
  for (const auto& inputs : runs) {
    std::vector<std::string> args = {"dedup"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    args.insert(args.end(), {"-o", dir.file("out.btf")});
    const RunResult r = btfslim(args);
    INFO(command_line(args) << "\n" << r.err);
    REQUIRE(r.status == 0);
    BtfPtr out(btf__parse(dir.file("out.btf").c_str(), nullptr));
    REQUIRE(out != nullptr);
    CHECK(btf__load_into_kernel(out.get()) == 0);
  }
}

// ---- output, determinism, refusals ----

TEST_CASE("dedup writes the same bytes on every run, atomically, and -o - to stdout", "[dedup]") {
  TempDir dir;
  const std::string in = dir.file("dups.btf"), out = dir.file("out.btf");
  write_file(in, dups_btf());
  REQUIRE(btfslim({"dedup", in, "-o", out}).status == 0);
  const std::string first = read_file(out);
  // An existing OUT is replaced by a new file: another name for the old one keeps the old bytes.
  REQUIRE(::link(out.c_str(), dir.file("old").c_str()) == 0);
  write_file(dir.file("old"), "old bytes");
  REQUIRE(btfslim({"dedup", in, "-o", out}).status == 0);
  CHECK(read_file(out) == first);
  CHECK(read_file(dir.file("old")) == "old bytes");
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.insert(e.path().filename().string());
  CHECK(names == std::set<std::string>{"dups.btf", "out.btf", "old"});

  const RunResult piped = btfslim({"dedup", in, "-o", "-"});
  REQUIRE(piped.status == 0);
  CHECK(piped.out == first);
  CHECK_THAT(piped.err, Contains("output:  stdout: 7 types"));
}

TEST_CASE("dedup refuses bad input, a failing dedup and an output that is an input", "[dedup]") {
  TempDir dir;
  const std::string good = dir.file("dups.btf");
  write_file(good, dups_btf());

  auto refused = [&](const std::vector<std::string>& args, const std::string& needle) {
    const RunResult r = btfslim(args);
    INFO(command_line(args) << "\n" << r.out << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, StartsWith("btfslim: ") && Contains(needle));
  };

  SECTION("not BTF, among good inputs") {
    const std::string junk = dir.file("junk.btf");
    write_file(junk, "hello, world\n");
    refused({"dedup", good, junk, "-o", dir.file("out.btf")}, junk + ": ");
    CHECK_FALSE(fs::exists(dir.file("out.btf")));
  }
  SECTION("a missing file") { refused({"dedup", dir.file("missing.btf"), "--check"}, dir.file("missing.btf")); }
  SECTION("libbpf's dedup fails: the file and libbpf's errno are named") {
    const std::string loop = dir.file("loop.btf");
    write_file(loop, loop_btf());
    refused({"dedup", loop, "-o", dir.file("out.btf")}, loop + ": libbpf's btf__dedup fails on this BTF: ");
    refused({"dedup", loop, "-o", dir.file("out.btf")}, "(ELOOP)");
    // Merged with a good input, the one that fails alone is named.
    refused({"dedup", good, loop, "--check"}, loop + ": libbpf's btf__dedup fails on this BTF");
    CHECK_FALSE(fs::exists(dir.file("out.btf")));
  }
  SECTION("no -o and no --check; both") {
    refused({"dedup", good}, "-o OUT is required");
    refused({"dedup", good, "--check", "-o", dir.file("out.btf")}, "--check");
  }
  SECTION("-o naming an input, however spelt, leaves it alone") {
    const std::string bytes = read_file(good);
    refused({"dedup", good, "-o", dir.path() + "/./dups.btf"}, "is an input");
    refused({"dedup", dir.file("dups.btf"), good, "-o", good}, "is an input");
    CHECK(read_file(good) == bytes);
  }
}

}  // namespace
}  // namespace btfslim::test
