// .BTF.ext and the CO-RE engine: any bytes as a BPF object, run through what `check` does with it.
//
// The object is opened (ELF, .BTF, .BTF.ext records checked), and its relocations resolved against
// three targets: its own BTF (every local root then has candidates, so every access path is walked), a
// small target built here with btf__add_* (a task_struct like minimal.bpf.c's, and a few shapes the
// corpus' roots may meet: a union, bitfields, enums, an array, a typedef), and the "moved" kernel of
// the CO-RE corpus (tests/data/core_target_moved.c through gcc and pahole, as the tests build it),
// where relocations find their types elsewhere. Then the check report is built and printed as
// `check` prints it: reachability of the object's code, target descriptions, table and JSON, the verdict.
#include "common.h"

#include "btfslim/check.h"
#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/output.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

using namespace btfslim;

std::vector<CoreTarget> g_targets;  // after the object's own BTF

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
    const BpfCode code(object);
    for (const CoreRelocation& r : object.relocations()) (void)describe_access(object, r);

    const BpfObject* objects[] = {&object};
    std::vector<const CoreTarget*> targets;
    const CoreTarget self(object.btf_shared());
    targets.push_back(&self);
    for (const CoreTarget& t : g_targets) targets.push_back(&t);

    run.cells.resize(1);
    for (const CoreTarget* target : targets) {
      const CandidateIndex index(*target, objects);
      run.targets.push_back(target->name());
      ObjectOnTarget cell;
      cell.results = resolve_object(object, index);
      mark_reachability(cell, code);
      for (CoreResult& r : cell.results) {
        cell.targets.push_back(describe_targets(r));
        for (TargetSpec& m : r.matches) {
          m.steps = {};
          m.btf = nullptr;
        }
      }
      run.cells[0].push_back(std::move(cell));
    }
    static fuzz::TextSink sink;
    print_check_table(run, sink.out());
    print_check_json(run, sink.out());
    sink.check("check");
    (void)check_failed(run);
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  return 0;
}
