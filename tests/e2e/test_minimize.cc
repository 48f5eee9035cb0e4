// `btfslim minimize` end to end ([minimize]): the BTF it writes must resolve every relocation of every
// object exactly as the source does, by our own engine (`btfslim check`), by libbpf 1.1.2 (its CO-RE log,
// support/libbpf_oracle.h) and in the kernel's eyes (btf__load_into_kernel); bpftool must read it; it must
// keep no member that `bpftool gen min_core_btf` drops. Big-endian sources have a case.
//
// The inputs are the test build's: the CO-RE corpus (tests/bpf/core_*.bpf.c and minimal.bpf.c) against
// each of its targets (tests/data/core_target_*.c), and, where this machine has kernel BTF, the corpus,
// the trace programs (tests/bpf/trace_*.bpf.c) and a probe built here (kKernelProbe: what those do not
// reach, such as the typedef of a pointer to a forward declaration bpftool aborts on) against
// /sys/kernel/btf/vmlinux. Each source is minimized once per process; the test cases below look at the
// same outputs from their own side. The command's other promises: test_minimize_cli.cc.
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "minimize_cli.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "check_json.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nlohmann::json;

// ---- reading BTF with libbpf, the independent reader ----

// "struct task_struct": what a TYPE_ID_TARGET result points at, with the id masked.
std::string kind_and_name(const struct btf* b, std::uint64_t id) {
  if (id == 0) return "void";
  const btf_type* t = btf__type_by_id(b, static_cast<__u32>(id));
  if (!t) return "no type [" + std::to_string(id) + "]";
  const char* name = btf__name_by_offset(b, t->name_off);
  return std::string(kind_word(t)) + " " + (name && *name ? name : "(anon)");
}

// Every member of every struct and union by where it is: "NAME.member" for a named one, and for each
// one held by value in another (through arrays, typedefs and modifiers) also OUTER.member.member, which
// is the only name an anonymous one has. The members of an anonymous struct or union member are named
// as the holder's own (libbpf finds them so, and btfslim may write them flattened into it); another
// anonymous member is "(anon)@BIT", its bit offset in its container. Enumerators of named enums are
// "enum NAME::ENUMERATOR".
std::set<std::string> kept_members(const struct btf* b) {
  std::set<std::string> out;
  std::function<void(__u32, const std::string&, int)> walk = [&](__u32 id, const std::string& path, int depth) {
    const btf_type* t = btf__type_by_id(b, id);
    const btf_member* m = btf_members(t);
    for (unsigned i = 0; i < btf_vlen(t); ++i, ++m) {
      const std::string name = btf__name_by_offset(b, m->name_off);
      if (name.empty() && btf_is_composite(btf__type_by_id(b, m->type)) && depth < 16) {
        walk(m->type, path, depth + 1);
        continue;
      }
      const std::string key =
          path + "." + (name.empty() ? "(anon)@" + std::to_string(btf_member_bit_offset(t, i)) : name);
      out.insert(key);
      __u32 sub = m->type;
      for (int guard = 0; guard < 64 && sub != 0; ++guard) {
        const btf_type* s = btf__type_by_id(b, sub);
        if (btf_is_array(s))
          sub = btf_array(s)->type;
        else if (btf_is_mod(s) || btf_is_typedef(s))
          sub = s->type;
        else
          break;
      }
      if (sub != 0 && btf_is_composite(btf__type_by_id(b, sub)) && depth < 16) walk(sub, key, depth + 1);
    }
  };
  for (__u32 id = 1; id < btf__type_cnt(b); ++id) {
    const btf_type* t = btf__type_by_id(b, id);
    const std::string name = btf__name_by_offset(b, t->name_off);
    if (name.empty()) continue;
    if (btf_is_composite(t)) walk(id, name, 0);
    if (btf_is_enum(t))
      for (unsigned i = 0; i < btf_vlen(t); ++i)
        out.insert("enum " + name + "::" + btf__name_by_offset(b, btf_enum(t)[i].name_off));
    if (btf_is_enum64(t))
      for (unsigned i = 0; i < btf_vlen(t); ++i)
        out.insert("enum " + name + "::" + btf__name_by_offset(b, btf_enum64(t)[i].name_off));
  }
  return out;
}

// ---- one minimized output per source, made once per process ----

struct Minimized {
  std::string source;
  std::vector<std::string> objects;
  std::string out;  // the file written
  RunResult run;
};

// The directory the outputs live in until the process ends.
const TempDir& outputs_dir() {
  static const TempDir dir;
  return dir;
}

// `source` minimized for `objects`. core_errors.bpf.o is left out where it makes the run fail (its
// relocations are errors on some targets), and only for a reason other than a relocation that
// resolves differently on the output, which is always a bug.
const Minimized& minimized(const std::string& source, const std::vector<std::string>& objects) {
  static std::map<std::pair<std::string, std::vector<std::string>>, Minimized> made;
  const auto key = std::make_pair(source, objects);
  if (const auto it = made.find(key); it != made.end()) return it->second;
  Minimized m;
  m.source = source;
  m.objects = objects;
  m.out = outputs_dir().file(std::to_string(made.size()) + "-" + file_name(source) + ".btf");
  m.run = btfslim(minimize_args(source, objects, m.out));
  const auto errors = std::find(m.objects.begin(), m.objects.end(), test_object("core_errors"));
  if (m.run.status != 0 && errors != m.objects.end() && m.run.err.find("core_errors") != std::string::npos &&
      m.run.err.find("resolves differently") == std::string::npos) {
    std::printf("btfslim-test: NOTE: minimize --btf %s fails on core_errors.bpf.o (%s): left out\n", source.c_str(),
                m.run.err.c_str());
    m.objects.erase(errors);
    m.run = btfslim(minimize_args(source, m.objects, m.out));
  }
  INFO(command_line(minimize_args(source, m.objects, m.out)) << "\nexit " << m.run.status << "\nstdout: "
                                                             << m.run.out << "\nstderr: " << m.run.err);
  REQUIRE(m.run.status == 0);
  REQUIRE(fs::exists(m.out));
  return made[key] = std::move(m);
}

// Relocations against the kernel that the corpus and the trace programs do not make, built here against
// the test build's vmlinux.h: a typedef of a pointer to a forward declaration (key_ref_t, on which
// bpftool 7.1's min_core_btf aborts with "unsupported kind: fwd"), TYPE_MATCHES on kernel structs, enums,
// typedefs and ints, TYPE_ID_TARGET, enumerators, a bitfield, a path through an array of structs, a
// typedef'd anonymous struct as the root, and a struct that is one relocation's root and another's field.
constexpr const char* kKernelProbe = R"(#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

long out[64];
enum pid_type___local { PIDTYPE_TGID___local = 1, PIDTYPE_NOPE___local = 77 };
struct task_struct___nope { int no_such_field; } __attribute__((preserve_access_index));
struct sched_entity___mine { u64 vruntime; } __attribute__((preserve_access_index));

SEC("raw_tp/sys_enter")
int probe_types(struct bpf_raw_tracepoint_args *ctx)
{
	out[0] = bpf_core_type_exists(key_ref_t);
	out[1] = bpf_core_type_size(key_ref_t);
	out[2] = bpf_core_type_matches(key_ref_t);
	out[3] = bpf_core_type_matches(struct list_head);
	out[4] = bpf_core_type_matches(struct rb_node);
	out[5] = bpf_core_type_matches(atomic_t);
	out[6] = bpf_core_type_matches(enum pid_type);
	out[7] = bpf_core_type_matches(struct callback_head);
	out[8] = bpf_core_type_size(struct sk_buff);
	out[9] = bpf_core_type_id_kernel(struct task_struct);
	out[10] = bpf_core_type_id_kernel(key_ref_t);
	out[11] = bpf_core_enum_value(enum bpf_map_type, BPF_MAP_TYPE_HASH);
	out[12] = bpf_core_enum_value_exists(enum pid_type___local, PIDTYPE_NOPE___local);
	out[13] = bpf_core_enum_value(enum pid_type___local, PIDTYPE_TGID___local);
	out[14] = bpf_core_type_matches(u64);
	out[15] = bpf_core_type_matches(struct hlist_head);
	out[16] = bpf_core_type_exists(struct task_struct___nope);
	out[17] = bpf_core_type_matches(struct upid);
	return 0;
}

SEC("raw_tp/sys_enter")
int probe_fields(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *t = (void *)ctx->args[0];
	struct sk_buff *skb = (void *)ctx->args[1];
	struct pid *pid = BPF_CORE_READ(t, thread_pid);
	atomic_t *a = (void *)ctx->args[2];

	out[20] = BPF_CORE_READ_BITFIELD_PROBED(skb, pkt_type);
	out[21] = BPF_CORE_READ(pid, numbers[0].nr);
	out[22] = BPF_CORE_READ(a, counter);
	out[23] = bpf_core_field_size(t->se);
	out[24] = __builtin_preserve_field_info(t->prio, BPF_FIELD_SIGNED);
	out[25] = bpf_core_field_exists(((struct task_struct___nope *)t)->no_such_field);
	out[26] = BPF_CORE_READ((struct sched_entity___mine *)&t->se, vruntime);
	out[27] = bpf_core_field_size(t->pid_links);
	out[28] = bpf_core_field_offset(t->pid_links[1]);
	out[29] = bpf_core_field_size(skb->cb);
	out[30] = bpf_core_field_size(t->sched_class);
	out[31] = BPF_CORE_READ(t, mm, mmap_base);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
)";

// kKernelProbe built once per process, or "" (with a visible skip) where there is no vmlinux.h or it
// lacks a type the probe names.
std::string kernel_probe() {
  static const std::string path = []() -> std::string {
    const std::string header = build_data_dir() + "/vmlinux.h";
    if (!fs::exists(header)) {
      skip("no vmlinux.h in the test build: the kernel probe is not built");
      return "";
    }
    const std::string text = read_file(header);
    for (const char* needed : {"*key_ref_t;", "struct upid {", "enum bpf_map_type {", "} atomic_t;"})
      if (text.find(needed) == std::string::npos) {
        skip(std::string("vmlinux.h has no '") + needed + "': the kernel probe is not built");
        return "";
      }
    const std::string src = outputs_dir().file("kernel_probe.bpf.c"), obj = outputs_dir().file("kernel_probe.bpf.o");
    write_file(src, kKernelProbe);
    const RunResult r = run({"clang-19", "-target", "bpf", "-g", "-O2", "-Wall", "-I" + build_data_dir(), "-c", src,
                             "-o", obj});
    INFO("clang-19: " << r.err);
    REQUIRE(r.status == 0);
    return obj;
  }();
  return path;
}

// Every source the suite minimizes: each corpus target for the corpus, and the running kernel for the
// corpus, the trace programs and the kernel probe (a visible skip where there is none).
std::vector<const Minimized*> all_minimized() {
  std::vector<const Minimized*> out;
  for (const std::string& t : core_corpus_targets()) out.push_back(&minimized(t, minimize_corpus()));
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) {
    skip("no /sys/kernel/btf/vmlinux on this machine: minimize is not run on a kernel's BTF");
  } else {
    std::vector<std::string> objects = minimize_corpus();
    const std::vector<std::string> traces = trace_objects();
    if (traces.empty()) skip("the trace_*.bpf.o objects were not built (no kernel BTF at configure time)");
    objects.insert(objects.end(), traces.begin(), traces.end());
    if (const std::string probe = kernel_probe(); !probe.empty()) objects.push_back(probe);
    out.push_back(&minimized(vmlinux, objects));
  }
  return out;
}

std::string label(const Minimized& m) { return file_name(m.source) + " -> " + file_name(m.out); }

// ---- (1) our engine: btfslim check against the source and against the output ----

// Our records for `objects` on `btf`, by (object, section, relo #).
std::map<std::tuple<std::string, std::string, int>, json> check_records(const std::vector<std::string>& objects,
                                                                        const std::string& btf) {
  std::vector<std::string> args{"check"};
  args.insert(args.end(), objects.begin(), objects.end());
  args.insert(args.end(), {"--btf", btf, "--format", "json"});
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\nexit " << r.status << "\nstderr: " << r.err);
  REQUIRE((r.status == 0 || r.status == 1));
  const json doc = json::parse(r.out);
  std::map<std::tuple<std::string, std::string, int>, json> records;
  for (const json& o : doc.at("objects"))
    for (const json& rec : relocations_on_kernel(o))
      records[{o.value("file", ""), rec.value("section", ""), rec.value("relo_idx", -1)}] = rec;
  return records;
}

// Where `btfslim check` resolves a relocation of `objects` differently on `out` than on `source`: one
// line each. TYPE_ID_TARGET results are compared by the kind and name of the type they point at.
std::size_t compare_check(const std::string& source, const std::string& out, const std::vector<std::string>& objects,
                          const std::string& label, std::vector<std::string>& differences) {
  const BtfPtr src_btf = parse_btf(source), out_btf = parse_btf(out);
  const auto before = check_records(objects, source);
  const auto after = check_records(objects, out);
  CHECK(before.size() == after.size());
  std::size_t compared = 0;
  for (const auto& [key, a] : before) {
    const std::string where = label + ": " + file_name(std::get<0>(key)) + " [" + std::get<1>(key) + "] relo #" +
                              std::to_string(std::get<2>(key)) + " " + a.value("relocation_kind", "") + " " +
                              a.value("accessor", "");
    const auto it = after.find(key);
    if (it == after.end()) {
      differences.push_back(where + ": no record on the output");
      continue;
    }
    const json& b = it->second;
    ++compared;
    std::string va = a.contains("value") ? a["value"].dump() : "-", vb = b.contains("value") ? b["value"].dump() : "-";
    if (a.value("relocation_kind", "") == "target_type_id" && a.value("status", "") == "ok" && b.value("status", "") == "ok") {
      va = kind_and_name(src_btf.get(), a.value("value", std::uint64_t{0}));
      vb = kind_and_name(out_btf.get(), b.value("value", std::uint64_t{0}));
    }
    const std::string sa = a.value("status", "") + " " + va + " size " + a.value("target_size_bytes", json()).dump();
    const std::string sb = b.value("status", "") + " " + vb + " size " + b.value("target_size_bytes", json()).dump();
    if (sa != sb) differences.push_back(where + ":\n      source: " + sa + "\n      output: " + sb);
  }
  return compared;
}

void report_check(const std::vector<std::string>& differences, std::size_t compared) {
  INFO(compared << " relocations compared");
  CHECK(compared > 0);
  std::ostringstream s;
  for (const auto& d : differences) s << "  " << d << "\n";
  INFO(differences.size() << " relocation(s) resolve differently on the output:\n" << s.str());
  CHECK(differences.empty());
}

TEST_CASE("minimize: every relocation resolves on the output as on the source (btfslim check)", "[minimize]") {
  std::vector<std::string> differences;
  std::size_t compared = 0;
  for (const Minimized* m : all_minimized()) compared += compare_check(m->source, m->out, m->objects, label(*m), differences);
  report_check(differences, compared);
}

TEST_CASE("minimize: a big-endian source gives a big-endian output that resolves the same", "[minimize]") {
  TempDir dir;
  // core_target_moved's BTF in the other byte order, written by libbpf.
  const BtfPtr le = parse_btf(core_target("moved"));
  const std::string source = dir.file("moved.be.btf");
  write_file(source, raw_bytes(le.get(), true));
  REQUIRE(static_cast<unsigned char>(read_file(source)[0]) == 0xeb);

  // The CO-RE corpus built big-endian (bpfeb), which asks what the little-endian build asks.
  const std::vector<std::string> big = core_corpus_objects(true);
  const Minimized& little = minimized(core_target("moved"), core_corpus_objects());
  const std::string out = dir.file("out.btf");
  const RunResult r = btfslim(minimize_args(source, big, out));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const std::string bytes = read_file(out);
  REQUIRE(bytes.size() >= 24);
  CHECK(static_cast<unsigned char>(bytes[0]) == 0xeb);  // magic 0xeb9f, big-endian
  CHECK(static_cast<unsigned char>(bytes[1]) == 0x9f);
  // The same bytes as the little-endian source's output, swapped: libbpf reads both to the same types.
  const BtfPtr be_out = parse_btf(out);
  CHECK(btf__endianness(be_out.get()) == BTF_BIG_ENDIAN);
  const BtfPtr le_out = parse_btf(little.out);
  REQUIRE(btf__set_endianness(be_out.get(), BTF_LITTLE_ENDIAN) == 0);
  CHECK(raw_bytes(be_out.get()) == raw_bytes(le_out.get()));
  // The big-endian objects resolve on it as on its source.
  std::vector<std::string> differences;
  report_check(differences, compare_check(source, out, big, "big-endian", differences));
  // Objects of the other byte order are refused, by minimize as by check, as libbpf opens an object only
  // on a kernel of its byte order: resolving them would poison every relocation libbpf never gets to.
  for (const char* command : {"minimize", "check"}) {
    std::vector<std::string> args{command, "--btf", source};
    if (command == std::string("minimize")) args.insert(args.end(), {"-o", dir.file("refused.btf")});
    args.insert(args.end(), little.objects.begin(), little.objects.end());
    const RunResult refused = btfslim(args);
    INFO(command_line(args));
    CHECK(refused.status == 2);
    CHECK(refused.out.empty());
    CHECK(refused.err == "btfslim: " + little.objects.front() + ": byte order: a little-endian BPF object, and " +
                             source + " is big-endian: libbpf loads an object only on a kernel of its byte order "
                             "(build it with clang -target bpfeb)\n");
  }
  CHECK_FALSE(fs::exists(dir.file("refused.btf")));
}

// ---- (2) libbpf agrees ----

std::string outcome_of(const LibbpfRelo& x, const struct btf* btf) {
  std::ostringstream s;
  s << outcome_name(x.outcome);
  if (x.outcome == LibbpfRelo::Patched)
    s << " " << (x.kind == "target_type_id" ? kind_and_name(btf, x.value) : std::to_string(x.value)) << " mem_sz "
      << x.mem_size;
  if (x.outcome == LibbpfRelo::Failed) s << " " << x.error;
  return s.str();
}

// libbpf's outcomes of `object` on `src` and on `out`, compared; also each program alone where libbpf
// stopped at a failure (it relocates nothing after one).
void compare_libbpf(const std::string& object, const Minimized& m, const struct btf* src, const struct btf* out,
                    std::vector<std::string>& differences) {
  const std::string where = label(m) + ": " + file_name(object);
  auto compare_runs = [&](const LibbpfRelocation& a, const LibbpfRelocation& b, const std::string& what) {
    INFO(where << what << "\nlibbpf on the source:\n" << a.log << "\nlibbpf on the output:\n" << b.log);
    REQUIRE(a.opened);
    REQUIRE(b.opened);
    if (a.failed != b.failed || a.relocations.size() != b.relocations.size() || a.section_counts != b.section_counts)
      differences.push_back(where + what + ": libbpf " + (a.failed ? "failed" : "relocated") + " " +
                            std::to_string(a.relocations.size()) + " on the source, " +
                            (b.failed ? "failed" : "relocated") + " " + std::to_string(b.relocations.size()) +
                            " on the output");
    for (const LibbpfRelo& x : a.relocations) {
      const LibbpfRelo* y = b.find(x.program, x.relo_idx);
      const std::string ox = outcome_of(x, src), oy = y ? outcome_of(*y, out) : "not relocated";
      if (ox != oy)
        differences.push_back(where + what + " " + x.program + " relo #" + std::to_string(x.relo_idx) + " " + x.kind +
                              " " + x.local_spec + ":\n      source: " + ox + "\n      output: " + oy);
    }
  };
  const LibbpfRelocation& a = libbpf_relocate(object, m.source);
  const LibbpfRelocation& b = libbpf_relocate(object, m.out);
  compare_runs(a, b, "");
  if (a.failed || b.failed)
    for (const std::string& program : a.programs)
      compare_runs(libbpf_relocate(object, m.source, {program}), libbpf_relocate(object, m.out, {program}),
                   " (" + program + " alone)");
}

TEST_CASE("minimize: libbpf relocates every object on the output as on the source", "[minimize]") {
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  std::vector<std::string> differences;
  for (const Minimized* m : all_minimized()) {
    const BtfPtr src = parse_btf(m->source), out = parse_btf(m->out);
    for (const std::string& object : m->objects) compare_libbpf(object, *m, src.get(), out.get(), differences);
  }
  std::ostringstream s;
  for (std::size_t i = 0; i < differences.size() && i < 200; ++i) s << "  " << differences[i] << "\n";
  INFO(differences.size() << " difference(s) in libbpf's CO-RE log (type ids masked):\n" << s.str());
  CHECK(differences.empty());
}

// ---- (3) the kernel and (4) bpftool read it ----

TEST_CASE("minimize: the kernel loads the output (btf__load_into_kernel)", "[minimize]") {
  if (const std::string why = bpf_unavailable_reason(); !why.empty()) return skip(why);
  for (const Minimized* m : all_minimized()) {
    const BtfPtr out = parse_btf(m->out);
    if (btf__type_cnt(out.get()) == 1) {
      // The kernel refuses BTF without types ("No type found"); libbpf never loads a btf_custom_path.
      std::printf("btfslim-test: NOTE: %s has no types: not loaded into the kernel\n", label(*m).c_str());
      continue;
    }
    INFO(label(*m) << ": " << btf__type_cnt(out.get()) - 1 << " types (libbpf printed the kernel's log above)");
    CHECK(btf__load_into_kernel(out.get()) == 0);
  }
}

TEST_CASE("minimize: bpftool btf dump reads the output", "[minimize]") {
  const std::string bpftool = bpftool_program();
  REQUIRE(!bpftool.empty());
  for (const Minimized* m : all_minimized()) {
    const RunResult r = run({bpftool, "btf", "dump", "file", m->out});
    INFO(label(*m) << ": bpftool btf dump file: exit " << r.status << "\n" << r.err);
    CHECK(r.status == 0);
    // As many types as btfslim says it wrote, in its summary line.
    const BtfPtr out = parse_btf(m->out);
    CHECK_THAT(m->run.out, Contains(": " + std::to_string(btf__type_cnt(out.get()) - 1) + " types, "));
    CHECK(static_cast<std::size_t>(std::count(r.out.begin(), r.out.end(), '[')) >= btf__type_cnt(out.get()) - 1);
  }
}

// ---- (5) against bpftool gen min_core_btf ----

TEST_CASE("minimize keeps no member that bpftool gen min_core_btf drops", "[minimize]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const std::vector<std::string> traces = trace_objects();
  if (traces.empty()) return skip("the trace_*.bpf.o objects were not built (no kernel BTF at configure time)");
  const std::string bpftool = bpftool_program();
  REQUIRE(!bpftool.empty());

  std::vector<std::vector<std::string>> sets{traces};
  for (const std::string& t : traces) sets.push_back({t});
  TempDir dir;
  std::vector<std::string> extra;
  for (const auto& objects : sets) {
    const std::string what = objects.size() == 1 ? file_name(objects[0]) : "all trace objects";
    const Minimized& ours = minimized(vmlinux, objects);
    const std::string theirs_path = dir.file("bpftool.btf");
    std::vector<std::string> argv{bpftool, "gen", "min_core_btf", vmlinux, theirs_path};
    argv.insert(argv.end(), objects.begin(), objects.end());
    const RunResult r = run(argv);
    INFO(what << ": bpftool gen min_core_btf: " << r.err);
    REQUIRE(r.status == 0);
    const BtfPtr out = parse_btf(ours.out), theirs = parse_btf(theirs_path);
    const std::set<std::string> a = kept_members(out.get()), b = kept_members(theirs.get());
    CHECK(!a.empty());
    for (const std::string& key : a)
      if (!b.count(key)) extra.push_back(what + ": " + key);
  }
  std::ostringstream s;
  for (const auto& e : extra) s << "  " << e << "\n";
  INFO(extra.size() << " member(s) kept by btfslim and not by bpftool:\n" << s.str());
  CHECK(extra.empty());
}

TEST_CASE("minimize keeps a typedef of a pointer to a forward declaration, where bpftool aborts", "[minimize]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const std::string probe = kernel_probe();
  if (probe.empty()) return;
  TempDir dir;
  std::vector<std::string> args = minimize_args(vmlinux, {probe}, dir.file("out.btf"));
  args.insert(args.end(), {"--explain", "key_ref_t", "--explain", "__key_reference_with_attributes"});
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\n" << r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("TYPEDEF 'key_ref_t': needed by " + probe + " probe_types insn #"));
  CHECK_THAT(r.out, Contains("FWD '__key_reference_with_attributes': needed by " + probe));
  // In the output: key_ref_t -> PTR -> FWD struct __key_reference_with_attributes.
  const BtfPtr out = parse_btf(dir.file("out.btf"));
  const __s32 td = btf__find_by_name_kind(out.get(), "key_ref_t", BTF_KIND_TYPEDEF);
  REQUIRE(td > 0);
  const btf_type* ptr = btf__type_by_id(out.get(), btf__type_by_id(out.get(), static_cast<__u32>(td))->type);
  REQUIRE(btf_is_ptr(ptr));
  CHECK(kind_and_name(out.get(), ptr->type) == "fwd __key_reference_with_attributes");

  // Why the member comparison with bpftool leaves this object out.
  const std::string bpftool = bpftool_program();
  REQUIRE(!bpftool.empty());
  const RunResult theirs = run({bpftool, "gen", "min_core_btf", vmlinux, dir.file("bpftool.btf"), probe});
  if (theirs.status != 0)
    std::printf("btfslim-test: NOTE: bpftool gen min_core_btf fails on the kernel probe: %s\n",
                lines_of(theirs.err).front().c_str());
}

}  // namespace
}  // namespace btfslim::test
