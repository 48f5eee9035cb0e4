// `btfslim check` as a user meets it on the command line ([check-cli]): several targets give a matrix
// of objects by kernels, files named by their shortest unique suffix, then what fails where and the
// verdict line, and in JSON per-target results that agree with single-target runs; --failures-only
// keeps what fails; GitHub workflow commands and JUnit XML for CI; a directory stands for every BTF
// file under it; a poisoned read in dead code does not fail, unless --strict;
// objects with nothing to relocate get a note; broken objects get one line on stderr and exit 2; and
// the output is the same from run to run.
//
// The inputs are the test build's CO-RE corpus (tests/bpf/core_*.bpf.c, core_guarded.bpf.c for the
// guards) and its targets (tests/data/core_target_*.c), types_only.bpf.o for an object with .BTF and no
// .BTF.ext, and copies of minimal.bpf.o patched here. The values themselves are held to libbpf in
// test_check.cc; here a single-target run of the same object and target is the reference.
#include "archives.h"
#include "check_cli.h"
#include "check_json.h"
#include "elf_image.h"
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <tuple>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using nlohmann::json;

// ---- ELF patching ----

// minimal.bpf.o (little-endian, as clang -target bpf writes on these hosts) and where in it the
// .BTF.ext subsections' first block headers {section name, record count} are.
struct Minimal {
  std::string image;
  std::size_t ext = 0;         // .BTF.ext
  std::size_t func_block = 0;  // func_info's first block header
  std::size_t core_block = 0;  // core_relo's first block header
};

Minimal minimal_object() {
  Minimal m;
  m.image = read_file(build_data_dir() + "/minimal.bpf.o");
  REQUIRE(m.image.compare(0, 4, "\x7f" "ELF") == 0);
  REQUIRE(m.image[5] == 1);  // ELFDATA2LSB
  const ElfLayout layout = elf_layout(m.image);
  REQUIRE(layout.sections.count(".BTF.ext") == 1);
  m.ext = layout.sections.at(".BTF.ext").offset;
  REQUIRE(get_u32(m.image, m.ext) == 0x0001eb9f);  // magic, version 1, no flags
  const std::size_t hdr_len = get_u32(m.image, m.ext + 4);
  REQUIRE(hdr_len >= 32);
  REQUIRE(get_u32(m.image, m.ext + 12) > 0);  // func_info_len
  REQUIRE(get_u32(m.image, m.ext + 28) > 0);  // core_relo_len
  m.func_block = m.ext + hdr_len + get_u32(m.image, m.ext + 8) + 4;
  m.core_block = m.ext + hdr_len + get_u32(m.image, m.ext + 24) + 4;
  return m;
}

// One rejected run: status 2, nothing on stdout, one line "btfslim: FILE: ..." holding `fragment`.
void expect_rejected(const std::vector<std::string>& args, const std::string& file, const std::string& fragment) {
  for (const char* format : {"table", "json"}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--format", format});
    const RunResult r = btfslim(a);
    INFO(command_line(a) << "\nstatus " << r.status << "\nstdout: " << r.out.substr(0, 300) << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, EndsWith("\n"));
    CHECK_THAT(r.err, StartsWith("btfslim: " + file + ": "));
    CHECK_THAT(r.err, Contains(fragment));
  }
}

// The table row of a relocation: program, kind and, last, the accessor on one line.
std::string row_of(const std::string& out, const std::string& program, const std::string& kind,
                   const std::string& accessor) {
  std::string found;
  for (const std::string& line : lines_of(out)) {
    const std::vector<std::string> w = words_of(line);
    if (w.size() >= 4 && w[0] == program && w[2] == kind && line.ends_with("  " + accessor)) {
      INFO("two rows for " << program << " " << kind << " " << accessor << ":\n" << out);
      CHECK(found.empty());
      found = line;
    }
  }
  INFO("no row for " << program << " " << kind << " " << accessor << " in:\n" << out);
  CHECK(!found.empty());
  return found;
}

// The JSON record of a relocation, by program, kind and access string.
const json& record_of(const json& object, const std::string& program, const std::string& kind,
                      const std::string& access) {
  const json* found = nullptr;
  for (const json& r : object["relocations"])
    if (r.value("program", "") == program && r.value("relocation_kind", "") == kind && r.value("access", "") == access) {
      INFO("two records for " << program << " " << kind << " " << access);
      REQUIRE(found == nullptr);
      found = &r;
    }
  INFO("no record for " << program << " " << kind << " " << access << " in " << object.dump());
  REQUIRE(found != nullptr);
  return *found;
}

}  // namespace

TEST_CASE("several targets: a matrix of targets by objects, then what fails where", "[check-cli]") {
  // Every corpus object and an ELF with nothing to relocate, on every corpus target: cells that are ok,
  // that fail, and that have nothing to check.
  std::vector<std::string> objects = corpus_objects();
  objects.push_back(no_ext_object());
  const std::vector<std::string> targets = core_corpus_targets();
  for (const bool strict : {false, true}) {
    std::vector<std::string> args{"check"};
    args.insert(args.end(), objects.begin(), objects.end());
    for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
    if (strict) args.push_back("--strict");
    const RunResult r = btfslim(args);
    INFO(command_line(args));
    CHECK(r.err.empty());
    expect_matrix(r, objects, targets, strict);
  }
}

TEST_CASE("several targets in JSON: per relocation one result per target, as single-target runs give", "[check-cli]") {
  std::vector<std::string> objects = corpus_objects();
  objects.push_back(no_ext_object());
  const std::vector<std::string> targets = core_corpus_targets();
  for (const bool strict : {false, true}) {
    std::vector<std::string> args = objects;
    for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
    if (strict) args.push_back("--strict");
    INFO(command_line(args));
    expect_agrees_with_single_runs(check_json(args), objects, targets, strict);
  }
  // The order of the targets is the order given, the same target twice is two columns.
  const std::vector<std::string> reordered{core_target("missing"), core_target("moved"), core_target("missing")};
  std::vector<std::string> args{guarded_object(), test_object("core_fields")};
  for (const auto& t : reordered) args.insert(args.end(), {"--btf", t});
  expect_agrees_with_single_runs(check_json(args), {guarded_object(), test_object("core_fields")}, reordered, false);
}

TEST_CASE("a directory as --btf: every BTF or ELF file under it, sorted; other files skipped", "[check-cli]") {
  TempDir dir;
  const std::string kernels = dir.file("kernels");
  std::filesystem::create_directories(kernels + "/b");
  std::filesystem::create_directories(kernels + "/c/d");
  std::filesystem::create_directories(kernels + "/e");  // an empty directory inside: nothing
  // Raw BTF (the .BTF of an ELF target), an ELF with .BTF, and one deeper down; made out of order, so
  // that the order of creation is not the order of the names.
  write_file(kernels + "/c/d/errors.o", read_file(core_target("errors")));
  const std::string moved = read_file(core_target("moved"));
  const ElfLayout layout = elf_layout(moved);
  REQUIRE(layout.sections.count(".BTF") == 1);
  const SectionPlace btf = layout.sections.at(".BTF");
  write_file(kernels + "/a.btf", moved.substr(btf.offset, btf.size));
  write_file(kernels + "/b/missing.o", read_file(core_target("missing")));
  // Not BTF: skipped without a word.
  write_file(kernels + "/README", "BTF of the kernels we ship to\n");
  write_file(kernels + "/b/empty", "");
  write_file(kernels + "/b/short", "\x9f\xeb");
  write_file(kernels + "/c/notes.json", "{}\n");
  const std::vector<std::string> found{kernels + "/a.btf", kernels + "/b/missing.o", kernels + "/c/d/errors.o"};
  const std::vector<std::string> objects{test_object("core_fields"), guarded_object()};

  SECTION("alone") {
    std::vector<std::string> args = objects;
    args.insert(args.end(), {"--btf", kernels});
    expect_agrees_with_single_runs(check_json(args), objects, found, false);
    std::vector<std::string> table{"check"};
    table.insert(table.end(), args.begin(), args.end());
    const RunResult r = btfslim(table);
    CHECK(r.err.empty());
    expect_matrix(r, objects, found, false);
  }
  SECTION("after a file, in the order given") {
    std::vector<std::string> args = objects;
    args.insert(args.end(), {"--btf", core_target("moved"), "--btf", kernels});
    std::vector<std::string> all{core_target("moved")};
    all.insert(all.end(), found.begin(), found.end());
    expect_agrees_with_single_runs(check_json(args), objects, all, false);
  }
  SECTION("a directory with one BTF file in it is that one target") {
    TempDir one;
    std::filesystem::create_directories(one.file("x/y"));
    write_file(one.file("x/y/missing.o"), read_file(core_target("missing")));
    write_file(one.file("x/notes"), "not BTF\n");
    std::vector<std::string> args = objects;
    args.insert(args.end(), {"--btf", one.file("x")});
    const json doc = check_json(args);
    // One target named by a directory: the JSON still says which file it was.
    const std::string file = one.file("x/y/missing.o");
    CHECK(kernel_files(doc) == std::vector<std::string>{file});
  }
  SECTION("an empty directory, or one with no BTF file, is one line and exit 2") {
    TempDir empty;
    expect_rejected({"check", test_object("core_fields"), "--btf", empty.path()}, empty.path(), "no BTF files");
    std::filesystem::create_directories(empty.file("sub"));
    write_file(empty.file("sub/README"), "nothing here\n");
    expect_rejected({"check", test_object("core_fields"), "--btf", empty.path()}, empty.path(), "no BTF files");
    // Even beside a good target: nothing is printed before the error.
    expect_rejected({"check", test_object("core_fields"), "--btf", core_target("moved"), "--btf", empty.path()}, empty.path(),
                    "no BTF files");
  }
}

TEST_CASE("dead code: a poisoned read no program reaches does not fail; --strict fails it", "[check-cli]") {
  // core_guarded.bpf.c: guarded_read reads c and a, each behind bpf_core_field_exists of the same
  // field; type_guarded_read reads sizes___guarded.ptr_field behind bpf_core_type_exists of its struct;
  // unguarded_read reads a with no check. The missing target lacks c and struct sizes; the errors
  // target lacks both structs. (test_check_kernel.cc holds the verdicts to the kernel's, on many more
  // idioms.)
  const std::string obj = guarded_object();
  const std::string missing = core_target("missing");
  const std::string errors = core_target("errors");
  const std::string accessor_c = "struct existence___guarded.c";
  const std::string accessor_a = "struct existence___guarded.a";
  const std::string accessor_ptr = "struct sizes___guarded.ptr_field";

  SECTION("everything there: exit 0") {
    const RunResult r = btfslim({"check", obj, "--btf", core_target("moved")});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Contains("7 relocations: 7 ok\n"));
  }
  SECTION("the only poisoned reads are dead: exit 0, 1 with --strict") {
    const RunResult plain = btfslim({"check", obj, "--btf", missing});
    const RunResult strict = btfslim({"check", obj, "--btf", missing, "--strict"});
    INFO("without:\n" << plain.out << plain.err << "with:\n" << strict.out << strict.err);
    CHECK(plain.status == 0);
    CHECK(strict.status == 1);
    for (const RunResult* r : {&plain, &strict}) {
      CHECK_THAT(row_of(r->out, "guarded_read", "byte_off", accessor_c), Contains("poisoned (dead code)"));
      CHECK_THAT(row_of(r->out, "guarded_read", "field_exists", accessor_c), Contains(" 0 (was 1) "));
      CHECK_THAT(row_of(r->out, "type_guarded_read", "byte_off", accessor_ptr), Contains("poisoned (dead code)"));
      CHECK_THAT(row_of(r->out, "unguarded_read", "byte_off", accessor_a), !Contains("POISONED"));
      CHECK_THAT(r->out, Contains("7 relocations: 5 ok, 2 poisoned in dead code\n"));
      CHECK_THAT(r->out, !Contains("POISONED"));
    }

    const json without = single(obj, missing, false);
    const json with = single(obj, missing, true);
    for (const json* doc : {&without, &with}) {
      const json& c = record_of(*doc, "guarded_read", "byte_off", "0:1");
      CHECK(c.value("status", "") == "poisoned");
      CHECK(c.value("reachable", true) == false);
      CHECK(c.value("programs", json::array()).empty());
      CHECK(c.value("fails", false) == (doc == &with));
      const json& ptr = record_of(*doc, "type_guarded_read", "byte_off", "0:0");
      CHECK(ptr.value("status", "") == "poisoned");
      CHECK(ptr.value("reachable", true) == false);
      CHECK(ptr.value("fails", false) == (doc == &with));
      CHECK(record_of(*doc, "type_guarded_read", "type_exists", "0").value("value", -1) == 0);
      CHECK(record_of(*doc, "guarded_read", "field_exists", "0:1").value("value", -1) == 0);
      CHECK(record_of(*doc, "unguarded_read", "byte_off", "0:0").value("status", "") == "ok");
    }
  }
  SECTION("a poisoned read a program reaches fails: exit 1, and JSON names the program") {
    const RunResult r = btfslim({"check", obj, "--btf", errors});
    INFO(r.out << r.err);
    CHECK(r.status == 1);
    CHECK_THAT(row_of(r.out, "guarded_read", "byte_off", accessor_c), Contains("poisoned (dead code)"));
    CHECK_THAT(row_of(r.out, "guarded_read", "byte_off", accessor_a), Contains("poisoned (dead code)"));
    CHECK_THAT(row_of(r.out, "type_guarded_read", "byte_off", accessor_ptr), Contains("poisoned (dead code)"));
    CHECK_THAT(row_of(r.out, "unguarded_read", "byte_off", accessor_a), Contains("POISONED"));
    CHECK_THAT(r.out, Contains("7 relocations: 3 ok, 1 poisoned, 3 poisoned in dead code\n"));

    const json& doc = single(obj, errors, false);
    for (const char* access : {"0:0", "0:1"}) {
      const json& g = record_of(doc, "guarded_read", "byte_off", access);
      CHECK(g.value("status", "") == "poisoned");
      CHECK(g.value("reachable", true) == false);
      CHECK(g.value("fails", true) == false);
    }
    const json& ptr = record_of(doc, "type_guarded_read", "byte_off", "0:0");
    CHECK(ptr.value("reachable", true) == false);
    CHECK(ptr.value("fails", true) == false);
    const json& u = record_of(doc, "unguarded_read", "byte_off", "0:0");
    CHECK(u.value("status", "") == "poisoned");
    CHECK(u.value("reachable", false) == true);
    CHECK(u.value("programs", json()) == json::array({"unguarded_read"}));
    CHECK(u.value("fails", false) == true);
  }
  SECTION("in the matrix, the dead cells are ok, and fail with --strict") {
    const std::vector<std::string> targets{core_target("moved"), missing, errors};
    for (const bool strict : {false, true}) {
      std::vector<std::string> args{"check", obj};
      for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
      if (strict) args.push_back("--strict");
      const RunResult r = btfslim(args);
      INFO(command_line(args) << "\n" << r.out << r.err);
      const Matrix m = parse_matrix(r.out);
      REQUIRE(m.rows.size() == 1);
      CHECK(m.rows[0].second ==
            std::vector<std::string>{"ok", strict ? "2 failing" : "ok", strict ? "4 failing" : "1 failing"});
      CHECK(r.status == 1);
      if (strict)
        CHECK_THAT(r.out, Contains("poisoned (dead code)"));
      else
        CHECK_THAT(r.out, !Contains("dead code"));
    }
  }
  SECTION("--allow-missing is accepted, does nothing, and says so") {
    const RunResult r = btfslim({"check", obj, "--btf", missing, "--allow-missing"});
    CHECK(r.status == 0);
    CHECK(r.out == btfslim({"check", obj, "--btf", missing}).out);
    CHECK(r.err ==
          "btfslim: note: --allow-missing is deprecated and does nothing: a poisoned relocation in dead code no longer "
          "fails the check (--strict fails it)\n");
  }
  SECTION("libbpf poisons exactly what check says it does") {
    if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
    for (const std::string& btf : core_corpus_targets()) {
      const LibbpfRelocation& theirs = libbpf_relocate(obj, btf);
      INFO("against " << btf << ", libbpf's log:\n" << theirs.log);
      REQUIRE(theirs.relocated);
      CHECK(!theirs.failed);
      const json& ours = single(obj, btf, false);
      CHECK(theirs.relocations.size() == ours["relocations"].size());
      for (const LibbpfRelo& x : theirs.relocations) {
        const json* rec = nullptr;
        for (const json& r : ours["relocations"])
          if (r.value("program", "") == x.program && r.value("relo_idx", -1) == x.relo_idx) rec = &r;
        INFO(x.program << " relo #" << x.relo_idx << ": " << x.line);
        REQUIRE(rec != nullptr);
        CHECK(rec->value("status", "") == (x.outcome == LibbpfRelo::Patched ? "ok" : "poisoned"));
        if (x.outcome == LibbpfRelo::Patched) CHECK(rec->value("value", std::uint64_t{0} - 1) == x.value);
      }
    }
  }
}

TEST_CASE("objects with nothing to relocate are noted, not errors", "[check-cli]") {
  TempDir dir;
  // minimal.bpf.o with an empty core_relo subsection: .BTF.ext, func_info and line_info, no CO-RE records.
  Minimal m = minimal_object();
  put_u32(m.image, m.ext + 28, 0);
  const std::string no_core = dir.file("no_core.bpf.o");
  write_file(no_core, m.image);
  const std::string moved = core_target("moved");

  struct Case {
    std::string object, note;
    bool has_ext;
    std::string kernel_refs;  // what the table shows of them: minimal.bpf.o has a tp_btf program
  };
  const std::string on_switch =
      "  PROGRAM / MAP  KIND        NAME          RESULT     TARGET\n"
      "  on_switch      attach      sched_switch  unchecked  -\n"
      "no_core.bpf.o: 1 kernel references: 0 ok, 1 unchecked; the target has no FUNC: a BTF for CO-RE only "
      "(minimized, or no kernel's), which cannot say what the kernel lacks\n";
  for (const Case& c : {Case{no_ext_object(), "no .BTF.ext: nothing to relocate", false, ""},
                        Case{no_core, "no CO-RE relocations", true, on_switch}}) {
    const RunResult r = btfslim({"check", c.object, "--btf", moved});
    INFO(c.object << "\n" << r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == file_name(c.object) + " on " + file_name(moved) + "\n  " + c.note + "\n" + c.kernel_refs +
                       "\n1 object x 1 kernel: 0 fail\n");

    const json doc = check_json({c.object, "--btf", moved});
    REQUIRE(doc["objects"].size() == 1);
    const json& o = doc["objects"][0];
    CHECK(o.value("has_btf_ext", !c.has_ext) == c.has_ext);
    CHECK(o.value("note", "") == c.note);
    CHECK(o["relocations"] == json::array());
    CHECK(doc.value("failed", true) == false);
  }
  // Beside an object that resolves everywhere, on several targets: "-" cells, exit 0.
  const RunResult r = btfslim({"check", no_ext_object(), no_core, guarded_object(), "--btf", moved, "--btf",
                               core_target("moved.clang")});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  const Matrix matrix = parse_matrix(r.out);
  CHECK(matrix.kernels == std::vector<std::string>{"core_target_moved.o", "core_target_moved.clang.o"});
  REQUIRE(matrix.rows.size() == 3);
  const std::vector<std::pair<std::string, std::vector<std::string>>> rows = {
      {"types_only.bpf.o", {"-", "-"}}, {"no_core.bpf.o", {"-", "-"}}, {"core_guarded.bpf.o", {"ok", "ok"}}};
  CHECK(matrix.rows == rows);
  CHECK(matrix.failing.empty());
  CHECK(matrix.verdict == "3 objects x 2 kernels: 0 objects fail (0 of 6 object/kernel pairs)");
}

TEST_CASE("bad objects and targets: one line naming the file, exit 2, nothing on stdout", "[check-cli]") {
  TempDir dir;
  const std::string good = test_object("core_fields");
  const std::string moved = core_target("moved");
  auto expect_bad_object = [&](const std::string& path, const std::string& fragment) {
    expect_rejected({"check", path, "--btf", moved}, path, fragment);
    // After a good object and with several targets: still nothing printed for the good one.
    expect_rejected({"check", good, path, "--btf", moved, "--btf", core_target("missing")}, path, fragment);
  };

  SECTION("a missing object") { expect_bad_object(dir.file("absent.bpf.o"), "no such file"); }
  SECTION("an object that is not ELF") {
    const std::string path = dir.file("text.bpf.o");
    write_file(path, "SEC(\"kprobe\") int prog(void *ctx) { return 0; }\n");
    expect_bad_object(path, "not an ELF file");
  }
  SECTION("an ELF without .BTF") {
    // gcc without -g: the host's machine, not EM_BPF, which is said first.
    const std::string src = dir.file("plain.c");
    const std::string plain = dir.file("plain.o");
    write_file(src, "int counter;\nint bump(void) { return ++counter; }\n");
    const char* cc = std::getenv("BTFSLIM_TEST_CC");
    const RunResult built = run({cc && *cc ? cc : "cc", "-c", src, "-o", plain});
    INFO(built.err);
    REQUIRE(built.status == 0);
    expect_bad_object(plain, ", not a BPF object: a BPF object's ELF header says EM_BPF");

    // A BPF object whose .BTF is renamed: .BTF.ext without the types it refers to.
    Minimal m = minimal_object();
    const ElfLayout layout = elf_layout(m.image);
    REQUIRE(layout.sections.count(".BTF") == 1);
    const std::size_t name = layout.shstrtab + layout.sections.at(".BTF").name;
    REQUIRE(m.image.compare(name, 5, std::string(".BTF\0", 5)) == 0);
    m.image[name + 3] = 'X';
    const ElfLayout renamed = elf_layout(m.image);
    REQUIRE(renamed.sections.count(".BTF") == 0);
    REQUIRE(renamed.sections.count(".BTF.ext") == 1);
    const std::string path = dir.file("no_btf.bpf.o");
    write_file(path, m.image);
    expect_bad_object(path, "no .BTF section");
  }
  SECTION(".BTF.ext with a bad magic") {
    Minimal m = minimal_object();
    m.image[m.ext] = 0x34;
    m.image[m.ext + 1] = 0x12;
    const std::string path = dir.file("bad_magic.bpf.o");
    write_file(path, m.image);
    expect_bad_object(path, "bad magic");
  }
  SECTION(".BTF.ext with a record count that runs past the section") {
    const Minimal m = minimal_object();
    struct Case {
      const char* name;
      std::size_t block;
      std::uint32_t count;
    };
    const std::uint32_t core_count = get_u32(m.image, m.core_block + 4);
    const std::uint32_t func_count = get_u32(m.image, m.func_block + 4);
    REQUIRE(core_count > 0);
    REQUIRE(func_count > 0);
    for (const Case& c : {Case{"core_one_more", m.core_block, core_count + 1},
                          Case{"core_huge", m.core_block, 0xffffffffu},
                          Case{"core_wraps_32_bits", m.core_block, 0x10000000u},  // * 16 bytes = 2^32
                          Case{"func_one_more", m.func_block, func_count + 1}}) {
      std::string image = m.image;
      put_u32(image, c.block + 4, c.count);
      const std::string path = dir.file(std::string(c.name) + ".bpf.o");
      write_file(path, image);
      INFO(c.name);
      expect_bad_object(path, "invalid record count");
    }
  }
  SECTION("targets that cannot be read") {
    expect_rejected({"check", good, "--btf", dir.file("absent.btf")}, dir.file("absent.btf"), "no such file");
    const std::string junk = dir.file("junk.btf");
    write_file(junk, "hello, world\n");
    expect_rejected({"check", good, "--btf", moved, "--btf", junk}, junk, "not BTF");
  }
}

TEST_CASE("check prints the same bytes every time", "[check-cli]") {
  TempDir dir;
  const std::string kernels = dir.file("kernels");
  std::filesystem::create_directories(kernels + "/z");
  for (const char* name : {"moved", "missing", "errors", "moved.clang"})
    write_file(kernels + "/z/" + name + ".o", read_file(core_target(name)));
  write_file(kernels + "/" + std::string("errors.o"), read_file(core_target("errors")));

  std::vector<std::string> objects = corpus_objects();
  objects.push_back(no_ext_object());
  std::vector<std::vector<std::string>> runs;
  std::vector<std::string> many{"check"};
  many.insert(many.end(), objects.begin(), objects.end());
  for (const auto& t : core_corpus_targets()) many.insert(many.end(), {"--btf", t});
  runs.push_back(many);
  std::vector<std::string> dir_run{"check"};
  dir_run.insert(dir_run.end(), objects.begin(), objects.end());
  dir_run.insert(dir_run.end(), {"--btf", kernels, "--strict"});
  runs.push_back(dir_run);
  for (const auto& t : core_corpus_targets()) {
    std::vector<std::string> one{"check"};
    one.insert(one.end(), objects.begin(), objects.end());
    one.insert(one.end(), {"--btf", t});
    runs.push_back(one);
  }
  for (const auto& base : runs)
    for (const char* format : {"table", "json"}) {
      std::vector<std::string> args = base;
      args.insert(args.end(), {"--format", format});
      const RunResult first = btfslim(args);
      const RunResult second = btfslim(args);
      INFO(command_line(args) << "\nexit " << first.status << "\nstderr: " << first.err);
      REQUIRE((first.status == 0 || first.status == 1));
      CHECK(!first.out.empty());
      CHECK(second.status == first.status);
      CHECK(second.err == first.err);
      CHECK(second.out == first.out);
    }
}

namespace {

// The raw BTF in an ELF file's .BTF section.
std::string btf_section(const std::string& elf_path) {
  const std::string image = read_file(elf_path);
  const ElfLayout layout = elf_layout(image);
  REQUIRE(layout.sections.count(".BTF") == 1);
  const SectionPlace& s = layout.sections.at(".BTF");
  return image.substr(s.offset, s.size);
}

}  // namespace

TEST_CASE("btfhub archives: each raw BTF member is a target, as if extracted", "[check-cli]") {
  TempDir dir;
  const std::string moved = btf_section(core_target("moved")), missing = btf_section(core_target("missing"));
  write_file(dir.file("moved.btf"), moved);
  write_file(dir.file("missing.btf"), missing);
  std::filesystem::create_directories(dir.file("hub/ubuntu/22.04/x86_64"));
  std::filesystem::create_directories(dir.file("hub/fedora/38/x86_64"));
  const std::string a1 = dir.file("hub/ubuntu/22.04/x86_64/5.15.0-moved.btf.tar.xz");
  const std::string a2 = dir.file("hub/fedora/38/x86_64/6.2.9-missing.btf.tar");
  write_archive(a1, {{"5.15.0-moved.btf", moved}}, true);
  write_archive(a2, {{"README", "not BTF"}, {"6.2.9-missing.btf", missing}}, false);

  const std::string obj = test_object("core_fields");
  const json doc = check_json({obj, "--btf", dir.file("hub")});
  // Sorted paths: fedora before ubuntu; members named after their archive.
  const std::vector<std::string> expected_targets = {a2 + ":6.2.9-missing.btf", a1 + ":5.15.0-moved.btf"};
  CHECK(kernel_files(doc) == expected_targets);
  REQUIRE(doc["objects"].size() == 1);
  // Each member gives what the same BTF gives as a file.
  const std::vector<std::string> files = {dir.file("missing.btf"), dir.file("moved.btf")};
  const json& relocations = doc["objects"][0]["relocations"];
  for (std::size_t t = 0; t < files.size(); ++t) {
    const json& alone = single(obj, files[t], false);
    REQUIRE(alone["relocations"].size() == relocations.size());
    for (std::size_t i = 0; i < relocations.size(); ++i) {
      const json got = without_nulls(relocations[i]["results"][t]);
      INFO(expected_targets[t] << " relocation " << i);
      CHECK(got == result_part(alone["relocations"][i]));
    }
  }
  // The archive named directly works too.
  const json direct = check_json({obj, "--btf", a1});
  CHECK(kernel_files(direct) == std::vector<std::string>{a1 + ":5.15.0-moved.btf"});

  // What cannot be used: one line, exit 2.
  const std::string corrupt = dir.file("corrupt.btf.tar.xz");
  write_file(corrupt, read_file(a1).substr(0, 40));
  expect_rejected({"check", obj, "--btf", corrupt}, corrupt, "archive");
  const std::string empty = dir.file("empty.tar");
  write_archive(empty, {{"README", "no BTF here"}}, false);
  expect_rejected({"check", obj, "--btf", empty}, empty, "no raw BTF");
}

}  // namespace btfslim::test
