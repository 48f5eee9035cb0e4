// `btfslim minimize` writing split BTF ([minimize-split]): on another base with `--split-base` (only what
// the base lacks; relocations resolve as on the source, searched as libbpf and the kernel search a module
// on its vmlinux: the base first, the split only for names the base lacks), and for a module
// (`--btf MODULE.ko -B VMLINUX`: the module's own types on vmlinux, or on a minimized vmlinux). -B is the
// input's base here as on every command.
// Each output is read back by libbpf (btf__parse_split), bpftool and btfslim, and its relocations are
// compared with the source's through `btfslim check` (JSON, type ids masked).
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "check_json.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nlohmann::json;

// "KIND name" of the named types a BTF has of its own (not its base's).
std::set<std::string> own_named_types(const struct btf* b) {
  std::set<std::string> out;
  const struct btf* base = btf__base_btf(b);
  for (unsigned id = base ? btf__type_cnt(base) : 1; id < btf__type_cnt(b); ++id) {
    const btf_type* t = btf__type_by_id(b, id);
    if (t->name_off) out.insert(std::to_string(btf_kind(t)) + " " + btf__name_by_offset(b, t->name_off));
  }
  return out;
}

unsigned own_types(const struct btf* b) {
  const struct btf* base = btf__base_btf(b);
  return btf__type_cnt(b) - (base ? btf__type_cnt(base) : 1);
}

RunResult minimize(const std::vector<std::string>& options, const std::vector<std::string>& objects) {
  std::vector<std::string> args{"minimize"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), objects.begin(), objects.end());
  RunResult r = btfslim(args);
  INFO("btfslim minimize ...: exit " << r.status << "\n" << r.out << r.err);
  REQUIRE(r.status == 0);
  return r;
}

// What `btfslim check` says of every relocation, type ids left out (they differ by design).
std::vector<std::string> outcomes(const std::vector<std::string>& target, const std::vector<std::string>& objects) {
  std::vector<std::string> args{"check", "--format", "json"};
  for (const std::string& t : target) args.push_back(t);
  args.insert(args.end(), objects.begin(), objects.end());
  const RunResult r = btfslim(args);
  INFO("btfslim check: " << r.err);
  REQUIRE((r.status == 0 || r.status == 1));
  std::vector<std::string> out;
  const json report = json::parse(r.out);
  for (const json& obj : report.at("objects"))
    for (const json& rel : relocations_on_kernel(obj)) {
      const std::string kind = rel.at("relocation_kind");
      out.push_back(obj.at("file").get<std::string>() + " #" + std::to_string(rel.at("relo_idx").get<int>()) + " " +
                    kind + " " + rel.at("accessor").get<std::string>() + ": " + rel.at("status").get<std::string>() +
                    (kind == "target_type_id" ? "" : " " + rel.value("value", json()).dump()) + " local " +
                    rel.value("local_value", json()).dump());
    }
  return out;
}

TEST_CASE("minimize --split-base writes split BTF with only what the base lacks", "[minimize-split]") {
  const TempDir dir;
  const std::string source = core_target("moved");
  const std::vector<std::string> both = {test_object("core_enums"), test_object("core_bitfields")};
  const std::string base = dir.file("base.btf"), split = dir.file("split.btf"), whole = dir.file("whole.btf");
  minimize({"--btf", source, "-o", base}, {test_object("core_enums")});
  minimize({"--btf", source, "-o", whole}, both);
  const RunResult r = minimize({"--btf", source, "--split-base", base, "-o", split}, both);
  CHECK_THAT(r.out, Contains("split on " + base));

  const BtfPtr base_btf = parse_btf(base), split_btf = parse_btf(split, base_btf.get()), whole_btf = parse_btf(whole);
  INFO("base " << own_types(base_btf.get()) << " types, split " << own_types(split_btf.get()) << ", whole "
               << own_types(whole_btf.get()));
  CHECK(own_types(split_btf.get()) > 0);
  CHECK(own_types(split_btf.get()) < own_types(whole_btf.get()));
  // Nothing the base has by kind and name is written again: the enums are all the base's.
  std::set<std::string> twice;
  const std::set<std::string> in_base = own_named_types(base_btf.get());
  for (const std::string& t : own_named_types(split_btf.get()))
    if (in_base.count(t)) twice.insert(t);
  CHECK(twice.empty());

  // Read by bpftool and btfslim on the base, and every relocation resolves as on the source.
  CHECK(run({bpftool_program(), "-B", base, "btf", "dump", "file", split}).status == 0);
  CHECK(btfslim({"dump", split, "--base", base}).status == 0);
  CHECK(outcomes({"--btf", split, "--base", base}, both) == outcomes({"--btf", source}, both));

  // The same bytes on every run.
  const std::string again = dir.file("again.btf");
  minimize({"--btf", source, "--split-base", base, "-o", again}, both);
  CHECK(read_file(again) == read_file(split));
}

TEST_CASE("minimize --split-base on a base that has everything writes an empty split BTF", "[minimize-split]") {
  const TempDir dir;
  const std::string source = core_target("moved");
  const std::vector<std::string> objects = {test_object("core_fields"), test_object("core_types")};
  const std::string whole = dir.file("whole.btf");
  minimize({"--btf", source, "-o", whole}, objects);
  for (const std::string& base : {source, whole}) {
    INFO("base " << base);
    const std::string out = dir.file("empty.btf");
    minimize({"--btf", source, "--split-base", base, "-o", out}, objects);
    const BtfPtr base_btf = parse_btf(base);
    CHECK(own_types(parse_btf(out, base_btf.get()).get()) == 0);
    CHECK(outcomes({"--btf", out, "--base", base}, objects) == outcomes({"--btf", source}, objects));
  }
}

TEST_CASE("minimize --split-base refuses what split BTF cannot say, and writes nothing", "[minimize-split]") {
  const TempDir dir;
  const std::string out = dir.file("out.btf");
  // A base of the other byte order cannot carry the split BTF.
  const std::string source = core_target("moved"), base = dir.file("base.btf"), big = dir.file("big.btf");
  minimize({"--btf", source, "-o", base}, {test_object("core_types")});
  write_file(big, raw_bytes(parse_btf(base).get(), true));
  const RunResult e = btfslim({"minimize", "--btf", source, "--split-base", big, "-o", out, test_object("core_fields")});
  CHECK(e.status == 2);
  CHECK_THAT(e.err, Contains(big) && Contains("big-endian"));
  CHECK(!fs::exists(out));

  // A base that has struct task_struct (and what else trace_exec reads) with only what trace_exec reads:
  // the other trace objects read members it lacks, which a split BTF cannot add (libbpf takes the base's
  // type and never looks at the split's copy). Which relocation is named first depends on the objects'
  // order.
  const std::string vmlinux = running_vmlinux();
  const std::vector<std::string> traces = trace_objects();
  if (vmlinux.empty() || traces.empty())
    return skip("no /sys/kernel/btf/vmlinux and trace objects: the ambiguity case needs them");
  const std::string exec_base = dir.file("exec.btf");
  minimize({"--btf", vmlinux, "-o", exec_base}, {test_object("trace_exec")});
  std::vector<std::string> args{"minimize", "--btf", vmlinux, "--split-base", exec_base, "-o", out};
  args.insert(args.end(), traces.begin(), traces.end());
  const RunResult r = btfslim(args);
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Contains(exec_base + " lacks what the objects need") && Contains("resolves differently") &&
                        Contains("has no member") && Contains("cannot add members"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(!fs::exists(out));
}

TEST_CASE("minimize --split-base and check agree: a base type without the members the objects need is refused",
          "[minimize-split]") {
  // Two real projects' objects (the shared corpus) that read struct sock, pt_regs, iphdr and ipv6hdr:
  // a base minimized for the first lacks members the second reads. A split BTF cannot add them (a second
  // struct sock in the split is never a candidate where the base has one), so minimize refuses, as check
  // on such a pair reports the relocations poisoned; a base minimized for both is taken, and check
  // resolves every relocation on base and split as on the source.
  const std::string corpus = corpus_dir(), vmlinux = running_vmlinux();
  if (corpus.empty() || vmlinux.empty()) return skip("needs the shared corpus and /sys/kernel/btf/vmlinux");
  const std::string first = corpus + "/alibaba-kubeskoop/pkg__exporter__probe__tracekernel__bpf_bpfel_x86.o";
  const std::string second = corpus + "/grafana-beyla/pkg__internal__ebpf__ktracer__bpf_x86_bpfel.o";
  if (!fs::exists(first) || !fs::exists(second)) return skip("the corpus lacks the kubeskoop and beyla objects");
  const TempDir dir;
  const std::string base = dir.file("base.btf"), more = dir.file("more.btf");
  minimize({"--btf", vmlinux, "-o", base}, {first});
  const RunResult r = btfslim({"minimize", "--btf", vmlinux, "--split-base", base, "-o", more, second});
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Contains(base + " lacks what the objects need") && Contains("has no member") &&
                        Contains("only for names the base lacks"));
  CHECK(!fs::exists(more));

  // The same pair made by hand (the split written with no verification): check says what minimize said.
  const RunResult unverified = btfslim({"minimize", "--btf", vmlinux, "--split-base", base, "--no-verify", "-o", more, second});
  REQUIRE(unverified.status == 0);
  const RunResult c = btfslim({"check", "--btf", more, "-B", base, second});
  CHECK(c.status == 1);
  CHECK_THAT(c.out, Contains("POISONED") && Contains("has no member"));

  // A base minimized for both: the split adds nothing the base has by name, and check agrees with the
  // source relocation by relocation.
  const std::string both = dir.file("both.btf"), rest = dir.file("rest.btf");
  minimize({"--btf", vmlinux, "-o", both}, {first, second});
  minimize({"--btf", vmlinux, "--split-base", both, "-o", rest}, {second});
  CHECK(outcomes({"--btf", rest, "--base", both}, {second}) == outcomes({"--btf", vmlinux}, {second}));
}

TEST_CASE("minimize of a module writes split BTF on its vmlinux, or on a minimized vmlinux", "[minimize-split]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux: no module BTF can be built on it");
  const TempDir dir;
  const std::string ko = build_module(dir, vmlinux, ".modinfo");
  const std::vector<std::string> objects = {test_object("core_module")};
  const auto expected = outcomes({"--btf", ko, "--base", vmlinux}, objects);
  for (const std::string& o : expected) CHECK_THAT(o, Contains(": ok"));

  // On the module's own base: only module types, few of them.
  const std::string on_vmlinux = dir.file("on_vmlinux.btf");
  const RunResult r = minimize({"--btf", ko, "-B", vmlinux, "-o", on_vmlinux}, objects);
  CHECK_THAT(r.out, Contains("split on " + vmlinux));
  const BtfPtr vmlinux_btf = parse_btf(vmlinux);
  const BtfPtr out = parse_btf(on_vmlinux, vmlinux_btf.get());
  const std::set<std::string> own = own_named_types(out.get());
  INFO(own.size() << " named types");
  CHECK(own.count(std::to_string(BTF_KIND_STRUCT) + " nf_demo_conn") == 1);
  CHECK(own.count(std::to_string(BTF_KIND_STRUCT) + " task_struct") == 0);  // vmlinux's
  CHECK(own_types(out.get()) <= 6);
  CHECK(run({bpftool_program(), "-B", vmlinux, "btf", "dump", "file", on_vmlinux}).status == 0);
  CHECK(outcomes({"--btf", on_vmlinux, "--base", vmlinux}, objects) == expected);
  // --btf-base, the input base's name before -B meant it everywhere, still reads the same.
  const std::string old_name = dir.file("old_name.btf");
  minimize({"--btf", ko, "--btf-base", vmlinux, "-o", old_name}, objects);
  CHECK(read_file(old_name) == read_file(on_vmlinux));

  // On a vmlinux minimized for the same objects: task_struct comes from that base.
  const std::string small_vmlinux = dir.file("vmlinux.min.btf"), on_small = dir.file("on_small.btf");
  minimize({"--btf", vmlinux, "-o", small_vmlinux}, objects);
  minimize({"--btf", ko, "--base-btf", vmlinux, "--split-base", small_vmlinux, "-o", on_small}, objects);
  const BtfPtr small_btf = parse_btf(small_vmlinux);
  const BtfPtr on_small_btf = parse_btf(on_small, small_btf.get());
  CHECK(own_named_types(on_small_btf.get()).count(std::to_string(BTF_KIND_STRUCT) + " nf_demo_conn") == 1);
  CHECK(own_named_types(on_small_btf.get()).count(std::to_string(BTF_KIND_STRUCT) + " task_struct") == 0);
  CHECK(outcomes({"--btf", on_small, "--base", small_vmlinux}, objects) == expected);
  INFO("vmlinux minimized: " << fs::file_size(small_vmlinux) << " bytes; module on it: " << fs::file_size(on_small));
  CHECK(fs::file_size(small_vmlinux) + fs::file_size(on_small) < 2048);
}

}  // namespace
}  // namespace btfslim::test
