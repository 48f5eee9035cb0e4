// `btfslim measure` against what can be known without it: the file's size (or its .BTF section's, read
// here with libelf), the BTF header read here from the bytes, the type records counted and sized from
// bpftool's dump, and string shares worked out by hand for fixtures small enough to do so.
//
// The invariants hold for every input: the parts add up to the blob, kinds add up to the sections, the
// CSV rows add up to its TOTAL row.
#include "csv.h"
#include "fixtures.h"
#include "oracles.h"
#include "process.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <gelf.h>
#include <libelf.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

namespace btfslim::test {
namespace {

using nlohmann::json;

// The bytes of an ELF file's section, found with libelf independently of btfslim's reader.
std::string elf_section(const std::string& path, const std::string& name) {
  REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
  const std::string bytes = read_file(path);
  Elf* elf = elf_memory(const_cast<char*>(bytes.data()), bytes.size());
  REQUIRE(elf != nullptr);
  std::size_t shstrndx = 0;
  REQUIRE(elf_getshdrstrndx(elf, &shstrndx) == 0);
  std::string out;
  bool found = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    REQUIRE(gelf_getshdr(scn, &shdr) != nullptr);
    const char* sname = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (!sname || name != sname) continue;
    out = bytes.substr(shdr.sh_offset, shdr.sh_size);
    found = true;
  }
  elf_end(elf);
  INFO(path << " has no section " << name);
  REQUIRE(found);
  return out;
}

// The BTF blob a measurement is about: the file, or an ELF file's .BTF section.
std::string btf_blob(const std::string& path) {
  const std::string bytes = read_file(path);
  return bytes.rfind("\x7f" "ELF", 0) == 0 ? elf_section(path, ".BTF") : bytes;
}

// struct btf_header, read from the blob in its own byte order.
struct RawHeader {
  std::uint32_t hdr_len, type_off, type_len, str_off, str_len;
};
RawHeader raw_header(const std::string& blob) {
  REQUIRE(blob.size() >= 24);
  std::uint16_t magic;
  std::memcpy(&magic, blob.data(), 2);
  REQUIRE((magic == 0xeB9F || magic == 0x9FeB));
  const bool swapped = magic == 0x9FeB;
  auto u32 = [&](std::size_t at) {
    std::uint32_t v;
    std::memcpy(&v, blob.data() + at, 4);
    return swapped ? __builtin_bswap32(v) : v;
  };
  return {u32(4), u32(8), u32(12), u32(16), u32(20)};
}

// Per kind, from bpftool's raw dump: how many types and how many bytes their records take.
struct KindTally {
  std::uint64_t count = 0;
  std::uint64_t record_bytes = 0;
};
std::map<std::string, KindTally> tally_bpftool_dump(const std::string& dump) {
  // Trailing bytes per kind: fixed ones, then those per "\t" line (member, value, param, var).
  static const std::map<std::string, std::uint64_t> fixed{{"INT", 4}, {"ARRAY", 12}, {"VAR", 4}, {"DECL_TAG", 4}};
  static const std::map<std::string, std::uint64_t> per_line{{"STRUCT", 12}, {"UNION", 12},     {"ENUM", 8},
                                                             {"ENUM64", 12}, {"FUNC_PROTO", 8}, {"DATASEC", 12}};
  std::map<std::string, KindTally> out;
  std::istringstream in(dump);
  std::string line, kind;
  while (std::getline(in, line)) {
    if (line.rfind('[', 0) == 0) {
      const std::size_t at = line.find("] ") + 2;
      kind = line.substr(at, line.find(' ', at) - at);
      ++out[kind].count;
      out[kind].record_bytes += 12 + (fixed.count(kind) ? fixed.at(kind) : 0);
    } else {
      if (!per_line.count(kind)) FAIL("a " << kind << " record with a member line: " << line);
      out[kind].record_bytes += per_line.at(kind);
    }
  }
  return out;
}

std::map<std::string, json> kinds_by_name(const json& measure) {
  std::map<std::string, json> out;
  for (const json& k : measure.at("kinds")) out[k.at("kind").get<std::string>()] = k;
  return out;
}

// "5.26 MiB" as bytes, and how far from the true size its three significant digits may be.
struct HumanSize {
  double bytes;
  double tolerance;
};
HumanSize parse_human_size(const std::string& number, const std::string& unit) {
  static const std::map<std::string, double> units{{"B", 1}, {"KiB", 1024}, {"MiB", 1024.0 * 1024},
                                                   {"GiB", 1024.0 * 1024 * 1024}};
  REQUIRE(units.count(unit) == 1);
  const double scale = units.at(unit);
  const std::size_t dot = number.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(number.size() - dot - 1);
  return {std::stod(number) * scale, 0.5 * std::pow(10.0, -decimals) * scale};
}

// Everything measure must get right about one input; returns its JSON for input-specific checks.
// `bpftool_input` is what follows `bpftool btf dump file`.
json check_measure(const std::vector<std::string>& input, const std::vector<std::string>& bpftool_input) {
  auto measure = [&](const char* format) {
    std::vector<std::string> args{"measure", "--format", format};
    args.insert(args.end(), input.begin(), input.end());
    return ours(args);
  };
  const json m = json::parse(measure("json"));
  const std::string blob = btf_blob(input.front());
  const RawHeader h = raw_header(blob);

  // The blob and its three parts, as the file says.
  CHECK(m.at("file_bytes") == blob.size());
  CHECK(m.at("header_bytes") == h.hdr_len);
  CHECK(m.at("type_bytes") == h.type_len);
  CHECK(m.at("string_bytes") == h.str_len);
  const auto file_bytes = m.at("file_bytes").get<std::uint64_t>();
  CHECK(m.at("header_bytes").get<std::uint64_t>() + m.at("type_bytes").get<std::uint64_t>() +
            m.at("string_bytes").get<std::uint64_t>() + m.at("gap_bytes").get<std::uint64_t>() ==
        file_bytes);
  // A BPF object's .BTF.ext has the strings only it names.
  std::uint64_t ext_strings = 0;
  if (m.contains("btf_ext_string_bytes"))
    for (const auto& [use, bytes] : m.at("btf_ext_string_bytes").items()) ext_strings += bytes.get<std::uint64_t>();
  CHECK(m.at("referenced_string_bytes").get<std::uint64_t>() + ext_strings +
            m.at("unreferenced_string_bytes").get<std::uint64_t>() ==
        m.at("string_bytes").get<std::uint64_t>());

  // Kinds add up to the sections and agree with bpftool's dump.
  std::vector<std::string> dump_args{"btf", "dump", "file"};
  dump_args.insert(dump_args.end(), bpftool_input.begin(), bpftool_input.end());
  const auto expected = tally_bpftool_dump(bpftool(dump_args));
  const auto kinds = kinds_by_name(m);
  std::uint64_t records = 0, types = 0;
  double strings = 0;
  for (const auto& [name, k] : kinds) {
    INFO("kind " << name);
    records += k.at("record_bytes").get<std::uint64_t>();
    strings += k.at("string_bytes").get<double>();
    types += k.at("type_count").get<std::uint64_t>();
    REQUIRE(expected.count(name) == 1);
    CHECK(k.at("type_count") == expected.at(name).count);
    CHECK(k.at("record_bytes") == expected.at(name).record_bytes);
  }
  CHECK(kinds.size() == expected.size());
  CHECK(records == m.at("type_bytes").get<std::uint64_t>());
  CHECK(types == m.at("type_count").get<std::uint64_t>());
  CHECK(std::fabs(strings - m.at("referenced_string_bytes").get<double>()) < 1e-6);

  // CSV (read by an RFC 4180 parser): whole numbers whose rows add up to the TOTAL row, the blob.
  const auto csv = parse_csv(measure("csv"));
  REQUIRE(!csv.empty());
  CHECK(csv[0] == std::vector<std::string>{"kind", "type_count", "record_bytes", "string_bytes", "total_bytes"});
  std::vector<std::uint64_t> sums(4, 0), total;
  std::map<std::string, std::vector<std::uint64_t>> rows;
  for (std::size_t r = 1; r < csv.size(); ++r) {
    INFO("CSV row " << r);
    REQUIRE(csv[r].size() == 5);
    const std::string& label = csv[r][0];
    std::vector<std::uint64_t> values;
    for (std::size_t i = 1; i < 5; ++i) {
      const std::string& field = csv[r][i];
      REQUIRE(!field.empty());
      REQUIRE(field.find_first_not_of("0123456789") == std::string::npos);
      values.push_back(std::stoull(field));
    }
    CHECK(values[1] + values[2] == values[3]);
    if (label == "TOTAL") {
      REQUIRE(total.empty());
      total = values;
      continue;
    }
    REQUIRE(total.empty());  // TOTAL is the last row
    rows[label] = values;
    for (std::size_t i = 0; i < 4; ++i) sums[i] += values[i];
  }
  REQUIRE(total.size() == 4);
  CHECK(sums == total);
  CHECK(total[0] == m.at("type_count").get<std::uint64_t>());
  CHECK(total[3] == file_bytes);
  for (const auto& [name, k] : kinds) {
    INFO("CSV row of kind " << name);
    REQUIRE(rows.count(name) == 1);
    CHECK(rows[name][0] == k.at("type_count").get<std::uint64_t>());
    CHECK(rows[name][3] == k.at("total_bytes").get<std::uint64_t>());
    CHECK(rows[name][1] == k.at("record_bytes").get<std::uint64_t>());
    // A kind's share of the strings, rounded so that the column still adds up.
    CHECK(std::fabs(static_cast<double>(rows[name][2]) - k.at("string_bytes").get<double>()) < 1);
  }

  // Every table's TOTAL row shows the blob's size, in human units.
  std::istringstream table(measure("table"));
  std::string line;
  int total_rows = 0;
  while (std::getline(table, line)) {
    if (line.rfind("TOTAL ", 0) != 0) continue;
    ++total_rows;
    INFO("table TOTAL row: " << line);
    std::vector<std::string> words;
    std::istringstream split(line);
    for (std::string w; split >> w;) words.push_back(w);
    REQUIRE(words.size() >= 4);
    const HumanSize shown = parse_human_size(words[words.size() - 3], words[words.size() - 2]);
    CHECK(std::fabs(shown.bytes - static_cast<double>(file_bytes)) <= shown.tolerance);
    CHECK(words.back() == "100.0%");
  }
  CHECK(total_rows >= 1);
  return m;
}

struct BtfFree {
  void operator()(struct btf* b) const { btf__free(b); }
};

// Strings named by several types: "node" three times (a struct, a member, a typedef), "next" twice.
std::string shared_strings_btf() {
  std::unique_ptr<struct btf, BtfFree> b(btf__new_empty());
  struct btf* t = b.get();
  const int i32 = btf__add_int(t, "int", 4, BTF_INT_SIGNED);  // 1
  const int node = btf__add_struct(t, "node", 16);              // 2
  btf__add_field(t, "next", 3, 0, 0);
  btf__add_field(t, "val", i32, 64, 0);
  const int ptr = btf__add_ptr(t, node);                        // 3
  btf__add_struct(t, "list", 24);                               // 4
  btf__add_field(t, "next", ptr, 0, 0);
  btf__add_field(t, "node", node, 64, 0);
  REQUIRE(btf__add_typedef(t, "node", node) == 5);
  return raw_bytes(t);
}

}  // namespace

TEST_CASE("measure of the running kernel adds up and agrees with bpftool", "[measure]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const json m = check_measure({vmlinux}, {vmlinux});
  CHECK(m.at("split") == false);
  CHECK(m.at("byte_order") == "little");
  CHECK(m.at("type_count").get<std::uint64_t>() > 10000);
}

TEST_CASE("measure of every kind adds up, the same in both byte orders", "[measure]") {
  const TempDir dir;
  write_file(dir.file("le.btf"), all_kinds_btf(false));
  write_file(dir.file("be.btf"), all_kinds_btf(true));
  json le = check_measure({dir.file("le.btf")}, {dir.file("le.btf")});
  json be = check_measure({dir.file("be.btf")}, {dir.file("be.btf")});
  CHECK(le["kinds"].size() == 19);  // one row per kind 1..19
  CHECK(le["byte_order"] == "little");
  CHECK(be["byte_order"] == "big");
  for (json* m : {&le, &be}) {
    m->erase("byte_order");
    m->erase("file");
  }
  CHECK(le == be);
}

TEST_CASE("measure of ELF inputs counts their .BTF section", "[measure]") {
  for (const std::string& file : {build_data_dir() + "/pahole_types.o", build_data_dir() + "/minimal.bpf.o"}) {
    INFO(file);
    const json m = check_measure({file}, {file});
    CHECK(m.at("file_bytes").get<std::uint64_t>() < read_file(file).size());
  }
}

TEST_CASE("measure of small_btf gives each kind its strings exactly", "[measure]") {
  const TempDir dir;
  write_file(dir.file("small.btf"), small_btf());
  const json m = check_measure({dir.file("small.btf")}, {dir.file("small.btf")});
  // Strings: "" int pair a b pair_ptr e E1, 28 bytes with their NULs; only the leading "" is unnamed.
  CHECK(m.at("file_bytes") == 24 + 96 + 28);
  CHECK(m.at("referenced_string_bytes") == 27);
  CHECK(m.at("unreferenced_string_bytes") == 1);
  auto kinds = kinds_by_name(m);
  CHECK(kinds["INT"]["string_bytes"] == 4.0);      // "int"
  CHECK(kinds["STRUCT"]["string_bytes"] == 9.0);   // "pair", "a", "b"
  CHECK(kinds["PTR"]["string_bytes"] == 0.0);
  CHECK(kinds["TYPEDEF"]["string_bytes"] == 9.0);  // "pair_ptr"
  CHECK(kinds["ENUM"]["string_bytes"] == 5.0);     // "e", "E1"
  CHECK(kinds["INT"]["record_bytes"] == 16);
  CHECK(kinds["STRUCT"]["record_bytes"] == 12 + 2 * 12);
  CHECK(kinds["ENUM"]["record_bytes"] == 12 + 8);
}

TEST_CASE("measure splits a string named by several types evenly", "[measure]") {
  const TempDir dir;
  write_file(dir.file("shared.btf"), shared_strings_btf());
  const json m = check_measure({dir.file("shared.btf")}, {dir.file("shared.btf")});
  // Strings: "" int node next val list = 1 + 4 + 5 + 5 + 4 + 5 bytes.
  CHECK(m.at("string_bytes") == 24);
  CHECK(m.at("referenced_string_bytes") == 23);
  auto kinds = kinds_by_name(m);
  const double node = 5.0 / 3;  // struct node, member list.node, typedef node
  const double next = 5.0 / 2;  // members node.next and list.next
  CHECK(kinds["INT"]["string_bytes"].get<double>() == Approx(4.0).epsilon(1e-12));
  CHECK(kinds["STRUCT"]["string_bytes"].get<double>() == Approx(node + next + 4 + 5 + next + node).epsilon(1e-12));
  CHECK(kinds["TYPEDEF"]["string_bytes"].get<double>() == Approx(node).epsilon(1e-12));
  CHECK(kinds["PTR"]["string_bytes"] == 0.0);
}

TEST_CASE("measure gives a name pointing into another string only its own suffix", "[measure]") {
  // small_btf with the enum renamed to "ptr", the tail of "pair_ptr": the typedef keeps "pair_", the
  // enum gets "ptr" and its NUL, and "e" is named by nobody.
  std::string bytes = small_btf();
  const RawHeader h = raw_header(bytes);
  REQUIRE(h.type_len == 96);
  const std::size_t strings = h.hdr_len + h.str_off;
  const std::size_t pair_ptr = bytes.find(std::string("pair_ptr\0", 9), strings);
  REQUIRE(pair_ptr != std::string::npos);
  const std::uint32_t ptr_off = static_cast<std::uint32_t>(pair_ptr - strings + 5);
  const std::size_t enum_record = h.hdr_len + h.type_off + 16 + 36 + 12 + 12;  // after INT, STRUCT, PTR, TYPEDEF
  std::memcpy(bytes.data() + enum_record, &ptr_off, 4);
  const TempDir dir;
  write_file(dir.file("suffix.btf"), bytes);
  REQUIRE(bpftool({"btf", "dump", "file", dir.file("suffix.btf")}).find("[5] ENUM 'ptr'") != std::string::npos);

  const json m = check_measure({dir.file("suffix.btf")}, {dir.file("suffix.btf")});
  CHECK(m.at("unreferenced_string_bytes") == 1 + 2);  // "" and "e"
  auto kinds = kinds_by_name(m);
  CHECK(kinds["TYPEDEF"]["string_bytes"] == 5.0);  // "pair_"
  CHECK(kinds["ENUM"]["string_bytes"] == 7.0);     // "ptr", "E1"
}

TEST_CASE("measure of split BTF counts only the split part", "[measure]") {
  const TempDir dir;
  const SplitPair pair = split_btf(false);
  write_file(dir.file("base.btf"), pair.base);
  write_file(dir.file("split.btf"), pair.split);
  const json m = check_measure({dir.file("split.btf"), "--base", dir.file("base.btf")},
                               {dir.file("split.btf"), "--base-btf", dir.file("base.btf")});
  CHECK(m.at("split") == true);
  CHECK(m.at("base") == dir.file("base.btf"));
  CHECK(m.at("file_bytes") == pair.split.size());
  CHECK(m.at("type_count") == 3);
  // The split's own strings are nf_conn skb mark nf_conn_t; "len" resolves in the base and costs nothing.
  CHECK(m.at("string_bytes") == 8 + 4 + 5 + 10);
  CHECK(m.at("unreferenced_string_bytes") == 0);
  auto kinds = kinds_by_name(m);
  CHECK(kinds["STRUCT"]["string_bytes"] == 8.0 + 4 + 5);
  CHECK(kinds["TYPEDEF"]["string_bytes"] == 10.0);
  CHECK(kinds["PTR"]["string_bytes"] == 0.0);

  // The table says what it measured.
  const std::string table = ours({"measure", dir.file("split.btf"), "--base", dir.file("base.btf")});
  CHECK(table.find("split BTF") != std::string::npos);
  std::string size_note = "(";  // built in steps: GCC 12 warns falsely on "(" + std::string (-Wrestrict)
  size_note += std::to_string(pair.split.size()) + " bytes)";
  CHECK(table.find(size_note) != std::string::npos);
}

}  // namespace btfslim::test
