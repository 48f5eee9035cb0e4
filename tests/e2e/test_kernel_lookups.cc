// What `minimize --kernel` keeps for what the kernel looks up by name ([kernel-lookups]), on Debian's 6.1
// and 6.12 kernels with their symbols (scripts/fetch-test-kernel.sh): 6.12's struct_ops stub functions
// (FUNC and prototype) found through its image's cfi_stubs, where 6.1 looks none up; the template of a
// tp_btf program's tracepoint on 6.12 and not on 6.1; every __safe_ type whole; the struct of an object's
// kptr whole; the names the kernel's sources spell out, for each release; and a bad image (truncated, a
// struct_ops or tracepoint map pointing nowhere) refused in one line. The oracles are bpftool (the slim
// BTF's types) and readelf (the images' symbols and sections), not btfslim's own reading. The boot of both
// kernels, slim, is [kernel-boot].
#include "process.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

// The kernel of `series` with its symbols, or "" after a visible skip.
std::string kernel(const std::string& series) {
  std::string why;
  std::string vmlinux = kernel_with_symbols(series, why);
  if (vmlinux.empty()) skip(why);
  return vmlinux;
}

// bpftool's raw dump of a BTF, by id: the record's lines ("[id] KIND 'name' ..." and its members).
std::map<std::uint32_t, std::string> dump(const std::string& file) {
  const RunResult r = run({"bpftool", "btf", "dump", "file", file});
  INFO("bpftool btf dump file " << file << ": " << r.err);
  REQUIRE(r.status == 0);
  std::map<std::uint32_t, std::string> out;
  std::istringstream in(r.out);
  std::uint32_t id = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '[') id = static_cast<std::uint32_t>(std::stoul(line.substr(1)));
    out[id] += line + "\n";
  }
  return out;
}

// The record of the first type of that kind and name ("FUNC 'x'"), or "".
std::string record(const std::map<std::uint32_t, std::string>& types, const std::string& kind_and_name) {
  for (const auto& [id, text] : types)
    if (text.find("] " + kind_and_name + " ") != std::string::npos) return text;
  return "";
}

// The type a record refers to ("type_id=N" of its first line).
std::uint32_t type_of(const std::string& rec) {
  const auto at = rec.find("type_id=");
  REQUIRE(at != std::string::npos);
  return static_cast<std::uint32_t>(std::stoul(rec.substr(at + 8)));
}

// The report's line that begins with `start` (after its indent), or "".
std::string report_line(const std::string& out, const std::string& start) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.find(start) != std::string::npos) return line;
  return "";
}

RunResult minimize(const std::string& vmlinux, const std::string& dir, std::vector<std::string> more) {
  std::vector<std::string> args{"minimize", "--kernel", vmlinux, "-o", dir + "/out", "--btf-out", dir + "/slim.btf"};
  args.insert(args.end(), more.begin(), more.end());
  RunResult r = btfslim(args);
  INFO("btfslim minimize --kernel " << vmlinux << ": " << r.out << r.err);
  REQUIRE(r.status == 0);
  return r;
}

}  // namespace

TEST_CASE("6.12's struct_ops stub functions are kept with their prototypes; 6.1 looks none up", "[kernel-lookups]") {
  const std::string k612 = kernel("6.12");
  if (k612.empty() || !have("bpftool")) return;
  TempDir dir;
  const RunResult r = minimize(k612, dir.path(), {"--explain", "bpf_tcp_ca_ssthresh", "--explain", "bpf_dummy_ops__test_1"});
  CHECK_THAT(r.out, Contains("FUNC 'bpf_tcp_ca_ssthresh': kept as ["));
  CHECK_THAT(r.out, Contains("a struct_ops stub: the stub bpf_tcp_congestion_ops.cfi_stubs holds for tcp_congestion_ops.ssthresh"));
  CHECK_THAT(r.out, Contains("FUNC 'bpf_dummy_ops__test_1': kept as ["));
  CHECK_THAT(r.out, Contains("15 struct_ops stubs"));

  // Each stub the kernel's two struct_ops point to, a FUNC with the prototype it has in the source.
  const auto before = dump(k612), after = dump(dir.file("slim.btf"));
  for (const std::string name : {"bpf_tcp_ca_ssthresh", "bpf_tcp_ca_cong_avoid", "bpf_tcp_ca_set_state",
                                 "bpf_tcp_ca_cong_control", "__bpf_tcp_ca_init", "__bpf_tcp_ca_release",
                                 "bpf_dummy_ops__test_1", "bpf_dummy_test_2", "bpf_dummy_test_sleepable"}) {
    INFO(name);
    const std::string old_func = record(before, "FUNC '" + name + "'"), new_func = record(after, "FUNC '" + name + "'");
    REQUIRE(!old_func.empty());
    REQUIRE(!new_func.empty());
    // The prototype: the same parameters, names (where __nullable is read) and kinds of types.
    auto params = [](const std::map<std::uint32_t, std::string>& types, std::uint32_t proto) {
      std::string text = types.at(proto);
      text = text.substr(text.find('\n') + 1);
      std::string out;
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);) out += line.substr(0, line.find(" type_id=")) + ";";
      return out;
    };
    CHECK(params(after, type_of(new_func)) == params(before, type_of(old_func)));
    CHECK(after.at(type_of(new_func)).find("FUNC_PROTO") != std::string::npos);
  }

  const std::string k61 = kernel("6.1");
  if (k61.empty()) return;
  TempDir old_dir;
  const RunResult old = minimize(k61, old_dir.path(), {});
  CHECK_THAT(old.out, Contains("0 struct_ops stubs"));
  CHECK(record(dump(old_dir.file("slim.btf")), "FUNC 'bpf_tcp_ca_ssthresh'").empty());
}

TEST_CASE("a tp_btf program's tracepoint template is kept on 6.12 and not looked up on 6.1", "[kernel-lookups]") {
  const std::string k612 = kernel("6.12"), k61 = kernel("6.1");
  if (k612.empty() || k61.empty()) return;
  const std::string object = test_object("loader_attach");  // tp_btf/sched_switch among its programs
  if (!fs::exists(object)) return skip("no " + object + " (built where the running kernel has BTF)");
  TempDir dir, plain, family, old_dir;
  const RunResult r = minimize(k612, dir.path(), {object, "--explain", "func __bpf_trace_sched_switch"});
  CHECK_THAT(r.out, Contains("FUNC '__bpf_trace_sched_switch': kept as ["));
  CHECK_THAT(r.out, Contains("a tracepoint template: the template of tracepoint sched_switch"));
  CHECK_THAT(r.out, Contains("1 tracepoint template,"));
  // Not without a program on it (or its typedef kept); every one with the family.
  const RunResult none = minimize(k612, plain.path(), {"--explain", "func __bpf_trace_sched_switch"});
  CHECK_THAT(none.out, Contains("FUNC '__bpf_trace_sched_switch': dropped"));
  TempDir kept;
  const RunResult typedef_kept = minimize(k612, kept.path(), {"--keep", "typedef btf_trace_sched_switch"});
  CHECK_THAT(typedef_kept.out, Contains("1 tracepoint template,"));
  const RunResult all = minimize(k612, family.path(), {"--family", "tracepoints"});
  const std::string line = report_line(all.out, "names its image");
  INFO(line);
  const auto templates = std::stoul(line.substr(line.find("stubs, ") + 7));
  CHECK(templates > 400);

  const RunResult old = minimize(k61, old_dir.path(), {object, "--explain", "func __bpf_trace_sched_switch"});
  CHECK_THAT(old.out, Contains("FUNC '__bpf_trace_sched_switch': dropped"));
  CHECK_THAT(old.out, Contains("0 tracepoint templates"));
}

TEST_CASE("every __safe_ type is kept whole", "[kernel-lookups]") {
  const std::string k612 = kernel("6.12");
  if (k612.empty() || !have("bpftool")) return;
  TempDir dir;
  const RunResult r = minimize(k612, dir.path(), {"--explain", "task_struct__safe_rcu"});
  CHECK_THAT(r.out, Contains("STRUCT 'task_struct__safe_rcu': kept as ["));
  CHECK_THAT(r.out, Contains("4 of 4 members: cpus_ptr cgroups real_parent group_leader"));
  CHECK_THAT(r.out, Contains("a __safe_ type"));
  const auto before = dump(k612), after = dump(dir.file("slim.btf"));
  std::size_t safe = 0;
  for (const auto& [id, text] : before) {
    const std::string first = text.substr(0, text.find('\n'));
    if (first.find("] STRUCT '") == std::string::npos || first.find("__safe_") == std::string::npos) continue;
    const auto q = first.find('\''), q2 = first.find('\'', q + 1);
    const std::string name = first.substr(q + 1, q2 - q - 1);
    INFO(name);
    ++safe;
    const std::string kept = record(after, "STRUCT '" + name + "'");
    REQUIRE(!kept.empty());
    CHECK(std::count(kept.begin(), kept.end(), '\n') == std::count(text.begin(), text.end(), '\n'));
  }
  CHECK(safe == 12);
  CHECK_THAT(r.out, Contains("12 __safe_ types"));
}

TEST_CASE("the struct an object's kptr points to is kept whole", "[kernel-lookups]") {
  if (!have("clang-19")) return skip("no clang-19");
  TempDir dir;
  // A map value with a referenced kptr to struct cgroup: the kernel looks cgroup up by its name. (A program
  // reads a member through it, as one would, so that clang writes the struct and not a FWD into BTF.)
  write_file(dir.file("kptr.bpf.c"), R"(
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct cgroup { int level; } __attribute__((preserve_access_index));
struct value { struct cgroup __attribute__((btf_type_tag("kptr"))) *cg; };
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, int);
  __type(value, struct value);
} cgroups SEC(".maps");
SEC("syscall")
int read_cgroup(void *ctx)
{
  int key = 0;
  struct value *v = bpf_map_lookup_elem(&cgroups, &key);
  return v && v->cg ? v->cg->level : 0;
}
char LICENSE[] SEC("license") = "GPL";
)");
  const RunResult multiarch = run({"cc", "-print-multiarch"});
  REQUIRE(multiarch.status == 0);
  const RunResult cc = run({"clang-19", "-target", "bpf", "-g", "-O2", "-I/usr/include/" + multiarch.out.substr(0, multiarch.out.find('\n')),
                            "-c", dir.file("kptr.bpf.c"), "-o", dir.file("kptr.bpf.o")});
  INFO(cc.err);
  REQUIRE(cc.status == 0);
  for (const std::string series : {"6.1", "6.12"}) {
    const std::string vmlinux = kernel(series);
    if (vmlinux.empty()) continue;
    INFO("Linux " << series);
    TempDir out;
    const RunResult r = minimize(vmlinux, out.path(), {dir.file("kptr.bpf.o"), "--explain", "struct cgroup"});
    CHECK_THAT(r.out, Contains("1 kptr struct"));
    // All its members ("N of N members"), where a .BTF_ids slot alone keeps a shell and the program's CO-RE
    // relocation one member.
    const std::string line = report_line(r.out, "STRUCT 'cgroup': kept as");
    const auto comma = line.find(", "), of = line.find(" of ");
    REQUIRE(of != std::string::npos);
    CHECK(line.substr(comma + 2, of - comma - 2) == line.substr(of + 4, line.find(" members") - of - 4));
  }
}

TEST_CASE("the names the kernel's sources look up are kept for the releases that look them up", "[kernel-lookups]") {
  const std::string k61 = kernel("6.1"), k612 = kernel("6.12");
  if (k61.empty() || k612.empty()) return;
  TempDir a, b;
  const RunResult old = minimize(k61, a.path(), {"--explain", "struct nf_hook_state", "--explain", "struct module"});
  const std::string old_line = report_line(old.out, "looked up by name (Linux 6.1.0");
  INFO(old_line);
  CHECK_THAT(old_line, Contains("struct bpf_ctx_convert, struct module, struct sock, struct tcp_sock, struct bpf_dummy_ops_state"));
  for (const std::string absent : {"tcp_congestion_ops", "sk_buff", "nf_hook_state", "task_struct", "hid_"})
    CHECK(old_line.find(absent) == std::string::npos);
  CHECK_THAT(old.out, Contains("STRUCT 'nf_hook_state': dropped"));
  CHECK_THAT(old.out, Contains("looked up by name by the kernel (Linux 5.6 to 6.8): bpf_struct_ops_init"));

  const RunResult now = minimize(k612, b.path(), {"--explain", "struct nf_hook_state", "--explain", "struct tcp_congestion_ops"});
  const std::string line = report_line(now.out, "looked up by name (Linux 6.12.");
  INFO(line);
  CHECK_THAT(line, Contains("struct bpf_ctx_convert, struct sock, struct tcp_sock, struct tcp_congestion_ops, "
                            "struct bpf_dummy_ops_state, struct sk_buff, struct nf_hook_state"));
  // A .BTF_ids slot since 6.9; and Debian's cloud kernel has no sched_ext or HID-BPF built in.
  for (const std::string absent : {"struct module", "task_struct", "hid_"}) CHECK(line.find(absent) == std::string::npos);
  CHECK_THAT(now.out, Contains("STRUCT 'nf_hook_state': kept as ["));
  CHECK_THAT(now.out, Contains("(Linux 6.4+, where it has netfilter_prog_ops): nf_ptr_to_btf_id"));
  CHECK_THAT(now.out, Contains("(Linux 6.9 to 6.15, where it has bpf_tcp_congestion_ops): bpf_tcp_ca_init"));
}

namespace {

// Where symbol `name` of an ELF file is in the file: its address's offset in its section (readelf).
std::uint64_t file_offset_of(const std::string& elf, const std::string& name) {
  const RunResult syms = run({"readelf", "-sW", elf});
  REQUIRE(syms.status == 0);
  std::uint64_t addr = 0;
  std::istringstream in(syms.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string num, value, size, type, bind, vis, ndx, sym;
    if (f >> num >> value >> size >> type >> bind >> vis >> ndx >> sym && sym == name) addr = std::stoull(value, nullptr, 16);
  }
  REQUIRE(addr != 0);
  const RunResult sections = run({"readelf", "-SW", elf});
  std::istringstream sin(sections.out);
  for (std::string line; std::getline(sin, line);) {
    const auto close = line.find(']');
    if (close == std::string::npos) continue;
    std::istringstream f(line.substr(close + 1));
    std::string sname, type, a, off, size;
    if (!(f >> sname >> type >> a >> off >> size) || type != "PROGBITS") continue;
    const std::uint64_t start = std::stoull(a, nullptr, 16), length = std::stoull(size, nullptr, 16);
    if (start != 0 && addr >= start && addr < start + length) return std::stoull(off, nullptr, 16) + (addr - start);
  }
  FAIL("no section holds " << name);
  return 0;
}

}  // namespace

TEST_CASE("an image whose own data cannot be read where its symbols say is refused in one line", "[kernel-lookups]") {
  const std::string k612 = kernel("6.12");
  if (k612.empty() || !have("readelf")) return;
  TempDir dir;
  const std::string image = read_file(k612), out = dir.file("out");
  auto refused = [&](const std::string& bytes, const std::vector<std::string>& more, const std::string& says) {
    write_file(dir.file("vmlinux"), bytes);
    std::vector<std::string> args{"minimize", "--kernel", dir.file("vmlinux"), "-o", out};
    args.insert(args.end(), more.begin(), more.end());
    const RunResult r = btfslim(args);
    INFO(r.out << r.err);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Contains(says));
    CHECK(!fs::exists(out));
  };
  // Cut short: its sections lie past its end.
  refused(image.substr(0, image.size() / 2), {}, "lies past the end of the file");
  // tcp_congestion_ops' cfi_stubs (at 64 in struct bpf_struct_ops) pointing where no section is.
  std::string bad = image;
  const std::uint64_t nowhere = 0x0000100000000000ull;
  std::memcpy(bad.data() + file_offset_of(k612, "bpf_tcp_congestion_ops") + 64, &nowhere, 8);
  refused(bad, {}, "struct_ops bpf_tcp_congestion_ops: its cfi_stubs at 0x100000000000 cannot be read");
  // The first tracepoint map entry's tracepoint pointing nowhere, read for --family tracepoints.
  bad = image;
  std::memcpy(bad.data() + file_offset_of(k612, "__start__bpf_raw_tp"), &nowhere, 8);
  refused(bad, {"--family", "tracepoints"}, "the tracepoint of its bpf_raw_event_map entry at 0x");
}

}  // namespace btfslim::test
