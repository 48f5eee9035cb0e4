// The libbpf oracle (support/libbpf_oracle.h) on the CO-RE corpus: before `btfslim check` is compared
// with it, it has to be shown to say the right thing.
//
// The expected numbers do not come from BTF read the way libbpf reads it: offsets, sizes and
// enumerator values come from the C compiler (a host program that includes the target's C file and
// prints offsetof/sizeof), type ids from bpftool's dump, and the few bitfield shifts from the C
// source, as the comments say. Needs bpf() (libbpf relocates inside bpf_object__load); skips visibly
// without it. The log parser's own test needs nothing.
#include "libbpf_oracle.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

std::string target_source(const std::string& name) { return source_data_dir() + "/data/core_target_" + name + ".c"; }

// Each C expression evaluated by a host program compiled with the target's C file included.
std::map<std::string, std::uint64_t> c_facts(const std::string& c_file, const std::vector<std::string>& expressions) {
  const TempDir dir;
  std::string program = "#include <stddef.h>\n#include <stdio.h>\n#include \"" + c_file + "\"\nint main(void) {\n";
  for (const std::string& e : expressions) program += "  printf(\"%llu\\n\", (unsigned long long)(" + e + "));\n";
  program += "  return 0;\n}\n";
  write_file(dir.file("facts.c"), program);
  const char* compiler = std::getenv("BTFSLIM_TEST_CC");
  const RunResult cc = run({compiler ? compiler : "cc", "-w", "-o", dir.file("facts"), dir.file("facts.c")});
  INFO("cc: " << cc.err);
  REQUIRE(cc.status == 0);
  const RunResult facts = run({dir.file("facts")});
  REQUIRE(facts.status == 0);
  std::map<std::string, std::uint64_t> out;
  std::istringstream in(facts.out);
  for (const std::string& e : expressions) {
    std::uint64_t v = 0;
    REQUIRE(in >> v);
    out[e] = v;
  }
  return out;
}

// The record of `program` whose kind is `kind` and whose local spec names `accessor` as libbpf prints
// it: "flavored___old.b", "ptr_as_arr[1].a", "mods_t.a", "enums_named::EN_C", "types_struct".
const LibbpfRelo& relo(const LibbpfRelocation& r, const std::string& program, const std::string& kind,
                       const std::string& accessor) {
  for (const LibbpfRelo& x : r.relocations) {
    if (x.program != program || x.kind != kind) continue;
    const std::size_t at = x.local_spec.find(" " + accessor);
    const std::size_t end = at + 1 + accessor.size();
    if (at != std::string::npos && (end == x.local_spec.size() || x.local_spec[end] == ' ')) return x;
  }
  INFO("libbpf's log:\n" << r.log);
  FAIL("libbpf reported no " << kind << " relocation of " << accessor << " in " << program);
  static const LibbpfRelo none;  // not reached: FAIL throws
  return none;
}

// Skips (visibly) when bpf() is not available, else relocates and requires libbpf to have got there.
const LibbpfRelocation* relocate(const std::string& obj, const std::string& btf,
                                 const std::vector<std::string>& only = {}) {
  const LibbpfRelocation& r = libbpf_relocate(obj, btf, only);
  if (!r.available) {
    skip(r.unavailable_reason);
    return nullptr;
  }
  INFO("libbpf's log:\n" << r.log);
  REQUIRE(r.relocated);
  return &r;
}

void check_patched(const LibbpfRelo& x, std::uint64_t expected) {
  INFO(x.program << " relo #" << x.relo_idx << ": " << x.line);
  CHECK(x.outcome == LibbpfRelo::Patched);
  CHECK(x.value == expected);
}

void check_poisoned(const LibbpfRelo& x) {
  INFO(x.program << " relo #" << x.relo_idx << ": " << x.line);
  CHECK(x.outcome == LibbpfRelo::Poisoned);
  CHECK(x.insn_idx >= 0);
}

struct Expect {
  std::string program, kind, accessor, expression;
};

// Relocates core_fields against `target_name` and checks each relocation's value against the C fact.
void check_fields_against(const std::string& target_name, const std::vector<Expect>& expectations) {
  const LibbpfRelocation* r = relocate(test_object("core_fields"), core_target(target_name));
  if (!r) return;
  std::vector<std::string> expressions;
  for (const Expect& e : expectations) expressions.push_back(e.expression);
  std::string c_file = target_source(target_name);
  if (const std::size_t dot = target_name.find('.'); dot != std::string::npos)
    c_file = target_source(target_name.substr(0, dot));  // moved.clang: the same source
  const auto facts = c_facts(c_file, expressions);
  for (const Expect& e : expectations) {
    INFO(e.accessor << " should be " << e.expression);
    check_patched(relo(*r, e.program, e.kind, e.accessor), facts.at(e.expression));
  }
}

}  // namespace

TEST_CASE("the log parser reads every outcome line of libbpf 1.1.2", "[core-oracle]") {
  // Lines as libbpf 1.1.2 prints them (the formats of src/relo_core.c and src/libbpf.c), with some of
  // the noise around them: a verifier log line and a warning that names no relo #.
  const std::string log =
      "libbpf: sec 'raw_tp/sys_enter': found 4 CO-RE relocations\n"
      "libbpf: CO-RE relocating [10] struct s: found target candidate [7] struct s in [vmlinux]\n"
      "libbpf: prog 'p': relo #0: <byte_off> [10] struct s.a (0:0 @ offset 0)\n"
      "libbpf: prog 'p': relo #0: matching candidate #0 <byte_off> [7] struct s.a (0:1 @ offset 8)\n"
      "libbpf: prog 'p': relo #0: patched insn #5 (LDX/ST/STX) off 0 -> 8\n"
      "libbpf: prog 'p': relo #0: patched insn #5 (LDX/ST/STX) mem_sz 1 -> 2\n"
      "libbpf: prog 'p': relo #1: <enumval_value> [12] enum e::X = 1\n"
      "libbpf: prog 'p': relo #1: no matching targets found\n"
      "libbpf: prog 'p': relo #1: substituting insn #9 w/ invalid insn\n"
      "libbpf: prog 'p': relo #1: substituting insn #8 w/ invalid insn\n"
      "libbpf: prog 'p': relo #2: <type_size> [3] struct t\n"
      "libbpf: prog 'p': relo #2: patched insn #12 (ALU/ALU64) imm 16 -> 24\n"
      "libbpf: prog 'p': relo #3: <enumval_value> [12] enum e::Y = 2\n"
      "libbpf: prog 'p': relo #3: patched insn #14 (LDIMM64) imm64 2 -> 18446744071562067969\n"
      "libbpf: sec 'raw_tp/sys_exit': found 2 CO-RE relocations\n"
      "libbpf: prog 'q': relo #0: <byte_off> [20] struct b.x (0:0 @ offset 0)\n"
      "libbpf: prog 'q': relo #0: matching candidate #0 <byte_off> [30] struct b.x (0:1 @ offset 1)\n"
      "libbpf: prog 'q': relo 0 at insn #3 can't be satisfied for bitfield\n"
      "libbpf: prog 'q': relo #0: failed to relocate: -7\n"
      "libbpf: failed to perform CO-RE relocations: -7\n"
      "0: (85) call unknown#195896080\n";
  LibbpfRelocation r;
  parse_libbpf_log(log, r);
  REQUIRE(r.relocated);
  REQUIRE(r.failed);
  REQUIRE(r.relocations.size() == 5);
  CHECK(r.section_counts == std::map<std::string, int>{{"raw_tp/sys_enter", 4}, {"raw_tp/sys_exit", 2}});

  const LibbpfRelo& ldx = r.relocations[0];
  CHECK(ldx.section == "raw_tp/sys_enter");
  CHECK(ldx.program == "p");
  CHECK(ldx.relo_idx == 0);
  CHECK(ldx.insn_idx == 5);
  CHECK(ldx.outcome == LibbpfRelo::Patched);
  CHECK(ldx.value == 8);
  CHECK(ldx.mem_size == 2);
  CHECK(ldx.kind == "byte_off");
  CHECK(ldx.local_type_id == 10);
  CHECK(ldx.local_spec == "[10] struct s.a (0:0 @ offset 0)");
  CHECK(ldx.matching_targets == std::vector<std::uint32_t>{7});

  const LibbpfRelo& poisoned = r.relocations[1];
  CHECK(poisoned.outcome == LibbpfRelo::Poisoned);
  CHECK(poisoned.insn_idx == 8);  // the ldimm64's first half, though libbpf prints the second first
  CHECK(poisoned.reason == "no matching targets found");
  CHECK(poisoned.kind == "enumval_value");

  CHECK(r.relocations[2].value == 24);
  CHECK(r.relocations[2].insn_idx == 12);
  CHECK(r.relocations[3].value == 18446744071562067969ULL);

  const LibbpfRelo& failed = r.relocations[4];
  CHECK(failed.section == "raw_tp/sys_exit");
  CHECK(failed.outcome == LibbpfRelo::Failed);
  CHECK(failed.insn_idx == -1);
  CHECK(failed.error == -7);
  CHECK(failed.reason.find("can't be satisfied for bitfield") != std::string::npos);
  CHECK(failed.matching_targets == std::vector<std::uint32_t>{30});

  // A line that starts like a spec but is not one explains the failure instead.
  LibbpfRelocation anonymous;
  parse_libbpf_log(
      "libbpf: prog 'r': relo #3: <type_exists> (8) relocation doesn't support anonymous types\n"
      "libbpf: prog 'r': relo #3: failed to relocate: -95\n",
      anonymous);
  REQUIRE(anonymous.relocations.size() == 1);
  CHECK(anonymous.relocations[0].kind.empty());
  CHECK(anonymous.relocations[0].error == -95);
  CHECK(anonymous.relocations[0].reason.find("anonymous types") != std::string::npos);
}

TEST_CASE("libbpf moves fields to where the target's C compiler put them", "[core-oracle]") {
  check_fields_against("moved", {
      {"fields_flavors", "byte_off", "flavored___old.a", "offsetof(struct flavored, a)"},
      {"fields_flavors", "byte_off", "flavored___old.b", "offsetof(struct flavored, b)"},
      {"fields_flavors", "byte_off", "flavored___old.c", "offsetof(struct flavored, c)"},
      {"fields_flavors", "byte_off", "flavored___new.a", "offsetof(struct flavored, a)"},
      {"fields_flavors", "byte_off", "flavored___new.d", "offsetof(struct flavored, d)"},
      {"fields_nesting", "byte_off", "nesting.s.b", "offsetof(struct nesting, s.b)"},
      {"fields_nesting", "byte_off", "nesting.d", "offsetof(struct nesting, d)"},
      {"fields_nesting", "byte_off", "nesting.in.x", "offsetof(struct nesting, in.x)"},
      {"fields_nesting", "byte_off", "nesting.mix.q", "offsetof(struct nesting, mix.q)"},
      // In a static subprogram: libbpf names the subprogram, not the program that calls it.
      {"read_nested", "byte_off", "nesting.in.y", "offsetof(struct nesting, in.y)"},
      {"fields_arrays", "byte_off", "arrays.a[2]", "offsetof(struct arrays, a[2])"},
      {"fields_arrays", "byte_off", "arrays.c[1].w", "offsetof(struct arrays, c[1].w)"},
      {"fields_arrays", "byte_off", "arrays.f[3].w", "offsetof(struct arrays, f[3].w)"},
      {"fields_arrays", "byte_sz", "arrays.z", "sizeof(((struct arrays *)0)->z)"},
      {"fields_arrays", "byte_sz", "arrays.c[1]", "sizeof(struct arrays_elem)"},
      {"fields_primitives", "byte_off", "primitives.f1", "offsetof(struct primitives, f1)"},
      {"fields_primitives", "byte_off", "primitives.f2", "offsetof(struct primitives, f2)"},
      {"fields_primitives", "byte_off", "primitives.f3", "offsetof(struct primitives, f3)"},
      {"fields_primitives", "byte_off", "primitives.f4", "offsetof(struct primitives, f4)"},
      {"fields_primitives", "byte_off", "primitives.f5", "offsetof(struct primitives, f5)"},
      {"fields_mods", "byte_off", "mods_t.a", "offsetof(mods_t, a)"},
      {"fields_mods", "byte_off", "mods_t.c", "offsetof(mods_t, c)"},
      {"fields_mods", "byte_off", "mods_t.e", "offsetof(mods_t, e)"},
      {"fields_mods", "byte_off", "mods_t.f", "offsetof(mods_t, f)"},
      // The target has only a flavor, 16 bytes: p[1] starts 16 bytes on.
      {"fields_ptr_as_array", "byte_off", "ptr_as_arr.a", "offsetof(struct ptr_as_arr___kernel, a)"},
      {"fields_ptr_as_array", "byte_off", "ptr_as_arr[1].a",
       "sizeof(struct ptr_as_arr___kernel) + offsetof(struct ptr_as_arr___kernel, a)"},
      {"fields_ptr_as_array", "byte_off", "ptr_as_arr[2].a",
       "2 * sizeof(struct ptr_as_arr___kernel) + offsetof(struct ptr_as_arr___kernel, a)"},
      {"fields_ints", "byte_off", "ints.u8f", "offsetof(struct ints, u8f)"},
      {"fields_ints", "byte_off", "ints.u64f", "offsetof(struct ints, u64f)"},
      {"fields_ints", "byte_sz", "ints.u32f", "sizeof(((struct ints *)0)->u32f)"},
      {"fields_ints", "byte_sz", "ints.b", "sizeof(((struct ints *)0)->b)"},
      {"fields_ints", "signed", "ints.s8f", "1"},
      {"fields_ints", "signed", "ints.b", "0"},
      {"fields_existence", "field_exists", "existence___minimal.only_in_flavor", "1"},
      {"fields_sizes", "byte_sz", "sizes.int_field", "sizeof(((struct sizes *)0)->int_field)"},
      {"fields_sizes", "byte_sz", "sizes.struct_field", "sizeof(struct nest_inner)"},
      {"fields_sizes", "byte_sz", "sizes.enum_field", "sizeof(enum prim_enum)"},
      {"fields_sizes", "byte_off", "sizes.enum_field", "offsetof(struct sizes, enum_field)"},
  });
}

TEST_CASE("libbpf resizes unsigned loads and poisons signed ones whose size changes", "[core-oracle]") {
  const LibbpfRelocation* r = relocate(test_object("core_fields"), core_target("moved"));
  if (!r) return;
  const auto facts = c_facts(target_source("moved"), {"sizeof(((struct ints *)0)->u8f)",
                                                       "sizeof(((struct ints *)0)->u64f)"});
  // Direct reads: the relocation is the LDX itself; a different size rewrites its size too.
  CHECK(relo(*r, "fields_ints", "byte_off", "ints.u8f").mem_size == facts.at("sizeof(((struct ints *)0)->u8f)"));
  CHECK(relo(*r, "fields_ints", "byte_off", "ints.u64f").mem_size == facts.at("sizeof(((struct ints *)0)->u64f)"));
  CHECK(relo(*r, "fields_ints", "byte_off", "ints.s16f").mem_size == 0);  // same size: no rewrite
  for (const char* field : {"ints.s8f", "ints.s32f"}) {
    const LibbpfRelo& x = relo(*r, "fields_ints", "byte_off", field);
    check_poisoned(x);
    CHECK(x.reason.find("accesses field incorrectly") != std::string::npos);
  }
}

TEST_CASE("pahole flattens multi-dimensional arrays; clang's BTF of the same source does not", "[core-oracle]") {
  const LibbpfRelocation* pahole = relocate(test_object("core_fields"), core_target("moved"));
  if (!pahole) return;
  const LibbpfRelocation* clang = relocate(test_object("core_fields"), core_target("moved.clang"));
  const auto facts = c_facts(target_source("moved"), {"offsetof(struct arrays, b[1][2][3])",
                                                      "offsetof(struct arrays, d[0][1].v)",
                                                      "sizeof(((struct arrays *)0)->b[1])"});
  check_poisoned(relo(*pahole, "fields_arrays", "byte_off", "arrays.b[1][2][3]"));
  check_poisoned(relo(*pahole, "fields_arrays", "byte_off", "arrays.d[0][1].v"));
  check_poisoned(relo(*pahole, "fields_arrays", "byte_sz", "arrays.b[1]"));
  check_patched(relo(*clang, "fields_arrays", "byte_off", "arrays.b[1][2][3]"),
                facts.at("offsetof(struct arrays, b[1][2][3])"));
  check_patched(relo(*clang, "fields_arrays", "byte_off", "arrays.d[0][1].v"),
                facts.at("offsetof(struct arrays, d[0][1].v)"));
  check_patched(relo(*clang, "fields_arrays", "byte_sz", "arrays.b[1]"), facts.at("sizeof(((struct arrays *)0)->b[1])"));
}

TEST_CASE("libbpf poisons reads of what the target lacks and answers existence with 0", "[core-oracle]") {
  const LibbpfRelocation* r = relocate(test_object("core_fields"), core_target("missing"));
  if (!r) return;
  const auto facts = c_facts(target_source("missing"), {"offsetof(struct flavored___v1, a)",
                                                        "offsetof(struct arrays, c[1].w)",
                                                        "offsetof(struct primitives, f3)"});
  check_patched(relo(*r, "fields_flavors", "byte_off", "flavored___old.a"), facts.at("offsetof(struct flavored___v1, a)"));
  for (const char* field : {"flavored___old.b", "flavored___old.c", "flavored___new.d"}) {
    const LibbpfRelo& x = relo(*r, "fields_flavors", "byte_off", field);
    check_poisoned(x);
    CHECK(x.reason == "no matching targets found");
  }
  // struct mods is there, the typedef mods_t the relocations start from is not.
  check_poisoned(relo(*r, "fields_mods", "byte_off", "mods_t.a"));
  // f[] is no longer flexible (f[2]), so index 3 is out of bounds; c[1] is within.
  check_poisoned(relo(*r, "fields_arrays", "byte_off", "arrays.f[3].w"));
  check_patched(relo(*r, "fields_arrays", "byte_off", "arrays.c[1].w"), facts.at("offsetof(struct arrays, c[1].w)"));
  // An enum field needs an enum of the same name; an int field is not a pointer field.
  check_poisoned(relo(*r, "fields_primitives", "byte_off", "primitives.f2"));
  check_poisoned(relo(*r, "fields_primitives", "byte_off", "primitives.f5"));
  check_patched(relo(*r, "fields_primitives", "byte_off", "primitives.f3"), facts.at("offsetof(struct primitives, f3)"));

  check_patched(relo(*r, "fields_existence", "field_exists", "existence.a"), 1);
  check_patched(relo(*r, "fields_existence", "field_exists", "existence.b"), 0);  // char[4], not int
  check_patched(relo(*r, "fields_existence", "field_exists", "existence.arr"), 1);
  check_patched(relo(*r, "fields_existence", "field_exists", "existence.arr[3]"), 0);  // arr[2] there
  check_patched(relo(*r, "fields_existence", "field_exists", "existence.s.x"), 0);
  check_patched(relo(*r, "fields_existence", "field_exists", "existence___minimal.a"), 1);
  check_patched(relo(*r, "fields_existence", "field_exists", "existence___minimal.only_in_flavor"), 0);

  // An enumerator value is loaded by an ldimm64: poisoned in both halves, one record.
  const LibbpfRelocation* enums = relocate(test_object("core_enums"), core_target("missing"));
  const LibbpfRelo& en_b = relo(*enums, "enums_values", "enumval_value", "enums_named::EN_B");
  check_poisoned(en_b);
  CHECK(enums->log.find("prog 'enums_values': relo #" + std::to_string(en_b.relo_idx) + ": substituting insn #" +
                        std::to_string(en_b.insn_idx + 1) + " w/ invalid insn") != std::string::npos);
  check_patched(relo(*enums, "enums_values", "enumval_exists", "enums_named::EN_B"), 0);
  check_patched(relo(*enums, "enums_values", "enumval_exists", "enums_named::EN_C"), 1);
}

TEST_CASE("libbpf computes bitfield loads and shifts in the target", "[core-oracle]") {
  const LibbpfRelocation* r = relocate(test_object("core_bitfields"), core_target("moved"));
  if (!r) return;
  const auto facts = c_facts(target_source("moved"), {"offsetof(struct bitfields, ub1)",
                                                      "offsetof(struct bitfields, s32)"});
  struct Load {
    const char* field;
    std::uint64_t byte_off, byte_sz, lshift, rshift, is_signed;
  };
  const Load loads[] = {
      // ub2 is bits 62..63 of the first unsigned long long (after `pad : 62`): one 8-byte load,
      // nothing above it to shift out, 62 bits below it.
      {"bitfields.ub2", 0, 8, 0, 62, 0},
      // ub1 is a plain unsigned char in the target: the byte itself, in the top byte of the u64.
      {"bitfields.ub1", facts.at("offsetof(struct bitfields, ub1)"), 1, 56, 56, 0},
      // s32 is a plain short: two bytes, signed.
      {"bitfields.s32", facts.at("offsetof(struct bitfields, s32)"), 2, 48, 48, 1},
  };
  for (const char* program : {"bitfields_probed", "bitfields_direct"}) {
    for (const Load& l : loads) {
      INFO(program << " " << l.field);
      check_patched(relo(*r, program, "byte_off", l.field), l.byte_off);
      check_patched(relo(*r, program, "byte_sz", l.field), l.byte_sz);
      check_patched(relo(*r, program, "lshift_u64", l.field), l.lshift);
      check_patched(relo(*r, program, "rshift_u64", l.field), l.rshift);
      check_patched(relo(*r, program, "signed", l.field), l.is_signed);
    }
  }
  // Both macros ask the same questions and get the same answers.
  std::map<std::pair<std::string, std::string>, std::uint64_t> probed;
  for (const LibbpfRelo& x : r->relocations)
    if (x.program == "bitfields_probed") probed[{x.kind, x.local_spec}] = x.value;
  for (const LibbpfRelo& x : r->relocations)
    if (x.program == "bitfields_direct") {
      INFO(x.kind << " " << x.local_spec);
      REQUIRE(probed.count({x.kind, x.local_spec}) == 1);
      CHECK(probed.at({x.kind, x.local_spec}) == x.value);
    }
}

TEST_CASE("libbpf answers type-based relocations and type ids", "[core-oracle]") {
  const LibbpfRelocation* r = relocate(test_object("core_types"), core_target("moved"));
  if (!r) return;
  // Type ids as bpftool lists them, in the target and in the object's own BTF.
  auto id_of = [](const std::string& file, const std::string& kind, const std::string& name) {
    const nlohmann::json dump = nlohmann::json::parse(bpftool({"-j", "btf", "dump", "file", file}));
    for (const auto& t : dump["types"])
      if (t["kind"] == kind && t["name"] == name) return t["id"].get<std::uint64_t>();
    FAIL("bpftool lists no " << kind << " " << name << " in " << file);
    return std::uint64_t{0};
  };
  check_patched(relo(*r, "types_ids", "target_type_id", "types_struct"), id_of(core_target("moved"), "STRUCT", "types_struct"));
  check_patched(relo(*r, "types_ids", "target_type_id", "types_union"), id_of(core_target("moved"), "UNION", "types_union"));
  check_patched(relo(*r, "types_ids", "target_type_id", "types_u32_t"), id_of(core_target("moved"), "TYPEDEF", "types_u32_t"));
  check_patched(relo(*r, "types_ids", "target_type_id", "types_only_local"), 0);
  check_patched(relo(*r, "types_ids", "local_type_id", "types_struct"), id_of(test_object("core_types"), "STRUCT", "types_struct"));
  check_patched(relo(*r, "types_ids", "local_type_id", "types_only_local"),
                id_of(test_object("core_types"), "STRUCT", "types_only_local"));

  const auto facts = c_facts(target_source("moved"), {"sizeof(struct types_struct)", "sizeof(union types_union)",
                                                      "sizeof(types_u32_t)", "sizeof(types_fn_t)"});
  check_patched(relo(*r, "types_based", "type_size", "types_struct"), facts.at("sizeof(struct types_struct)"));
  check_patched(relo(*r, "types_based", "type_size", "types_union"), facts.at("sizeof(union types_union)"));
  check_patched(relo(*r, "types_based", "type_size", "types_u32_t"), facts.at("sizeof(types_u32_t)"));
  check_patched(relo(*r, "types_based", "type_size", "types_fn_t"), facts.at("sizeof(types_fn_t)"));
  check_patched(relo(*r, "types_based", "type_size", "types_struct___flavor"), facts.at("sizeof(struct types_struct)"));
  check_patched(relo(*r, "types_based", "type_size", "types_only_local"), 0);

  check_patched(relo(*r, "types_based", "type_exists", "types_mismatch"), 1);
  check_patched(relo(*r, "types_based", "type_exists", "types_only_local"), 0);
  check_patched(relo(*r, "types_based", "type_matches", "types_struct"), 1);  // extra target members are fine
  check_patched(relo(*r, "types_based", "type_matches", "types_struct___flavor"), 1);
  check_patched(relo(*r, "types_based", "type_matches", "types_enum"), 1);
  check_patched(relo(*r, "types_based", "type_matches", "types_fn_t"), 1);
  check_patched(relo(*r, "types_based", "type_matches", "types_mismatch"), 0);  // a member missing
  check_patched(relo(*r, "types_based", "type_matches", "types_u32_t"), 0);     // 8 bytes, not 4
  // clang's "long long" is gcc's "long long int", and type_matches compares int names.
  check_patched(relo(*r, "types_based", "type_exists", "types_union"), 1);
  check_patched(relo(*r, "types_based", "type_matches", "types_union"), 0);
}

TEST_CASE("libbpf patches the target's enumerator values, sign-extending 32-bit ones", "[core-oracle]") {
  const LibbpfRelocation* r = relocate(test_object("core_enums"), core_target("moved"));
  if (!r) return;
  const auto facts = c_facts(target_source("moved"),
                             {"EN_A", "EN_B", "EN_C", "ES_POS", "ES_NEG", "TE_Y", "TE_Z", "EW_BIG", "EW_HUGE",
                              "ENF_B", "EG_ONE", "EG_TWO"});
  // libbpf 1.1.2 reads a 32-bit enumerator through struct btf_enum's __s32 val: unsigned values above
  // INT32_MAX come out sign-extended (EN_C = 0x80000001 is patched as 0xffffffff80000001).
  auto as_s32 = [](std::uint64_t v) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(v)));
  };
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_named::EN_A"), facts.at("EN_A"));
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_named::EN_B"), facts.at("EN_B"));
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_named::EN_C"), as_s32(facts.at("EN_C")));
  CHECK(as_s32(facts.at("EN_C")) == 0xffffffff80000001ULL);
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_signed::ES_POS"), as_s32(facts.at("ES_POS")));
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_signed::ES_NEG"), facts.at("ES_NEG"));
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_typedef_t::TE_Y"), facts.at("TE_Y"));
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_typedef_t::TE_Z"), facts.at("TE_Z"));
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_wide::EW_BIG"), facts.at("EW_BIG"));
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_wide::EW_HUGE"), facts.at("EW_HUGE"));
  // The enum's and the enumerator's flavors are both dropped: ENF_B___v2 is the target's ENF_B.
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_flavor___local::ENF_B___v2"), facts.at("ENF_B"));
  // A 32-bit enum in the program, an enum64 in the target.
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_grows::EG_ONE"), facts.at("EG_ONE"));
  check_patched(relo(*r, "enums_values", "enumval_value", "enums_grows::EG_TWO"), facts.at("EG_TWO"));
  for (const LibbpfRelo& x : r->relocations)
    if (x.kind == "enumval_exists") check_patched(x, 1);
}

TEST_CASE("libbpf fails on ambiguous flavors and too big bitfields, and stops relocating there", "[core-oracle]") {
  const LibbpfRelocation* r = relocate(test_object("core_errors"), core_target("errors"));
  if (!r) return;
  const auto facts = c_facts(target_source("errors"), {"offsetof(struct err_prune___one, a)",
                                                       "offsetof(struct err_prune___one, b)",
                                                       "offsetof(struct err_same___a, x)"});
  REQUIRE(r->failed);
  const LibbpfRelo& ambiguous = r->relocations.back();
  INFO("libbpf's log:\n" << r->log);
  CHECK(ambiguous.program == "errors_ambiguous");
  CHECK(ambiguous.outcome == LibbpfRelo::Failed);
  CHECK(ambiguous.error == -22);
  CHECK(ambiguous.reason.find("field offset ambiguity") != std::string::npos);
  CHECK(ambiguous.matching_targets.size() == 2);
  for (const LibbpfRelo& x : r->relocations) {
    CHECK(x.program != "errors_size_ambiguity");  // after the failure: never relocated
    CHECK(x.program != "errors_big_bitfield");
  }

  // The first relocation of err_prune drops ___two (it has no a); b then has one candidate left.
  check_patched(relo(*r, "errors_pruned", "byte_off", "err_prune.a"), facts.at("offsetof(struct err_prune___one, a)"));
  const LibbpfRelo& pruned = relo(*r, "errors_pruned", "byte_off", "err_prune.b");
  check_patched(pruned, facts.at("offsetof(struct err_prune___one, b)"));
  CHECK(pruned.matching_targets.size() == 1);
  // Two flavors that agree are not ambiguous.
  const LibbpfRelo& same = relo(*r, "errors_same_offset", "byte_off", "err_same.x");
  check_patched(same, facts.at("offsetof(struct err_same___a, x)"));
  CHECK(same.matching_targets.size() == 2);
  // A field no target has is poisoned, not an error.
  check_poisoned(relo(*r, "errors_wrong_field", "byte_off", "err_field.renamed"));

  // Loaded alone, the programs after the failure fail in their own ways.
  const LibbpfRelocation* size = relocate(test_object("core_errors"), core_target("errors"), {"errors_size_ambiguity"});
  const LibbpfRelo& decision = relo(*size, "errors_size_ambiguity", "byte_sz", "err_size.y");
  CHECK(decision.outcome == LibbpfRelo::Failed);
  CHECK(decision.reason.find("relocation decision ambiguity") != std::string::npos);
  const LibbpfRelocation* bits = relocate(test_object("core_errors"), core_target("errors"), {"errors_big_bitfield"});
  const LibbpfRelo& big = relo(*bits, "errors_big_bitfield", "byte_off", "err_bits.x");
  CHECK(big.outcome == LibbpfRelo::Failed);
  CHECK(big.error == -7);  // -E2BIG
  CHECK(big.reason.find("can't be satisfied for bitfield") != std::string::npos);

  // Where nothing is ambiguous, the same programs relocate.
  const LibbpfRelocation* moved = relocate(test_object("core_errors"), core_target("moved"));
  CHECK_FALSE(moved->failed);
  for (const LibbpfRelo& x : moved->relocations)
    if (x.local_spec.find("err_field.renamed") == std::string::npos) CHECK(x.outcome == LibbpfRelo::Patched);
}

TEST_CASE("libbpf reports an outcome for every record, and the corpus covers every kind", "[core-oracle]") {
  std::vector<std::pair<std::string, std::string>> runs;
  for (const std::string& obj : core_corpus_objects())
    for (const std::string& btf : core_corpus_targets()) runs.emplace_back(obj, btf);
  if (!running_vmlinux().empty())
    for (const std::string& obj : trace_objects()) runs.emplace_back(obj, running_vmlinux());

  std::set<std::string> kinds;
  for (const auto& [obj, btf] : runs) {
    const LibbpfRelocation* r = relocate(obj, btf);
    if (!r) return;
    INFO(obj << " against " << btf << "\nlibbpf's log:\n" << r->log);
    std::set<std::pair<std::string, int>> seen;
    for (const LibbpfRelo& x : r->relocations) {
      CHECK(seen.insert({x.section, x.relo_idx}).second);
      REQUIRE(r->section_counts.count(x.section) == 1);
      CHECK(x.relo_idx < r->section_counts.at(x.section));
      CHECK_FALSE(x.kind.empty());
      if (x.outcome != LibbpfRelo::Failed) CHECK(x.insn_idx >= 0);
      kinds.insert(x.kind);
    }
    if (!r->failed) {
      int records = 0;
      for (const auto& [section, n] : r->section_counts) records += n;
      CHECK(r->relocations.size() == static_cast<std::size_t>(records));
    }
  }
  CHECK(kinds == std::set<std::string>{"byte_off", "byte_sz", "field_exists", "signed", "lshift_u64", "rshift_u64",
                                       "local_type_id", "target_type_id", "type_exists", "type_size",
                                       "enumval_exists", "enumval_value", "type_matches"});
}

TEST_CASE("trace programs read one of each pair of kernel-version flavors", "[core-oracle]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  if (trace_objects().empty()) return skip("the trace_*.bpf.o objects were not built (no kernel BTF at configure time)");
  // task_struct's state is `__state` since Linux 5.14, `state` before: exactly one read resolves, and
  // the existence check says which.
  const LibbpfRelocation* r = relocate(test_object("trace_sched_switch"), vmlinux);
  if (!r) return;
  CHECK_FALSE(r->failed);
  const bool renamed = relo(*r, "task_state", "field_exists", "task_struct___since514.__state").value == 1;
  const LibbpfRelo& state = relo(*r, "task_state", "byte_off", "task_struct___pre514.state");
  const LibbpfRelo& new_state = relo(*r, "task_state", "byte_off", "task_struct___since514.__state");
  CHECK(state.outcome == (renamed ? LibbpfRelo::Poisoned : LibbpfRelo::Patched));
  CHECK(new_state.outcome == (renamed ? LibbpfRelo::Patched : LibbpfRelo::Poisoned));

  // The kernel's BTF comes from gcc, the program's from clang: u64 is "long long unsigned int" in one
  // and "unsigned long long" in the other, and type_matches compares int names.
  const LibbpfRelocation* wakeup = relocate(test_object("trace_sched_wakeup"), vmlinux);
  check_patched(relo(*wakeup, "trace_wakeup", "type_matches", "list_head"), 1);
  check_patched(relo(*wakeup, "trace_wakeup", "type_matches", "sched_entity"), 0);
  check_patched(relo(*wakeup, "trace_wakeup", "type_exists", "sched_entity"), 1);
}

}  // namespace btfslim::test
