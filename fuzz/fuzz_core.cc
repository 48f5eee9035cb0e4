// .BTF.ext and the CO-RE engine: any bytes as a BPF object, run through what `check` does with it.
//
// The object is opened (ELF, .BTF, .BTF.ext records checked), its kernel references listed (externs,
// attach targets, struct_ops), and its relocations resolved against three targets: its own BTF (every
// local root then has candidates, so every access path is walked), a small target built here with
// btf__add_* (a task_struct like minimal.bpf.c's, and a few shapes the corpus' roots may meet: a union,
// bitfields, enums, an array, a typedef), and the "moved" kernel of the CO-RE corpus
// (tests/data/core_target_moved.c through gcc and pahole, as the tests build it), where relocations find
// their types elsewhere. Each cell is then filled as src/cli/check.cc's check_cell fills it: the code
// read along the first resolution, reachability of every relocation (always, not only when one is
// poisoned, so that the verifier model walks every program), the kernel references resolved, the
// outcomes counted. The report is printed in every format, for the one-target run and the matrix.
#include "common.h"

#include "btfslim/check.h"
#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/loader.h"
#include "btfslim/output.h"
#include "btfslim/reach.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

namespace {

using namespace btfslim;

std::vector<CoreTarget> g_targets;  // after the object's own BTF

ObjectOnTarget cell_on(const BpfObject& object, const CandidateIndex& index, const KernelNameIndex& names,
                       std::span<const KernelRef> refs, std::optional<BpfCode>& code) {
  ObjectOnTarget cell;
  std::optional<BpfCodeReader> along;
  if (!code) along.emplace(object);
  cell.results = resolve_object(object, index, nullptr, along ? &*along : nullptr);
  if (!code) code.emplace(along->finish());
  mark_reachability(cell, &*code);
  count_outcomes(cell, false);
  cell.kernel_refs = resolve_kernel_refs(object, refs, names);
  cell.kernel_refs_decidable = names.has_functions();
  cell.target_names.emplace_back();
  for (CoreResult& r : cell.results) {
    if (r.matches.empty()) {
      cell.targets.push_back(0);
      continue;
    }
    cell.targets.push_back(static_cast<std::uint32_t>(cell.target_names.size()));
    cell.target_names.push_back(describe_targets(r));
    r.matches = r.matches.roots_only();
  }
  return cell;
}

void print(const CheckRun& run, const std::vector<std::string>& paths) {
  static fuzz::TextSink sink;
  for (const CheckFormat format : {CheckFormat::Table, CheckFormat::Json, CheckFormat::Github, CheckFormat::Junit})
    for (const bool failures_only : {false, true}) {
      CheckPrinter printer({format, failures_only}, paths, run.targets, run.strict, sink.out());
      printer.object(run, 0, 0);
      printer.finish();
      sink.out().write(printer.markdown_summary());
      sink.check("check's report");
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (auto& btf : fuzz::core_targets()) g_targets.emplace_back(std::move(btf));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::MemFile file({data, size});
  try {
    CheckRun run;
    run.objects.push_back(BpfObject::open(file.path()));
    const BpfObject& object = *run.objects.front();
    run.kernel_refs.push_back(kernel_references(object, AttachOptions{}));
    for (const CoreRelocation& r : object.relocations()) (void)describe_access(object, r);

    const BpfObject* objects[] = {&object};
    std::vector<const CoreTarget*> targets;
    const CoreTarget self(object.btf_shared());
    targets.push_back(&self);
    for (const CoreTarget& t : g_targets) targets.push_back(&t);

    const std::vector<std::string> paths = {file.path()};
    std::optional<BpfCode> code;
    run.cells.resize(1);
    for (const CoreTarget* target : targets) {
      const CandidateIndex index(*target, objects);
      const KernelNameIndex names(*target, run.kernel_refs);
      run.targets.push_back(target->name());
      run.cells[0].push_back(cell_on(object, index, names, run.kernel_refs[0], code));
    }
    print(run, paths);  // the matrix: one object on every target
    for (std::size_t t = 0; t < run.targets.size(); ++t) {
      CheckRun one;
      one.objects = std::move(run.objects);
      one.kernel_refs = run.kernel_refs;
      one.targets = {run.targets[t]};
      one.cells = {{std::move(run.cells[0][t])}};
      print(one, paths);  // one target: every relocation
      run.objects = std::move(one.objects);
    }
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  return 0;
}
