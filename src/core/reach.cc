// Reachability: which instructions the verifier explores once libbpf has relocated an object.
//
// libbpf resolves existence, size and match checks to constants and replaces a relocation it cannot
// resolve by a call to an invalid helper (0xbad2310). The verifier walks every path of a program,
// deciding a conditional jump when both operands are known; a poisoned call fails the load only when a
// path reaches it, and the code a decided jump cuts off is removed unseen. So "does this object load?"
// is a question about paths, not about relocations: `if (bpf_core_field_exists(new->f)) read new; else
// read old;` reads the old field only on a path the verifier never takes on a new kernel.
//
// How: per program, the verifier model's path-sensitive walk (verifier_walk.h) with the relocated
// values of one target, over the state it needs to decide such branches (verifier_state.h): constants
// in registers and stack slots, pointers into the stack and into read-only data (.rodata is frozen by
// the loader, and the verifier reads constants from it: we read the file's values, what a loader that
// sets none loads).
//
// A path ends where no poisoned instruction lies ahead of it, in its function or past any return of its
// call chain (one backward pass over the control flow finds where one does): what it would go on to
// reach decides nothing. That pass takes a guard, a conditional jump on a constant set earlier in the
// same straight run of code (`if (bpf_core_field_exists(...))` compiles to one), only the way the
// target's constant sends it: a program whose guards cut off every poisoned instruction is not walked at
// all. A reached instruction is reported as reached; one not reached is dead: the analysis errs towards
// reaching, so that dead code is never claimed where the verifier goes.
//
// What it does not model, each making it reach more than the verifier, never less: value ranges
// (the verifier also decides `if (x > 255)` after a byte load), equal-register links, pointer non-null
// facts except for the stack and read-only data, callbacks' arguments (the verifier passes the
// caller's stack to bpf_loop's callback), .kconfig values (taken as unknown: they are the running
// kernel's), and helpers' precise memory effects beyond a short table.
//
// The verifier it follows is a recent one (6.8 and later, as the tests' kernel). Older ones track less
// and may reach what this calls dead: narrow spills (before 5.16), stored immediates (BPF_ST, before
// 6.3), and every global subprogram libbpf appends is verified, called from live code or not (before
// 6.8; here one is followed only from a call the walk reaches).
#include "btfslim/reach.h"

#include "verifier_walk.h"

#include <algorithm>
#include <vector>

namespace btfslim {
namespace {

using namespace btfslim::verifier;

// The walk for reaching poisoned instructions: it goes on only where one lies ahead, and follows no
// typed pointers (none are made).
class ReachHooks {
 public:
  // `leads` says which instructions some path of the control flow leads from to a poisoned one
  // (leads_to_poison()): a path past all of them reaches none, and goes no further.
  explicit ReachHooks(const std::vector<bool>& leads) : leads_(leads) {}

  // Whether the path at `pc` may still meet a poisoned instruction: from here, or from where one of
  // the functions it is in returns to (the control flow leads_to_poison() follows does not return).
  bool goes_on(std::uint32_t pc, const State& st) const {
    if (leads_[pc]) return true;
    for (std::size_t f = 1; f < st.frames.size(); ++f)
      if (leads_[st.frames[f].return_pc]) return true;
    return false;
  }
  void clean(std::uint32_t, State&) const {}
  void enter(std::uint32_t, Value*) const {}
  Value data(std::uint32_t, const BpfCode::InsnRef&) const { return scalar(); }
  Value helper(std::uint32_t, std::int32_t, const Value*) const { return scalar(); }
  Value kfunc(std::uint32_t, const BpfCode::InsnRef&, const Value*) const { return scalar(); }
  Value load(std::uint32_t, const Value&, std::int64_t, int) const { return scalar(); }
  void merged(const State&, const State&) const {}
  void gave_up() const {}

 private:
  const std::vector<bool>& leads_;
};

// Which way a guard goes with this target's values: 1 taken, 0 not, -1 either (its constant poisoned).
int guard_way(const BpfCode::Guard& g, const Patches& patches) {
  using Def = BpfCode::Guard::Def;
  std::uint64_t v = g.value;
  const Patch p = patches.at(g.def);
  if (p.kind == Patch::Poison || patches.kind(g.jump) != Patch::None) return -1;
  if (p.kind == Patch::Value) {
    // As Walk::walk() puts a relocated value in an instruction.
    const auto imm = static_cast<std::int32_t>(p.value);
    v = g.how == Def::Imm64   ? p.value
        : g.how == Def::Mov64 ? static_cast<std::uint64_t>(std::int64_t{imm})
                              : static_cast<std::uint32_t>(imm);
  }
  const bool is32 = (g.code & 0x07) == kJmp32;
  const std::uint64_t b = is32 ? static_cast<std::uint32_t>(g.imm) : static_cast<std::uint64_t>(std::int64_t{g.imm});
  return decide(g.code & 0xf0, is32, constant(v), constant(b));
}

// Which instructions some path of the control flow leads from to a poisoned one (`poisoned`, by
// instruction), every branch taken both ways but a guard's (BpfCode::Guard) only the way this target's
// constant sends it: one backward pass over the code's graph, for all programs, which reads no
// instruction. A program whose entry leads to none reaches none, and is not walked: in an agent every
// program has its `if (bpf_core_field_exists(...))` around a field the kernel lacks, and that is the
// whole of it.
std::vector<bool> leads_to_poison(const BpfCode& code, const Patches& patches,
                                  std::span<const std::pair<std::uint32_t, std::uint32_t>> poisoned) {
  const std::span<const BpfCode::Guard> guards = code.guards();
  std::vector<std::int8_t> way(guards.size());
  for (std::size_t i = 0; i < guards.size(); ++i) way[i] = static_cast<std::int8_t>(guard_way(guards[i], patches));
  auto way_of = [&](std::uint32_t pc) {
    if (!code.is_guard(pc)) return -1;
    const auto it = std::lower_bound(guards.begin(), guards.end(), pc,
                                     [](const BpfCode::Guard& g, std::uint32_t k) { return g.jump < k; });
    return int{way[static_cast<std::size_t>(it - guards.begin())]};
  };

  std::vector<bool> leads(code.insns().size(), false);
  std::vector<std::uint32_t> todo;
  auto lead = [&](std::uint32_t pc) {
    if (!leads[pc]) leads[pc] = true, todo.push_back(pc);
  };
  for (const auto& [pc, relocation] : poisoned) lead(pc);
  while (!todo.empty()) {
    const std::uint32_t pc = todo.back();
    todo.pop_back();
    if (pc > 0 && code.falls_through(pc - 1) && way_of(pc - 1) != 1) lead(pc - 1);
    if (!code.jumped_to(pc)) continue;
    for (const std::uint32_t from : code.edges_to(pc))
      if (way_of(from) != 0) lead(from);
  }
  return leads;
}

}  // namespace

bool any_poisoned(std::span<const CoreResult> results) {
  return std::any_of(results.begin(), results.end(), [](const CoreResult& r) { return r.status == CoreStatus::Poisoned; });
}

Reachability reachability(const BpfCode& code, std::span<const CoreResult> results) {
  Reachability out;
  out.reached.assign(results.size(), false);
  out.programs.resize(code.programs().size());
  // One pass over the results (an agent's are a megabyte and more). Only a poisoned instruction makes
  // reaching it matter (it fails the load there): the other relocations count as reached, and without
  // one nothing is walked.
  Patches patches(code.insns().size(), results, results.size());
  bool poisoned = false;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::uint32_t pc = code.insn_of(i);
    const CoreStatus status = results[i].status;
    if (status != CoreStatus::Poisoned) out.reached[i] = true;
    if (pc == kNoInsn) {
      out.reached[i] = true;  // not in code we can read: take it as reached
      continue;
    }
    switch (status) {
      case CoreStatus::Ok:
        if (patches.kind(pc) != Patch::Poison) patches.set_value(pc, static_cast<std::uint32_t>(i));
        break;
      case CoreStatus::Poisoned:
        patches.set_poison(pc);
        poisoned = true;
        break;
      default:
        break;  // libbpf fails the load before the verifier runs
    }
  }
  if (!poisoned) return out;
  patches.done();
  // The relocations of poisoned instructions, by instruction: what a program that reaches one of them
  // reaches (the only instructions looked up below; few of an object's).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> at;  // (instruction, relocation)
  for (std::size_t i = 0; i < results.size(); ++i)
    if (const std::uint32_t pc = code.insn_of(i); pc != kNoInsn && patches.kind(pc) == Patch::Poison)
      at.emplace_back(pc, static_cast<std::uint32_t>(i));
  std::sort(at.begin(), at.end());
  // The thread's, from object to object: each walks in the memory of the one before (an ordinary
  // object's: spare.h).
  thread_local WalkScratch scratch;
  scratch.reset(code);
  const std::vector<bool> leads = leads_to_poison(code, patches, at);
  for (std::size_t p = 0; p < code.programs().size(); ++p) {
    ProgramReach& pr = out.programs[p];
    // A program whose control flow meets no poisoned instruction reaches none: not walked.
    if (!leads[code.programs()[p].entry]) continue;
    scratch.clear();
    ReachHooks hooks(leads);
    Walk walk(code, patches, hooks, scratch);
    walk.run(code.programs()[p].entry);
    // Its code is done with (read in place, its pages go back; a subprogram's are read again if asked).
    code.release(code.programs()[p].entry,
                 p + 1 < code.programs().size() ? code.programs()[p + 1].entry
                                                : static_cast<std::uint32_t>(code.insns().size()));
    pr.exact = walk.exact();
    for (const std::uint32_t pc : walk.reached_list()) {
      if (patches.kind(pc) != Patch::Poison) continue;
      auto it = std::lower_bound(at.begin(), at.end(), std::pair(pc, std::uint32_t{0}));
      for (; it != at.end() && it->first == pc; ++it) {
        pr.relocations.push_back(it->second);
        out.reached[it->second] = true;
      }
    }
    std::sort(pr.relocations.begin(), pr.relocations.end());
  }
  if (scratch.bytes() > kSpareBytes) scratch = WalkScratch();  // a large object's: given back (spare.h)
  return out;
}

}  // namespace btfslim
