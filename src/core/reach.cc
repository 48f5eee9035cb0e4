// Reachability: which instructions the verifier explores once libbpf has relocated an object.
//
// libbpf resolves existence, size and match checks to constants and replaces a relocation it cannot
// resolve by a call to an invalid helper (0xbad2310). The verifier walks every path of a program,
// deciding a conditional jump when both operands are known; a poisoned call fails the load only when a
// path reaches it, and the code a decided jump cuts off is removed unseen. So "does this object load?"
// is a question about paths, not about relocations: `if (bpf_core_field_exists(new->f)) read new; else
// read old;` reads the old field only on a path the verifier never takes on a new kernel.
//
// How: per program, a path-sensitive walk over (instruction, state) pairs, as the verifier's own, with
// the state it needs to decide such branches: constants in registers, constant stack slots (spills of
// any size at 8-byte aligned slots, zeroed bytes, as the verifier tracks them), pointers into the stack
// (so that a write through one updates its slot, and a helper given one forgets what it may overwrite),
// pointers into read-only data (.rodata is frozen by the loader, and the verifier reads constants from
// it: we read the file's values, what a loader that sets none loads). ALU on constants as the CPU
// computes it (32-bit results zero-extended), jumps of both classes, bpf-to-bpf calls into static
// subprograms with the callee's frame on the state (up to the verifier's 8 frames), global
// subprograms verified on their own from their first call (the verifier treats their call as opaque),
// callbacks (a subprogram's address taken) as entries of their own, helpers and kfuncs clobbering
// r0-r5. After an equality test against a constant the register holds that constant on the equal edge.
//
// Paths meet at jump targets and calls' returns: there a state seen before stops the walk. Past
// kStatesPerInsn states at one instruction, or past the step budget for the whole program, states
// that meet are merged (values that differ become unknown), which only reaches more: the walk then
// ends in time linear in the code times the lattice's height. Past a second budget, everything the
// program's control flow can reach counts as reached. A path also ends where no poisoned instruction
// lies ahead of it, in its function or past any return of its call chain (one backward pass over the
// control flow finds where one does): what it would go on to reach decides nothing. That pass takes a
// guard, a conditional jump on a constant set earlier in the same straight run of code (`if
// (bpf_core_field_exists(...))` compiles to one), only the way the target's constant sends it: a
// program whose guards cut off every poisoned instruction is not walked at all. A reached
// instruction is reported as reached; one not reached is dead: the analysis errs towards reaching, so
// that dead code is never claimed where the verifier goes.
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

#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/radix_sort.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace btfslim {
namespace {

constexpr std::uint32_t kInsnSize = 8;
constexpr std::uint32_t kNoInsn = BpfCode::kNoInsn;

// Instruction classes, operations and modes (uapi linux/bpf_common.h, linux/bpf.h).
constexpr std::uint8_t kLd = 0x00, kLdx = 0x01, kSt = 0x02, kStx = 0x03, kAlu = 0x04, kJmp = 0x05, kJmp32 = 0x06,
                       kAlu64 = 0x07;
constexpr std::uint8_t kSrcX = 0x08;
constexpr std::uint8_t kLdImm64 = 0x18, kCall = 0x85;
constexpr std::uint8_t kModeMem = 0x60, kModeMemSx = 0x80, kModeAtomic = 0xc0;
constexpr std::uint8_t kJa = 0x00, kJeq = 0x10, kJgt = 0x20, kJge = 0x30, kJset = 0x40, kJne = 0x50, kJsgt = 0x60,
                       kJsge = 0x70, kCallOp = 0x80, kExit = 0x90, kJlt = 0xa0, kJle = 0xb0, kJslt = 0xc0,
                       kJsle = 0xd0, kJcond = 0xe0;
constexpr std::uint8_t kAdd = 0x00, kSub = 0x10, kMul = 0x20, kDiv = 0x30, kOr = 0x40, kAnd = 0x50, kLsh = 0x60,
                       kRsh = 0x70, kNeg = 0x80, kMod = 0x90, kXor = 0xa0, kMov = 0xb0, kArsh = 0xc0, kEnd = 0xd0;
constexpr std::uint8_t kPseudoCall = 1, kPseudoKfuncCall = 2, kPseudoFunc = 4;
constexpr int kMaxFrames = 8;     // the verifier's MAX_CALL_FRAMES
constexpr int kStackSize = 512;   // MAX_BPF_STACK, per frame
constexpr std::uint32_t kStatesPerInsn = 16;
constexpr std::uint64_t kExactSteps = 4'000'000;    // then states merge at every meeting point
constexpr std::uint64_t kMergedSteps = 16'000'000;  // then the control flow alone decides

BpfInsn decode(const std::uint8_t* p, bool big_endian) {
  const ByteOrder order(big_endian != (std::endian::native == std::endian::big));
  BpfInsn i;
  i.code = p[0];
  // struct bpf_insn's bitfields: dst_reg is the low nibble on little-endian, the high one on big-endian.
  i.dst = big_endian ? p[1] >> 4 : p[1] & 0x0f;
  i.src = big_endian ? p[1] & 0x0f : p[1] >> 4;
  i.off = static_cast<std::int16_t>(order.u16(p + 2));
  i.imm = static_cast<std::int32_t>(order.u32(p + 4));
  return i;
}

bool is_rodata(std::string_view name) { return name == ".rodata" || name.starts_with(".rodata."); }

}  // namespace

// Reading an object's code, between its steps: what the ELF says (sections, symbols, relocations) and
// the code's layout first, then the instructions in the image's order as far as they are read (`at`),
// then the tables made of them all, into `out`'s members.
struct BpfCode::Build {
  // An executable section, in the image.
  struct Code {
    std::uint32_t index, base, count;
  };
  // An ELF relocation of an instruction: the symbol it links.
  struct Link {
    std::uint32_t pc, symbol;
  };

  Build(BpfCode& code, const BpfObject& object);
  void mark_join(std::uint32_t pc) { set_bit(out.join_bits_, pc); }
  std::uint32_t section_end(std::uint32_t pc) const;
  void call_to(std::uint32_t pc, std::int64_t target, std::uint32_t end);
  void link(const Link& l);
  std::optional<Guard> guard_at(std::uint32_t jump, std::uint32_t base, const BpfInsn& cmp) const;
  void read_until(std::uint32_t limit);
  void read_section(const Code& c, std::uint32_t to);
  void finish();

  BpfCode& out;
  std::vector<ElfFile::Section> sections;
  std::vector<ElfFile::TableSymbol> symbols;
  std::vector<Code> code;
  std::vector<std::uint32_t> base;  // by ELF section: its first instruction in the image
  std::uint32_t text = 0;           // .text's ELF section
  std::uint32_t n = 0;              // instructions
  std::unordered_map<std::uint32_t, InsnRef> refs;  // sorted into refs_ at the end
  std::unordered_map<std::uint32_t, bool> global;   // function entry -> global
  std::vector<Link> links;                          // by instruction
  std::vector<bool> relocated;                      // an ELF relocation links the instruction
  std::vector<std::uint64_t> core_relocated;        // a CO-RE relocation's instruction: a bit each
  std::vector<std::uint64_t> second_half;           // of an ld_imm64: a bit each
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  // (to, from)
  std::vector<Guard> guards;  // joins are not all known until the end: checked there
  std::size_t next_link = 0, next_code = 0;
  std::uint32_t at = 0;  // the next instruction to read (past an ld_imm64's second half, which may open a stretch)
};

BpfCode::Build::Build(BpfCode& code_out, const BpfObject& object) : out(code_out) {
  const ElfFile& elf = object.elf();
  out.big_endian_ = elf.big_endian();
  sections = elf.sections();
  symbols = elf.symbol_table();

  // Every executable section, one after the other in one image.
  base.assign(sections.size(), kNoInsn);
  auto executable = [](const ElfFile::Section& sec) {
    return sec.type == 1 /* SHT_PROGBITS */ && (sec.flags & 0x4 /* SHF_EXECINSTR */) && sec.bytes.size() >= kInsnSize;
  };
  std::uint64_t total = 0;
  // In place when the file is in the host's order and its executable sections lie back to back (each
  // a whole number of instructions) at an offset aligned for BpfInsn.
  const bool host_order = out.big_endian_ == (std::endian::native == std::endian::big);
  const std::uint8_t* start = nullptr;
  const std::uint8_t* next = nullptr;
  bool in_place = host_order;
  for (std::uint32_t s = 1; s < sections.size(); ++s) {
    const ElfFile::Section& sec = sections[s];
    if (!executable(sec)) continue;
    const std::uint32_t count = static_cast<std::uint32_t>(sec.bytes.size() / kInsnSize);
    if (total + count > UINT32_MAX / 2) fail(object.path(), "too many instructions");
    base[s] = static_cast<std::uint32_t>(total);
    code.push_back({s, base[s], count});
    total += count;
    if (!start) start = next = sec.bytes.data();
    in_place = in_place && sec.bytes.data() == next && sec.bytes.size() % kInsnSize == 0;
    next = sec.bytes.data() + sec.bytes.size();
    if (sec.name == ".text") text = s;
  }
  in_place = in_place && reinterpret_cast<std::uintptr_t>(start) % alignof(BpfInsn) == 0 && elf.file().holds({start, next});
  if (in_place) {
    // Its pages are given back only where there are many (FileBytes::kWorthReleasing).
    if (total * sizeof(BpfInsn) >= FileBytes::kWorthReleasing) out.file_ = &elf.file();
    out.insns_ = {reinterpret_cast<const BpfInsn*>(start), static_cast<std::size_t>(total)};
  } else {
    // Decoded a stretch at a time, each stretch's pages given back before the next is read: the file's
    // copy of the code and ours are never both in memory.
    out.decoded_.reserve(total);
    for (const Code& c : code) {
      const std::span<const std::uint8_t> bytes = sections[c.index].bytes;
      for (std::uint32_t from = 0; from < c.count; from += kStretch) {
        const std::span<const std::uint8_t> stretch =
            bytes.subspan(std::size_t{from} * kInsnSize, std::size_t{std::min(kStretch, c.count - from)} * kInsnSize);
        elf.file().prefetch(stretch);
        for (std::size_t i = 0; i < stretch.size(); i += kInsnSize)
          out.decoded_.push_back(decode(stretch.data() + i, out.big_endian_));
        elf.file().release(stretch);
      }
    }
    out.insns_ = out.decoded_;
  }
  for (std::uint32_t s = 1; s < sections.size(); ++s)
    if (is_rodata(sections[s].name)) out.rodata_.emplace_back(s, sections[s].bytes);

  n = static_cast<std::uint32_t>(out.insns_.size());
  out.join_bits_.assign(n / 64 + 1, 0);

  // Functions, and which are global: the verifier checks a global subprogram on its own (libbpf makes
  // a hidden one static, as the BTF it loads says).
  for (const ElfFile::TableSymbol& sym : symbols) {
    if (sym.type != 2 /* STT_FUNC */ || sym.section >= base.size() || base[sym.section] == kNoInsn) continue;
    if (sym.value % kInsnSize != 0) continue;
    const std::uint64_t entry = base[sym.section] + sym.value / kInsnSize;
    if (entry >= n) continue;
    const std::uint32_t pc = static_cast<std::uint32_t>(entry);
    const bool exported = (sym.bind == 1 /* STB_GLOBAL */ || sym.bind == 2 /* STB_WEAK */) &&
                          sym.visibility != 2 /* STV_HIDDEN */ && sym.visibility != 1 /* STV_INTERNAL */;
    global[pc] = exported;
    mark_join(pc);
    if (sym.section != text) {
      const std::string_view sec = sections[sym.section].name;
      out.programs_.push_back({sym.name, sec, pc});
    }
  }
  std::sort(out.programs_.begin(), out.programs_.end(), [](const Program& a, const Program& b) { return a.entry < b.entry; });

  // What the ELF relocations link: calls into .text, kfuncs, subprogram addresses, data. Listed by
  // instruction here, read with the code: reading each linked instruction now would bring in the pages
  // around it too, and with a few hundred of them, all of an agent's code.
  for (std::uint32_t s = 1; s < sections.size(); ++s) {
    if (sections[s].type != 9 /* SHT_REL */ || sections[s].info >= base.size() || base[sections[s].info] == kNoInsn)
      continue;
    const std::uint32_t b = base[sections[s].info];
    const std::uint32_t end = section_end(b);
    for (const ElfFile::Relocation& rel : elf.relocations(s)) {
      if (rel.offset % kInsnSize != 0 || rel.offset / kInsnSize >= end - b || rel.symbol >= symbols.size()) continue;
      links.push_back({b + static_cast<std::uint32_t>(rel.offset / kInsnSize), rel.symbol});
    }
  }
  // Of two at one instruction the later counts, as it did in the file's order.
  std::stable_sort(links.begin(), links.end(), [](const Link& x, const Link& y) { return x.pc < y.pc; });
  relocated.assign(n, false);

  // Where each CO-RE relocation's instruction is: its section's, by name, as libbpf finds it.
  std::unordered_map<std::string_view, const Code*> code_named;
  for (const Code& c : code) code_named.try_emplace(sections[c.index].name, &c);  // the first of a name
  std::vector<const Code*> code_of;  // by the object's section
  for (const ProgramSection& s : object.sections()) {
    const auto it = code_named.find(s.name);
    code_of.push_back(it == code_named.end() ? nullptr : it->second);
  }
  out.reloc_insn_.reserve(object.relocations().size());
  core_relocated.assign(n / 64 + 1, 0);
  for (const CoreRelocation& r : object.relocations()) {
    const Code* c = code_of[r.section];
    const std::uint32_t pc = c && r.insn_off / kInsnSize < c->count ? c->base + r.insn_off / kInsnSize : kNoInsn;
    out.reloc_insn_.push_back(pc);
    if (pc != kNoInsn) set_bit(core_relocated, pc);
  }
  second_half.assign(n / 64 + 1, 0);
  out.fall_bits_.assign(n / 64 + 1, ~std::uint64_t{0});
}

std::uint32_t BpfCode::Build::section_end(std::uint32_t pc) const {
  for (const Code& c : code)
    if (pc >= c.base && pc < c.base + c.count) return c.base + c.count;
  return pc;
}

void BpfCode::Build::call_to(std::uint32_t pc, std::int64_t target, std::uint32_t end) {
  if (target < 0 || target >= end || target >= n) {
    refs[pc] = {Ref::BadCall, 0, 0};
    return;
  }
  const auto t = static_cast<std::uint32_t>(target);
  const auto it = global.find(t);
  refs[pc] = {it != global.end() && it->second ? Ref::GlobalCall : Ref::StaticCall, t, 0};
  mark_join(t);
  if (pc + 1 < n) mark_join(pc + 1);
}

void BpfCode::Build::link(const Link& l) {
  const std::uint32_t pc = l.pc;
  const ElfFile::TableSymbol& sym = symbols[l.symbol];
  const BpfInsn& in = out.insns_[pc];
  relocated[pc] = true;
  if (in.code == kCall) {
    if (sym.section == 0) {
      refs[pc] = {Ref::ExternCall, 0, 0};
    } else if (sym.section == text && text != 0) {
      // libbpf: the symbol's instruction plus imm + 1 (imm is -1 for a global function, the
      // function's place in the section for a static one called through the section symbol).
      const std::uint32_t tb = base[text];
      call_to(pc, tb + static_cast<std::int64_t>(sym.value / kInsnSize) + in.imm + 1, section_end(tb));
      if (refs[pc].ref != Ref::BadCall && refs[pc].target < tb) refs[pc] = {Ref::BadCall, 0, 0};
    } else {
      refs[pc] = {Ref::BadCall, 0, 0};
    }
  } else if (in.code == kLdImm64) {
    const std::int64_t byte = static_cast<std::int64_t>(sym.value) + in.imm;
    if (sym.section == 0 || sym.section >= sections.size()) {
      refs[pc] = {Ref::Data, 0, 0};
    } else if (base[sym.section] != kNoInsn && byte >= 0 && byte % kInsnSize == 0 &&
               base[sym.section] + byte / kInsnSize < section_end(base[sym.section])) {
      const auto t = static_cast<std::uint32_t>(base[sym.section] + byte / kInsnSize);
      refs[pc] = {Ref::FuncAddr, t, 0};
      mark_join(t);
    } else if (is_rodata(sections[sym.section].name) && byte >= 0) {
      refs[pc] = {Ref::Rodata, sym.section, static_cast<std::uint64_t>(byte)};
    } else {
      refs[pc] = {Ref::Data, 0, 0};
    }
  }
}

// The register a guard tests was set to a constant earlier in its straight run of code, by a move of
// an immediate or a 64-bit immediate load: found by going back from the jump, through instructions
// that leave the register alone, as far as one that writes it or ends the run (a jump, a call, an
// exit, an atomic or packet load, a CO-RE relocation: poisoned, it is a call). Each instruction is
// passed over at most once, as a run ends at the jump before it.
std::optional<BpfCode::Guard> BpfCode::Build::guard_at(std::uint32_t jump, std::uint32_t first,
                                                       const BpfInsn& cmp) const {
  const unsigned reg = cmp.dst;
  if (bit(core_relocated, jump)) return std::nullopt;
  for (std::uint32_t q = jump; q-- > first;) {
    if (bit(second_half, q)) continue;  // read with its first half, next
    const BpfInsn in = out.insns_[q];
    const std::uint8_t cls = in.code & 0x07, op = in.code & 0xf0;
    const bool mov_imm = (cls == kAlu || cls == kAlu64) && op == kMov && !(in.code & kSrcX) && in.off == 0;
    const bool imm64 = in.code == kLdImm64 && !relocated[q] && in.src == 0 && q + 1 < n;
    if (in.dst == reg && (mov_imm || imm64)) {
      Guard g{jump, q, 0, Guard::Def::Imm64, cmp.code, cmp.imm};
      if (imm64)
        g.value = static_cast<std::uint32_t>(in.imm) | std::uint64_t{static_cast<std::uint32_t>(out.insns_[q + 1].imm)} << 32;
      else if (cls == kAlu64)
        g.how = Guard::Def::Mov64, g.value = static_cast<std::uint64_t>(std::int64_t{in.imm});
      else
        g.how = Guard::Def::Mov32, g.value = static_cast<std::uint32_t>(in.imm);
      return g;
    }
    if (bit(core_relocated, q)) return std::nullopt;
    switch (cls) {
      case kAlu:
      case kAlu64:
      case kLdx:
        if (in.dst == reg) return std::nullopt;
        break;
      case kSt:
        break;
      case kStx:
        if ((in.code & 0xe0) != kModeMem) return std::nullopt;  // an atomic writes a register
        break;
      case kLd:
        if (in.code != kLdImm64 || in.dst == reg) return std::nullopt;  // a packet load clobbers r0-r5
        break;
      default:
        return std::nullopt;  // a jump, a call, an exit
    }
  }
  return std::nullopt;
}

// Reads on to instruction `limit` of the image (or its end), from where the last read stopped: no
// page is asked for or given back here.
void BpfCode::Build::read_until(std::uint32_t limit) {
  for (; next_code < code.size(); ++next_code) {
    const Code& c = code[next_code];
    const std::uint32_t end = c.base + c.count;
    if (limit < end) {
      if (at < limit) read_section(c, limit);
      return;
    }
    if (at < end) read_section(c, end);
    // An ld_imm64 cut off at the section's end has taken `at` past it.
    if (next_code + 1 < code.size()) at = code[next_code + 1].base;
  }
}

// The links, then calls and addresses within the section, every jump and its target, and the guards,
// for instructions [at, to) of section `c`. Most instructions are neither a jump nor a 64-bit load:
// the test of their class is all they cost.
void BpfCode::Build::read_section(const Code& c, std::uint32_t to) {
  for (; next_link < links.size() && links[next_link].pc < to; ++next_link) link(links[next_link]);
  const std::uint32_t end = c.base + c.count;
  const BpfInsn* const insns = out.insns_.data();  // a local: not read back from `out` after each store
  std::uint32_t pc = at;
  for (; pc < to; ++pc) {
    const std::uint8_t op_code = insns[pc].code, cls = op_code & 0x07, op = op_code & 0xf0;
    if (cls != kJmp && cls != kJmp32) {
      if (op_code != kLdImm64) continue;
      const BpfInsn in = insns[pc];
      if (!relocated[pc] && in.src == kPseudoFunc) {
        const std::int64_t t = std::int64_t{pc} + in.imm + 1;
        if (t >= c.base && t < end) {
          refs[pc] = {Ref::FuncAddr, static_cast<std::uint32_t>(t), 0};
          mark_join(static_cast<std::uint32_t>(t));
        }
      }
      if (pc + 1 < end) set_bit(second_half, pc + 1);
      ++pc;  // the second half is no instruction of its own
      continue;
    }
    const BpfInsn in = insns[pc];
    if (op == kCallOp) {
      if (in.code == kCall && in.src == kPseudoCall && !relocated[pc]) call_to(pc, std::int64_t{pc} + in.imm + 1, end);
      continue;
    }
    if (op == kExit || op == kJa) set_bit(out.fall_bits_, pc, false);
    if (op != kExit && op != kJa && op != kJcond && !(in.code & kSrcX) && in.dst <= 10)
      if (const std::optional<Guard> g = guard_at(pc, c.base, in)) guards.push_back(*g);
    if (op == kExit) continue;
    const std::int64_t t = std::int64_t{pc} + (cls == kJmp32 && op == kJa ? in.imm : in.off) + 1;
    if (t >= c.base && t < end) {
      mark_join(static_cast<std::uint32_t>(t));
      edges.emplace_back(static_cast<std::uint32_t>(t), pc);
    }
  }
  at = pc;
}

// The code read to its end, a stretch at a time, and the tables made of it.
void BpfCode::Build::finish() {
  out.in_stretches(std::min(at, n), n, [&](std::uint32_t, std::uint32_t to) { read_until(to); });
  // A guard's run of code from its constant to the jump is straight: no path joins it.
  out.guard_bits_.assign(n / 64 + 1, 0);
  for (const Guard& g : guards) {
    bool straight = true;
    for (std::uint32_t pc = g.def + 1; pc <= g.jump && straight; ++pc) straight = !out.joins(pc);
    if (!straight) continue;
    out.guards_.push_back(g);
    set_bit(out.guard_bits_, g.jump);
  }
  out.join_rank_.reserve(out.join_bits_.size() + 1);
  std::uint32_t joins = 0;
  for (const std::uint64_t w : out.join_bits_) {
    out.join_rank_.push_back(joins);
    joins += static_cast<std::uint32_t>(__builtin_popcountll(w));
  }
  out.join_rank_.push_back(joins);
  out.refs_.assign(refs.begin(), refs.end());
  std::sort(out.refs_.begin(), out.refs_.end(), [](const auto& x, const auto& y) { return x.first < y.first; });

  // Calls and subprogram addresses are edges too.
  for (const auto& [pc, ref] : out.refs_)
    if (ref.ref == Ref::FuncAddr || ref.ref == Ref::StaticCall || ref.ref == Ref::GlobalCall) edges.emplace_back(ref.target, pc);
  radix_sort(edges, static_cast<unsigned>(std::bit_width(n)), [](const std::pair<std::uint32_t, std::uint32_t>& e) { return e.first; });
  out.edge_bits_.assign(n / 64 + 1, 0);
  out.edge_to_.reserve(edges.size());
  out.edge_from_.reserve(edges.size());
  for (const auto& [to, from] : edges) {
    out.edge_to_.push_back(to);
    out.edge_from_.push_back(from);
    set_bit(out.edge_bits_, to);
  }
}

BpfCode::BpfCode(const BpfObject& object) {
  Build build(*this, object);
  build.finish();
}

BpfCodeReader::BpfCodeReader(const BpfObject& object) : object_(&object) {}
BpfCodeReader::~BpfCodeReader() = default;

void BpfCodeReader::start() {
  if (build_) return;
  code_ = std::unique_ptr<BpfCode>(new BpfCode());
  build_ = std::make_unique<BpfCode::Build>(*code_, *object_);
}

void BpfCodeReader::read_before(const std::uint8_t* end) {
  // Only code read in place is where `end` points: decoded code was read whole at start().
  if (!build_ || !code_->decoded_.empty()) return;
  const auto first = reinterpret_cast<std::uintptr_t>(code_->insns_.data());
  const auto last = reinterpret_cast<std::uintptr_t>(end);
  if (last <= first) return;
  BpfCode::Build& build = *build_;
  const auto limit = static_cast<std::uint32_t>(std::min<std::uintptr_t>((last - first) / sizeof(BpfInsn), build.n));
  // Far behind (started late, or `end` far on), what the other pass has given back already is read a
  // stretch at a time and given back again, so that the reading keeps no more pages than it.
  if (limit > 2 * BpfCode::kStretch && build.at < limit - 2 * BpfCode::kStretch)
    code_->in_stretches(build.at, limit - 2 * BpfCode::kStretch, [&](std::uint32_t, std::uint32_t to) { build.read_until(to); });
  build.read_until(limit);
}

BpfCode BpfCodeReader::finish() {
  start();
  build_->finish();
  build_.reset();
  BpfCode done = std::move(*code_);
  code_.reset();
  return done;
}

std::span<const std::uint32_t> BpfCode::edges_to(std::uint32_t pc) const {
  const auto [first, last] = std::equal_range(edge_to_.begin(), edge_to_.end(), pc);
  return {edge_from_.data() + (first - edge_to_.begin()), static_cast<std::size_t>(last - first)};
}

std::span<const std::uint8_t> BpfCode::bytes(std::uint32_t from, std::uint32_t to) const {
  return {reinterpret_cast<const std::uint8_t*>(insns_.data() + from), std::size_t{to - from} * kInsnSize};
}

void BpfCode::prefetch(std::uint32_t from, std::uint32_t to) const {
  if (file_) file_->prefetch(bytes(from, to));
}

void BpfCode::release(std::uint32_t from, std::uint32_t to) const {
  if (file_) file_->release(bytes(from, to));
}

const BpfCode::InsnRef& BpfCode::ref(std::uint32_t pc) const {
  static const InsnRef none;
  const auto it = std::lower_bound(refs_.begin(), refs_.end(), pc, [](const auto& e, std::uint32_t k) { return e.first < k; });
  return it != refs_.end() && it->first == pc ? it->second : none;
}

std::span<const std::uint8_t> BpfCode::rodata(std::uint32_t section) const {
  for (const auto& [index, bytes] : rodata_)
    if (index == section) return bytes;
  return {};
}

namespace {

// ---- the abstract state ----

enum class Kind : std::uint8_t {
  Scalar,    // some number (not a pointer into the stack)
  Const,     // this number
  Stack,     // frame `frame`'s stack pointer plus `v` (negative)
  StackAny,  // somewhere in frame `frame`'s stack
  Rodata,    // read-only data section `section`, byte `v`
  Top,       // anything, a pointer into any stack included
};

struct Value {
  Kind kind = Kind::Scalar;
  std::uint8_t frame = 0;
  std::uint32_t section = 0;
  std::uint64_t v = 0;
  bool operator==(const Value&) const = default;
};

Value scalar() { return {}; }
Value constant(std::uint64_t v) { return {Kind::Const, 0, 0, v}; }
bool stackish(const Value& v) { return v.kind == Kind::Stack || v.kind == Kind::StackAny || v.kind == Kind::Top; }

Value join(const Value& a, const Value& b) {
  if (a == b) return a;
  if (a.kind == Kind::Top || b.kind == Kind::Top) return {Kind::Top};
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

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

std::uint64_t hash_value(std::uint64_t h, const Value& v) {
  return mix(mix(h, static_cast<std::uint64_t>(v.kind) | std::uint64_t{v.frame} << 8 | std::uint64_t{v.section} << 16),
             v.v);
}

std::uint64_t hash_state(std::uint32_t pc, const State& s) {
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

std::uint64_t hash_chain(const State& s) {
  std::uint64_t h = 0;
  for (const Frame& f : s.frames) h = mix(h, std::uint64_t{f.function} << 32 | f.return_pc);
  return h;
}

bool same_chain(const State& a, const State& b) {
  if (a.frames.size() != b.frames.size()) return false;
  for (std::size_t i = 0; i < a.frames.size(); ++i)
    if (a.frames[i].function != b.frames[i].function || a.frames[i].return_pc != b.frames[i].return_pc) return false;
  return true;
}

Slot join_slots(const Slot& x, const Slot& y) {
  if (x == y) return x;
  Slot j = x;
  if (x.spill && x.spill == y.spill) {
    j.value = join(x.value, y.value);
    j.zero = x.zero & y.zero;
    return j;
  }
  if ((x.spill && stackish(x.value)) || (y.spill && stackish(y.value))) {
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
void join(const State& a, const State& b, State& j) {
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

// ---- arithmetic on constants, as the BPF ISA defines it ----

std::uint64_t sext(std::uint64_t v, int bits) {
  if (bits >= 64) return v;
  const std::uint64_t m = std::uint64_t{1} << (bits - 1);
  v &= (m << 1) - 1;
  return (v ^ m) - m;
}

std::uint64_t bswap(std::uint64_t v, int bits) {
  switch (bits) {
    case 16: return __builtin_bswap16(static_cast<std::uint16_t>(v));
    case 32: return __builtin_bswap32(static_cast<std::uint32_t>(v));
    default: return __builtin_bswap64(v);
  }
}

// `a op b` on 64 or 32 bits; false where the verifier would not know the result.
bool alu_const(std::uint8_t op, bool is64, std::int16_t off, std::uint64_t a, std::uint64_t b, bool big_endian,
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
int decide(std::uint8_t op, bool is32, const Value& a, const Value& b) {
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

HelperMemory helper_memory(std::int32_t id) {
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

// ---- the walk ----

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
      : value_(insns), poison_(insns), results_(results) {
    values_.reserve(values);
  }
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
  explicit WalkScratch(const BpfCode& code)
      : reached(code.insns().size()), seen_flow(code.insns().size()), states_at(code.join_count(), 0) {}
  void clear() {
    reached.clear();
    seen_flow.clear();
    seen.clear();
    for (const std::uint32_t j : counted) states_at[j] = 0;
    counted.clear();
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

class Walk {
 public:
  // `scratch` is cleared; reached() says what the walk marked there until it is cleared again. `leads`
  // says which instructions some path of the control flow leads from to a poisoned one
  // (leads_to_poison()): a path past all of them reaches none, and goes no further.
  Walk(const BpfCode& code, const Patches& patches, const std::vector<bool>& leads, WalkScratch& scratch)
      : code_(code), insns_(code.insns()), patches_(patches), leads_(leads), scratch_(scratch),
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
  bool may_meet_poison(std::uint32_t pc, const State& st) const;
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
  const std::vector<bool>& leads_;
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

Slot* find_slot(State& st, std::uint8_t frame, std::int16_t off) {
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

const Slot* find_slot(const State& st, std::uint8_t frame, std::int16_t off) {
  auto it = std::lower_bound(st.stack.begin(), st.stack.end(), std::pair(frame, off),
                             [](const Slot& s, const std::pair<std::uint8_t, std::int16_t>& k) {
                               return std::pair(s.frame, s.off) < k;
                             });
  return it != st.stack.end() && it->frame == frame && it->off == off ? &*it : nullptr;
}

void drop_empty(State& st) {
  st.stack.erase(std::remove_if(st.stack.begin(), st.stack.end(), [](const Slot& s) { return s.empty(); }),
                 st.stack.end());
}

// The slots of `frame` with a byte in [lo, hi): one run of the sorted stack, erased at once.
void Walk::forget(State& st, std::uint8_t frame, std::int64_t lo, std::int64_t hi) {
  auto key = [](const Slot& s) { return std::pair<int, std::int64_t>(s.frame, s.off); };
  const auto first = std::lower_bound(st.stack.begin(), st.stack.end(), std::pair<int, std::int64_t>(frame, lo - 7),
                                      [&](const Slot& s, const auto& k) { return key(s) < k; });
  auto last = first;
  while (last != st.stack.end() && last->frame == frame && last->off < hi) ++last;
  st.stack.erase(first, last);
}

// A write through `ptr` (a helper's, a global function's) of `size` bytes, or of unknown extent (-1):
// what lies from there to the top of its frame may be overwritten.
void Walk::forget_through(State& st, const Value& ptr, std::int64_t size) {
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

void Walk::store(State& st, const Value& ptr, std::int64_t off, int size, const Value& v) {
  if (ptr.kind == Kind::StackAny || ptr.kind == Kind::Top) {
    forget_through(st, ptr);
    return;
  }
  if (ptr.kind != Kind::Stack) return;
  const std::int64_t at = static_cast<std::int64_t>(ptr.v) + off;
  if (at < -kStackSize || at + size > 0) return;  // the verifier rejects it
  const std::int64_t base = at - ((at % 8) + 8) % 8;
  Slot* s = find_slot(st, ptr.frame, static_cast<std::int16_t>(base));
  const bool pointer = stackish(v) || v.kind == Kind::Rodata;
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

Value Walk::load(const State& st, const Value& ptr, std::int64_t off, int size, bool sign) const {
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

void Walk::call_clobbers(State& st, HelperMemory mem) {
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

bool Walk::admit(std::uint32_t pc, State& st) {
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
    m = joined_;
    st = joined_;
    return true;
  }
  list.push_back(st);
  return true;
}

void Walk::run(std::uint32_t entry) {
  add_entry(entry);
  for (std::size_t e = 0; e < entries_.size() && mode_ != Mode::Flow; ++e) {
    State init = scratch_.copy(State{});
    Frame& f = init.frames.emplace_back();
    f.function = entries_[e];
    f.regs[10] = {Kind::Stack, 0, 0, 0};
    work_.push_back({entries_[e], std::move(init)});
    while (!work_.empty() && mode_ != Mode::Flow) {
      Work w = std::move(work_.back());
      work_.pop_back();
      walk(w.pc, w.state);
      scratch_.recycle(std::move(w.state));
    }
  }
  if (mode_ == Mode::Flow) flow();
}

// Past both budgets: whatever the control flow reaches from the entries, every branch both ways.
void Walk::flow() {
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

// Whether the path at `pc` may still meet a poisoned instruction: from here, or from where one of
// the functions it is in returns to (the control flow leads_to_poison() follows does not return).
bool Walk::may_meet_poison(std::uint32_t pc, const State& st) const {
  if (leads_[pc]) return true;
  for (std::size_t f = 1; f < st.frames.size(); ++f)
    if (leads_[st.frames[f].return_pc]) return true;
  return false;
}

void Walk::walk(std::uint32_t pc, State& st) {
  const std::size_t n = insns_.size();
  for (;;) {
    if (pc >= n) return;
    if (!may_meet_poison(pc, st)) return;
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
        } else if (ref.ref == BpfCode::Ref::Data || in.src != 0) {
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
        static constexpr int kSizes[] = {4, 2, 1, 8};
        const int size = kSizes[(in.code >> 3) & 0x03];
        if (in.dst == 10) return;
        r[in.dst] = mode == kModeMem || mode == kModeMemSx ? load(st, r[in.src], in.off, size, mode == kModeMemSx)
                                                           : scalar();
        ++pc;
        break;
      }

      case kSt:
      case kStx: {
        const std::uint8_t mode = in.code & 0xe0;
        static constexpr int kSizes[] = {4, 2, 1, 8};
        const int size = kSizes[(in.code >> 3) & 0x03];
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
          } else if (in.src == kPseudoCall || in.src == kPseudoKfuncCall) {
            call_clobbers(st, {});
          } else {
            call_clobbers(st, helper_memory(in.imm));
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
  WalkScratch scratch(code);
  const std::vector<bool> leads = leads_to_poison(code, patches, at);
  for (std::size_t p = 0; p < code.programs().size(); ++p) {
    ProgramReach& pr = out.programs[p];
    // A program whose control flow meets no poisoned instruction reaches none: not walked.
    if (!leads[code.programs()[p].entry]) continue;
    scratch.clear();
    Walk walk(code, patches, leads, scratch);
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
  return out;
}

}  // namespace btfslim
