// Names from inputs reach the output escaped ([escaping]): every command, every format, stdout and
// stderr, run on inputs whose every name is hostile.
//
// The inputs: a BTF built here whose type, member, enumerator, parameter and function names hold line
// breaks, terminal escapes, DEL, ill-formed UTF-8, a bidirectional override and a backslash; the test
// build's minimal.bpf.o with its section, program, struct and member names rewritten in place to such
// bytes (same lengths, so the object stays valid); files, archive members and a budget whose names do
// the same. Each run must print nothing but text: no control byte but line feed and tab, valid UTF-8,
// no invisible code point; an error is one line; and the name is there, escaped (a name dropped from
// the output would pass the first checks).
#include "archives.h"
#include "elf_image.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <libxml/parser.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;

// The hostile names and how btfslim must print them. A hex escape is closed by splitting the literal,
// so that "\x0c" "ent" is not read as "\x0ce" "nt".
struct Name {
  std::string raw, shown;
};
const Name kStruct{"task\nstruct", "task\\nstruct"};                   // the object's task_struct, rewritten
const Name kParent{"pa\x0c" "ent", "pa\\x0cent"};                       // its member parent, rewritten
const Name kEvil{"rtl\xe2\x80\xae" "evil", "rtl\\u202eevil"};          // U+202E RIGHT-TO-LEFT OVERRIDE
const Name kBadUtf8{"\xff\xfe" "id", "\\xff\\xfeid"};
const Name kEnum{"col\x1b[31mor", "col\\x1b[31mor"};
const Name kDel{"RED\x7f", "RED\\x7f"};
const Name kBackslash{"back\\slash", "back\\\\slash"};
const Name kTypedef{"type\tdef", "type\\tdef"};
const Name kParam{"ar\rg", "ar\\rg"};
const Name kFunc{"fu\x1b" "nc", "fu\\x1bnc"};
const Name kSection{"sch\x1b\nd\xff" "witch", "sch\\x1b\\nd\\xffwitch"};  // sched_switch, rewritten
const Name kProgram{"on\xe2\x80\xae" "itch", "on\\u202eitch"};           // on_switch, rewritten
const Name kFile{"bad\nname\x1b]0;x\x07.btf", "bad\\nname\\x1b]0;x\\x07.btf"};
const Name kMember{"k\x1b" "ernel\n.btf", "k\\x1bernel\\n.btf"};
const Name kNewMember{"ne\x1b" "w", "ne\\x1bw"};

void field(struct btf* b, const std::string& name, int type, unsigned bit) { REQUIRE(btf__add_field(b, name.c_str(), type, bit, 0) == 0); }

// A BTF where every kind of name is hostile; `grown` adds a member and an enumerator and changes another
// enumerator's value, for diff.
// struct task\nstruct has pid and pa\x0cent but no tgid: minimal.bpf.o's second read is poisoned on it.
std::string hostile_btf(bool grown = false) {
  BtfPtr owner(btf__new_empty());
  struct btf* b = owner.get();
  const int i32 = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
  const int st = added(btf__add_struct(b, kStruct.raw.c_str(), grown ? 32 : 24));
  const int ptr = st + 1;
  field(b, "pid", i32, 0);
  field(b, kEvil.raw, i32, 32);
  field(b, kParent.raw, ptr, 64);
  field(b, kBadUtf8.raw, i32, 128);
  if (grown) field(b, kNewMember.raw, i32, 192);
  REQUIRE(btf__add_ptr(b, st) == ptr);
  added(btf__add_enum(b, kEnum.raw.c_str(), 4));
  REQUIRE(btf__add_enum_value(b, kDel.raw.c_str(), grown ? 7 : 1) == 0);
  REQUIRE(btf__add_enum_value(b, kBackslash.raw.c_str(), 2) == 0);
  if (grown) REQUIRE(btf__add_enum_value(b, kNewMember.raw.c_str(), 3) == 0);
  added(btf__add_typedef(b, kTypedef.raw.c_str(), st));
  const int proto = added(btf__add_func_proto(b, i32));
  REQUIRE(btf__add_func_param(b, kParam.raw.c_str(), ptr) == 0);
  added(btf__add_func(b, kFunc.raw.c_str(), BTF_FUNC_GLOBAL, proto));
  return raw_bytes(b);
}

// Many types and one hostile name: a dump of so many tests the string section once instead of each name.
std::string many_types_one_hostile() {
  BtfPtr owner(btf__new_empty());
  struct btf* b = owner.get();
  for (int i = 0; i < 1100; ++i) added(btf__add_int(b, ("int" + std::to_string(i)).c_str(), 4, BTF_INT_SIGNED));
  added(btf__add_struct(b, kStruct.raw.c_str(), 4));
  field(b, kParent.raw, 1, 0);
  return raw_bytes(b);
}

// The same struct twice, so that dedup has a named duplicate to report.
std::string hostile_duplicates() {
  BtfPtr owner(btf__new_empty());
  struct btf* b = owner.get();
  const int i32 = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
  for (int copy = 0; copy < 2; ++copy) {
    added(btf__add_struct(b, kStruct.raw.c_str(), 8));
    field(b, kParent.raw, i32, 0);
  }
  return raw_bytes(b);
}

// Replaces every occurrence of `from` in image[begin, end) by `to`, of the same length.
std::size_t replace_all(std::string& image, const std::string& from, const std::string& to, std::size_t begin = 0,
                        std::size_t end = std::string::npos) {
  REQUIRE(from.size() == to.size());
  end = std::min(end, image.size());
  std::size_t n = 0;
  for (std::size_t at = image.find(from, begin); at != std::string::npos && at + from.size() <= end;
       at = image.find(from, at + from.size())) {
    image.replace(at, from.size(), to);
    ++n;
  }
  return n;
}

// minimal.bpf.o with its names rewritten: the section and program names in the ELF string tables and in
// .BTF alike, so that the object stays consistent; its struct and member names in .BTF.
std::string hostile_object() {
  std::string image = read_file(test_object("minimal"));
  REQUIRE(replace_all(image, "sched_switch", kSection.raw) >= 2);
  REQUIRE(replace_all(image, "on_switch", kProgram.raw) >= 2);
  REQUIRE(replace_all(image, "task_struct", kStruct.raw) >= 1);
  REQUIRE(replace_all(image, "parent", kParent.raw) >= 1);
  return image;
}

struct Hostile {
  TempDir dir;
  std::string btf, grown, object, object_ext_error, duplicates, archive, module_base, module_a, module_b;
  Hostile() {
    btf = dir.file(kFile.raw);
    write_file(btf, hostile_btf());
    grown = dir.file("grown-" + kFile.raw);
    write_file(grown, hostile_btf(true));
    object = dir.file("obj-" + kFile.raw + ".bpf.o");
    write_file(object, hostile_object());
    // The same object with the section name changed in .BTF only: .BTF.ext then names a section the
    // ELF file does not have (the error a mutation test once printed with raw bytes).
    std::string image = read_file(test_object("minimal"));
    const SectionPlace s = elf_section(image, ".BTF");
    REQUIRE(replace_all(image, "sched_switch", kSection.raw, s.offset, s.offset + s.size) >= 1);
    object_ext_error = dir.file("ext.bpf.o");
    write_file(object_ext_error, image);
    duplicates = dir.file("dup-" + kFile.raw);
    write_file(duplicates, hostile_duplicates());
    archive = dir.file("hub.btf.tar");
    write_archive(archive, {{kMember.raw, hostile_btf()}}, false);
    const SplitPair split = split_btf();
    module_base = dir.file("base.btf");
    write_file(module_base, split.base);
    module_a = dir.file("mod-a-" + kFile.raw);
    module_b = dir.file("mod-b-" + kFile.raw);
    write_file(module_a, split.split);
    write_file(module_b, split.split);
  }
};

// Runs btfslim with `args`, and checks that it exits with `status`, that stdout and stderr are text,
// that an error is one line, and that every name in `shown` is in the output, escaped.
RunResult expect_escaped(const std::vector<std::string>& args, int status, const std::vector<Name>& shown) {
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\nexit " << r.status << "\nstdout:\n" << r.out.substr(0, 3000) << "\nstderr:\n"
                          << r.err.substr(0, 2000));
  CHECK(r.status == status);
  CHECK(not_text(r.out) == "");
  CHECK(not_text(r.err) == "");
  if (status == 2) CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  for (const Name& n : shown) {
    INFO("the name " << n.shown);
    CHECK((r.out.find(n.shown) != std::string::npos || r.err.find(n.shown) != std::string::npos));
    CHECK(r.out.find(n.raw) == std::string::npos);
    CHECK(r.err.find(n.raw) == std::string::npos);
  }
  return r;
}

void expect_json(const RunResult& r) {
  INFO(r.out.substr(0, 2000));
  CHECK(nlohmann::json::accept(r.out));
}

void expect_xml(const std::string& text) {
  INFO(text.substr(0, 2000));
  xmlDocPtr doc = xmlReadMemory(text.data(), static_cast<int>(text.size()), "out.xml", nullptr,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  CHECK(doc != nullptr);
  if (doc) xmlFreeDoc(doc);
}

// Every record of a CSV text has as many fields as its header (RFC 4180: commas in quotes do not count).
void expect_csv(const std::string& text) {
  std::size_t header = 0;
  std::size_t line = 0;
  for (const std::string& l : lines_of(text)) {
    std::size_t fields = 1;
    bool quoted = false;
    for (const char c : l) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++fields;
    }
    INFO("CSV line " << line << ": " << l);
    CHECK_FALSE(quoted);
    if (line++ == 0)
      header = fields;
    else
      CHECK(fields == header);
  }
}

TEST_CASE("dump and measure print hostile names escaped, in every format", "[escaping]") {
  const Hostile h;
  const std::vector<Name> types = {kStruct, kEvil, kParent, kBadUtf8, kEnum, kDel, kBackslash, kTypedef, kParam, kFunc};
  expect_escaped({"dump", h.btf}, 0, types);
  expect_json(expect_escaped({"dump", "-f", "json", h.btf}, 0, {}));
  // C cannot spell these names: refused, one line, the type named escaped.
  expect_escaped({"dump", "-f", "c", h.btf}, 2, {});
  expect_escaped({"dump", "-f", "c", "--kind", "struct", h.btf}, 2, {kStruct});
  expect_escaped({"dump", "-f", "c", "--kind", "func_proto", h.btf}, 2, {kParam});
  expect_escaped({"dump", "-f", "c", "--kind", "enum", h.btf}, 2, {kEnum});
  expect_escaped({"dump", "--name", "task*", h.btf}, 0, {kStruct, kParent});
  const std::string many = h.dir.file("many.btf");
  write_file(many, many_types_one_hostile());
  expect_escaped({"dump", many}, 0, {kStruct, kParent});

  expect_escaped({"measure", h.btf}, 0, {kFile, kStruct});
  expect_escaped({"measure", "--all", h.btf}, 0, {kStruct, kEnum, kTypedef, kFunc});
  expect_escaped({"measure", "--by", "prefix", h.btf}, 0, {kEnum});
  expect_csv(expect_escaped({"measure", "-f", "csv", "--by", "type", "--all", h.btf}, 0, {kStruct, kEnum, kFunc}).out);
  expect_csv(expect_escaped({"measure", "-f", "csv", "--by", "prefix", h.btf}, 0, {kEnum}).out);
  expect_json(expect_escaped({"measure", "-f", "json", "--all", h.btf}, 0, {}));
  expect_escaped({"measure", "--type", "struct " + kStruct.raw, h.btf}, 0, {kStruct, kTypedef});
  expect_escaped({"measure", "--without", "func", h.btf}, 0, {kFile});
  expect_escaped({"measure", "--modules", h.module_a, h.module_b, "--base", h.module_base}, 0, {kFile});

  const std::string svg = h.dir.file("out.svg");
  expect_escaped({"measure", "--svg", svg, h.btf}, 0, {});
  const std::string picture = read_file(svg);
  CHECK(not_text(picture) == "");
  CHECK(picture.find(kStruct.shown) != std::string::npos);
  expect_xml(picture);
}

TEST_CASE("check and minimize print hostile section, program, type and file names escaped", "[escaping]") {
  const Hostile h;
  // The struct's second read finds no tgid: a failing relocation whose reason names the struct.
  const std::vector<Name> names = {kFile, kSection, kProgram, kStruct, kParent};
  expect_escaped({"check", "--btf", h.btf, h.object}, 1, {kFile, kProgram, kStruct, kParent});
  expect_json(expect_escaped({"check", "-f", "json", "--btf", h.btf, h.object}, 1, {}));
  // A matrix of targets, one of them an archive member with a hostile name.
  expect_escaped({"check", "--btf", h.btf, "--btf", h.archive, h.object}, 1, {kFile, kMember, kProgram, kStruct});

  const std::string out = h.dir.file("min-" + kFile.raw);
  expect_escaped({"minimize", "--btf", h.btf, "-o", out, "--explain", kStruct.raw, h.object}, 0,
                 {kFile, kStruct, kParent, kProgram});
  expect_escaped({"minimize", "--btf", h.btf, "-o", out, "--keep", "no\x1bsuch", h.object}, 2, {{"no\x1bsuch", "no\\x1bsuch"}});
  expect_escaped({"minimize", "--btf", h.btf, "--btf", h.archive, "-o", h.dir.file("batch"), h.object}, 0,
                 {kFile, kMember});
  CHECK(fs::exists(h.dir.file("batch/" + kMember.raw)));
}

TEST_CASE("diff and dedup print hostile names escaped, in every format", "[escaping]") {
  const Hostile h;
  expect_escaped({"diff", h.btf, h.grown}, 0, {kStruct, kEnum});
  expect_escaped({"diff", "-v", h.btf, h.grown}, 0, {kStruct, kEnum, kNewMember, kDel});
  expect_escaped({"diff", "--by", "kind", h.btf, h.grown}, 0, {kStruct, kEnum});
  expect_csv(expect_escaped({"diff", "-f", "csv", "--by", "member", h.btf, h.grown}, 0, {kStruct, kNewMember}).out);
  expect_csv(expect_escaped({"diff", "-f", "csv", h.btf, h.grown}, 0, {kStruct, kEnum}).out);
  expect_json(expect_escaped({"diff", "-f", "json", h.btf, h.grown}, 0, {}));

  const std::string out = h.dir.file("dedup-" + kFile.raw);
  expect_escaped({"dedup", h.duplicates, "-o", out}, 0, {kFile, kStruct});
  expect_json(expect_escaped({"dedup", "-f", "json", h.duplicates, "-o", out}, 0, {}));
}

TEST_CASE("budget reports print hostile budget, type and file names escaped, in every format", "[escaping]") {
  const Hostile h;
  const std::string config = h.dir.file("btfslim.toml");
  // TOML escapes put the bytes in: a bell and an override in the name, an erase-screen and a line
  // break in the message, the hostile file as input and the hostile struct as a type limit.
  write_file(config,
             "[[budget]]\n"
             "name = \"bud\\u0007get \\u202e\"\n"
             "input = \"bad\\nname\\u001b]0;x\\u0007.btf\"\n"
             "message = \"first\\u001b[2J line\\nsecond line\"\n"
             "total = \"1 B\"\n"
             "type.\"struct task\\nstruct\" = \"1 B\"\n");
  const Name budget{"bud\x07get \xe2\x80\xae", "bud\\x07get \\u202e"};
  const Name message{"first\x1b[2J line", "first\\x1b[2J line"};
  const RunResult text = expect_escaped({"budget", "-c", config}, 1, {budget, kFile, kStruct, message});
  // The message's two lines stay two lines, each indented under the breach it explains.
  CHECK(text.out.find("    first\\x1b[2J line\n    second line\n") != std::string::npos);
  expect_json(expect_escaped({"budget", "-c", config, "-f", "json"}, 1, {}));
  const RunResult junit = expect_escaped({"budget", "-c", config, "-f", "junit"}, 1, {budget, kFile, kStruct});
  expect_xml(junit.out);
  expect_escaped({"budget", "-c", config, "-f", "github"}, 1, {budget, kFile, kStruct});

  const std::string summary = h.dir.file("summary.md");
  const RunResult gh = run({"env", "GITHUB_STEP_SUMMARY=" + summary, btfslim_path(), "budget", "-c", config, "-f", "github"});
  CHECK(gh.status == 1);
  const std::string md = read_file(summary);
  INFO(md);
  CHECK(not_text(md) == "");
  CHECK(md.find("bud\\\\x07get") != std::string::npos);  // escaped, then Markdown's backslash escaped
}

TEST_CASE("errors naming hostile files, sections and arguments are one escaped line", "[escaping]") {
  const Hostile h;
  const Name missing{h.dir.file("no\nsuch\x1b[1m.btf"), "no\\nsuch\\x1b[1m.btf"};
  expect_escaped({"measure", missing.raw}, 2, {missing});
  expect_escaped({"check", "--btf", h.btf, missing.raw}, 2, {missing});
  expect_escaped({"measure", "--type", "no\x1bsuch", h.btf}, 2, {{"no\x1bsuch", "no\\x1bsuch"}});
  expect_escaped({"dump", "--id", "1\n2", h.btf}, 2, {{"1\n2", "1\\n2"}});
  expect_escaped({"dump", "--kind", "str\x1b" "uct", h.btf}, 2, {{"str\x1b" "uct", "str\\x1buct"}});
  expect_escaped({"measure", "--fo\x1b" "o", h.btf}, 2, {});
  expect_escaped({"me\nasure", h.btf}, 2, {{"me\nasure", "me\\nasure"}});
  // A file that is not BTF, under a hostile name; .BTF.ext naming a section with a hostile name.
  const std::string junk = h.dir.file("junk-" + kFile.raw);
  write_file(junk, "this is not BTF at all");
  expect_escaped({"measure", junk}, 2, {kFile});
  expect_escaped({"check", "--btf", h.btf, h.object_ext_error}, 2, {kSection});
}

}  // namespace
}  // namespace btfslim::test
