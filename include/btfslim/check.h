// `btfslim check`: the results of resolving objects against targets, and their printers.
#pragma once

#include "btfslim/core.h"
#include "btfslim/loader.h"
#include "btfslim/output.h"

#include <memory>
#include <string>
#include <vector>

namespace btfslim {

// What one object gives on one target.
struct ObjectOnTarget {
  std::vector<CoreResult> results;  // per relocation, in record order (matches keep only their roots)
  std::vector<bool> guarded;        // per relocation: poisoned, but behind an existence check that fails
  std::vector<std::string> targets;  // per relocation: the target types used, "[id] struct name, ..."
  std::vector<KernelRefResult> kernel_refs;  // per CheckRun::kernel_refs[object], in order
  bool kernel_refs_shown = true;  // false on a target without functions: all unchecked, left out of tables
};

// "[id] struct name" for each match of `result`, while its target is loaded.
std::string describe_targets(const CoreResult& result);

struct CheckRun {
  std::vector<std::unique_ptr<const BpfObject>> objects;
  std::vector<std::string> targets;                 // names, in column order
  std::vector<std::vector<ObjectOnTarget>> cells;  // [object][target]
  bool allow_missing = false;                       // guarded poisonings do not fail the check
  std::vector<std::vector<KernelRef>> kernel_refs;   // [object]: what the loader resolves besides CO-RE
};

// A poisoned relocation is guarded when the same function tests, on the same target, that what it
// reads exists and the test says it does not: a field_exists on the same type and access, a
// type_exists/type_matches on its root type, an enumval_exists on the same enumerator; or when an
// existence check there on another flavor of the same type succeeds (`if (exists(new->f)) read(new);
// else read(old);`: the read of the old flavor is the branch not taken). The verifier then never reaches
// the poisoned instruction (libbpf's intended use of existence checks). This reads the relocations, not
// the code: a check whose result the program ignores still counts.
std::vector<bool> guarded_relocations(const BpfObject& object, const std::vector<CoreResult>& results);

// Whether a relocation fails the check: ambiguous, an error, or poisoned and not excused by a guard.
bool relocation_fails(const CheckRun& run, const CoreResult& result, bool guarded);
bool check_failed(const CheckRun& run);

// The kernel references (loader.h) of object `o` in a cell that fail the load.
std::size_t kernel_refs_failing(const CheckRun& run, std::size_t o, const ObjectOnTarget& cell);
// Whether any of them was decided (not unchecked) in a cell.
bool kernel_refs_checked(const CheckRun& run, std::size_t o, const ObjectOnTarget& cell);
// Their rows under an object's relocations on one target, and the line that counts them.
void print_kernel_refs(const CheckRun& run, std::size_t o, OutputBuffer& out);
// For the matrix's "what fails where": a line per failing reference of object `o` on target `t`, after
// `header` (printed first, once, unless `printed` says it was).
void print_failing_kernel_refs(const CheckRun& run, std::size_t o, std::size_t t, const std::string& header,
                               bool& printed, OutputBuffer& out);
// "kernel_references": [...] of object `o`, in the shape of its "relocations".
void json_kernel_refs(JsonWriter& j, const CheckRun& run, std::size_t o);

void print_check_table(const CheckRun& run, OutputBuffer& out);
void print_check_json(const CheckRun& run, OutputBuffer& out);

}  // namespace btfslim
