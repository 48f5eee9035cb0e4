// The abstract state of the verifier model (reach.cc, btf_access.cc): what a register or a stack slot
// holds, as far as deciding branches and typing pointers needs, and the arithmetic on constants.
//
// A value is a number (known or not), a pointer into a frame's stack or into read-only data, a pointer
// the verifier types by the kernel's BTF, or unknown. A state is the call chain's frames (registers,
// where each returns to) and the stack slots the verifier knows something about: spilled registers (of
// any size at an 8-byte aligned slot, as the verifier keeps them) and zeroed bytes. Joining two states
// keeps what holds in both; it only happens past the walk's budget (verifier_walk.h).
#pragma once

#include "bpf_isa.h"

#include <cstdint>
#include <vector>

namespace btfslim::verifier {

using namespace btfslim::isa;

inline constexpr int kMaxFrames = 8;     // the verifier's MAX_CALL_FRAMES
inline constexpr int kStackSize = 512;   // MAX_BPF_STACK, per frame

enum class Kind : std::uint8_t {
  Scalar,    // some number (not a pointer into the stack)
  Const,     // this number
  Stack,     // frame `frame`'s stack pointer plus `v` (negative)
  StackAny,  // somewhere in frame `frame`'s stack
  Rodata,    // read-only data section `section`, byte `v`
  Top,       // anything, a pointer into any stack included
  // The pointers the verifier types by the kernel's BTF (btf_access.cc makes them; reach.cc never):
  Ctx,     // the program's context, as its entry gets it in r1
  Btf,     // PTR_TO_BTF_ID: kernel type `section`, plus `v` bytes
  BtfVar,  // PTR_TO_BTF_ID of type `section` at an offset not followed
  PerCpu,  // a per-CPU variable's address (PTR_TO_PERCPU_BTF_ID): kernel type `section`
};

struct Value {
  Kind kind = Kind::Scalar;
  std::uint8_t frame = 0;
  std::uint32_t section = 0;
  std::uint64_t v = 0;
  bool operator==(const Value&) const = default;
};

inline Value scalar() { return {}; }
inline Value constant(std::uint64_t v) { return {Kind::Const, 0, 0, v}; }
inline bool stackish(const Value& v) { return v.kind == Kind::Stack || v.kind == Kind::StackAny || v.kind == Kind::Top; }
// A pointer the verifier types by BTF (or the context that hands them out).
inline bool typed(const Value& v) { return v.kind >= Kind::Ctx; }

inline Value join(const Value& a, const Value& b) {
  if (a == b) return a;
  if (a.kind == Kind::Top || b.kind == Kind::Top) return {Kind::Top};
  if (typed(a) || typed(b)) {
    // A typed pointer met by a number (NULL, or what a path that never loads through it left there)
    // stays typed: a load through it is checked where it is typed, and refused where it is a number.
    // One type at two offsets is that type at an offset not followed; anything else, unknown.
    const auto number = [](const Value& v) { return v.kind == Kind::Scalar || v.kind == Kind::Const; };
    if (number(b)) return a;
    if (number(a)) return b;
    const bool btf_a = a.kind == Kind::Btf || a.kind == Kind::BtfVar, btf_b = b.kind == Kind::Btf || b.kind == Kind::BtfVar;
    if (btf_a && btf_b && a.section == b.section) return {Kind::BtfVar, 0, a.section, 0};
    return {Kind::Top};
  }
  if (stackish(a) || stackish(b)) {
    if (stackish(a) && stackish(b) && a.frame == b.frame) return {Kind::StackAny, a.frame};
    return {Kind::Top};
  }
  return scalar();
}

// An 8-byte stack slot the verifier knows something about (others hold unknown bytes).
struct Slot {
  std::uint8_t frame = 0;
  std::int16_t off = 0;     // 8-aligned, negative: the slot's lowest byte from the frame's top
  std::uint8_t spill = 0;   // bytes of a register spilled there (0: none)
  std::uint8_t zero = 0;    // bit i: byte off + i is zero (outside a spill)
  Value value;              // the spilled register
  bool operator==(const Slot&) const = default;
  bool empty() const { return spill == 0 && zero == 0; }
};

struct Frame {
  Value regs[11];
  std::uint32_t function = 0;          // its entry, against recursion
  std::uint32_t return_pc = kNoInsn;   // in the caller
  bool operator==(const Frame&) const = default;
};

struct State {
  std::vector<Frame> frames;  // the current frame last
  std::vector<Slot> stack;    // sorted by (frame, off)
  bool operator==(const State&) const = default;
};

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

inline std::uint64_t hash_value(std::uint64_t h, const Value& v) {
  return mix(mix(h, static_cast<std::uint64_t>(v.kind) | std::uint64_t{v.frame} << 8 | std::uint64_t{v.section} << 16),
             v.v);
}

inline std::uint64_t hash_state(std::uint32_t pc, const State& s) {
  std::uint64_t h = mix(0x1234567, pc);
  for (const Frame& f : s.frames) {
    h = mix(h, std::uint64_t{f.function} << 32 | f.return_pc);
    // An unknown number, what most registers hold, says nothing: only the others are hashed, with
    // their register's number.
    for (std::uint64_t r = 0; r < 11; ++r)
      if (f.regs[r] != scalar()) h = hash_value(mix(h, r), f.regs[r]);
  }
  for (const Slot& sl : s.stack)
    h = hash_value(mix(h, std::uint64_t{sl.frame} << 40 | std::uint64_t{static_cast<std::uint16_t>(sl.off)} << 16 |
                              std::uint64_t{sl.spill} << 8 | sl.zero),
                   sl.value);
  return h;
}

inline std::uint64_t hash_chain(const State& s) {
  std::uint64_t h = 0;
  for (const Frame& f : s.frames) h = mix(h, std::uint64_t{f.function} << 32 | f.return_pc);
  return h;
}

inline bool same_chain(const State& a, const State& b) {
  if (a.frames.size() != b.frames.size()) return false;
  for (std::size_t i = 0; i < a.frames.size(); ++i)
    if (a.frames[i].function != b.frames[i].function || a.frames[i].return_pc != b.frames[i].return_pc) return false;
  return true;
}

inline Slot join_slots(const Slot& x, const Slot& y) {
  if (x == y) return x;
  Slot j = x;
  if (x.spill && x.spill == y.spill) {
    j.value = join(x.value, y.value);
    j.zero = x.zero & y.zero;
    return j;
  }
  // A typed pointer spilled on one side and unknown bytes on the other stays spilled (as join() keeps it).
  if (x.spill == 8 && typed(x.value) && !y.spill) return x;
  if (y.spill == 8 && typed(y.value) && !x.spill) return y;
  if ((x.spill && (stackish(x.value) || typed(x.value))) || (y.spill && (stackish(y.value) || typed(y.value)))) {
    j.spill = 8;
    j.zero = 0;
    j.value = {Kind::Top};
    return j;
  }
  j.spill = 0;
  j.value = scalar();
  j.zero = (x.spill ? 0 : x.zero) & (y.spill ? 0 : y.zero);
  return j;
}

// The join of two states of the same call chain, into `j`: what holds on both.
inline void join(const State& a, const State& b, State& j) {
  j.frames = a.frames;
  j.stack.clear();
  for (std::size_t f = 0; f < j.frames.size(); ++f)
    for (int r = 0; r < 11; ++r) j.frames[f].regs[r] = join(a.frames[f].regs[r], b.frames[f].regs[r]);
  auto key = [](const Slot& s) { return std::pair(s.frame, s.off); };
  std::size_t i = 0, k = 0;
  while (i < a.stack.size() || k < b.stack.size()) {
    Slot none;
    Slot s;
    if (k == b.stack.size() || (i < a.stack.size() && key(a.stack[i]) < key(b.stack[k]))) {
      none.frame = a.stack[i].frame;
      none.off = a.stack[i].off;
      s = join_slots(a.stack[i++], none);
    } else if (i == a.stack.size() || key(b.stack[k]) < key(a.stack[i])) {
      none.frame = b.stack[k].frame;
      none.off = b.stack[k].off;
      s = join_slots(none, b.stack[k++]);
    } else {
      s = join_slots(a.stack[i++], b.stack[k++]);
    }
    if (!s.empty()) j.stack.push_back(s);
  }
}

// Arithmetic on constants, as the BPF ISA defines it.

inline std::uint64_t sext(std::uint64_t v, int bits) {
  if (bits >= 64) return v;
  const std::uint64_t m = std::uint64_t{1} << (bits - 1);
  v &= (m << 1) - 1;
  return (v ^ m) - m;
}

inline std::uint64_t bswap(std::uint64_t v, int bits) {
  switch (bits) {
    case 16: return __builtin_bswap16(static_cast<std::uint16_t>(v));
    case 32: return __builtin_bswap32(static_cast<std::uint32_t>(v));
    default: return __builtin_bswap64(v);
  }
}

// `a op b` on 64 or 32 bits; false where the verifier would not know the result.
inline bool alu_const(std::uint8_t op, bool is64, std::int16_t off, std::uint64_t a, std::uint64_t b, bool big_endian,
               std::int32_t imm, bool to_be, std::uint64_t& out) {
  if (op == kEnd) {
    const int width = imm == 16 || imm == 32 || imm == 64 ? imm : 0;
    if (!width) return false;
    // BPF_ALU's to_le/to_be convert from the machine's order; BPF_ALU64's swaps unconditionally.
    const bool swap = is64 || to_be != big_endian;
    out = swap ? bswap(a, width) : (width == 64 ? a : a & ((std::uint64_t{1} << width) - 1));
    return true;
  }
  const int bits = is64 ? 64 : 32;
  const std::uint64_t mask = is64 ? ~std::uint64_t{0} : 0xffffffffULL;
  a &= mask;
  b &= mask;
  const bool sgn = off == 1;
  auto sa = static_cast<std::int64_t>(sext(a, bits)), sb = static_cast<std::int64_t>(sext(b, bits));
  std::uint64_t r = 0;
  switch (op) {
    case kAdd: r = a + b; break;
    case kSub: r = a - b; break;
    case kMul: r = a * b; break;
    case kDiv:
      if (b == 0) r = 0;
      else if (!sgn) r = a / b;
      else if (sb == -1) r = static_cast<std::uint64_t>(0) - a;
      else r = static_cast<std::uint64_t>(sa / sb);
      break;
    case kMod:
      if (b == 0) r = a;
      else if (!sgn) r = a % b;
      else if (sb == -1) r = 0;
      else r = static_cast<std::uint64_t>(sa % sb);
      break;
    case kOr: r = a | b; break;
    case kAnd: r = a & b; break;
    case kXor: r = a ^ b; break;
    case kLsh:
      if (b >= static_cast<std::uint64_t>(bits)) return false;
      r = a << b;
      break;
    case kRsh:
      if (b >= static_cast<std::uint64_t>(bits)) return false;
      r = a >> b;
      break;
    case kArsh:
      if (b >= static_cast<std::uint64_t>(bits)) return false;
      r = static_cast<std::uint64_t>(sa >> b);
      break;
    case kNeg: r = static_cast<std::uint64_t>(0) - a; break;
    case kMov:
      r = off == 8 || off == 16 || off == 32 ? sext(b, off) : b;
      break;
    default: return false;
  }
  out = r & mask;
  return true;
}

// Whether a conditional jump is taken: 1, 0, or -1 when the operands do not decide it.
inline int decide(std::uint8_t op, bool is32, const Value& a, const Value& b) {
  if (a.kind == Kind::Const && b.kind == Kind::Const) {
    std::uint64_t x = a.v, y = b.v;
    std::int64_t sx = static_cast<std::int64_t>(x), sy = static_cast<std::int64_t>(y);
    if (is32) {
      x &= 0xffffffffULL;
      y &= 0xffffffffULL;
      sx = static_cast<std::int32_t>(x);
      sy = static_cast<std::int32_t>(y);
    }
    switch (op) {
      case kJeq: return x == y;
      case kJne: return x != y;
      case kJgt: return x > y;
      case kJge: return x >= y;
      case kJlt: return x < y;
      case kJle: return x <= y;
      case kJsgt: return sx > sy;
      case kJsge: return sx >= sy;
      case kJslt: return sx < sy;
      case kJsle: return sx <= sy;
      case kJset: return (x & y) != 0;
      default: return -1;
    }
  }
  // A pointer into the stack or into read-only data is never null.
  const bool ptr = a.kind == Kind::Stack || a.kind == Kind::StackAny || a.kind == Kind::Rodata;
  if (!is32 && ptr && b.kind == Kind::Const && b.v == 0) {
    if (op == kJeq) return 0;
    if (op == kJne) return 1;
  }
  return -1;
}

// What a helper does to memory its arguments point to: nothing, or writes (ptr register, size
// register) bytes; unknown helpers may write anywhere above a stack pointer they are given.
struct HelperMemory {
  bool reads_only = false;
  int ptr = 0, size = 0;  // registers of a sized write
};

inline HelperMemory helper_memory(std::int32_t id) {
  switch (id) {
    case 1:    // map_lookup_elem
    case 2:    // map_update_elem
    case 3:    // map_delete_elem
    case 6:    // trace_printk
    case 25:   // perf_event_output
    case 87:   // map_push_elem
    case 130:  // ringbuf_output
    case 177:  // trace_vprintk
      return {true, 0, 0};
    case 4:    // probe_read
    case 16:   // get_current_comm
    case 45:   // probe_read_str
    case 112:  // probe_read_user
    case 113:  // probe_read_kernel
    case 114:  // probe_read_user_str
    case 115:  // probe_read_kernel_str
      return {false, 1, 2};
    case 26:   // skb_load_bytes
    case 68:   // skb_load_bytes_relative
      return {false, 3, 4};
    case 67:   // get_stack
      return {false, 2, 3};
    default:
      return {};
  }
}

}  // namespace btfslim::verifier
