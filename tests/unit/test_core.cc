// The CO-RE engine in process ([core]): reading .BTF.ext, and that no object, however broken, gets past
// BpfObject::open as anything but an InputError naming the file, or a model the engine resolves without
// crashing or hanging ([robust]).
//
// The objects are the test build's BPF programs (clang-19); the targets are BTF built with btf__add_*
// here. Exactness against libbpf is proven end to end (tests/e2e/test_check.cc, libbpf's own log).
#include "btf_bytes.h"
#include "elf_image.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include "btfslim/btf.h"
#include "btfslim/btf_ext.h"
#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/minimize.h"
#include "btfslim/name_prefixes.h"
#include "btfslim/reach.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;


// The BPF object the mutations start from, with the place of its .BTF.ext and of its first CO-RE record.
struct Subject {
  std::string image;
  SectionPlace ext;
  std::size_t core = 0;   // first core_relo block header (section name offset, count)
  std::size_t record = 0;  // its first record
};

Subject minimal_object() {
  Subject s;
  s.image = read_file(build_data_dir() + "/minimal.bpf.o");
  s.ext = elf_section(s.image, ".BTF.ext");
  const std::size_t hdr_len = get_u32(s.image, s.ext.offset + 4);
  REQUIRE(hdr_len >= 32);
  const std::size_t core_off = get_u32(s.image, s.ext.offset + 24);
  REQUIRE(get_u32(s.image, s.ext.offset + 28) > 0);
  s.core = s.ext.offset + hdr_len + core_off + 4;
  s.record = s.core + 8;
  return s;
}

// Opens `image` from a file and resolves it against a small target: the outcome, or the error line.
struct Opened {
  std::unique_ptr<const BpfObject> object;
  std::string error;
  bool foreign = false;
};

Opened open_image(const TempDir& dir, const std::string& image, const std::string& name = "mutant.bpf.o") {
  const std::string path = dir.file(name);
  write_file(path, image);
  try {
    return {BpfObject::open(path), "", false};
  } catch (const InputError& e) {
    return {nullptr, e.what(), false};
  } catch (const std::exception& e) {
    return {nullptr, std::string("not an InputError: ") + e.what(), true};
  }
}

// A target holding a struct task_struct whose fields sit elsewhere than the object's local ones.
std::shared_ptr<const Btf> small_target() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 1);
  REQUIRE(btf__add_struct(t, "task_struct", 64) == 2);
  REQUIRE(btf__add_field(t, "state", 1, 0, 0) == 0);
  REQUIRE(btf__add_field(t, "tgid", 1, 96, 0) == 0);
  REQUIRE(btf__add_field(t, "pid", 1, 128, 0) == 0);
  REQUIRE(btf__add_field(t, "parent", 3, 192, 0) == 0);
  REQUIRE(btf__add_ptr(t, 2) == 3);
  return parse(raw_bytes(t), nullptr, "target.btf");
}

TEST_CASE("a BPF object's CO-RE records, read from .BTF.ext", "[core]") {
  const Subject s = minimal_object();
  TempDir dir;
  const Opened o = open_image(dir, s.image, "minimal.bpf.o");
  REQUIRE(o.object);
  const BpfObject& obj = *o.object;
  CHECK(obj.has_ext());
  CHECK(obj.func_info_count() >= 1);
  CHECK(obj.line_info_count() > 0);
  // minimal.bpf.c: BPF_CORE_READ(task, parent, tgid): two byte offsets on struct task_struct.
  REQUIRE(obj.relocations().size() == 2);
  for (const CoreRelocation& r : obj.relocations()) {
    CHECK(r.kind == static_cast<std::uint32_t>(RelocKind::FieldByteOffset));
    CHECK(obj.btf().str(obj.btf().type(r.local_type).name_off()) == "task_struct");
    REQUIRE(obj.function_of(r) != nullptr);
    CHECK(obj.function_of(r)->name == "on_switch");
    CHECK(obj.sections()[r.section].name == "tp_btf/sched_switch");
  }
  CHECK(obj.access(obj.relocations()[0]) == "0:2");
  CHECK(describe_access(obj, obj.relocations()[0]) == "struct task_struct.parent");
  CHECK(describe_access(obj, obj.relocations()[1]) == "struct task_struct.tgid");

  // Against the small target: parent at byte 24, tgid at byte 12.
  const CoreTarget target(small_target());
  const BpfObject* objects[] = {&obj};
  const CandidateIndex index(target, objects);
  const auto results = resolve_object(obj, index);
  REQUIRE(results.size() == 2);
  CHECK(results[0].status == CoreStatus::Ok);
  CHECK(results[0].value == 24);
  CHECK(results[0].local_value == 8);
  CHECK(results[1].status == CoreStatus::Ok);
  CHECK(results[1].value == 12);
  REQUIRE(results[1].matches.size() == 1);
  CHECK(results[1].matches[0].root == 2);
}

// The real corpus's objects (corpus_dir()), none where it is not there.
std::vector<std::string> shared_corpus_objects() {
  const std::string corpus = corpus_dir();
  if (corpus.empty()) return {};
  const fs::path dir(corpus);
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".o") out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// What verify_minimized() relies on: resolving again beside an earlier resolution's answers hands on
// every relocation whose result differs from its earlier one, and each such result as resolving gives
// it; the others have their earlier result exactly. Between every two of the test targets (fields moved,
// missing, of other sizes), and between the running kernel and the 6.1 image for the test programs and
// the real corpus.
TEST_CASE("resolving beside earlier answers hands on every relocation whose result changes", "[core]") {
  struct Target {
    std::string name;
    std::shared_ptr<const Btf> btf;
  };
  const std::vector<std::string> target_files = core_corpus_targets();
  if (!fs::exists(target_files.front()))
    return skip("the test targets and BPF programs are not built here (-Dtests=unit): resolving beside earlier "
                "answers is not compared");
  std::vector<Target> targets;
  for (const std::string& path : target_files) targets.push_back({path, load_btf_file(path, nullptr)});
  std::vector<Target> kernels;
  if (const std::string vmlinux = running_vmlinux(); !vmlinux.empty())
    kernels.push_back({vmlinux, load_btf_file(vmlinux, nullptr)});
  std::string why_not;
  if (const auto other = other_kernel(why_not)) kernels.push_back({other->vmlinux, load_btf_file(other->vmlinux, nullptr)});
  REQUIRE(targets.size() >= 3);

  std::size_t compared = 0, handed_on = 0, changed = 0;
  auto compare = [&](const std::string& path, const std::vector<Target>& among) {
    const auto object = BpfObject::open(path);
    const BpfObject* objects[] = {object.get()};
    const auto relos = object->relocations();
    for (const Target& a : among) {
      const CoreTarget ta(a.btf);
      const CandidateIndex ia(ta, objects);
      AnswerLog log;
      const auto earlier = resolve_object(*object, ia, &log);
      REQUIRE(log.of.size() == relos.size());
      for (const Target& b : among) {
        INFO(path << " on " << a.name << ", then on " << b.name);
        const CoreTarget tb(b.btf);
        const CandidateIndex ib(tb, objects);
        const auto now = resolve_object(*object, ib);
        std::vector<bool> handed(relos.size());
        resolve_changed(*object, ib, log, [&](std::size_t i, CoreResult&& r) {
          handed[i] = true;
          CHECK(r.status == now[i].status);
          CHECK(r.value == now[i].value);
          CHECK(r.local_value == now[i].local_value);
          CHECK(r.local_size == now[i].local_size);
          CHECK(r.target_size == now[i].target_size);
          return true;
        });
        for (std::size_t i = 0; i < relos.size(); ++i) {
          INFO("relocation " << i << " (" << describe_access(*object, relos[i]) << ")");
          const bool same = earlier[i].status == now[i].status && earlier[i].value == now[i].value &&
                            earlier[i].local_value == now[i].local_value && earlier[i].local_size == now[i].local_size &&
                            earlier[i].target_size == now[i].target_size;
          if (!handed[i]) CHECK(same);
          if (relos[i].kind == static_cast<std::uint32_t>(RelocKind::TypeIdTarget)) CHECK(handed[i]);
          ++compared;
          handed_on += handed[i];
          changed += !same;
          // The same target answers the same: only type ids and final answers are handed on.
          if (&a == &b && handed[i])
            CHECK((relos[i].kind == static_cast<std::uint32_t>(RelocKind::TypeIdTarget) ||
                   relos[i].kind == static_cast<std::uint32_t>(RelocKind::TypeIdLocal) || earlier[i].status != CoreStatus::Ok));
        }
      }
    }
  };
  for (const std::string& path : core_corpus_objects()) compare(path, targets);
  const std::size_t on_test_targets = compared;
  CHECK(changed > 0);
  CHECK(handed_on >= changed);
  CHECK(handed_on < compared);
  if (kernels.size() < 2) return skip("a second kernel is needed for the real objects: " + why_not);
  const std::size_t changed_before = changed;
  for (const std::string& path : trace_objects()) compare(path, kernels);
  const std::vector<std::string> corpus = shared_corpus_objects();
  for (const std::string& path : corpus) compare(path, kernels);
  INFO(compared - on_test_targets << " relocations compared between the two kernels");
  if (corpus.empty()) skip("no corpus (corpus_dir()): the two kernels compared on the test programs only");
  CHECK(compared - on_test_targets > (corpus.empty() ? 100 : 10000));
  CHECK(changed > changed_before);  // the kernels differ where it matters
}

// The filter before the candidate index's hash lookups lets through every name whose essential name is
// asked for (flavors of short names too) and few others: tried on made-up names and on every name of
// the running kernel against the corpus's roots.
TEST_CASE("the name prefix filter misses no name asked for, flavored or not, and passes few others", "[core]") {
  NamePrefixes some;
  const std::vector<std::string> asked{"a", "ab", "abc", "abcd", "task_struct", "sk_buff"};
  for (const std::string& n : asked) some.add(n);
  for (const char* raw : {"a", "a___1", "ab", "ab___x_y", "abc", "abc___v", "abcd", "abcd___e", "task_struct",
                          "task_struct___2", "sk_buff", "sk_buff___v2"}) {
    INFO(raw);
    CHECK(std::find(asked.begin(), asked.end(), std::string(essential_name(raw))) != asked.end());
    CHECK(some.may_hold(raw));
  }
  for (const char* raw : {"", "b", "ba", "abx", "abce", "b___a", "tas", "task", "sk_b"}) {
    INFO(raw);
    CHECK(std::find(asked.begin(), asked.end(), std::string(essential_name(raw))) == asked.end());
  }
  CHECK(!some.may_hold(""));
  CHECK(!some.may_hold("b"));
  CHECK(!some.may_hold("zzzz"));
  NamePrefixes everything;
  everything.add("");
  CHECK(everything.may_hold("anything"));

  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux: the filter is not tried on a kernel's names");
  const auto btf = load_btf_file(vmlinux, nullptr);
  std::set<std::string> roots;
  NamePrefixes prefixes;
  for (const std::string& path : shared_corpus_objects()) {
    const auto object = BpfObject::open(path);
    for (const BpfObject::RootName& r : object->root_names())
      if (roots.insert(std::string(r.name)).second) prefixes.add(r.name);
  }
  if (roots.empty()) return skip("no corpus: the filter is tried on made-up names only");
  std::size_t named = 0, passed = 0, matching = 0;
  for (TypeId id = 1; id < btf->end_id(); ++id) {
    const std::uint32_t off = btf->type(id).name_off();
    if (off == 0) continue;
    ++named;
    const char* raw = btf->c_str(off);
    const bool may = prefixes.may_hold(raw);
    passed += may;
    if (roots.count(std::string(essential_name(raw)))) {
      ++matching;
      INFO(raw);
      CHECK(may);
    }
  }
  INFO(named << " names, " << matching << " of them asked for, " << passed << " let through");
  CHECK(matching > 0);
  // The corpus asks for 69 names; their first two bytes alone let through two names in five (bpf_,
  // sock, task... start thousands), their first four about one in eight.
  CHECK(passed < named / 5);
}

// Relocations asking the same question (local type, access string, kind) share its number, numbered in
// the order first asked: what resolving answers once. core_deadcode's programs each read the field they
// check, so questions repeat there.
TEST_CASE("relocations' questions are numbered once per object, in the order first asked", "[core]") {
  const auto object = BpfObject::open(build_data_dir() + "/core_deadcode.bpf.o");
  const auto relos = object->relocations();
  REQUIRE(relos.size() > object->question_count());
  std::uint32_t next = 0;
  for (std::size_t i = 0; i < relos.size(); ++i) {
    INFO("relocation " << i);
    CHECK(relos[i].question <= next);  // an old number, or the next new one
    if (relos[i].question == next) ++next;
    for (std::size_t j = 0; j < i; ++j) {
      const bool same = relos[i].local_type == relos[j].local_type && relos[i].access_off == relos[j].access_off &&
                        relos[i].kind == relos[j].kind;
      CHECK(same == (relos[i].question == relos[j].question));
    }
  }
  CHECK(next == object->question_count());
}

// Every idiom of guarding a read with a check compiles to a jump on the check's relocated constant:
// found as a guard, it is decided for each target before any program is walked (src/core/reach.cc), and a
// program whose guards cut off its poisoned reads is not walked at all.
TEST_CASE("the guards of existence and size checks are found at their relocated constants", "[core]") {
  const auto object = BpfObject::open(build_data_dir() + "/core_deadcode.bpf.o");
  const BpfCode code(*object);
  std::set<std::uint32_t> defs;
  for (const BpfCode::Guard& g : code.guards()) {
    defs.insert(g.def);
    CHECK(code.is_guard(g.jump));
    CHECK(g.def < g.jump);
  }
  const std::set<std::string_view> guarded{"guard_exists", "guard_not_exists", "else_branch", "type_exists",
                                           "enumval_exists", "type_matches", "field_size"};
  std::set<std::string_view> seen;
  const auto relos = object->relocations();
  for (std::size_t i = 0; i < relos.size(); ++i) {
    const BpfFunction* f = object->function_of(relos[i]);
    const bool check = is_existence_kind(relos[i].kind) || relos[i].kind == 1;  // byte_sz: field_size == 8
    if (!f || !guarded.count(f->name) || !check) continue;
    INFO(f->name << ": relocation " << i << " (" << reloc_kind_name(relos[i].kind) << ")");
    CHECK(defs.count(code.insn_of(i)) == 1);
    seen.insert(f->name);
  }
  CHECK(seen == guarded);
}

// Two readings of an object's code made the same tables: every accessor agrees at every instruction.
void check_same_code(const BpfCode& a, const BpfCode& b, std::size_t relocations) {
  REQUIRE(a.insns().size() == b.insns().size());
  REQUIRE(a.programs().size() == b.programs().size());
  for (std::size_t p = 0; p < a.programs().size(); ++p) {
    CHECK(a.programs()[p].name == b.programs()[p].name);
    CHECK(a.programs()[p].entry == b.programs()[p].entry);
  }
  REQUIRE(a.guards().size() == b.guards().size());
  for (std::size_t g = 0; g < a.guards().size(); ++g) {
    const BpfCode::Guard &x = a.guards()[g], &y = b.guards()[g];
    CHECK((x.jump == y.jump && x.def == y.def && x.value == y.value && x.how == y.how && x.code == y.code && x.imm == y.imm));
  }
  CHECK(a.join_count() == b.join_count());
  std::size_t differ = 0;
  for (std::uint32_t pc = 0; pc < a.insns().size(); ++pc) {
    const BpfCode::InsnRef &x = a.ref(pc), &y = b.ref(pc);
    const auto ex = a.edges_to(pc), ey = b.edges_to(pc);
    const bool same = a.falls_through(pc) == b.falls_through(pc) && a.jumped_to(pc) == b.jumped_to(pc) &&
                      a.joins(pc) == b.joins(pc) && a.is_guard(pc) == b.is_guard(pc) && x.ref == y.ref &&
                      x.target == y.target && x.offset == y.offset && std::equal(ex.begin(), ex.end(), ey.begin(), ey.end());
    if (!same && differ++ < 5) FAIL_CHECK("instruction " << pc << " differs");
  }
  CHECK(differ == 0);
  for (std::size_t i = 0; i < relocations; ++i) CHECK(a.insn_of(i) == b.insn_of(i));
}

// check reads an agent's code along with resolving it (BpfCodeReader), a piece each time resolving
// gives pages back, instead of in one pass of its own after: the pieces end anywhere (in the middle of
// an ld_imm64, between sections, before the code or past it), come again or go back, and the code read
// is the same as read at once. Over the test programs and the real corpus, big-endian objects too
// (decoded whole: read at start).
TEST_CASE("the code read along with resolving is the code read at once", "[core]") {
  // The test programs are not built where the tests are unit tests only (the sanitized build's).
  std::vector<std::string> paths = shared_corpus_objects();
  for (const auto& built : {core_corpus_objects(), trace_objects()})
    for (const std::string& path : built)
      if (fs::exists(path)) paths.push_back(path);
  if (paths.empty()) return skip("neither the test programs nor the corpus are here: the code is not read");
  std::mt19937 random(18);
  std::size_t read_in_pieces = 0;
  for (const std::string& path : paths) {
    INFO(path);
    const auto object = BpfObject::open(path);
    const BpfCode whole(*object);
    // Pieces ending at every 1st, 3rd, 64th instruction or at random, in each section.
    for (const std::uint32_t step : {1u, 3u, 64u, 0u}) {
      INFO("pieces of " << step << " instructions (0: at random)");
      BpfCodeReader reader(*object);
      std::uint8_t before = 0;
      reader.read_before(&before);  // not started: nothing
      reader.start();
      for (const ProgramSection& s : object->sections()) {
        const std::size_t count = s.insns.size() / 8;
        for (std::size_t at = 0; at <= count; at += step ? step : 1 + random() % 97) {
          reader.read_before(s.insns.data() + at * 8);
          if (at > 0 && at % 5 == 0) reader.read_before(s.insns.data() + (at - 1) * 8 + 3);  // back, mid-instruction
        }
      }
      check_same_code(reader.finish(), whole, object->relocations().size());
      ++read_in_pieces;
    }
    // As check does it: started by resolving's first poisoned relocation, finished after.
    BpfCodeReader along(*object);
    const auto target = small_target();
    const CoreTarget t(target);
    const BpfObject* objects[] = {object.get()};
    const CandidateIndex index(t, objects);
    const CoreResults results = resolve_object(*object, index, nullptr, &along);
    CHECK(along.started() == any_poisoned(results));
    check_same_code(along.finish(), whole, object->relocations().size());
  }
  // The corpus's big objects are read in many pieces; the test programs in a few.
  CHECK(read_in_pieces >= (shared_corpus_objects().empty() ? 4 : 4 * 20));
}

TEST_CASE("essential names drop the flavor", "[core]") {
  CHECK(essential_name("task_struct") == "task_struct");
  CHECK(essential_name("task_struct___old") == "task_struct");
  CHECK(essential_name("a___b___c") == "a___b");
  CHECK(essential_name("a____b") == "a____b");  // four underscores: no X___Y with Y not '_'
  CHECK(essential_name("___x") == "___x");
  CHECK(essential_name("x___") == "x___");
  CHECK(essential_name("x___y") == "x");
}

// Each way a .BTF.ext can be wrong, and the line that says so. The layout's checks (header, subsections,
// blocks) are BtfExtReader's, which the references measure and dedup read go through as well
// (read_btf_ext_references): for those it must refuse the object with the same line.
TEST_CASE("malformed .BTF.ext: one line naming the file and what is wrong", "[core][robust]") {
  const Subject s = minimal_object();
  TempDir dir;
  const std::size_t e = s.ext.offset;
  struct Case {
    const char* what;
    std::size_t off;
    std::uint32_t value;
    const char* message;
    bool layout = true;
  };
  const Case cases[] = {
      {"bad magic", e, 0x1234eb00u | (get_u32(s.image, e) & 0xffff0000u), "bad magic 0xeb00"},
      {"version 2", e, (get_u32(s.image, e) & 0xff00ffffu) | 0x00020000u, "unsupported version 2"},
      {"hdr_len past the end", e + 4, 0x10000000, "header length 268435456 exceeds"},
      {"hdr_len too short", e + 4, 8, "header length 8 is too short"},
      {"a header and no data", e + 4, static_cast<std::uint32_t>(s.ext.size), "has a header and no data"},
      {"core_relo unaligned", e + 24, get_u32(s.image, e + 24) + 2, "core_relo subsection offset"},
      {"core_relo past the end", e + 28, 0x7ffffff0, "past the end"},
      {"core_relo with a record size only", e + 28, 4, "core_relo subsection has no records"},
      {"record size 8", s.core - 4, 8, "core_relo record size 8 is invalid"},
      {"record count 0", s.core + 4, 0, "invalid record count 0"},
      {"record count huge", s.core + 4, 0x40000000, "invalid record count 1073741824"},
      {"section name offset", s.core, 0xfffffff0, "invalid section name offset", false},
      {"type id out of range", s.record + 4, 100000, "type id 100000 is out of range", false},
      {"access string offset", s.record + 8, 0xffffff00, "invalid access string offset", false},
      {"instruction offset unaligned", s.record, 3, "is not an instruction", false},
      {"instruction offset past the section", s.record, 0x100000, "is not an instruction", false},
  };
  for (const Case& c : cases) {
    std::string m = s.image;
    put_u32(m, c.off, c.value);
    const Opened o = open_image(dir, m);
    const std::string path = dir.file("mutant.bpf.o");
    INFO(c.what << ": " << (o.object ? "opened" : o.error));
    CHECK_FALSE(o.object);
    CHECK_FALSE(o.foreign);
    CHECK_THAT(o.error, StartsWith(path + ": .BTF.ext"));
    CHECK_THAT(o.error, Contains(c.message));
    CHECK(o.error.find('\n') == std::string::npos);
    CHECK(not_text(o.error) == "");
    if (!c.layout) continue;
    const SectionPlace btf_place = elf_section(m, ".BTF");
    auto owner = std::make_shared<const std::string>(m);
    const auto* data = reinterpret_cast<const std::uint8_t*>(owner->data());
    const auto btf = Btf::parse(path, owner, {data + btf_place.offset, btf_place.size});
    std::string references_error;
    try {
      read_btf_ext_references(*btf, {data + e, s.ext.size}, path + ": .BTF.ext");
    } catch (const InputError& err) {
      references_error = err.what();
    }
    CHECK(references_error == o.error);
  }
}

TEST_CASE("objects without .BTF.ext or without CO-RE records are not errors", "[core]") {
  // A BPF object of types alone has .BTF and no .BTF.ext.
  TempDir dir;
  const Opened o = open_image(dir, read_file(build_data_dir() + "/types_only.bpf.o"), "plain.o");
  REQUIRE(o.object);
  CHECK_FALSE(o.object->has_ext());
  CHECK(o.object->relocations().empty());
}

// Mutations of the whole .BTF.ext and of the object's .BTF: an error line, or an object the engine
// resolves (against a small target and against itself) without crashing.
TEST_CASE("mutated objects: an InputError or relocations the engine resolves", "[core][robust]") {
  const Subject s = minimal_object();
  const SectionPlace btf = elf_section(s.image, ".BTF");
  TempDir dir;
  const CoreTarget small(small_target());
  std::mt19937 rng(7);
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::size_t opened = 0, rejected = 0, relocations = 0;
  std::vector<std::string> problems;
  for (int round = 0; round < 1500; ++round) {
    std::string m = s.image;
    std::ostringstream how;
    const SectionPlace& in = below(3) == 0 ? btf : s.ext;
    for (int e = 1 + static_cast<int>(below(3)); e > 0; --e) {
      const std::size_t at = in.offset + (below(in.size) & ~std::size_t{3});
      static constexpr std::uint32_t kEdges[] = {0, 1, 3, 4, 8, 12, 16, 0x7fffffff, 0xffffffff, 64, 65};
      const std::uint32_t v = below(2) ? kEdges[below(std::size(kEdges))] : static_cast<std::uint32_t>(rng());
      if (at + 4 <= in.offset + in.size) put_u32(m, at, v);
      how << " " << at - in.offset << "=" << v;
    }
    const Opened o = open_image(dir, m);
    const std::string label = std::string(&in == &btf ? ".BTF" : ".BTF.ext") + " round " + std::to_string(round) + how.str();
    if (!o.object) {
      ++rejected;
      if (o.foreign || o.error.find(dir.file("mutant.bpf.o") + ": ") != 0 || o.error.find('\n') != std::string::npos ||
          !not_text(o.error).empty())
        problems.push_back(label + ": bad error '" + o.error + "'");
      continue;
    }
    ++opened;
    const BpfObject* objects[] = {o.object.get()};
    // The object's own types as a target: every root has candidates, so every path is walked.
    const CoreTarget self(o.object->btf_shared());
    for (const CoreTarget* t : {&small, &self}) {
      const CandidateIndex index(*t, objects);
      std::vector<AnswerLog> answers(1);
      const auto results = resolve_object(*o.object, index, &answers[0]);
      relocations += results.size();
      for (std::size_t i = 0; i < results.size(); ++i) (void)describe_access(*o.object, o.object->relocations()[i]);
      // Minimizing for it: against the well-formed target it must work and verify; against the
      // object's own (mutated) types, an InputError is allowed (libbpf may refuse what such a source
      // makes), a crash is not.
      const std::vector<const BpfObject*> list = {o.object.get()};
      try {
        const Minimized m = minimize(t->main(), list, {results}, {});
        (void)m.parse("minimized.btf");
        if (const std::string diff = verify_minimized(t->main(), m, list, {results}, answers); !diff.empty())
          problems.push_back(label + ": minimized BTF resolves differently: " + diff);
      } catch (const InputError& e) {
        if (t == &small) problems.push_back(label + ": minimize against the small target: " + e.what());
      }
    }
  }
  INFO(opened << " opened, " << rejected << " rejected, " << relocations << " relocations resolved");
  for (std::size_t i = 0; i < problems.size() && i < 10; ++i) UNSCOPED_INFO(problems[i]);
  CHECK(problems.empty());
  CHECK(opened > 100);
  CHECK(rejected > 100);
}

}  // namespace
}  // namespace btfslim::test
