// Reading a BPF object's code (reach.h's BpfCode): every executable section as one image of
// instructions, its programs and subprograms, what the ELF relocations link (calls, kfuncs, callbacks'
// addresses, data, externs), the control flow with every branch taken both ways, and the guards (jumps
// on a constant set just before them, as `if (bpf_core_field_exists(...))` compiles). The verifier model
// (verifier_walk.h) walks what this reads; nothing here follows values.
//
// The code is read in place from the mapped file where it can be (the host's byte order, the sections
// back to back), and its pages are given back a stretch at a time behind the passes that read it.
#include "btfslim/reach.h"
#include "btfslim/spare.h"

#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/radix_sort.h"

#include "bpf_isa.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <unordered_map>

namespace btfslim {
namespace {

using namespace btfslim::isa;

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

  // The working memory, kept by the thread from one object's code to the next (check and minimize read
  // hundreds in turn): taken by one Build at a time, cleared before use.
  struct Scratch {
    // Declared, not defaulted: clang decides whether std::optional<Scratch> (below) can emplace one before
    // it has read the member initializers, unless a constructor says so.
    Scratch() {}
    std::vector<ElfFile::Section> sections;
    std::vector<ElfFile::TableSymbol> symbols;
    std::vector<ElfFile::Relocation> relocations;  // of one section at a time
    std::vector<Code> code;
    std::vector<std::uint32_t> base;
    std::vector<std::pair<std::uint32_t, InsnRef>> refs;
    std::unordered_map<std::uint32_t, bool> global;
    std::vector<Link> links;
    std::vector<bool> relocated;
    std::vector<std::uint64_t> core_relocated, second_half;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
    std::vector<Guard> guards;
    bool taken = false;
  };
  static Scratch& take(std::optional<Scratch>& own) {
    thread_local Scratch scratch;
    if (scratch.taken) return own.emplace();  // a second Build on this thread (none, today) has its own
    scratch.taken = true;
    scratch.sections.clear(), scratch.symbols.clear(), scratch.code.clear(), scratch.base.clear();
    scratch.refs.clear(), scratch.global.clear(), scratch.links.clear(), scratch.relocated.clear();
    scratch.core_relocated.clear(), scratch.second_half.clear(), scratch.edges.clear(), scratch.guards.clear();
    return scratch;
  }
  // The working memory is kept for the next Build, unless a large object's (spare.h).
  ~Build() {
    const Scratch& w = work;
    const std::size_t bytes = capacity_bytes(w.sections) + capacity_bytes(w.symbols) + capacity_bytes(w.relocations) +
                              capacity_bytes(w.code) + capacity_bytes(w.base) + capacity_bytes(w.refs) +
                              w.global.size() * 32 + capacity_bytes(w.links) + w.relocated.capacity() / 8 +
                              capacity_bytes(w.core_relocated) + capacity_bytes(w.second_half) +
                              capacity_bytes(w.edges) + capacity_bytes(w.guards);
    if (!own && bytes > kSpareBytes) work = Scratch();
    work.taken = false;
  }
  Build(const Build&) = delete;
  Build& operator=(const Build&) = delete;

  BpfCode& out;
  std::optional<Scratch> own;
  Scratch& work = take(own);
  std::vector<ElfFile::Section>& sections = work.sections;
  std::vector<ElfFile::TableSymbol>& symbols = work.symbols;
  std::vector<Code>& code = work.code;
  std::vector<std::uint32_t>& base = work.base;  // by ELF section: its first instruction in the image
  std::uint32_t text = 0;           // .text's ELF section
  std::uint32_t n = 0;              // instructions
  // What the ELF relocations and symbols say of each instruction that has something to say: written
  // instruction by instruction (one's relocation, or its own reading, then the next), sorted into refs_
  // at the end.
  std::vector<std::pair<std::uint32_t, InsnRef>>& refs = work.refs;
  void set_ref(std::uint32_t pc, InsnRef r) {
    if (!refs.empty() && refs.back().first == pc)
      refs.back().second = r;
    else
      refs.emplace_back(pc, r);
  }
  const InsnRef& ref_just_set() const { return refs.back().second; }
  std::unordered_map<std::uint32_t, bool>& global = work.global;  // function entry -> global
  std::vector<Link>& links = work.links;                          // by instruction
  std::vector<bool>& relocated = work.relocated;                  // an ELF relocation links the instruction
  std::vector<std::uint64_t>& core_relocated = work.core_relocated;  // a CO-RE relocation's instruction: a bit each
  std::vector<std::uint64_t>& second_half = work.second_half;        // of an ld_imm64: a bit each
  std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges = work.edges;  // (to, from)
  std::vector<Guard>& guards = work.guards;  // joins are not all known until the end: checked there
  std::size_t next_link = 0, next_code = 0;
  std::uint32_t at = 0;  // the next instruction to read (past an ld_imm64's second half, which may open a stretch)
};

BpfCode::Build::Build(BpfCode& code_out, const BpfObject& object) : out(code_out) {
  const ElfFile& elf = object.elf();
  out.big_endian_ = elf.big_endian();
  elf.sections(sections);
  elf.symbol_table(symbols);

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
    out.sections_.push_back({sec.name, base[s], count});
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
    elf.relocations(s, work.relocations);
    for (const ElfFile::Relocation& rel : work.relocations) {
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
    set_ref(pc, {Ref::BadCall, 0, 0});
    return;
  }
  const auto t = static_cast<std::uint32_t>(target);
  const auto it = global.find(t);
  set_ref(pc, {it != global.end() && it->second ? Ref::GlobalCall : Ref::StaticCall, t, 0});
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
      set_ref(pc, {Ref::ExternCall, l.symbol, 0});
    } else if (sym.section == text && text != 0) {
      // libbpf: the symbol's instruction plus imm + 1 (imm is -1 for a global function, the
      // function's place in the section for a static one called through the section symbol).
      const std::uint32_t tb = base[text];
      call_to(pc, tb + static_cast<std::int64_t>(sym.value / kInsnSize) + in.imm + 1, section_end(tb));
      if (ref_just_set().ref != Ref::BadCall && ref_just_set().target < tb) set_ref(pc, {Ref::BadCall, 0, 0});
    } else {
      set_ref(pc, {Ref::BadCall, 0, 0});
    }
  } else if (in.code == kLdImm64) {
    const std::int64_t byte = static_cast<std::int64_t>(sym.value) + in.imm;
    if (sym.section == 0 || sym.section >= sections.size()) {
      set_ref(pc, {Ref::Data, sym.section == 0 ? l.symbol : 0, 0});
    } else if (base[sym.section] != kNoInsn && byte >= 0 && byte % kInsnSize == 0 &&
               base[sym.section] + byte / kInsnSize < section_end(base[sym.section])) {
      const auto t = static_cast<std::uint32_t>(base[sym.section] + byte / kInsnSize);
      set_ref(pc, {Ref::FuncAddr, t, 0});
      mark_join(t);
    } else if (is_rodata(sections[sym.section].name) && byte >= 0) {
      set_ref(pc, {Ref::Rodata, sym.section, static_cast<std::uint64_t>(byte)});
    } else {
      set_ref(pc, {Ref::Data, 0, 0});
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
          set_ref(pc, {Ref::FuncAddr, static_cast<std::uint32_t>(t), 0});
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
  // By instruction; an instruction written twice apart (none is, today) keeps what was written last.
  std::stable_sort(refs.begin(), refs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  out.refs_.reserve(refs.size());
  for (std::size_t i = 0; i < refs.size(); ++i)
    if (i + 1 == refs.size() || refs[i + 1].first != refs[i].first) out.refs_.push_back(refs[i]);

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

void BpfCode::clear() {
  decoded_.clear();
  insns_ = {};
  file_ = nullptr;
  refs_.clear();
  join_bits_.clear(), fall_bits_.clear(), edge_bits_.clear(), guard_bits_.clear();
  edge_to_.clear(), edge_from_.clear();
  guards_.clear();
  join_rank_.clear();
  programs_.clear();
  sections_.clear();
  reloc_insn_.clear();
  rodata_.clear();
  big_endian_ = false;
}

std::optional<BpfCode>& BpfCode::spare() {
  thread_local std::optional<BpfCode> code;
  return code;
}

void BpfCode::recycle(BpfCode&& code) {
  const std::size_t bytes = capacity_bytes(code.decoded_) + capacity_bytes(code.refs_) + capacity_bytes(code.join_bits_) +
                            capacity_bytes(code.fall_bits_) + capacity_bytes(code.edge_bits_) +
                            capacity_bytes(code.guard_bits_) + capacity_bytes(code.edge_to_) +
                            capacity_bytes(code.edge_from_) + capacity_bytes(code.guards_) +
                            capacity_bytes(code.join_rank_) + capacity_bytes(code.programs_) +
                            capacity_bytes(code.sections_) + capacity_bytes(code.reloc_insn_) + capacity_bytes(code.rodata_);
  if (bytes > kSpareBytes) return;  // a large object's: given back (spare.h)
  code.clear();
  spare().emplace(std::move(code));
}

void BpfCodeReader::start() {
  if (build_) return;
  if (std::optional<BpfCode>& spare = BpfCode::spare()) {
    code_ = std::unique_ptr<BpfCode>(new BpfCode(std::move(*spare)));
    spare.reset();
  } else {
    code_ = std::unique_ptr<BpfCode>(new BpfCode());
  }
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

namespace verifier {

std::vector<std::uint16_t> live_registers(const BpfCode& code) {
  const std::span<const BpfInsn> insns = code.insns();
  const auto n = static_cast<std::uint32_t>(insns.size());
  constexpr std::uint16_t kArgs = 0x3e, kCallDefs = 0x3f;  // r1-r5; r0-r5
  std::vector<std::uint16_t> use(n, 0), def(n, 0), live(n, 0);
  // Where each instruction goes on to: pc + 1 (or + 2 past an ld_imm64), a jump's target, neither after
  // an exit or a jump always taken.
  std::vector<std::uint32_t> target(n, kNoInsn);
  std::vector<bool> falls(n, true);
  code.in_stretches(0, n, [&](std::uint32_t from, std::uint32_t to) {
    for (std::uint32_t pc = from; pc < to; ++pc) {
      const BpfInsn& in = insns[pc];
      const std::uint8_t cls = in.code & 0x07, op = in.code & 0xf0, mode = in.code & 0xe0;
      const auto bit = [](unsigned r) { return static_cast<std::uint16_t>(r <= 10 ? 1u << r : 0); };
      switch (cls) {
        case kLd:
          if (in.code == kLdImm64) {  // on past its second half
            def[pc] = bit(in.dst);
            falls[pc] = false;
            if (pc + 2 < n) target[pc] = pc + 2;
          } else {
            use[pc] = static_cast<std::uint16_t>(bit(6) | bit(in.src));  // the packet's skb, an index
            def[pc] = kCallDefs;
          }
          break;
        case kLdx:
          use[pc] = bit(in.src);
          def[pc] = bit(in.dst);
          break;
        case kSt:
          use[pc] = bit(in.dst);
          break;
        case kStx:
          use[pc] = static_cast<std::uint16_t>(bit(in.dst) | bit(in.src));
          if (mode == kModeAtomic) def[pc] = in.imm == 0xf1 ? bit(0) : (in.imm & 0x01) ? bit(in.src) : 0;
          break;
        case kAlu:
        case kAlu64:
          def[pc] = bit(in.dst);
          use[pc] = static_cast<std::uint16_t>((op == kMov ? 0 : bit(in.dst)) |
                                               ((in.code & kSrcX) && op != kEnd && op != kNeg ? bit(in.src) : 0));
          break;
        case kJmp:
        case kJmp32:
          if (op == kExit) {
            use[pc] = bit(0);
            falls[pc] = false;
          } else if (op == kCallOp) {
            use[pc] = kArgs | ((in.code & kSrcX) ? bit(in.dst) : 0);
            def[pc] = kCallDefs;
          } else {
            const std::int64_t t = std::int64_t{pc} + (cls == kJmp32 && op == kJa ? in.imm : in.off) + 1;
            if (t >= 0 && t < n) target[pc] = static_cast<std::uint32_t>(t);
            if (op == kJa) {
              falls[pc] = false;
            } else if (op != kJcond) {
              use[pc] = static_cast<std::uint16_t>(bit(in.dst) | ((in.code & kSrcX) ? bit(in.src) : 0));
            }
          }
          break;
        default:
          break;
      }
    }
  });
  // Backward passes until nothing changes: a loop's back edge takes a pass more each time it matters.
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t pc = n; pc-- > 0;) {
      std::uint16_t out = 0;
      if (falls[pc] && pc + 1 < n) out |= live[pc + 1];
      if (target[pc] != kNoInsn) out |= live[target[pc]];
      const auto in = static_cast<std::uint16_t>(use[pc] | (out & ~def[pc]) | (1u << 10));
      if (in != live[pc]) live[pc] = in, changed = true;
    }
  }
  return live;
}

}  // namespace verifier
}  // namespace btfslim
