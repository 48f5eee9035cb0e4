// Which instructions of a BPF object the kernel's verifier reaches once libbpf has relocated it for a
// target: a poisoned relocation fails the load only there.
//
// libbpf replaces a relocation it cannot resolve by a call to an invalid helper, and resolves
// existence, size and match checks to constants; the verifier decides branches on constants and never
// visits what they cut off. BpfCode reads a BPF object's code once (every executable section, its
// programs and subprograms, the ELF relocations of calls and data); reachability() then explores each
// program as the verifier does, with the relocated values of one target (src/core/reach.cc says how
// and what it leaves out; bpf_code.cc reads the code, verifier_walk.h walks it).
#pragma once

#include "btfslim/core.h"
#include "btfslim/input.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace btfslim {

// One instruction (struct bpf_insn) in the host's byte order: 8 bytes, laid out as in a file of the
// host's order (the register nibbles are bitfields in the order the host's ABI gives them).
struct BpfInsn {
  std::uint8_t code = 0;
  std::uint8_t dst : 4 = 0, src : 4 = 0;
  std::int16_t off = 0;
  std::int32_t imm = 0;
};
static_assert(sizeof(BpfInsn) == 8);

class BpfCode {
 public:
  // Throws InputError where the ELF cannot be read.
  explicit BpfCode(const BpfObject& object);

  // An entry program: a function of an executable section other than .text (libbpf's rule; .text
  // holds subprograms, appended to the programs that call them). Programs of "?SEC" sections, which
  // libbpf loads only when asked, are programs too: a loader asks for them.
  struct Program {
    std::string_view name, section;
    std::uint32_t entry = 0;  // instruction index in the image
  };
  const std::vector<Program>& programs() const { return programs_; }
  // The executable sections, in the image's order: where each begins and how many instructions it has.
  struct Section {
    std::string_view name;
    std::uint32_t base = 0, count = 0;
  };
  const std::vector<Section>& sections() const { return sections_; }

  // What the ELF relocations and symbols say about an instruction.
  enum class Ref : std::uint8_t {
    None,
    StaticCall,  // bpf-to-bpf call the verifier follows: `target`
    GlobalCall,  // call of a global subprogram: verified on its own, `target`
    ExternCall,  // kfunc: like a helper; `target` is its symbol (an index into the symbol table)
    BadCall,     // a call libbpf cannot link: an opaque call here
    FuncAddr,    // ld_imm64 of a subprogram's address (a callback): `target`
    Rodata,      // ld_imm64 of read-only data: section `target`, byte `offset`
    Data,        // ld_imm64 of any other map, extern or data: an unknown pointer; of an extern (a typed
                 // ksym), `target` is its symbol (an index into the symbol table), else 0
  };
  struct InsnRef {
    Ref ref = Ref::None;
    std::uint32_t target = 0;
    std::uint64_t offset = 0;
  };

  // The code is read in place from the file where it can be (the host's byte order, the executable
  // sections back to back, as compilers write them), else decoded into memory of its own. Read in
  // place, it is the file's pages: release() gives back those of instructions [from, to) once a pass
  // is done with them (read again from the file if asked for), so that an agent's megabytes of code are
  // never all in memory at once; in_stretches() runs a pass over [from, to) a stretch at a time so.
  std::span<const BpfInsn> insns() const { return insns_; }
  void release(std::uint32_t from, std::uint32_t to) const;
  template <typename F>
  void in_stretches(std::uint32_t from, std::uint32_t to, F&& pass) const {
    for (std::uint32_t at = from; at < to;) {
      const std::uint32_t end = to - at > kStretch ? at + kStretch : to;
      prefetch(at, end);
      pass(at, end);
      release(at, end);
      at = end;
    }
  }
  // Calls and 64-bit immediate loads have one; every other instruction has none.
  const InsnRef& ref(std::uint32_t pc) const;

  // The control flow with every branch taken both ways, for going backwards from an instruction:
  // whether `pc` goes on to pc + 1 (an ld_imm64's first half goes on to its second), and whether
  // some instruction jumps to, calls or takes the address of `pc`, and which.
  bool falls_through(std::uint32_t pc) const { return bit(fall_bits_, pc); }
  bool jumped_to(std::uint32_t pc) const { return bit(edge_bits_, pc); }
  std::span<const std::uint32_t> edges_to(std::uint32_t pc) const;
  // A conditional jump against an immediate whose register was set to a constant (a move of an
  // immediate, a 64-bit immediate load) earlier in the same straight run of code, no path joining in
  // between: every path to the jump brings that constant, so the constant alone says which way it
  // goes. `if (bpf_core_field_exists(...))` compiles to one, the constant being a relocation's: which
  // way it goes is decided for each target (a relocated `def` takes the relocation's value).
  struct Guard {
    std::uint32_t jump = 0, def = 0;
    std::uint64_t value = 0;  // the constant `def` sets, unrelocated
    enum class Def : std::uint8_t { Mov64, Mov32, Imm64 } how = Def::Mov64;
    std::uint8_t code = 0;  // the jump's opcode
    std::int32_t imm = 0;   // and what it compares with
  };
  std::span<const Guard> guards() const { return guards_; }  // by jump
  bool is_guard(std::uint32_t pc) const { return bit(guard_bits_, pc); }
  bool big_endian() const { return big_endian_; }
  // Instructions where paths meet (jump targets, function entries, returns from calls).
  bool joins(std::uint32_t pc) const { return bit(join_bits_, pc); }
  // Meeting points numbered 0, 1, ... in the code's order: `pc` must be one.
  std::uint32_t join_index(std::uint32_t pc) const {
    return join_rank_[pc / 64] +
           static_cast<std::uint32_t>(__builtin_popcountll(join_bits_[pc / 64] & ((std::uint64_t{1} << (pc % 64)) - 1)));
  }
  std::uint32_t join_count() const { return join_rank_.empty() ? 0 : join_rank_.back(); }
  // The relocation's instruction in the image; kNoInsn when its section is not code.
  static constexpr std::uint32_t kNoInsn = UINT32_MAX;
  std::uint32_t insn_of(std::size_t relocation) const { return reloc_insn_[relocation]; }
  // The bytes of read-only data section `section` (an ELF section index).
  std::span<const std::uint8_t> rodata(std::uint32_t section) const;

  // Gives `code`'s memory to the next BpfCodeReader of this thread: check reads hundreds of objects'
  // code in turn, each in the memory of the one before.
  static void recycle(BpfCode&& code);

 private:
  // Every member emptied, its memory kept: what a new BpfCode is, but for capacity. A member added
  // below is cleared here too.
  void clear();
  static std::optional<BpfCode>& spare();
  static constexpr std::uint32_t kStretch = FileBytes::kStretch / sizeof(BpfInsn);  // instructions
  // The bit sets below: a bit for each instruction.
  static bool bit(const std::vector<std::uint64_t>& bits, std::uint32_t pc) { return bits[pc / 64] >> (pc % 64) & 1; }
  static void set_bit(std::vector<std::uint64_t>& bits, std::uint32_t pc, bool on = true) {
    const std::uint64_t mask = std::uint64_t{1} << (pc % 64);
    bits[pc / 64] = on ? bits[pc / 64] | mask : bits[pc / 64] & ~mask;
  }
  void prefetch(std::uint32_t from, std::uint32_t to) const;
  std::span<const std::uint8_t> bytes(std::uint32_t from, std::uint32_t to) const;

  std::vector<BpfInsn> decoded_;  // the code where it is not read in place
  std::span<const BpfInsn> insns_;
  const FileBytes* file_ = nullptr;  // where it is read in place and its pages are given back
  std::vector<std::pair<std::uint32_t, InsnRef>> refs_;  // sorted by instruction: the few that have one
  std::vector<std::uint64_t> join_bits_, fall_bits_, edge_bits_, guard_bits_;
  std::vector<std::uint32_t> edge_to_, edge_from_;  // the edges, sorted by `to`
  std::vector<Guard> guards_;
  std::vector<std::uint32_t> join_rank_;  // meeting points before each 64 instructions; their count last
  std::vector<Program> programs_;
  std::vector<Section> sections_;
  std::vector<std::uint32_t> reloc_insn_;
  std::vector<std::pair<std::uint32_t, std::span<const std::uint8_t>>> rodata_;
  bool big_endian_ = false;

  BpfCode() = default;
  struct Build;  // reach.cc
  friend class BpfCodeReader;
};

// An object's code read along with another pass that reads it and gives its pages back behind it
// (resolve_object, which reads the relocated instructions): started, it reads each instruction before
// the other pass gives back its page, so that an agent's megabytes of code are read from the file once
// and not twice. Where the code is not read in place from the file, finish() reads all of it.
class BpfCodeReader {
 public:
  explicit BpfCodeReader(const BpfObject& object);
  ~BpfCodeReader();
  BpfCodeReader(const BpfCodeReader&) = delete;
  BpfCodeReader& operator=(const BpfCodeReader&) = delete;

  // From now on, read_before() reads (the code is wanted: resolve found a poisoned relocation).
  void start();
  bool started() const { return build_ != nullptr; }
  // Reads every instruction not read yet that lies in the file before `end`, if started.
  void read_before(const std::uint8_t* end);
  // The whole code: what is not read yet, read now, a stretch at a time.
  BpfCode finish();

 private:
  const BpfObject* object_;
  std::unique_ptr<BpfCode> code_;
  std::unique_ptr<BpfCode::Build> build_;
};

// Only a poisoned relocation's instruction fails the load where it is reached: the others are not
// followed (a program whose control flow meets no poisoned instruction is not walked at all).
struct ProgramReach {
  std::vector<std::uint32_t> relocations;  // the poisoned relocations whose instruction it reaches, ascending
  bool exact = true;  // false when it met its budget: states were merged, more is reached than the verifier sees
};

struct Reachability {
  std::vector<bool> reached;  // per relocation: poisoned, some program reaches it; any other, true
  std::vector<ProgramReach> programs;   // per BpfCode::programs()
};

// Whether any relocation is poisoned: only then does reaching matter (and the code need reading).
bool any_poisoned(std::span<const CoreResult> results);

// For each program of `code`, what the verifier reaches with the values of `results` (one per
// relocation of the object, as resolve_object gives them).
Reachability reachability(const BpfCode& code, std::span<const CoreResult> results);

}  // namespace btfslim
