// The verifier model's walk (reach.cc, btf_access.cc): a path-sensitive walk over (instruction, state)
// pairs, as the verifier's own, for one program and the subprograms and callbacks it reaches.
//
// Each step applies one instruction to the state (verifier_state.h): constants in registers and stack
// slots, pointers into the stack and read-only data, ALU on constants as the CPU computes it (32-bit
// results zero-extended), jumps of both classes (decided where both operands are known, both ways
// otherwise, and on the edge where an equality holds the unknown side takes the constant),
// bpf-to-bpf calls into static subprograms with the callee's frame on the state (up to the verifier's
// 8 frames), global subprograms verified on their own from their first call, callbacks (a subprogram's
// address taken) as entries of their own, helpers and kfuncs clobbering r0-r5 and what they may write.
// The relocated values of one target (Patches) are put in the instructions they patch, and a poisoned
// instruction is a call of an invalid helper.
//
// Paths meet at jump targets and calls' returns: there a state seen before stops the walk. Past
// kStatesPerInsn states at one instruction, or past the step budget for the whole program, states
// that meet are merged (values that differ become unknown), which only reaches more: the walk then
// ends in time linear in the code times the lattice's height. Past a second budget, everything the
// program's control flow can reach counts as reached.
//
// What a walk is for is its Hooks': where a path may stop (goes_on: reach.cc's walk stops where no
// poisoned instruction lies ahead), what of a state a meeting point may forget (clean: registers no path
// reads again, as the verifier forgets them), what the entry's registers hold (enter), what a 64-bit load of
// data, a helper or a kfunc gives (data, helper, kfunc), what a load through a typed pointer gives
// (load), and being told what a merge of states lost (merged) or that the walk gives up following values
// (gave_up).
#pragma once

#include "btfslim/spare.h"
#include "verifier_state.h"

#include <algorithm>
#include <bit>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace btfslim::verifier {

// The registers each instruction may read before they are written again, by any path on from it in its
// function (a bit per register, r0-r10): one backward pass over the code to a fixpoint. A call reads
// r1-r5 and writes r0-r5; an exit reads r0.
std::vector<std::uint16_t> live_registers(const BpfCode& code);

inline constexpr std::uint32_t kStatesPerInsn = 16;
inline constexpr std::uint64_t kExactSteps = 4'000'000;    // then states merge at every meeting point
inline constexpr std::uint64_t kMergedSteps = 16'000'000;  // then the control flow alone decides

struct Patch {
  enum : std::uint8_t { None, Value, Poison } kind = None;
  std::uint64_t value = 0;
};

// The relocated instructions, with what libbpf puts there: a value, or a poisoned call. Few of a
// program's instructions are: a bit each says which (an agent's code is hundreds of thousands of
// instructions, and a byte each was a quarter of a megabyte to fault in), and the values are looked up
// for those, as the relocation results they come from.
class Patches {
 public:
  // Room for `values` values (at most one per relocation): the list is allocated once.
  Patches(std::size_t insns, std::span<const CoreResult> results, std::size_t values)
      : value_(Spare<std::vector<bool>, ValueBits>::take()),
        poison_(Spare<std::vector<bool>, PoisonBits>::take()),
        results_(results),
        values_(Spare<std::vector<std::pair<std::uint32_t, std::uint32_t>>>::take()) {
    value_.assign(insns, false);
    poison_.assign(insns, false);
    values_.reserve(values);
  }
  // Its memory is the next object's (spare.h).
  ~Patches() {
    Spare<std::vector<bool>, ValueBits>::give(std::move(value_));
    Spare<std::vector<bool>, PoisonBits>::give(std::move(poison_));
    Spare<std::vector<std::pair<std::uint32_t, std::uint32_t>>>::give(std::move(values_));
  }
  Patches(const Patches&) = delete;
  Patches& operator=(const Patches&) = delete;
  // In any order, then sorted by done(): an instruction patched twice keeps the last value. A value
  // is result `result`'s.
  void set_value(std::uint32_t pc, std::uint32_t result) {
    value_[pc] = true;
    poison_[pc] = false;
    values_.emplace_back(pc, result);
  }
  void set_poison(std::uint32_t pc) {
    poison_[pc] = true;
    value_[pc] = false;
  }
  void done() {
    // Set in record order, which is mostly the code's: sorted already more often than not.
    auto by_pc = [](const auto& a, const auto& b) { return a.first < b.first; };
    if (!std::is_sorted(values_.begin(), values_.end(), by_pc)) std::stable_sort(values_.begin(), values_.end(), by_pc);
  }
  Patch at(std::uint32_t pc) const {
    if (!value_[pc]) return {poison_[pc] ? Patch::Poison : Patch::None, 0};
    auto it = std::upper_bound(values_.begin(), values_.end(), pc, [](std::uint32_t k, const auto& e) { return k < e.first; });
    return {Patch::Value, results_[std::prev(it)->second].value};
  }
  std::uint8_t kind(std::uint32_t pc) const { return value_[pc] ? Patch::Value : poison_[pc] ? Patch::Poison : Patch::None; }

 private:
  struct ValueBits;
  struct PoisonBits;
  std::vector<bool> value_, poison_;
  std::span<const CoreResult> results_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> values_;  // (instruction, result), by instruction after done()
};

// A set of instructions, marked one by one and cleared in time proportional to what was marked: one
// for every program of an object, however many it has.
class Marks {
 public:
  explicit Marks(std::size_t n) : bits_(n, false) {}
  bool operator[](std::uint32_t pc) const { return bits_[pc]; }
  // Whether `pc` was not marked before.
  bool mark(std::uint32_t pc) {
    if (bits_[pc]) return false;
    bits_[pc] = true;
    list_.push_back(pc);
    return true;
  }
  const std::vector<std::uint32_t>& list() const { return list_; }  // in the order marked
  std::size_t bytes() const { return bits_.capacity() / 8 + capacity_bytes(list_); }
  // Empty, for `n` instructions.
  void reset(std::size_t n) {
    bits_.assign(n, false);
    list_.clear();
  }
  void clear() {
    for (const std::uint32_t pc : list_) bits_[pc] = false;
    list_.clear();
  }

 private:
  std::vector<bool> bits_;
  std::vector<std::uint32_t> list_;
};

// The hashes of the states seen at meeting points: open addressing, cleared in time proportional to
// what was added (a program walked after another reuses the table, however large it grew).
class HashSet {
 public:
  // Whether `h` was not in the set.
  bool insert(std::uint64_t h) {
    if (h == 0) h = 1;  // 0 marks an empty bucket
    if ((added_.size() + 1) * 2 > table_.size()) grow();
    // The bucket from the hash's high bits (Fibonacci hashing): its low bits are the weaker ones.
    const std::size_t mask = table_.size() - 1;
    for (std::size_t i = (h * 0x9e3779b97f4a7c15ULL) >> shift_;; i = (i + 1) & mask) {
      if (table_[i] == h) return false;
      if (table_[i] == 0) {
        table_[i] = h;
        added_.push_back(static_cast<std::uint32_t>(i));
        return true;
      }
    }
  }
  void clear() {
    for (const std::uint32_t i : added_) table_[i] = 0;
    added_.clear();
  }
  std::size_t bytes() const { return capacity_bytes(table_) + capacity_bytes(added_); }

 private:
  void grow() {
    std::vector<std::uint64_t> old(std::max<std::size_t>(table_.size() * 2, 1024), 0);
    old.swap(table_);
    shift_ = 64 - std::countr_zero(table_.size());
    added_.clear();
    for (const std::uint64_t h : old)
      if (h != 0) insert(h);
  }
  std::vector<std::uint64_t> table_;
  std::vector<std::uint32_t> added_;
  int shift_ = 64;
};

struct Work {
  std::uint32_t pc;
  State state;
};

// What walks need besides the code, kept from one program's walk to the next so that an object's
// hundreds of programs allocate it once: the instructions reached and queued, the states seen, how
// many at each meeting point, and states whose vectors are kept for reuse (a branch copies the state
// into one of them rather than into fresh memory).
struct WalkScratch {
  WalkScratch() : reached(0), seen_flow(0) {}
  explicit WalkScratch(const BpfCode& code)
      : reached(code.insns().size()), seen_flow(code.insns().size()), states_at(code.join_count(), 0) {}
  // As new for `code`, in the memory of walks of earlier code (another object's).
  void reset(const BpfCode& code) {
    reached.reset(code.insns().size());
    seen_flow.reset(code.insns().size());
    seen.clear();
    states_at.assign(code.join_count(), 0);
    counted.clear();
    work.clear();
  }
  void clear() {
    reached.clear();
    seen_flow.clear();
    seen.clear();
    for (const std::uint32_t j : counted) states_at[j] = 0;
    counted.clear();
  }
  // What it holds, but for the states' own vectors.
  std::size_t bytes() const {
    return reached.bytes() + seen_flow.bytes() + seen.bytes() + capacity_bytes(states_at) + capacity_bytes(counted) +
           capacity_bytes(spare) + capacity_bytes(work);
  }
  // A state equal to `st`, in memory kept from an earlier one where there is some.
  State copy(const State& st) {
    if (spare.empty()) return st;
    State s = std::move(spare.back());
    spare.pop_back();
    s = st;
    return s;
  }
  void recycle(State&& st) { spare.push_back(std::move(st)); }

  Marks reached, seen_flow;
  HashSet seen;
  std::vector<std::uint8_t> states_at;  // states admitted at each meeting point, up to kStatesPerInsn
  std::vector<std::uint32_t> counted;   // the meeting points with a count
  std::vector<State> spare;
  std::vector<Work> work;
};

template <typename Hooks>
class Walk {
 public:
  // `scratch` is cleared; reached() says what the walk marked there until it is cleared again.
  Walk(const BpfCode& code, const Patches& patches, Hooks& hooks, WalkScratch& scratch)
      : code_(code), insns_(code.insns()), patches_(patches), hooks_(hooks), scratch_(scratch),
        reached_(scratch.reached), seen_flow_(scratch.seen_flow), work_(scratch.work) {}

  void run(std::uint32_t entry);
  bool reached(std::uint32_t pc) const { return reached_[pc]; }
  // Every instruction reached, in the order first reached.
  const std::vector<std::uint32_t>& reached_list() const { return reached_.list(); }
  bool exact() const { return mode_ == Mode::Exact; }

 private:
  enum class Mode { Exact, Merged, Flow };

  void walk(std::uint32_t pc, State& st);
  bool admit(std::uint32_t pc, State& st);
  void flow();
  void add_entry(std::uint32_t pc) {
    if (entry_set_.insert(pc).second) entries_.push_back(pc);
  }

  // Stack memory.
  void store(State& st, const Value& ptr, std::int64_t off, int size, const Value& v);
  Value load(const State& st, const Value& ptr, std::int64_t off, int size, bool sign) const;
  void forget(State& st, std::uint8_t frame, std::int64_t lo, std::int64_t hi);
  void forget_through(State& st, const Value& ptr, std::int64_t size = -1);
  void call_clobbers(State& st, HelperMemory mem);

  const BpfCode& code_;
  std::span<const BpfInsn> insns_;
  const Patches& patches_;
  Hooks& hooks_;
  WalkScratch& scratch_;
  Marks& reached_;
  Marks& seen_flow_;  // flow(): what it has queued
  std::vector<Work>& work_;
  std::vector<std::uint32_t> entries_;
  std::unordered_set<std::uint32_t> entry_set_;
  std::unordered_map<std::uint64_t, std::vector<State>> merged_;
  State joined_;  // Merged mode: the join being made
  std::uint64_t steps_ = 0;
  Mode mode_ = Mode::Exact;
};

inline Slot* find_slot(State& st, std::uint8_t frame, std::int16_t off) {
  auto it = std::lower_bound(st.stack.begin(), st.stack.end(), std::pair(frame, off),
                             [](const Slot& s, const std::pair<std::uint8_t, std::int16_t>& k) {
                               return std::pair(s.frame, s.off) < k;
                             });
  if (it != st.stack.end() && it->frame == frame && it->off == off) return &*it;
  Slot s;
  s.frame = frame;
  s.off = off;
  return &*st.stack.insert(it, s);
}

inline const Slot* find_slot(const State& st, std::uint8_t frame, std::int16_t off) {
  auto it = std::lower_bound(st.stack.begin(), st.stack.end(), std::pair(frame, off),
                             [](const Slot& s, const std::pair<std::uint8_t, std::int16_t>& k) {
                               return std::pair(s.frame, s.off) < k;
                             });
  return it != st.stack.end() && it->frame == frame && it->off == off ? &*it : nullptr;
}

inline void drop_empty(State& st) {
  st.stack.erase(std::remove_if(st.stack.begin(), st.stack.end(), [](const Slot& s) { return s.empty(); }),
                 st.stack.end());
}

// The slots of `frame` with a byte in [lo, hi): one run of the sorted stack, erased at once.
template <typename Hooks>
void Walk<Hooks>::forget(State& st, std::uint8_t frame, std::int64_t lo, std::int64_t hi) {
  auto key = [](const Slot& s) { return std::pair<int, std::int64_t>(s.frame, s.off); };
  const auto first = std::lower_bound(st.stack.begin(), st.stack.end(), std::pair<int, std::int64_t>(frame, lo - 7),
                                      [&](const Slot& s, const auto& k) { return key(s) < k; });
  auto last = first;
  while (last != st.stack.end() && last->frame == frame && last->off < hi) ++last;
  st.stack.erase(first, last);
}

// A write through `ptr` (a helper's, a global function's) of `size` bytes, or of unknown extent (-1):
// what lies from there to the top of its frame may be overwritten.
template <typename Hooks>
void Walk<Hooks>::forget_through(State& st, const Value& ptr, std::int64_t size) {
  switch (ptr.kind) {
    case Kind::Stack: {
      const auto lo = static_cast<std::int64_t>(ptr.v);
      forget(st, ptr.frame, lo, size < 0 ? 0 : lo + size);
      break;
    }
    case Kind::StackAny:
      forget(st, ptr.frame, -kStackSize, 0);
      break;
    case Kind::Top:
      st.stack.clear();
      break;
    default:
      break;
  }
}

template <typename Hooks>
void Walk<Hooks>::store(State& st, const Value& ptr, std::int64_t off, int size, const Value& v) {
  if (ptr.kind == Kind::StackAny || ptr.kind == Kind::Top) {
    forget_through(st, ptr);
    return;
  }
  if (ptr.kind != Kind::Stack) return;
  const std::int64_t at = static_cast<std::int64_t>(ptr.v) + off;
  if (at < -kStackSize || at + size > 0) return;  // the verifier rejects it
  const std::int64_t base = at - ((at % 8) + 8) % 8;
  Slot* s = find_slot(st, ptr.frame, static_cast<std::int16_t>(base));
  const bool pointer = stackish(v) || v.kind == Kind::Rodata || typed(v);
  const unsigned bytes = ((1u << size) - 1) << (at - base);
  if (at == base && (!pointer || size == 8)) {
    // A spill: the verifier keeps the register, of any size at an aligned slot.
    s->spill = static_cast<std::uint8_t>(size);
    s->value = v;
    s->zero &= static_cast<std::uint8_t>(~bytes);
  } else {
    // Bytes: the spill there is gone, zeros are remembered.
    if (s->spill) {
      s->spill = 0;
      s->value = scalar();
      s->zero = 0;
    }
    if (v.kind == Kind::Const && (v.v & (size == 8 ? ~0ULL : (1ULL << (8 * size)) - 1)) == 0)
      s->zero |= static_cast<std::uint8_t>(bytes);
    else
      s->zero &= static_cast<std::uint8_t>(~bytes);
  }
  if (s->empty()) drop_empty(st);
}

template <typename Hooks>
Value Walk<Hooks>::load(const State& st, const Value& ptr, std::int64_t off, int size, bool sign) const {
  auto sized = [&](std::uint64_t v) {
    v = size == 8 ? v : v & ((std::uint64_t{1} << (8 * size)) - 1);
    return constant(sign ? sext(v, 8 * size) : v);
  };
  switch (ptr.kind) {
    case Kind::Top:
      return {Kind::Top};
    case Kind::Rodata: {
      const std::span<const std::uint8_t> data = code_.rodata(ptr.section);
      const std::int64_t at = static_cast<std::int64_t>(ptr.v) + off;
      if (at < 0 || static_cast<std::uint64_t>(at) + size > data.size()) return scalar();
      std::uint64_t v = 0;
      for (int i = 0; i < size; ++i) {
        const std::uint64_t byte = data[static_cast<std::size_t>(at + i)];
        v |= code_.big_endian() ? byte << (8 * (size - 1 - i)) : byte << (8 * i);
      }
      return sized(v);
    }
    case Kind::Stack: {
      const std::int64_t at = static_cast<std::int64_t>(ptr.v) + off;
      if (at < -kStackSize || at + size > 0) return scalar();
      const std::int64_t base = at - ((at % 8) + 8) % 8;
      const Slot* s = find_slot(st, ptr.frame, static_cast<std::int16_t>(base));
      if (!s) return scalar();
      if (s->spill) {
        // A fill of the spilled register, or of its low part (its first bytes on little-endian, its
        // last on big-endian).
        const bool narrow_ok = code_.big_endian() ? at == base + s->spill - size : at == base;
        if (size == 8 && s->spill == 8) return s->value;
        if (size <= s->spill && narrow_ok && s->value.kind == Kind::Const) return sized(s->value.v);
        return scalar();
      }
      const unsigned bytes = ((1u << size) - 1) << (at - base);
      return (s->zero & bytes) == bytes ? constant(0) : scalar();
    }
    default:
      return scalar();
  }
}

template <typename Hooks>
void Walk<Hooks>::call_clobbers(State& st, HelperMemory mem) {
  Value* r = st.frames.back().regs;
  if (!mem.reads_only) {
    if (mem.ptr) {
      const Value& size = r[mem.size];
      forget_through(st, r[mem.ptr],
                     size.kind == Kind::Const ? static_cast<std::int64_t>(std::min<std::uint64_t>(size.v, kStackSize)) : -1);
    } else {
      for (int i = 1; i <= 5; ++i) forget_through(st, r[i]);
    }
  }
  for (int i = 0; i <= 5; ++i) r[i] = scalar();
}

template <typename Hooks>
bool Walk<Hooks>::admit(std::uint32_t pc, State& st) {
  hooks_.clean(pc, st);
  if (mode_ == Mode::Exact) {
    const std::uint32_t j = code_.join_index(pc);
    std::uint8_t& count = scratch_.states_at[j];
    if (count < kStatesPerInsn) {
      if (!scratch_.seen.insert(hash_state(pc, st))) return false;
      if (count++ == 0) scratch_.counted.push_back(j);
      return true;
    }
  }
  std::vector<State>& list = merged_[mix(pc, hash_chain(st))];
  for (State& m : list) {
    if (!same_chain(m, st)) continue;
    join(m, st, joined_);
    if (joined_ == m) return false;
    hooks_.merged(m, joined_);
    hooks_.merged(st, joined_);
    m = joined_;
    st = joined_;
    return true;
  }
  list.push_back(st);
  return true;
}

template <typename Hooks>
void Walk<Hooks>::run(std::uint32_t entry) {
  add_entry(entry);
  for (std::size_t e = 0; e < entries_.size() && mode_ != Mode::Flow; ++e) {
    State init = scratch_.copy(State{});
    Frame& f = init.frames.emplace_back();
    f.function = entries_[e];
    f.regs[10] = {Kind::Stack, 0, 0, 0};
    hooks_.enter(entries_[e], f.regs);
    work_.push_back({entries_[e], std::move(init)});
    while (!work_.empty() && mode_ != Mode::Flow) {
      Work w = std::move(work_.back());
      work_.pop_back();
      walk(w.pc, w.state);
      scratch_.recycle(std::move(w.state));
    }
  }
  if (mode_ == Mode::Flow) {
    hooks_.gave_up();
    flow();
  }
}

// Past both budgets: whatever the control flow reaches from the entries, every branch both ways.
template <typename Hooks>
void Walk<Hooks>::flow() {
  work_.clear();
  std::vector<std::uint32_t> todo(entries_.begin(), entries_.end());
  auto push = [&](std::int64_t pc) {
    if (pc >= 0 && static_cast<std::size_t>(pc) < insns_.size() && seen_flow_.mark(static_cast<std::uint32_t>(pc)))
      todo.push_back(static_cast<std::uint32_t>(pc));
  };
  for (const std::uint32_t e : entries_) seen_flow_.mark(e);
  while (!todo.empty()) {
    const std::uint32_t pc = todo.back();
    todo.pop_back();
    reached_.mark(pc);
    const BpfInsn& in = insns_[pc];
    const std::uint8_t cls = in.code & 0x07, op = in.code & 0xf0;
    // Only calls and 64-bit immediate loads have a reference: the rest are not looked up.
    if (in.code == kLdImm64 || in.code == kCall) {
      const BpfCode::InsnRef& ref = code_.ref(pc);
      if (ref.ref == BpfCode::Ref::FuncAddr || ref.ref == BpfCode::Ref::StaticCall || ref.ref == BpfCode::Ref::GlobalCall)
        push(ref.target);
    }
    if (in.code == kLdImm64) {
      push(std::int64_t{pc} + 2);
      continue;
    }
    if (cls == kJmp || cls == kJmp32) {
      if (op == kExit) continue;
      if (op != kCallOp) {
        push(std::int64_t{pc} + (cls == kJmp32 && op == kJa ? in.imm : in.off) + 1);
        if (op == kJa) continue;
      }
    }
    push(std::int64_t{pc} + 1);
  }
}

template <typename Hooks>
void Walk<Hooks>::walk(std::uint32_t pc, State& st) {
  const std::size_t n = insns_.size();
  for (;;) {
    if (pc >= n) return;
    if (!hooks_.goes_on(pc, st)) return;
    if (code_.joins(pc) && !admit(pc, st)) return;
    ++steps_;
    if (mode_ == Mode::Exact && steps_ > kExactSteps) mode_ = Mode::Merged;
    if (mode_ == Mode::Merged && steps_ > kExactSteps + kMergedSteps) {
      mode_ = Mode::Flow;
      return;
    }
    reached_.mark(pc);

    BpfInsn in = insns_[pc];
    const std::uint8_t cls = in.code & 0x07, op = in.code & 0xf0;
    if (in.dst > 10 || in.src > 10) return;  // the verifier rejects the program
    Frame* f = &st.frames.back();
    Value* r = f->regs;
    const Patch patch = patches_.at(pc);
    const bool ld_imm64 = in.code == kLdImm64;

    if (patch.kind == Patch::Poison) {
      // A call of an invalid helper (both halves of an ld_imm64): the load fails if it is reached
      // here. The walk goes on past it, so that every poisoned instruction on the path is reported.
      call_clobbers(st, {true, 0, 0});
      if (cls == kLdx || cls == kAlu || cls == kAlu64 || cls == kLd) r[in.dst] = scalar();
      pc += ld_imm64 ? 2 : 1;
      continue;
    }
    std::uint64_t imm64 = 0;
    bool imm64_patched = false;
    if (patch.kind == Patch::Value) {
      if (cls == kAlu || cls == kAlu64) in.imm = static_cast<std::int32_t>(patch.value);
      else if (cls == kLdx || cls == kSt || cls == kStx) in.off = static_cast<std::int16_t>(patch.value);
      else if (ld_imm64) imm64 = patch.value, imm64_patched = true;
    }

    switch (cls) {
      case kLd: {
        if (!ld_imm64) {
          // Legacy packet loads (LD_ABS, LD_IND): r0 gets the data, r1-r5 are clobbered.
          for (int i = 0; i <= 5; ++i) r[i] = scalar();
          ++pc;
          break;
        }
        if (pc + 1 >= n) return;
        if (in.dst == 10) return;
        const BpfCode::InsnRef& ref = code_.ref(pc);
        Value v;
        if (imm64_patched) {
          v = constant(imm64);
        } else if (ref.ref == BpfCode::Ref::Rodata) {
          v = {Kind::Rodata, 0, ref.target, ref.offset};
        } else if (ref.ref == BpfCode::Ref::FuncAddr) {
          add_entry(ref.target);
          v = scalar();
        } else if (ref.ref == BpfCode::Ref::Data) {
          v = hooks_.data(pc, ref);
        } else if (in.src != 0) {
          v = scalar();
        } else {
          v = constant(static_cast<std::uint32_t>(in.imm) | std::uint64_t{static_cast<std::uint32_t>(insns_[pc + 1].imm)} << 32);
        }
        r[in.dst] = v;
        pc += 2;
        break;
      }

      case kLdx: {
        const std::uint8_t mode = in.code & 0xe0;
        const int size = access_size(in.code);
        if (in.dst == 10) return;
        const bool mem = mode == kModeMem || mode == kModeMemSx;
        if (mem && typed(r[in.src]))
          r[in.dst] = hooks_.load(pc, r[in.src], in.off, size);
        else
          r[in.dst] = mem ? load(st, r[in.src], in.off, size, mode == kModeMemSx) : scalar();
        ++pc;
        break;
      }

      case kSt:
      case kStx: {
        const std::uint8_t mode = in.code & 0xe0;
        const int size = access_size(in.code);
        if (mode == kModeMem) {
          const Value v = cls == kSt ? constant(static_cast<std::uint64_t>(static_cast<std::int64_t>(in.imm))) : r[in.src];
          store(st, r[in.dst], in.off, size, v);
        } else if (mode == kModeAtomic && cls == kStx) {
          store(st, r[in.dst], in.off, size, scalar());
          if (in.imm == 0xf1 /* CMPXCHG */) r[0] = scalar();
          else if (in.imm & 0x01 /* FETCH */) r[in.src] = scalar();
        }
        ++pc;
        break;
      }

      case kAlu:
      case kAlu64: {
        if (in.dst == 10) return;
        const bool is64 = cls == kAlu64;
        Value& d = r[in.dst];
        const Value s = (in.code & kSrcX) && op != kEnd && op != kNeg
                            ? r[in.src]
                            : constant(static_cast<std::uint64_t>(static_cast<std::int64_t>(in.imm)));
        if (op == kMov && is64 && in.off == 0) {
          d = s;
        } else if (d.kind == Kind::Const && s.kind == Kind::Const) {
          std::uint64_t out = 0;
          d = alu_const(op, is64, in.off, d.v, op == kNeg || op == kEnd ? 0 : s.v, code_.big_endian(), in.imm,
                        (in.code & kSrcX) != 0, out)
                  ? constant(out)
                  : scalar();
        } else if (op == kMov && s.kind == Kind::Const) {
          std::uint64_t out = 0;
          d = alu_const(op, is64, in.off, 0, s.v, code_.big_endian(), in.imm, false, out) ? constant(out) : scalar();
        } else if (is64 && op == kSub && stackish(d) && stackish(s)) {
          d = scalar();  // the distance between two pointers
        } else if (is64 && (op == kAdd || op == kSub) && (stackish(d) || d.kind == Kind::Rodata)) {
          // Pointer arithmetic: a constant moves the pointer, anything else makes its offset unknown.
          if (d.kind == Kind::Top) break;
          if (s.kind == Kind::Const && d.kind != Kind::StackAny)
            d.v = op == kAdd ? d.v + s.v : d.v - s.v;
          else if (d.kind == Kind::Stack || d.kind == Kind::StackAny)
            d = s.kind == Kind::Const ? d : stackish(s) ? Value{Kind::Top} : Value{Kind::StackAny, d.frame};
          else
            d = stackish(s) ? Value{Kind::Top} : scalar();
        } else if (is64 && op == kAdd && d.kind == Kind::Const && (s.kind == Kind::Stack || s.kind == Kind::Rodata)) {
          const std::uint64_t c = d.v;
          d = s;
          d.v += c;
        } else if (is64 && op == kAdd && stackish(s)) {
          d = s.kind == Kind::Top ? Value{Kind::Top} : Value{Kind::StackAny, s.frame};
        } else if (is64 && (op == kAdd || op == kSub) && typed(d) && !typed(s)) {
          // A typed pointer moved by a constant stays typed (the verifier keeps a constant offset); by
          // anything else its offset is not followed.
          if (s.kind == Kind::Const && d.kind != Kind::BtfVar)
            d.v = op == kAdd ? d.v + s.v : d.v - s.v;
          else if (d.kind == Kind::Btf)
            d = {Kind::BtfVar, 0, d.section, 0};
          else if (d.kind != Kind::BtfVar)
            d = scalar();
        } else if (is64 && op == kAdd && typed(s) && d.kind == Kind::Const) {
          const std::uint64_t c = d.v;
          d = s;
          d.v += c;
        } else {
          d = scalar();
        }
        ++pc;
        break;
      }

      case kJmp:
      case kJmp32: {
        if (op == kExit) {
          if (cls != kJmp) return;
          if (st.frames.size() == 1) return;
          // Back to the caller: r0 is the callee's, r1-r5 are clobbered, the callee's stack is gone.
          const auto depth = static_cast<std::uint8_t>(st.frames.size() - 1);
          Value ret = r[0];
          if (stackish(ret) && (ret.kind == Kind::Top || ret.frame >= depth)) ret = scalar();
          const std::uint32_t back = f->return_pc;
          st.frames.pop_back();
          st.stack.erase(std::remove_if(st.stack.begin(), st.stack.end(), [&](const Slot& s) { return s.frame >= depth; }),
                         st.stack.end());
          Value* cr = st.frames.back().regs;
          cr[0] = ret;
          for (int i = 1; i <= 5; ++i) cr[i] = scalar();
          pc = back;
          break;
        }
        if (op == kCallOp) {
          if (cls != kJmp) return;
          const BpfCode::InsnRef& ref = code_.ref(pc);
          if (in.code & kSrcX) {
            call_clobbers(st, {});
          } else if (in.src == kPseudoKfuncCall) {
            const Value ret = hooks_.kfunc(pc, ref, st.frames.back().regs);
            call_clobbers(st, {});
            st.frames.back().regs[0] = ret;
          } else if (in.src == kPseudoCall && ref.ref == BpfCode::Ref::StaticCall) {
            bool recursion = false;
            for (const Frame& fr : st.frames) recursion |= fr.function == ref.target;
            if (st.frames.size() >= kMaxFrames || recursion) {
              call_clobbers(st, {});
            } else {
              // The callee gets r1-r5 and a frame of its own; the caller's registers wait in its frame.
              Frame callee;
              for (int i = 1; i <= 5; ++i) callee.regs[i] = r[i];
              callee.regs[10] = {Kind::Stack, static_cast<std::uint8_t>(st.frames.size()), 0, 0};
              callee.function = ref.target;
              callee.return_pc = pc + 1;
              st.frames.push_back(callee);
              pc = ref.target;
              break;
            }
          } else if (in.src == kPseudoCall && ref.ref == BpfCode::Ref::GlobalCall) {
            add_entry(ref.target);
            call_clobbers(st, {});
          } else if (in.src == kPseudoCall) {
            call_clobbers(st, {});
          } else {
            const Value ret = hooks_.helper(pc, in.imm, st.frames.back().regs);
            call_clobbers(st, helper_memory(in.imm));
            st.frames.back().regs[0] = ret;
          }
          ++pc;
          break;
        }
        const bool is32 = cls == kJmp32;
        if (op == kJa) {
          pc = static_cast<std::uint32_t>(std::int64_t{pc} + (is32 ? in.imm : in.off) + 1);
          break;
        }
        const std::uint32_t target = static_cast<std::uint32_t>(std::int64_t{pc} + in.off + 1);
        if (op == kJcond) {  // may_goto: either way
          work_.push_back({target, scratch_.copy(st)});
          ++pc;
          break;
        }
        const Value a = r[in.dst];
        const Value b = in.code & kSrcX ? r[in.src] : constant(static_cast<std::uint64_t>(is32 ? static_cast<std::uint32_t>(in.imm) : static_cast<std::uint64_t>(static_cast<std::int64_t>(in.imm))));
        const int taken = decide(op, is32, a, b);
        if (taken == 1) {
          pc = target;
          break;
        }
        if (taken == 0) {
          ++pc;
          break;
        }
        // Both ways. On the edge where a 64-bit equality holds, an unknown side equals the other.
        State other = scratch_.copy(st);
        if (!is32 && (op == kJeq || op == kJne)) {
          State& equal = op == kJeq ? other : st;
          Value* er = equal.frames.back().regs;
          if (a.kind == Kind::Scalar && b.kind == Kind::Const) er[in.dst] = b;
          if ((in.code & kSrcX) && b.kind == Kind::Scalar && a.kind == Kind::Const) er[in.src] = a;
        }
        work_.push_back({target, std::move(other)});
        ++pc;
        break;
      }

      default:
        return;
    }
  }
}

}  // namespace btfslim::verifier
