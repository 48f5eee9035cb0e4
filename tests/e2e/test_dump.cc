// `btfslim dump` against its oracles: bpftool 7.1 for the raw, JSON and C formats, clang for the C
// header, and bpftool's own dump filtered by hand for --id, --name and --kind.
//
// Every input form is compared: the running kernel's BTF, libbpf-built fixtures in both byte orders, a
// pahole ELF, a clang .bpf.o and split BTF on its base. Large outputs are compared by a helper that
// reports the first differing line, not the whole 12 MB.
#include "fixtures.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <fnmatch.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace btfslim::test {
namespace {

using nlohmann::json;

// The inputs every test here shares, written once per process.
struct Inputs {
  TempDir dir;
  std::string all_kinds = dir.file("all_kinds.btf");
  std::string all_kinds_be = dir.file("all_kinds_be.btf");
  std::string base = dir.file("base.btf");
  std::string split = dir.file("split.btf");
  std::string pahole_elf = build_data_dir() + "/pahole_types.o";
  std::string bpf_object = build_data_dir() + "/minimal.bpf.o";
  Inputs() {
    write_file(all_kinds, all_kinds_btf(false));
    write_file(all_kinds_be, all_kinds_btf(true));
    const SplitPair pair = split_btf(false);
    write_file(base, pair.base);
    write_file(split, pair.split);
  }
};
const Inputs& inputs() {
  static const Inputs in;
  return in;
}

// One type of a raw dump: its first line's fields and all its lines.
struct Record {
  std::uint32_t id = 0;
  std::string kind;
  std::string name;
  std::string text;  // "[id] KIND 'name' ...\n" plus the "\t..." lines, newlines included
};

std::vector<Record> records_of(const std::string& dump) {
  std::vector<Record> out;
  std::istringstream in(dump);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') {
      Record r;
      r.id = static_cast<std::uint32_t>(std::stoul(line.substr(1)));
      const std::size_t kind_at = line.find("] ") + 2;
      r.kind = line.substr(kind_at, line.find(' ', kind_at) - kind_at);
      const std::size_t quote = line.find('\'');
      r.name = line.substr(quote + 1, line.find('\'', quote + 1) - quote - 1);
      out.push_back(r);
    }
    if (out.empty()) FAIL("a raw dump starts with a line other than [id]: " << line);
    out.back().text += line + "\n";
  }
  return out;
}

// The records a predicate keeps, as one dump.
template <typename Keep>
std::string filtered(const std::vector<Record>& records, Keep keep) {
  std::string out;
  for (const Record& r : records)
    if (keep(r)) out += r.text;
  return out;
}

// bpftool 7.1 prints an unsigned ENUM value through a signed 32-bit field (json_writer's uint of an
// __s32), so 0xefffffff comes out as 18446744073441116159. Ours prints the value; compare modulo 2^32.
void fix_bpftool_enum_values(json& type) {
  if (type["kind"] != "ENUM" || type["encoding"] != "UNSIGNED") return;
  for (json& v : type["values"]) v["val"] = v["val"].get<std::uint64_t>() & 0xffffffffu;
}

// Compares `btfslim dump --format json` with `bpftool -j btf dump file` type by type.
void check_json_matches_bpftool(const std::vector<std::string>& input, const std::vector<std::string>& bpftool_input) {
  json mine = json::parse(ours([&] {
    std::vector<std::string> a{"dump", "--format", "json"};
    a.insert(a.end(), input.begin(), input.end());
    return a;
  }()));
  std::vector<std::string> b{"-j", "btf", "dump", "file"};
  b.insert(b.end(), bpftool_input.begin(), bpftool_input.end());
  json theirs = json::parse(bpftool(b));

  REQUIRE(mine.is_object());
  REQUIRE(mine.size() == 1);
  REQUIRE(mine.contains("types"));
  REQUIRE(mine["types"].size() == theirs["types"].size());
  REQUIRE(!mine["types"].empty());
  for (std::size_t i = 0; i < mine["types"].size(); ++i) {
    json& t = theirs["types"][i];
    fix_bpftool_enum_values(t);
    if (mine["types"][i] != t) {
      INFO("ours:    " << mine["types"][i].dump());
      INFO("bpftool: " << t.dump());
      FAIL("type " << i + 1 << " of the JSON dump differs");
    }
  }
}

// Runs in `dir`, so that a relative name such as `vmlinux` resolves there.
RunResult btfslim_in(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", dir, btfslim_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// The libbpf inside bpftool 7.1 (Linux 6.1's) and the system's libbpf 1.1.2, which writes our C, differ
// in a spelling: libbpf 1.1.2 keeps a 1-byte enum's size with `__attribute__((mode(byte)))`, which
// bpftool drops. This maps exactly that spelling of ours onto bpftool's so that anything else still
// differs. (libbpf 1.1.2 also writes `()` for a prototype without parameters where bpftool writes
// `(void)`: ours writes `(void)`, and is compared as it is.)
std::string as_bpftool_libbpf_writes_c(std::string c) {
  auto replace_all = [&](std::string_view from, std::string_view to) {
    for (std::size_t at = c.find(from); at != std::string::npos; at = c.find(from, at + to.size()))
      c.replace(at, from.size(), to);
  };
  replace_all("\n} __attribute__((mode(byte)));\n", "\n};\n");
  return c;
}

// Compiles a BPF program that includes `header` as vmlinux.h (and uses struct task_struct, with
// `task`), warnings as errors: -Wall, and -Wstrict-prototypes for every prototype without parameters.
void check_header_compiles(const std::string& header, bool task = true) {
  REQUIRE(have("clang-19"));
  const TempDir dir;
  write_file(dir.file("vmlinux.h"), header);
  write_file(dir.file("prog.bpf.c"),
             std::string("#include \"vmlinux.h\"\n") +
                 (task ? "int task_ids(struct task_struct *task) { return task->pid + task->tgid; }\n"
                       : "int nothing(void) { return 0; }\n"));
  const RunResult r = run({"clang-19", "-target", "bpf", "-g", "-O2", "-Wall", "-Wstrict-prototypes", "-Werror", "-c",
                           dir.file("prog.bpf.c"), "-o", dir.file("prog.bpf.o")});
  INFO(r.err.substr(0, 4000));
  REQUIRE(r.status == 0);
}

// A bad option: exit status 2, nothing on stdout, one line on stderr starting "btfslim: ".
void check_usage_error(const std::vector<std::string>& args) {
  const RunResult r = btfslim(args);
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("btfslim: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.back() == '\n');
}

}  // namespace

TEST_CASE("raw dump of the running kernel is bpftool's, by path and by the shorthand vmlinux", "[dump]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const std::string expected = bpftool({"btf", "dump", "file", vmlinux});
  CHECK(first_difference(ours({"dump", vmlinux}), expected) == "");

  const TempDir empty;  // no file called vmlinux here, so the shorthand means the running kernel
  const RunResult r = btfslim_in(empty.path(), {"dump", "vmlinux"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(first_difference(r.out, expected) == "");
}

TEST_CASE("raw dump of every kind is bpftool's in both byte orders", "[dump]") {
  const Inputs& in = inputs();
  for (const std::string& file : {in.all_kinds, in.all_kinds_be}) {
    INFO(file);
    const std::string expected = bpftool({"btf", "dump", "file", file});
    REQUIRE(records_of(expected).size() == 31);
    CHECK(first_difference(ours({"dump", file}), expected) == "");
  }
}

TEST_CASE("raw dump of a pahole ELF and of a BPF object is bpftool's", "[dump]") {
  const Inputs& in = inputs();
  for (const std::string& file : {in.pahole_elf, in.bpf_object}) {
    INFO(file);
    const std::string expected = bpftool({"btf", "dump", "file", file});
    REQUIRE(!expected.empty());
    CHECK(first_difference(ours({"dump", file}), expected) == "");
  }
}

TEST_CASE("raw dump of split BTF is bpftool's with --base-btf", "[dump]") {
  const Inputs& in = inputs();
  const std::string expected = bpftool({"--base-btf", in.base, "btf", "dump", "file", in.split});
  const auto records = records_of(expected);
  REQUIRE(records.size() == 3);
  CHECK(records.front().id == 4);  // only the split's own types, numbered after the base's
  CHECK(first_difference(ours({"dump", in.split, "--base", in.base}), expected) == "");
  CHECK(first_difference(ours({"dump", in.split, "-B", in.base}), expected) == "");
}

TEST_CASE("JSON dump has bpftool's objects for every input form", "[dump]") {
  const Inputs& in = inputs();
  SECTION("every kind, little-endian") { check_json_matches_bpftool({in.all_kinds}, {in.all_kinds}); }
  SECTION("every kind, big-endian") { check_json_matches_bpftool({in.all_kinds_be}, {in.all_kinds_be}); }
  SECTION("pahole ELF") { check_json_matches_bpftool({in.pahole_elf}, {in.pahole_elf}); }
  SECTION("BPF object") { check_json_matches_bpftool({in.bpf_object}, {in.bpf_object}); }
  SECTION("split on its base") {
    check_json_matches_bpftool({in.split, "--base", in.base}, {in.split, "--base-btf", in.base});
  }
  SECTION("running kernel") {
    const std::string vmlinux = running_vmlinux();
    if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
    check_json_matches_bpftool({vmlinux}, {vmlinux});
  }
}

TEST_CASE("JSON dump prints unsigned enum values as unsigned 32-bit numbers", "[dump]") {
  // The one deliberate difference from bpftool's JSON (see fix_bpftool_enum_values): pinned here.
  const std::string vmlinux = running_vmlinux();
  const Inputs& in = inputs();
  const json mine = json::parse(ours({"dump", "--format", "json", "--kind", "enum", in.all_kinds}));
  REQUIRE(mine["types"].size() == 2);
  const json& state = mine["types"][0];
  const json& delta = mine["types"][1];
  REQUIRE(state["name"] == "state");
  REQUIRE(delta["name"] == "delta");
  CHECK(state["encoding"] == "UNSIGNED");
  CHECK(state["values"][1] == json({{"name", "STOPPED"}, {"val", 4}}));
  CHECK(delta["encoding"] == "SIGNED");
  CHECK(delta["values"][0] == json({{"name", "DOWN"}, {"val", -1}}));
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const json kernel = json::parse(ours({"dump", "--format", "json", "--name", "init_ns_ino", vmlinux}));
  if (kernel["types"].empty()) return skip("this kernel has no enum init_ns_ino");
  REQUIRE(kernel["types"][0]["encoding"] == "UNSIGNED");
  for (const json& v : kernel["types"][0]["values"]) {
    CHECK(v["val"].is_number_unsigned());
    CHECK(v["val"].get<std::uint64_t>() <= 0xffffffffu);
  }
}

TEST_CASE("C dump is bpftool's format c", "[dump]") {
  const Inputs& in = inputs();
  SECTION("every kind, both byte orders, byte for byte") {
    for (const std::string& file : {in.all_kinds, in.all_kinds_be}) {
      INFO(file);
      const std::string expected = bpftool({"btf", "dump", "file", file, "format", "c"});
      CHECK(first_difference(ours({"dump", "--format", "c", file}), expected) == "");
    }
  }
  SECTION("split on its base: the whole header, base types included") {
    const std::string expected = bpftool({"--base-btf", in.base, "btf", "dump", "file", in.split, "format", "c"});
    CHECK(expected.find("struct sk_buff {") != std::string::npos);
    CHECK(first_difference(ours({"dump", "-f", "c", in.split, "--base", in.base}), expected) == "");
  }
  SECTION("running kernel, up to the two libbpf version spellings") {
    const std::string vmlinux = running_vmlinux();
    if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
    const std::string expected = bpftool({"btf", "dump", "file", vmlinux, "format", "c"});
    const std::string mine = ours({"dump", "--format", "c", vmlinux});
    CHECK(first_difference(as_bpftool_libbpf_writes_c(mine), expected) == "");
  }
}

TEST_CASE("C dump of the running kernel compiles as vmlinux.h, whole and for --name task_struct", "[dump]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  SECTION("whole kernel") { check_header_compiles(ours({"dump", "--format", "c", vmlinux})); }
  SECTION("task_struct and what it needs") {
    const std::string header = ours({"dump", "--format", "c", "--name", "task_struct", vmlinux});
    CHECK(header.find("\nstruct task_struct {\n") != std::string::npos);
    // Far smaller than the whole kernel, yet complete enough to compile.
    CHECK(header.size() * 4 < ours({"dump", "--format", "c", vmlinux}).size());
    check_header_compiles(header);
  }
}

TEST_CASE("C dump writes (void) for a prototype without parameters, as bpftool does", "[dump]") {
  const TempDir dir;
  const std::string file = dir.file("prototypes.btf");
  write_file(file, prototypes_btf());
  const std::string header = ours({"dump", "--format", "c", file});
  INFO(header);
  CHECK(header.find("()") == std::string::npos);
  CHECK_THAT(header, Catch::Contains("int (*get)(void);"));
  CHECK_THAT(header, Catch::Contains("void (*put)(void);"));
  CHECK_THAT(header, Catch::Contains("int (*log)(int, ...);"));
  CHECK_THAT(header, Catch::Contains("int (*add)(int a, int b);"));
  CHECK_THAT(header, Catch::Contains("typedef int (*getter_t)(void);"));
  CHECK(first_difference(header, bpftool({"btf", "dump", "file", file, "format", "c"})) == "");
  check_header_compiles(header, false);
}

TEST_CASE("--kind selects bpftool's records of those kinds, in any case", "[dump]") {
  const Inputs& in = inputs();
  const std::string vmlinux = running_vmlinux();
  for (const std::string& file : {in.all_kinds, vmlinux}) {
    if (file.empty()) {
      skip("no /sys/kernel/btf/vmlinux on this machine");
      continue;
    }
    INFO(file);
    const auto all = records_of(bpftool({"btf", "dump", "file", file}));
    const std::string structs = filtered(all, [](const Record& r) { return r.kind == "STRUCT"; });
    REQUIRE(!structs.empty());
    CHECK(first_difference(ours({"dump", "--kind", "struct", file}), structs) == "");
    CHECK(first_difference(ours({"dump", file, "--kind", "STRUCT"}), structs) == "");

    const std::string several =
        filtered(all, [](const Record& r) { return r.kind == "UNION" || r.kind == "FUNC_PROTO" || r.kind == "ENUM64"; });
    CHECK(first_difference(ours({"dump", "--kind", "Union,func_proto,ENUM64", file}), several) == "");
    CHECK(first_difference(ours({"dump", "--kind", "union", "--kind", "FUNC_PROTO", "--kind", "enum64", file}),
                           several) == "");
  }
}

TEST_CASE("--name selects exact names and globs like bpftool's records filtered by name", "[dump]") {
  const Inputs& in = inputs();
  const auto kinds = records_of(bpftool({"btf", "dump", "file", in.all_kinds}));
  CHECK(first_difference(ours({"dump", "--name", "task", in.all_kinds}),
                         filtered(kinds, [](const Record& r) { return r.name == "task"; })) == "");
  // "task" names a STRUCT, a FUNC_PROTO parameter and a DECL_TAG's target: only the type's own name counts.
  CHECK(records_of(ours({"dump", "--name", "task", in.all_kinds})).size() == 1);
  // A name that matches nothing is an error, as in every command that takes a type.
  check_usage_error({"dump", "--name", "no_such_type", in.all_kinds});
  check_usage_error({"dump", "--name", "task", "--name", "no_such_*", in.all_kinds});

  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const auto all = records_of(bpftool({"btf", "dump", "file", vmlinux}));
  const std::string task_struct = filtered(all, [](const Record& r) { return r.name == "task_struct"; });
  REQUIRE(!task_struct.empty());
  CHECK(first_difference(ours({"dump", "--name", "task_struct", vmlinux}), task_struct) == "");
  // The type syntax every command takes: a kind word narrows the name, an id names one type.
  CHECK(first_difference(ours({"dump", "--name", "struct task_struct", vmlinux}), task_struct) == "");
  CHECK(first_difference(ours({"dump", "--name", task_struct.substr(1, task_struct.find(']') - 1), vmlinux}),
                         task_struct) == "");
  check_usage_error({"dump", "--name", "union task_struct", vmlinux});
  CHECK(first_difference(ours({"dump", "--name", "struct task_*", vmlinux}),
                         filtered(all, [](const Record& r) {
                           return r.kind == "STRUCT" && ::fnmatch("task_*", r.name.c_str(), 0) == 0;
                         })) == "");

  auto glob = [](const char* pattern) {
    return [pattern](const Record& r) { return ::fnmatch(pattern, r.name.c_str(), 0) == 0; };
  };
  const std::string task_glob = filtered(all, glob("task_*"));
  REQUIRE(task_glob.size() > task_struct.size());
  CHECK(first_difference(ours({"dump", "--name", "task_*", vmlinux}), task_glob) == "");
  CHECK(first_difference(ours({"dump", "--name", "*_ops", "--name", "task_struct", vmlinux}),
                         filtered(all, [&](const Record& r) { return glob("*_ops")(r) || r.name == "task_struct"; })) ==
        "");
  CHECK(first_difference(ours({"dump", "--name", "sk_buf?", vmlinux}), filtered(all, glob("sk_buf?"))) == "");
}

TEST_CASE("--id selects one id, a range and a list; criteria combine", "[dump]") {
  const Inputs& in = inputs();
  const auto all = records_of(bpftool({"btf", "dump", "file", in.all_kinds}));
  auto ids = [&](std::initializer_list<std::uint32_t> keep) {
    return filtered(all, [&](const Record& r) { return std::find(keep.begin(), keep.end(), r.id) != keep.end(); });
  };
  CHECK(first_difference(ours({"dump", "--id", "7", in.all_kinds}), ids({7})) == "");
  CHECK(first_difference(ours({"dump", "--id", "5-9", in.all_kinds}), ids({5, 6, 7, 8, 9})) == "");
  CHECK(first_difference(ours({"dump", "--id", "1,7,29-31", in.all_kinds}), ids({1, 7, 29, 30, 31})) == "");
  CHECK(first_difference(ours({"dump", "--id", "1", "--id", "30-31", in.all_kinds}), ids({1, 30, 31})) == "");
  CHECK(first_difference(ours({"dump", "--id", "1-31", in.all_kinds}), bpftool({"btf", "dump", "file", in.all_kinds})) ==
        "");

  // Criteria of different sorts must all hold.
  CHECK(first_difference(ours({"dump", "--id", "1-12", "--kind", "enum,int", in.all_kinds}),
                         ids({1, 2, 3, 4, 9, 10})) == "");
  CHECK(first_difference(ours({"dump", "--kind", "func", "--name", "[wh]*", in.all_kinds}), ids({19, 20})) == "");
  CHECK(first_difference(ours({"dump", "--id", "1-20", "--kind", "func", "--name", "[wh]*", in.all_kinds}), ids({19, 20})) ==
        "");

  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const auto kernel = records_of(bpftool({"btf", "dump", "file", vmlinux}));
  CHECK(first_difference(ours({"dump", "--kind", "struct", "--name", "task_*", vmlinux}),
                         filtered(kernel, [](const Record& r) {
                           return r.kind == "STRUCT" && ::fnmatch("task_*", r.name.c_str(), 0) == 0;
                         })) == "");
  const std::uint32_t last = kernel.back().id;
  CHECK(first_difference(ours({"dump", "--id", std::to_string(last - 2) + "-" + std::to_string(last), vmlinux}),
                         filtered(kernel, [&](const Record& r) { return r.id + 2 >= last; })) == "");
}

TEST_CASE("--id on split BTF reaches base types", "[dump]") {
  const Inputs& in = inputs();
  const auto base = records_of(bpftool({"btf", "dump", "file", in.base}));
  const auto split = records_of(bpftool({"--base-btf", in.base, "btf", "dump", "file", in.split}));
  REQUIRE(base.size() == 3);
  CHECK(first_difference(ours({"dump", in.split, "--base", in.base, "--id", "3"}), base[2].text) == "");
  CHECK(first_difference(ours({"dump", in.split, "--base", in.base, "--id", "2-5"}),
                         base[1].text + base[2].text + split[0].text + split[1].text) == "");
  // Without --id only the split's own types are selected, by name or kind alike.
  CHECK(first_difference(ours({"dump", in.split, "--base", in.base, "--kind", "struct"}), split[1].text) == "");
  // so a name only the base has matches nothing, which is an error as everywhere.
  check_usage_error({"dump", in.split, "--base", in.base, "--name", "sk_buff"});
}

TEST_CASE("bad --id and --kind are usage errors with one line on stderr", "[dump]") {
  const Inputs& in = inputs();
  check_usage_error({"dump", "--id", "32", in.all_kinds});  // all_kinds has 31 types
  check_usage_error({"dump", "--id", "0", in.all_kinds});
  check_usage_error({"dump", "--id", "30-40", in.all_kinds});
  check_usage_error({"dump", "--id", "7", in.split, "--base", in.base});  // split ends at 6
  check_usage_error({"dump", "--id", "abc", in.all_kinds});
  check_usage_error({"dump", "--id", "5-", in.all_kinds});
  check_usage_error({"dump", "--id", "9-5", in.all_kinds});
  check_usage_error({"dump", "--id", "1,,2", in.all_kinds});
  check_usage_error({"dump", "--id", "-3", in.all_kinds});
  check_usage_error({"dump", "--id", "99999999999", in.all_kinds});
  check_usage_error({"dump", "--kind", "structure", in.all_kinds});
  check_usage_error({"dump", "--kind", "struct,bogus", in.all_kinds});
  check_usage_error({"dump", "--kind", "", in.all_kinds});
  check_usage_error({"dump", "--format", "xml", in.all_kinds});
}

TEST_CASE("a selection option takes one value and leaves the input to the positional", "[dump]") {
  // `--id 5 FILE` once read FILE as a second id list; each option now takes one value per occurrence.
  const Inputs& in = inputs();
  const auto all = records_of(bpftool({"btf", "dump", "file", in.all_kinds}));
  CHECK(first_difference(ours({"dump", "--id", "7", in.all_kinds}), all[6].text) == "");
  CHECK(first_difference(ours({"dump", "--name", "task", in.all_kinds}), all[6].text) == "");
  CHECK(first_difference(ours({"dump", "--kind", "struct", in.all_kinds}), all[6].text) == "");
}

}  // namespace btfslim::test
