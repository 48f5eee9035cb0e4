// `btfslim minimize` end to end, as a command ([minimize]): the same bytes on every run, the output
// replaced atomically or left alone, --explain and --keep, objects with nothing to relocate, and `-o -`.
// What it writes resolves as its source does: test_minimize.cc.
#include "elf_image.h"
#include "libbpf_oracle.h"
#include "minimize_cli.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;

// ---- the same bytes every time, written atomically or not at all ----

// The files in `dir`, by name.
std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// A failed run: exit 2, one line "btfslim: FILE: ..." on stderr holding `fragment`, nothing on stdout.
void expect_refused(const std::vector<std::string>& args, const std::string& file, const std::string& fragment) {
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\nexit " << r.status << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, StartsWith("btfslim: " + file + ": "));
  CHECK_THAT(r.err, Contains(fragment));
}

// Where minimal.bpf.o's .BTF.ext starts (clang -target bpf writes it little-endian on these hosts).
std::size_t btf_ext_offset(const std::string& image) {
  const std::size_t ext = elf_section(image, ".BTF.ext").offset;
  REQUIRE(get_u32(image, ext) >> 16 == 1);  // version 1 after the magic 0xeb9f
  REQUIRE(static_cast<unsigned char>(image[ext]) == 0x9f);
  REQUIRE(static_cast<unsigned char>(image[ext + 1]) == 0xeb);
  return ext;
}

// minimal.bpf.o with the magic of its .BTF.ext broken.
std::string malformed_object(const TempDir& dir) {
  std::string image = read_file(test_object("minimal"));
  const std::size_t ext = btf_ext_offset(image);
  image[ext] = 0x34;
  image[ext + 1] = 0x12;
  const std::string path = dir.file("bad_ext.bpf.o");
  write_file(path, image);
  return path;
}

TEST_CASE("minimize writes the same bytes on every run", "[minimize]") {
  std::vector<std::pair<std::string, std::vector<std::string>>> runs{{core_target("moved"), minimize_corpus()},
                                                                     {core_target("moved.clang"), minimize_corpus()}};
  if (!running_vmlinux().empty() && !trace_objects().empty())
    runs.push_back({running_vmlinux(), trace_objects()});
  TempDir dir;
  for (const auto& [source, objects] : runs) {
    std::string first;
    for (int i = 0; i < 2; ++i) {
      const std::string out = dir.file("run" + std::to_string(i) + ".btf");
      const RunResult r = btfslim(minimize_args(source, objects, out));
      INFO(file_name(source) << " run " << i << ": " << r.err);
      REQUIRE(r.status == 0);
      if (i == 0)
        first = read_file(out);
      else
        CHECK(read_file(out) == first);
    }
  }
}

TEST_CASE("minimize replaces OUT atomically, and leaves it alone when it fails", "[minimize]") {
  TempDir dir;
  const std::string moved = core_target("moved");
  const std::string out = dir.file("out.btf");
  const std::string old_bytes = "an older OUT\n";

  SECTION("an existing OUT is replaced by a new file; no temporary file is left") {
    write_file(out, old_bytes);
    REQUIRE(::link(out.c_str(), dir.file("old-link").c_str()) == 0);
    const RunResult r = btfslim(minimize_args(moved, {test_object("core_fields")}, out));
    INFO(r.err);
    REQUIRE(r.status == 0);
    const BtfPtr b = parse_btf(out);
    CHECK(btf__type_cnt(b.get()) > 1);
    // The old file, still reachable through its other name, was not written into: OUT was renamed over.
    CHECK(read_file(dir.file("old-link")) == old_bytes);
    CHECK(files_in(dir.path()) == std::set<std::string>{"out.btf", "old-link"});
  }

  SECTION("a malformed .BTF.ext: exit 2, OUT untouched, nothing left behind") {
    const std::string bad = malformed_object(dir);
    write_file(out, old_bytes);
    expect_refused(minimize_args(moved, {test_object("core_fields"), bad}, out), bad, "magic");
    CHECK(read_file(out) == old_bytes);
    CHECK(files_in(dir.path()) == std::set<std::string>{"out.btf", "bad_ext.bpf.o"});
  }

  SECTION("a source that is not BTF: exit 2, OUT untouched") {
    const std::string junk = dir.file("junk.btf");
    write_file(junk, "hello, world\n");
    write_file(out, old_bytes);
    expect_refused(minimize_args(junk, {test_object("core_fields")}, out), junk, "not BTF");
    CHECK(read_file(out) == old_bytes);
  }

  SECTION("-o naming an input or the source is refused, and the file is left as it was") {
    const std::string obj = dir.file("prog.bpf.o");
    const std::string src = dir.file("kernel.o");
    const std::string obj_bytes = read_file(test_object("core_fields")), src_bytes = read_file(moved);
    // The paths as given, and the same files spelt another way.
    const std::string obj_again = dir.path() + "/./prog.bpf.o";
    const std::string src_again = dir.path() + "/../" + file_name(dir.path()) + "/kernel.o";
    for (const auto& [o, what] : {std::pair{obj, "input"}, std::pair{src, "source"}, std::pair{obj_again, "input"},
                                  std::pair{src_again, "source"}}) {
      write_file(obj, obj_bytes);
      write_file(src, src_bytes);
      expect_refused(minimize_args(src, {obj}, o), o, what);
      INFO("-o " << o);
      CHECK((read_file(obj) == obj_bytes));  // (not expanded: binary)
      CHECK((read_file(src) == src_bytes));
      CHECK(files_in(dir.path()) == std::set<std::string>{"prog.bpf.o", "kernel.o"});
    }
  }
}

// ---- --explain, --keep, objects with nothing to relocate ----

TEST_CASE("minimize --explain says which relocation keeps a type and its members", "[minimize]") {
  TempDir dir;
  const std::string fields = test_object("core_fields");
  const std::string out = dir.file("out.btf");
  std::vector<std::string> args = minimize_args(core_target("moved"), {fields}, out);
  args.insert(args.end(), {"--explain", "nesting", "--explain", "struct err_prune"});
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\n" << r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const std::vector<std::string> lines = lines_of(r.out);

  // struct nesting: its line names the object, the program, the instruction and the relocation, and
  // each kept member has a line of its own saying the same, with its bit offset in the source.
  const auto head = std::find_if(lines.begin(), lines.end(),
                                 [](const std::string& l) { return l.find("STRUCT 'nesting': ") != std::string::npos; });
  REQUIRE(head != lines.end());
  CHECK_THAT(*head, StartsWith("[") && Contains("needed by " + fields + " ") && Contains(" insn #") &&
                        Contains(": byte_off struct nesting."));
  const BtfPtr b = parse_btf(out);
  const __s32 id = btf__find_by_name_kind(b.get(), "nesting", BTF_KIND_STRUCT);
  REQUIRE(id > 0);
  const btf_type* t = btf__type_by_id(b.get(), static_cast<__u32>(id));
  for (unsigned i = 0; i < btf_vlen(t); ++i) {
    const std::string name = btf__name_by_offset(b.get(), btf_members(t)[i].name_off);
    const std::string shown = "'" + (name.empty() ? std::string("(anon)") : name) + "' (bit " +
                              std::to_string(btf_member_bit_offset(t, i)) + "): needed by " + fields + " ";
    INFO("member " << shown);
    CHECK(std::any_of(head + 1, lines.end(), [&](const std::string& l) {
      return l.find("member ") != std::string::npos && l.find(shown) != std::string::npos;
    }));
  }
  // Its members follow the head, an anonymous one written flattened followed by its own members one level
  // deeper: as many members that are not flattened as OUT has.
  auto member_line = [](const std::string& l) { return l.rfind("  ", 0) == 0 && l.find("member ") == l.find_first_not_of(' '); };
  const auto end = std::find_if(head + 1, lines.end(), [&](const std::string& l) { return !member_line(l); });
  const auto written = std::count_if(head + 1, end, [](const std::string& l) {
    return l.find("written as its members") == std::string::npos;
  });
  CHECK(static_cast<unsigned>(written) == btf_vlen(t));
  CHECK(std::any_of(head + 1, end, [](const std::string& l) { return l.find("written as its members") != std::string::npos; }));

  CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("STRUCT 'err_prune': not kept") != std::string::npos;
  }));
  CHECK_THAT(lines.back(), StartsWith(out + ": "));

  // A name that matches nothing is an error, as in every command, and nothing is written.
  for (const char* missing : {"no_such_type", "union nesting", "enum err_prune"}) {
    std::vector<std::string> bad = minimize_args(core_target("moved"), {fields}, dir.file("none.btf"));
    bad.insert(bad.end(), {"--explain", "nesting", "--explain", missing});
    expect_refused(bad, core_target("moved"), std::string("--explain '") + missing + "': no type matches");
    CHECK(!fs::exists(dir.file("none.btf")));
  }

  SECTION("on the running kernel") {
    const std::string vmlinux = running_vmlinux();
    if (vmlinux.empty() || trace_objects().empty()) return skip("no kernel BTF or no trace objects");
    const std::string exec = test_object("trace_exec");
    if (!fs::exists(exec)) return skip("no trace_exec.bpf.o");
    std::vector<std::string> a = minimize_args(vmlinux, {exec}, dir.file("vm.btf"));
    a.insert(a.end(), {"--explain", "struct task_struct", "--explain", "sk_buff"});
    const RunResult k = btfslim(a);
    INFO(command_line(a) << "\n" << k.out << k.err);
    REQUIRE(k.status == 0);
    CHECK_THAT(k.out, Contains("STRUCT 'task_struct': needed by " + exec + " trace_exec insn #"));
    CHECK_THAT(k.out, Contains("'tgid' (bit ") && Contains("byte_off struct task_struct.tgid"));
    CHECK_THAT(k.out, Contains("STRUCT 'sk_buff': not kept"));
  }
}

// The struct, union or enum `name` (past a typedef of that name) in `b`: its kind, size and members or
// enumerators with their offsets or values, one per line.
std::string whole_type(const struct btf* b, const std::string& name) {
  __s32 id = -1;
  for (const int kind : std::initializer_list<int>{BTF_KIND_STRUCT, BTF_KIND_UNION, BTF_KIND_ENUM, BTF_KIND_ENUM64,
                                                   BTF_KIND_TYPEDEF})
    if (id <= 0) id = btf__find_by_name_kind(b, name.c_str(), static_cast<__u32>(kind));
  if (id <= 0) return "no type " + name;
  const btf_type* t = btf__type_by_id(b, static_cast<__u32>(id));
  if (btf_is_typedef(t)) t = btf__type_by_id(b, static_cast<__u32>(btf__resolve_type(b, static_cast<__u32>(id))));
  std::ostringstream s;
  s << kind_word(t) << " size " << t->size << " vlen " << btf_vlen(t) << "\n";
  for (unsigned i = 0; i < btf_vlen(t); ++i) {
    if (btf_is_composite(t))
      s << btf__name_by_offset(b, btf_members(t)[i].name_off) << " @" << btf_member_bit_offset(t, i) << ":"
        << btf_member_bitfield_size(t, i) << "\n";
    else if (btf_is_enum(t))
      s << btf__name_by_offset(b, btf_enum(t)[i].name_off) << " = " << btf_enum(t)[i].val << "\n";
    else if (btf_is_enum64(t))
      s << btf__name_by_offset(b, btf_enum64(t)[i].name_off) << " = " << btf_enum64_value(btf_enum64(t) + i) << "\n";
  }
  return s.str();
}

TEST_CASE("minimize --keep keeps a type with all its members", "[minimize]") {
  TempDir dir;
  const std::string moved = core_target("moved");
  const BtfPtr src = parse_btf(moved);
  struct Case {
    std::string name, object, what;
  };
  for (const Case& c : {Case{"nesting", "core_fields", "a struct the object reaches in part"},
                        Case{"err_prune", "core_fields", "a struct the object does not reach"},
                        Case{"enums_wide", "core_enums", "an enum whose enumerators the object names in part"},
                        Case{"mods_t", "minimal", "a typedef of a struct"}}) {
    const std::string out = dir.file(c.name + ".btf");
    std::vector<std::string> args = minimize_args(moved, {test_object(c.object)}, out);
    args.insert(args.end(), {"--keep", c.name});
    const RunResult r = btfslim(args);
    INFO(c.what << "\n" << command_line(args) << "\n" << r.out << r.err);
    REQUIRE(r.status == 0);
    const BtfPtr b = parse_btf(out);
    CHECK(whole_type(b.get(), c.name) == whole_type(src.get(), c.name));
  }
  // The type syntax of every command: a kind word, or an id, names the same type.
  const __s32 nesting_id = btf__find_by_name_kind(src.get(), "nesting", BTF_KIND_STRUCT);
  REQUIRE(nesting_id > 0);
  for (const std::string& spelling : {std::string("struct nesting"), std::to_string(nesting_id)}) {
    const std::string out = dir.file("spelled.btf");
    std::vector<std::string> args = minimize_args(moved, {test_object("core_fields")}, out);
    args.insert(args.end(), {"--keep", spelling});
    const RunResult r = btfslim(args);
    INFO(command_line(args) << "\n" << r.out << r.err);
    REQUIRE(r.status == 0);
    const BtfPtr b = parse_btf(out);
    CHECK(whole_type(b.get(), "nesting") == whole_type(src.get(), "nesting"));
  }
  for (const char* missing : {"no_such_type", "union nesting", "typedef nesting"}) {
    expect_refused({"minimize", "--btf", moved, "-o", dir.file("x.btf"), test_object("core_fields"), "--keep", missing},
                   moved, std::string("--keep '") + missing + "': no type matches");
    CHECK(!fs::exists(dir.file("x.btf")));
  }
}

TEST_CASE("minimize --keep: what bpftool btf dump format c makes of the output compiles", "[minimize]") {
  // The use --keep is for: a header of whole types. A member's int must keep its name for that.
  TempDir dir;
  const std::string out = dir.file("out.btf");
  std::vector<std::string> args = minimize_args(core_target("moved"), {test_object("core_fields")}, out);
  args.insert(args.end(), {"--keep", "ints", "--keep", "nesting"});
  const RunResult r = btfslim(args);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  write_file(dir.file("kept.h"), bpftool({"btf", "dump", "file", out, "format", "c"}));
  write_file(dir.file("use.c"), "#include \"kept.h\"\nint f(struct ints *i, struct nesting *n) { return i->s32f + n->mix.q; }\n");
  const RunResult cc = run({"clang-19", "-target", "bpf", "-c", dir.file("use.c"), "-o", dir.file("use.o")});
  INFO("clang-19 on bpftool's C of the output:\n" << cc.err.substr(0, 1500) << "\nkept.h:\n"
                                                   << read_file(dir.file("kept.h")).substr(0, 1500));
  CHECK(cc.status == 0);
}

TEST_CASE("minimize: objects without CO-RE records get a note, and alone an empty valid BTF", "[minimize]") {
  TempDir dir;
  const std::string no_ext = build_data_dir() + "/types_only.bpf.o";  // .BTF, no .BTF.ext
  // minimal.bpf.o with an empty core_relo subsection (core_relo_len, the header's last field, set to 0).
  std::string image = read_file(test_object("minimal"));
  const std::size_t ext = btf_ext_offset(image);
  REQUIRE(static_cast<unsigned char>(image[ext + 4]) >= 32);  // hdr_len covers core_relo_off/len
  for (int i = 0; i < 4; ++i) image[ext + 28 + i] = 0;
  const std::string no_core = dir.file("no_core.bpf.o");
  write_file(no_core, image);

  for (const std::string& obj : {no_ext, no_core}) {
    const std::string out = dir.file(file_name(obj) + ".btf");
    const RunResult r = btfslim(minimize_args(core_target("moved"), {obj}, out));
    INFO(obj << ": exit " << r.status << "\n" << r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err == "btfslim: note: " + obj + " has no CO-RE relocations: it needs nothing\n");
    const BtfPtr b = parse_btf(out);
    CHECK(btf__type_cnt(b.get()) == 1);
    CHECK(ours({"dump", out}).empty());
    CHECK(bpftool({"btf", "dump", "file", out}).empty());
  }
  // Beside an object that has some, the note and that object's types.
  const std::string out = dir.file("both.btf");
  const RunResult r = btfslim(minimize_args(core_target("moved"), {no_core, test_object("core_fields")}, out));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Contains("note: " + no_core));
  const BtfPtr b = parse_btf(out);
  CHECK(btf__find_by_name_kind(b.get(), "nesting", BTF_KIND_STRUCT) > 0);
}

// ---- standard output ----

TEST_CASE("minimize -o - writes the BTF to stdout and the rest to stderr", "[minimize]") {
  TempDir dir;
  const std::string out = dir.file("out.btf");
  const std::vector<std::string> objects{test_object("core_fields"), test_object("core_types")};
  const RunResult to_file = btfslim(minimize_args(core_target("moved"), objects, out));
  REQUIRE(to_file.status == 0);
  CHECK(to_file.err.empty());
  CHECK_THAT(to_file.out, StartsWith(out + ": ") && EndsWith("\n"));
  CHECK_THAT(to_file.out, Contains(" types, " + with_commas(fs::file_size(out)) + " bytes ("));

  std::vector<std::string> args = minimize_args(core_target("moved"), objects, "-");
  args.insert(args.end(), {"--explain", "nesting"});
  const RunResult to_stdout = btfslim(args);
  INFO(to_stdout.err);
  REQUIRE(to_stdout.status == 0);
  CHECK(to_stdout.out == read_file(out));
  CHECK_THAT(to_stdout.err, Contains("STRUCT 'nesting': needed by"));
  CHECK_THAT(lines_of(to_stdout.err).back(), StartsWith("stdout: "));
  CHECK(!fs::exists("-"));
}

}  // namespace
}  // namespace btfslim::test
