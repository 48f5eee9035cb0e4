// `btfslim check`: the results of resolving objects against targets, and their printers.
#pragma once

#include "btfslim/core.h"
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
  std::vector<std::string> targets;  // per relocation: the target types used, "[id] struct name, ..."
};

// "[id] struct name" for each match of `result`, while its target is loaded.
std::string describe_targets(const CoreResult& result);

struct CheckRun {
  std::vector<std::unique_ptr<const BpfObject>> objects;
  std::vector<std::string> targets;                 // names, in column order
  std::vector<std::vector<ObjectOnTarget>> cells;  // [object][target]
  bool strict = false;                              // poisoned relocations in dead code fail too
};

// Fills `cell.dead` and `cell.reached_from` from `cell.results`: which relocations the verifier reaches
// in some program once they are applied (a poisoned instruction fails the load only there).
void mark_reachability(ObjectOnTarget& cell, const BpfCode& code);

// Whether a relocation fails the check: ambiguous, an error, or poisoned where a program reaches it
// (anywhere with `strict`).
bool relocation_fails(const CheckRun& run, const CoreResult& result, bool dead);
bool check_failed(const CheckRun& run);

void print_check_table(const CheckRun& run, OutputBuffer& out);
void print_check_json(const CheckRun& run, OutputBuffer& out);

}  // namespace btfslim
