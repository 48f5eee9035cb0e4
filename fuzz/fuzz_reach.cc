// The verifier model (src/core/reach.cc, verifier_walk.h) and the typed-pointer walk (btf_access.cc) on
// real objects whose code, ELF relocations and .BTF.ext are mutated in place.
//
// Random bytes rarely make an ELF that BpfObject::open takes, so this target starts from the objects the
// build compiles (tests/bpf, the CO-RE corpus) and leaves their ELF structure alone: the first byte picks
// one, the rest is XORed over its executable sections, then its relocation sections (SHT_REL), then its
// .BTF.ext, back to back. A seed of zeros is the object itself; a flipped bit is a changed opcode,
// register, jump offset, call target, relocated instruction or CO-RE record.
//
// On what opens: the code is read (BpfCode), the relocations resolved against the object's own BTF, the
// small target and the "moved" kernel (common.h); reachability() is asked with the real results and
// with every relocation poisoned (so that every program is walked, not only those a poisoned
// instruction is in), and mark_reachability() as check asks it; then each program's typed pointers are
// followed (program_contexts, btf_accesses) with the object's own BTF as the kernel's.
#include "common.h"

#include "btfslim/btf_access.h"
#include "btfslim/check.h"
#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/kernel_btf.h"
#include "btfslim/loader.h"
#include "btfslim/reach.h"


#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace btfslim;

std::vector<fuzz::ObjectTemplate> g_templates;
std::vector<CoreTarget> g_targets;

void walk(const BpfObject& object, const CoreTarget& target, const BpfCode& code, std::span<const std::vector<KernelRef>> refs) {
  const BpfObject* objects[] = {&object};
  const CandidateIndex index(target, objects);
  ObjectOnTarget cell;
  cell.results = resolve_object(object, index);
  (void)reachability(code, cell.results);
  mark_reachability(cell, &code);
  count_outcomes(cell, false);
  CoreResults poisoned = cell.results;
  for (CoreResult& r : poisoned) r.status = CoreStatus::Poisoned;
  (void)reachability(code, poisoned);

  // Typed pointers, with the object's own BTF standing for the kernel's.
  const KernelTypeNames kernel(object.btf());
  const KernelNameIndex names(target, refs);
  std::vector<TypeId> ids;
  for (const KernelRef& r : refs[0]) ids.push_back(names.find(r.lookup, r.lookup_kind, true).id);
  const auto contexts = program_contexts(object, code, refs[0], ids, kernel);
  (void)btf_accesses(object, code, cell.results, kernel, contexts);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::istringstream paths(BTFSLIM_FUZZ_OBJECTS);
  for (std::string path; std::getline(paths, path, ':');)
    if (!path.empty()) g_templates.push_back(fuzz::read_template(path, {fuzz::Region::Code, fuzz::Region::Rel, fuzz::Region::Ext}));
  if (g_templates.empty()) std::abort();
  for (auto& btf : fuzz::core_targets()) g_targets.emplace_back(std::move(btf));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const fuzz::ObjectTemplate& t = g_templates[data[0] % g_templates.size()];
  const std::string bytes = t.mutated({data + 1, size - 1});
  const fuzz::MemFile file({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  try {
    const auto object = BpfObject::open(file.path());
    const BpfCode code(*object);
    const std::vector<std::vector<KernelRef>> refs = {kernel_references(*object, AttachOptions{})};
    walk(*object, CoreTarget(object->btf_shared()), code, refs);
    for (const CoreTarget& target : g_targets) walk(*object, target, code, refs);
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  return 0;
}
