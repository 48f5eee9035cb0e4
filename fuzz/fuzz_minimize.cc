// minimize end to end: any bytes as a BPF object, minimized against well-formed targets as
// `btfslim minimize` does, and the output checked the way the command checks it before writing.
//
// For each target (the small one of common.h and the CO-RE corpus' "moved" kernel): the object's
// relocations are resolved, the target minimized for them, standalone and as split BTF on the target
// itself (which must then hold no types), marked in one go and object by object (RelocationMarker, as
// the command marks), and each output must parse back with our reader and resolve every relocation as
// the target does (verify_minimized, with the answers the source gave). The object may be refused
// (InputError while opening it); once it is open, minimizing against a well-formed target must not fail:
// an InputError there, an output that does not parse or a relocation that resolves differently is a
// finding.
#include "common.h"

#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/minimize.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

using namespace btfslim;

std::vector<std::shared_ptr<const Btf>> g_targets;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_minimize: %s\n", what.c_str());
  std::abort();
}

void minimize_on(const std::shared_ptr<const Btf>& target, const BpfObject& object) {
  const std::vector<const BpfObject*> objects = {&object};
  const CoreTarget core = minimize_target(target);
  const CandidateIndex index(core, objects);
  std::vector<AnswerLog> answers(1);
  const std::vector<CoreResults> results = {resolve_object(object, index, &answers[0])};
  for (const bool split : {false, true}) {
    MinimizeOptions options;
    if (split) options.base = target;
    try {
      // Marked in one go (minimize() over the results), and object by object as `minimize` marks them
      // (RelocationMarker): the same bytes.
      const Minimized m = minimize(*target, objects, results, options);
      RelocationMarker marker(*target);
      marker.add(object, 0, results[0]);
      if (minimize(*target, marker.finish(), options).bytes != m.bytes)
        finding("RelocationMarker and mark_relocations write different BTF on " + target->name());
      const std::shared_ptr<const Btf> out = m.parse("minimized.btf");
      if (split && out->end_id() != target->end_id())
        finding("split output on its own source has " + std::to_string(out->end_id() - target->end_id()) + " types");
      if (const std::string diff = verify_minimized(*target, m, objects, results, answers); !diff.empty())
        finding("minimized BTF resolves differently on " + target->name() + ": " + diff);
    } catch (const InputError& e) {
      finding(std::string("minimize against ") + target->name() + (split ? " (split)" : "") + ": " + e.what());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_targets = fuzz::core_targets();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::MemFile file({data, size});
  std::unique_ptr<const BpfObject> object;
  try {
    object = BpfObject::open(file.path());
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
    return 0;
  }
  for (const auto& target : g_targets) minimize_on(target, *object);
  return 0;
}
