// Differential: btfslim's CO-RE engine against libbpf 1.1.2's, on mutated objects and real targets.
//
// The objects the build compiles from tests/bpf are mutated in place (common.h's ObjectTemplate: the
// first byte picks one, the rest is XORed over its .BTF.ext, then its .BTF), so that the records point
// at other instructions, types, access strings and kinds, and the local types change under them. Each
// input is relocated against one target, which the first byte's top bit picks: the CO-RE corpus' "moved"
// kernel (tests/data/core_target_moved.c, as pahole encodes a kernel) or, where this machine has one,
// the running kernel's /sys/kernel/btf/vmlinux:
//   - by btfslim, as `check --format json` reports it (BpfObject, resolve_object, mark_reachability,
//     CheckPrinter), each relocation's record read back;
//   - by libbpf, which logs every result while bpf_object__load relocates (btf_custom_path), read by
//     the tests' own log parser (tests/support/libbpf_oracle.h).
// Every relocation libbpf relocated must have btfslim's record with the same outcome, value, section,
// kind, local type, instruction and matching targets (relocation_difference, what `[check]` holds
// check to on the corpus): a difference aborts with both sides, as a finding. libbpf stops at an
// object's first failure; what it did before is compared.
//
// Compared only where both take the object. An object btfslim refuses is not handed to libbpf, which
// reads ids unchecked and crashed on one (1.1.2 checks little of .BTF and .BTF.ext); libbpf drops a
// .BTF.ext it cannot read, and then relocates nothing. Such inputs are counted, not compared. At exit
// the counts are printed: inputs, pairs and relocations compared, the inputs refused by each side, and
// btfslim's most frequent reasons. Needs bpf() (libbpf relocates inside the load): without it, every
// input is only counted, and a line says why.
#include "common.h"
#include "libbpf_oracle.h"

#include "btfslim/check.h"
#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/loader.h"
#include "btfslim/reach.h"

#include "check_json.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace btfslim;
using nlohmann::json;

struct Target {
  std::string path;  // what libbpf reads (btf_custom_path)
  CoreTarget core;   // what btfslim reads, once
};

std::vector<fuzz::ObjectTemplate> g_templates;
std::vector<Target> g_targets;
std::string g_unavailable;  // why libbpf cannot relocate here, or ""

struct Counts {
  std::size_t inputs = 0;
  std::size_t ours_refused = 0;    // btfslim refused the object (InputError)
  std::map<std::string, std::size_t> why_refused;  // their messages, numbers and path left out
  std::size_t libbpf_refused = 0;  // libbpf could not open it, or dropped its .BTF.ext
  std::size_t pairs = 0;           // object/target pairs compared
  std::size_t relocations = 0;     // relocations compared
  std::size_t outside = 0;         // relocations where libbpf read outside a type (reads_outside_type)
  ~Counts() {
    std::fprintf(stderr,
                 "fuzz_core_libbpf: %zu inputs; %zu object/target pairs compared, %zu relocations, 0 "
                 "disagreements; not compared: %zu refused by btfslim, %zu by libbpf, %zu relocations where "
                 "libbpf read outside a type%s%s\n",
                 inputs, pairs, relocations, ours_refused, libbpf_refused, outside, g_unavailable.empty() ? "" : "; ",
                 g_unavailable.c_str());
    // The most frequent reasons, for the record.
    std::vector<std::pair<std::size_t, std::string>> by_count;
    for (const auto& [why, n] : why_refused) by_count.emplace_back(n, why);
    std::sort(by_count.rbegin(), by_count.rend());
    for (std::size_t i = 0; i < by_count.size() && i < 5; ++i)
      std::fprintf(stderr, "fuzz_core_libbpf:   %zu refused: %s\n", by_count[i].first, by_count[i].second.c_str());
  }
} g_counts;

// Whether libbpf read outside a type for this relocation: its access string (the spec it logs, each
// index printed with %d) has a negative index into a struct's members, or into an enum's values. 1.1.2
// compares that index as an int with the 16-bit count and then reads the entry before the first, so
// what it does next follows from bytes that are no member or enumerator. btfslim refuses such an access
// string (fuzz/README.md); there is nothing defined to agree with, so it is counted, not compared. A
// negative first index of a field access is defined, and compared; a negative index past the first into
// a flexible array is defined too, but the log does not tell it from a member's, so it is counted here.
bool reads_outside_type(const test::LibbpfRelo& x) {
  const auto open = x.local_spec.rfind('(');
  if (open == std::string::npos) return false;
  const std::string_view raw = std::string_view(x.local_spec).substr(open + 1);
  const bool enum_value = x.kind.starts_with("enumval");
  return enum_value ? raw.starts_with("-") : raw.substr(0, raw.find(' ')).find(":-") != std::string_view::npos;
}

// A refusal's message without the input's path and with every number as N, to count by kind.
std::string refusal_class(std::string_view message) {
  if (const auto colon = message.find(": "); colon != std::string_view::npos) message.remove_prefix(colon + 2);
  std::string out;
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(message[i]))) {
      while (i + 1 < message.size() && std::isdigit(static_cast<unsigned char>(message[i + 1]))) ++i;
      out += 'N';
      continue;
    }
    out += message[i];
  }
  return out;
}

// btfslim's records of `run`'s object on `target`: check's JSON, by (program, relo #).
std::map<std::pair<std::string, int>, json> our_records(const std::string& path, CheckRun& run, const CoreTarget& target) {
  static fuzz::TextSink sink;
  const BpfObject& object = *run.objects.front();
  const BpfObject* objects[] = {&object};
  const CandidateIndex index(target, objects);
  const KernelNameIndex names(target, run.kernel_refs);
  run.targets = {target.name()};
  ObjectOnTarget cell;
  BpfCodeReader along(object);
  cell.results = resolve_object(object, index, nullptr, &along);
  const BpfCode code = along.finish();
  mark_reachability(cell, &code);
  count_outcomes(cell, false);
  cell.kernel_refs_decidable = names.has_functions();
  cell.target_names.emplace_back();
  for (CoreResult& r : cell.results) {
    cell.targets.push_back(0);
    r.matches = r.matches.roots_only();
  }
  run.cells = {{std::move(cell)}};
  const std::vector<std::string> paths = {path};
  CheckPrinter printer({CheckFormat::Json, false}, paths, run.targets, false, sink.out());
  printer.object(run, 0, 0);
  printer.finish();
  const json doc = json::parse(sink.take("check --format json"));
  std::map<std::pair<std::string, int>, json> out;
  for (const json& r : test::relocations_on_kernel(doc.at("objects").at(0)))
    out.emplace(std::make_pair(r.value("program", ""), r.value("relo_idx", -1)), r);
  return out;
}

[[noreturn]] void disagreement(const std::string& target, const std::string& what, const std::string& log) {
  std::fprintf(stderr, "fuzz_core_libbpf: btfslim and libbpf disagree against %s:\n  %s\nlibbpf's log:\n%s\n",
               target.c_str(), what.c_str(), log.c_str());
  std::abort();
}

}  // namespace

// libbpf 1.1.2's leak, not btfslim's: bpf_object__relocate_core returns early, without freeing its
// candidate cache and the target BTF it parsed, when a record's instruction offset is not a multiple of
// 8 (`if (rec->insn_off % BPF_INSN_SZ) return -EINVAL;`; found here) or a section's name offset names no
// string. libbpf.a has no frame pointers, so the reports show only its allocators' callers: those are
// suppressed, in this target alone (nothing else here calls them).
extern "C" const char* __lsan_default_suppressions() {
  return "leak:hashmap__new\nleak:hashmap_insert\nleak:bpf_core_add_cands\nleak:btf_new\nleak:libbpf_add_mem\n";
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::istringstream paths(BTFSLIM_FUZZ_OBJECTS);
  for (std::string path; std::getline(paths, path, ':');)
    if (!path.empty()) g_templates.push_back(fuzz::read_template(path, {fuzz::Region::Ext, fuzz::Region::Btf}));
  if (g_templates.empty()) std::abort();
  std::vector<std::string> targets = {BTFSLIM_FUZZ_MOVED_TARGET};
  if (::access("/sys/kernel/btf/vmlinux", R_OK) == 0) targets.push_back("/sys/kernel/btf/vmlinux");
  for (const std::string& t : targets) g_targets.push_back({t, CoreTarget(load_btf_file(t, nullptr))});
  g_unavailable = test::bpf_unavailable_reason();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ++g_counts.inputs;
  const fuzz::ObjectTemplate& t = g_templates[data[0] % g_templates.size()];
  const std::string bytes = t.mutated({data + 1, size - 1});
  const fuzz::MemFile file({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  CheckRun run;
  try {
    run.objects.push_back(BpfObject::open(file.path()));
    run.kernel_refs.push_back({});  // relocations only: kernel references are not libbpf's CO-RE
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
    // Not handed to libbpf: 1.1.2 reads the type ids of records and types unchecked, and crashed in
    // __bpf_core_types_match on one of these (found here). Counted by what btfslim said.
    ++g_counts.ours_refused;
    ++g_counts.why_refused[refusal_class(e.what())];
    return 0;
  }
  if (!g_unavailable.empty()) return 0;
  // One target per input (the first byte's top bit), so that an input costs one libbpf load: the real
  // kernel's 5 MB of BTF is most of the time here.
  {
    const Target& target = g_targets[(data[0] >> 7) % g_targets.size()];
    const test::LibbpfRelocation theirs = test::run_libbpf_relocation(file.path(), target.path, {}, true);
    if (!theirs.opened || !theirs.relocated) {
      ++g_counts.libbpf_refused;
      return 0;
    }
    const auto ours = our_records(file.path(), run, target.core);
    ++g_counts.pairs;
    for (const test::LibbpfRelo& x : theirs.relocations) {
      if (reads_outside_type(x)) {
        ++g_counts.outside;
        continue;
      }
      const auto it = ours.find({x.program, x.relo_idx});
      if (it == ours.end())
        disagreement(target.path,
                     x.program + " relo #" + std::to_string(x.relo_idx) + ": libbpf " + test::describe_libbpf(x) +
                         ", btfslim has no such record",
                     theirs.log);
      if (const std::string d = test::relocation_difference(x, it->second); !d.empty())
        disagreement(target.path, d, theirs.log);
      ++g_counts.relocations;
    }
  }
  return 0;
}
