// `btfslim check`: the results of resolving objects against targets, and their printers.
#pragma once

#include "btfslim/core.h"
#include "btfslim/loader.h"
#include "btfslim/output.h"
#include "btfslim/reach.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace btfslim {

// What one object gives on one target.
struct ObjectOnTarget {
  CoreResults results;  // per relocation, in record order (matches keep only their roots)
  std::vector<bool> dead;           // per relocation: no program's verifier reaches its instruction (reach.h)
  // For each poisoned relocation a program reaches, in record order: the programs (their names).
  std::vector<std::pair<std::size_t, std::vector<std::string_view>>> reached_from;
  // The target types each relocation used, "[id] struct name, ...": an index into target_names ("" first).
  std::vector<std::uint32_t> targets;
  std::vector<std::string> target_names;
  std::vector<KernelRefResult> kernel_refs;  // per CheckRun::kernel_refs[object], in order
  bool kernel_refs_decidable = true;  // false on a target without functions: all unchecked, for one reason
  // Its relocations by outcome, and how many fail the check: counted once, by count_outcomes(), for
  // every report and the exit status (an agent's cell has tens of thousands).
  struct Counts {
    std::size_t ok = 0, poisoned = 0, dead = 0, ambiguous = 0, error = 0;  // poisoned: reached; dead: not
    std::size_t failing = 0;                                               // relocation_fails
  } counts;
};

// "[id] struct name" for each match of `result`, while its target is loaded.
std::string describe_targets(const CoreResult& result);

struct CheckRun {
  std::vector<std::unique_ptr<const BpfObject>> objects;
  std::vector<std::string> targets;                 // names, in column order
  std::vector<std::vector<ObjectOnTarget>> cells;  // [object][target]
  std::vector<std::vector<KernelRef>> kernel_refs;   // [object]: what the loader resolves besides CO-RE
  std::vector<ObjectPrograms> programs;              // [object]: optional programs, alternatives (loader.h)
  bool strict = false;                              // poisoned relocations in dead code fail too
};

// Fills `cell.dead` and `cell.reached_from` from `cell.results`: which relocations the verifier reaches
// in some program once they are applied (a poisoned instruction fails the load only there). Without
// code (an object with no poisoned relocation) nothing is dead.
void mark_reachability(ObjectOnTarget& cell, const BpfCode* code);

// Whether a relocation fails the check: ambiguous, an error, or poisoned where a program reaches it
// (anywhere with `strict`). Inline: asked of every result of an agent, most of them Ok.
inline bool relocation_fails(bool strict, const CoreResult& result, bool dead) {
  if (result.status == CoreStatus::Ok) return false;
  return !(result.status == CoreStatus::Poisoned && dead && !strict);
}
inline bool relocation_fails(const CheckRun& run, const CoreResult& result, bool dead) {
  return relocation_fails(run.strict, result, dead);
}
// Fills `cell.counts` from its results and `dead` (after mark_reachability).
void count_outcomes(ObjectOnTarget& cell, bool strict);

// The kernel references (loader.h) of object `o` in a cell that fail the load.
std::size_t kernel_refs_failing(const CheckRun& run, std::size_t o, const ObjectOnTarget& cell);
// Whether any of them was decided (not unchecked) in a cell.
bool kernel_refs_checked(const CheckRun& run, std::size_t o, const ObjectOnTarget& cell);
// Their rows under an object's relocations on the one target (only the failing ones with
// `failures_only`), and the line that counts them; `shown` is the object as the table names it
// (escaped).
void print_kernel_refs(const CheckRun& run, std::size_t o, std::string_view shown, bool failures_only,
                       OutputBuffer& out);

// Why a failure does not count (check_programs.cc): it is in a program its loader may leave out
// (--optional, SEC("?...")), or in a variant of an alternatives group that a loader would not use, another
// variant loading.
enum class NotCounted : std::uint8_t { No, Optional, UnusedAlternative };
// "", "optional", "unused alternative".
std::string_view not_counted_name(NotCounted why);

// The programs of object `o` on target `t` as its loader sees them, and so which failures count.
// Without an optional program or an alternatives group every failure counts, and every vector is empty
// (unless `every_program`: then `fails` is filled anyway).
struct ProgramOutcomes {
  static constexpr std::uint32_t kNoVariant = UINT32_MAX;
  std::vector<bool> fails;               // per program (ObjectPrograms::programs): something keeps it from loading
  std::vector<std::uint32_t> used;       // per group: the variant a loader would use, or kNoVariant: every one fails
  std::vector<NotCounted> relocations;   // per relocation; No unless it fails
  std::vector<NotCounted> kernel_refs;   // per kernel reference; likewise
  std::size_t not_counted = 0;           // failing relocations and kernel references that do not count
  NotCounted relocation(std::size_t i) const { return i < relocations.size() ? relocations[i] : NotCounted::No; }
  NotCounted kernel_ref(std::size_t i) const { return i < kernel_refs.size() ? kernel_refs[i] : NotCounted::No; }
};
ProgramOutcomes program_outcomes(const CheckRun& run, std::size_t o, std::size_t t, bool every_program = false);
// The rows of an object's programs that are optional or alternatives, under its kernel references on the
// one target (only those that fail with `failures_only`), and the line that counts what does not count.
void print_program_roles(const CheckRun& run, std::size_t o, std::string_view shown, bool failures_only,
                         OutputBuffer& out);
// JSON of object `o`'s programs: each with its role and, per kernel, whether it fails and is used.
void json_programs(JsonWriter& j, const CheckRun& run, std::size_t o);
// " (and N failures in optional programs or unused alternatives, not counted)", or "" for none: the
// verdict line's end.
std::string not_counted_note(std::size_t not_counted);

// One thing that fails an object on a target, as the lists of failures, GitHub annotations and JUnit
// failures spell it: who needs it, where, what kind, the verdict, what it is (an accessor or a name,
// last, as it may be long), and why. Every field is printable (names escaped).
struct FailureRow {
  std::string owner;    // the program, the struct_ops map, or "-" for an extern
  std::string where;    // "insn #12", or "" for a kernel reference
  std::string kind;     // the relocation's kind (byte_off) or the reference's (kfunc)
  std::string verdict;  // POISONED, AMBIGUOUS, ERROR, MISSING, INCOMPATIBLE
  std::string subject;  // the accessor or the name
  std::string reason;
  bool counted = true;  // false in an optional program or an unused alternative (the verdict says why)
};
// The failing kernel references of object `o` on target `t`, appended to `rows`.
void failing_kernel_refs(const CheckRun& run, std::size_t o, std::size_t t, std::vector<FailureRow>& rows);

// JSON of kernel reference `i` of object `o`: the fields that do not depend on the target, and one
// target's result; the record's shape (check_report.cc) is the relocations'.
void json_kernel_ref_fields(JsonWriter& j, const KernelRef& ref);
void json_kernel_ref_result(JsonWriter& j, const KernelRef& ref, const KernelRefResult& result);

enum class CheckFormat { Table, Json, Github, Junit };

struct CheckView {
  CheckFormat format = CheckFormat::Table;
  bool failures_only = false;  // only the objects that fail somewhere, and only what fails them
};

// The report in `view`'s format, printed as the objects are done: the table (one target: every
// relocation, object by object; several: objects by targets, then what fails where, a failure alike on
// several kernels once), JSON, GitHub workflow commands or JUnit XML. Each ends with (or holds) the
// verdict: "N objects x 1 kernel: K fail", or "N objects x M kernels: K objects fail (P of N*M
// object/kernel pairs)".
//
// object() takes each object once its results on every target are in, in the order of the paths given;
// the caller may drop them after it. Past an object the printer keeps its counts and, where the format
// lists them after every object (the matrix, JUnit, the step summary), the text of its failures; JSON
// records go to a temporary file (Spool) until the counts that precede them are known. A run's memory
// then stays that of one object however many there are.
class CheckPrinter {
 public:
  CheckPrinter(const CheckView& view, std::span<const std::string> object_paths, std::vector<std::string> targets,
               bool strict, OutputBuffer& out);
  ~CheckPrinter();
  CheckPrinter(const CheckPrinter&) = delete;
  CheckPrinter& operator=(const CheckPrinter&) = delete;

  // Object `g` (its place among object_paths), held in `run` at index `o` with a cell for every target.
  void object(const CheckRun& run, std::size_t o, std::size_t g);
  // The verdict and whatever waits for every object (the matrix, JSON's records, JUnit's suites).
  void finish();
  // Whether some object fails on some target.
  bool failed() const;
  // The Markdown for GitHub Actions' step summary ($GITHUB_STEP_SUMMARY): the verdict as a heading, then
  // a row for each object and kernel that fails (the first kMaxSummaryRows), with its first failure.
  std::string markdown_summary() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};
inline constexpr std::size_t kMaxSummaryRows = 100;

}  // namespace btfslim
