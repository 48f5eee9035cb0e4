// `btfslim check`: the results of resolving objects against targets, and their printers.
#pragma once

#include "btfslim/core.h"
#include "btfslim/loader.h"
#include "btfslim/output.h"
#include "btfslim/reach.h"

#include <memory>
#include <string>
#include <vector>

namespace btfslim {

// What one object gives on one target.
struct ObjectOnTarget {
  std::vector<CoreResult> results;  // per relocation, in record order (matches keep only their roots)
  std::vector<bool> dead;           // per relocation: no program's verifier reaches its instruction (reach.h)
  // For each poisoned relocation a program reaches, in record order: the programs (their names).
  std::vector<std::pair<std::size_t, std::vector<std::string_view>>> reached_from;
  // The target types each relocation used, "[id] struct name, ...": an index into target_names ("" first).
  std::vector<std::uint32_t> targets;
  std::vector<std::string> target_names;
  std::vector<KernelRefResult> kernel_refs;  // per CheckRun::kernel_refs[object], in order
  bool kernel_refs_shown = true;  // false on a target without functions: all unchecked, left out of tables
};

// "[id] struct name" for each match of `result`, while its target is loaded.
std::string describe_targets(const CoreResult& result);

struct CheckRun {
  std::vector<std::unique_ptr<const BpfObject>> objects;
  std::vector<std::string> targets;                 // names, in column order
  std::vector<std::vector<ObjectOnTarget>> cells;  // [object][target]
  std::vector<std::vector<KernelRef>> kernel_refs;   // [object]: what the loader resolves besides CO-RE
  bool strict = false;                              // poisoned relocations in dead code fail too
};

// Fills `cell.dead` and `cell.reached_from` from `cell.results`: which relocations the verifier reaches
// in some program once they are applied (a poisoned instruction fails the load only there). Without
// code (an object with no poisoned relocation) nothing is dead.
void mark_reachability(ObjectOnTarget& cell, const BpfCode* code);

// Whether a relocation fails the check: ambiguous, an error, or poisoned where a program reaches it
// (anywhere with `strict`).
bool relocation_fails(const CheckRun& run, const CoreResult& result, bool dead);
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
