// .BTF.ext and the CO-RE engine: any bytes as a BPF object, run through what `check` does with it.
//
// The object is opened (ELF, .BTF, .BTF.ext records checked), and its relocations resolved against
// three targets: its own BTF (every local root then has candidates, so every access path is walked), a
// small target built here with btf__add_* (a task_struct like minimal.bpf.c's, and a few shapes the
// corpus' roots may meet: a union, bitfields, enums, an array, a typedef), and the "moved" kernel of
// the CO-RE corpus (tests/data/core_target_moved.c through gcc and pahole, as the tests build it),
// where relocations find their types elsewhere. Then the check report is built and printed as
// `check` prints it: guarded relocations, target descriptions, table and JSON, the verdict.
#include "common.h"

#include "btfslim/check.h"
#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/output.h"

#include <bpf/btf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

using namespace btfslim;

std::vector<CoreTarget> g_targets;  // after the object's own BTF

int added(int id) {
  if (id < 0) {
    std::fprintf(stderr, "fuzz_core: btf__add_* failed: %d\n", id);
    std::abort();
  }
  return id;
}

std::shared_ptr<const Btf> small_target() {
  std::unique_ptr<struct btf, void (*)(struct btf*)> b(btf__new_empty(), btf__free);
  struct btf* t = b.get();
  const int i32 = added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));
  const int u8 = added(btf__add_int(t, "unsigned char", 1, 0));
  const int task_ptr = added(btf__add_ptr(t, 4));  // to the struct that follows
  added(btf__add_struct(t, "task_struct", 64));   // 4
  added(btf__add_field(t, "state", i32, 0, 0));
  added(btf__add_field(t, "flags", u8, 32, 3));
  added(btf__add_field(t, "mode", u8, 35, 5));
  added(btf__add_field(t, "tgid", i32, 96, 0));
  added(btf__add_field(t, "pid", i32, 128, 0));
  added(btf__add_field(t, "parent", task_ptr, 192, 0));
  const int arr = added(btf__add_array(t, i32, i32, 4));
  const int un = added(btf__add_union(t, "nest_mix", 16));
  added(btf__add_field(t, "p", i32, 0, 0));
  added(btf__add_field(t, "q", arr, 0, 0));
  added(btf__add_typedef(t, "pid_t", i32));
  added(btf__add_enum(t, "prim_enum", 4));
  added(btf__add_enum_value(t, "PRIM_ONE", 1));
  added(btf__add_enum_value(t, "PRIM_ZERO", 0));
  added(btf__add_enum64(t, "e64", 8, false));
  added(btf__add_enum64_value(t, "BIG", 0x100000000ULL));
  added(btf__add_fwd(t, "flavored", BTF_FWD_STRUCT));
  (void)un;
  __u32 size = 0;
  const void* data = btf__raw_data(t, &size);
  if (!data) std::abort();
  auto owner = std::make_shared<std::vector<std::uint8_t>>(static_cast<const std::uint8_t*>(data),
                                                           static_cast<const std::uint8_t*>(data) + size);
  return Btf::parse("small-target.btf", owner, std::span<const std::uint8_t>(*owner));
}

int devnull() {
  static const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_targets.emplace_back(small_target());
#ifdef BTFSLIM_FUZZ_MOVED_TARGET
  g_targets.emplace_back(load_btf_file(BTFSLIM_FUZZ_MOVED_TARGET, nullptr));
#endif
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::MemFile file({data, size});
  try {
    CheckRun run;
    run.objects.push_back(BpfObject::open(file.path()));
    const BpfObject& object = *run.objects.front();
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
      cell.guarded = guarded_relocations(object, cell.results);
      for (CoreResult& r : cell.results) {
        cell.targets.push_back(describe_targets(r));
        for (TargetSpec& m : r.matches) {
          m.steps = {};
          m.btf = nullptr;
        }
      }
      run.cells[0].push_back(std::move(cell));
    }
    OutputBuffer out(devnull(), "/dev/null");
    print_check_table(run, out);
    print_check_json(run, out);
    out.flush();
    (void)check_failed(run);
  } catch (const InputError&) {
  }
  return 0;
}
