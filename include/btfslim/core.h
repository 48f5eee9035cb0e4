// The CO-RE engine: BPF objects' relocation records, resolved against target BTF as libbpf does.
//
// libbpf 1.1.2 exports none of its CO-RE logic, so this is a reimplementation of its semantics
// (src/relo_core.c and the candidate search and instruction patching of src/libbpf.c): essential names,
// candidates by kind and essential name, access specs, field and type compatibility, TYPE_MATCHES, the 13
// relocation kinds, bitfield load sizes and shifts, ambiguity, poisoning, and the checks libbpf makes on
// the instruction it patches. The tests hold it to libbpf's own debug log on the same objects and targets.
//
// Data flows: BpfObject (one per .bpf.o, parsed once) and CoreTarget (one per target BTF, parsed once)
// meet in resolve_object(), which returns one CoreResult per relocation record, in record order.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/memory.h"

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_map>
#include <vector>

namespace btfslim {

class ElfFile;
class BpfCodeReader;  // reach.h

// struct bpf_core_relo's kinds, in libbpf's numbering.
enum class RelocKind : std::uint32_t {
  FieldByteOffset = 0,
  FieldByteSize = 1,
  FieldExists = 2,
  FieldSigned = 3,
  FieldLshiftU64 = 4,
  FieldRshiftU64 = 5,
  TypeIdLocal = 6,
  TypeIdTarget = 7,
  TypeExists = 8,
  TypeSize = 9,
  EnumvalExists = 10,
  EnumvalValue = 11,
  TypeMatches = 12,
};
inline constexpr std::uint32_t kMaxRelocKind = 12;

// libbpf's names ("byte_off", "field_exists", ...); "unknown" past kMaxRelocKind.
std::string_view reloc_kind_name(std::uint32_t kind);
bool is_field_kind(std::uint32_t kind);
bool is_type_kind(std::uint32_t kind);
bool is_enumval_kind(std::uint32_t kind);
// The kinds whose result is 0 rather than a poisoned instruction when nothing matches.
bool is_existence_kind(std::uint32_t kind);

// A name without its flavor: "task_struct___old" -> "task_struct" (libbpf's essential name).
std::string_view essential_name(std::string_view name);

// One record of .BTF.ext's core_relo subsection.
struct CoreRelocation {
  std::uint32_t section = 0;  // index into BpfObject::sections()
  std::uint32_t index = 0;    // its place among the section's records: libbpf's "relo #N"
  std::uint32_t insn_off = 0;  // byte offset of the instruction in the section
  TypeId local_type = 0;
  std::uint32_t access_off = 0;  // the access string, in the object's .BTF strings
  std::uint32_t kind = 0;        // raw: may be past kMaxRelocKind
  // The question it asks (its local type, access string and kind), numbered in the order first asked:
  // relocations asking the same share the number, and resolving answers each number once.
  std::uint32_t question = 0;
};

// A function symbol: a BPF program or subprogram, the unit libbpf names in its log.
struct BpfFunction {
  std::string_view name;
  std::uint64_t offset = 0;  // bytes into its section
  std::uint64_t size = 0;
};

// An ELF section a .BTF.ext block names, with its instructions and functions.
struct ProgramSection {
  std::string_view name;
  std::span<const std::uint8_t> insns;  // empty when the object has no such section
  std::vector<BpfFunction> functions;    // sorted by offset
};

// Up to this many objects, check and minimize keep them all open between their passes (a parsed
// object costs tens of KiB once its pages are given back); more are read again one at a time, so that
// memory does not grow with their number.
inline constexpr std::size_t kHeldObjects = 16;

// A BPF object file (.bpf.o): its local types and its CO-RE relocation records.
class BpfObject {
 public:
  // What open() keeps, and for how long: everything, for a while (the file mapped, its pages given
  // back as they are done with); everything but root_names(), for one pass after a first that read
  // those, the object dropped after it (a small file is read whole: FileBytes::Keep::Briefly); or only what the object asks of targets (root_names(); the
  // ELF and BTF kernel_references() reads), for a first pass over many objects that reads each again
  // later (check, minimize): its records are checked alike, but neither they nor the functions are
  // kept, so relocations() and sections()' functions are empty.
  enum class Reading { All, Once, Asked };
  // Throws InputError for an unreadable file, an ELF without .BTF, or a malformed .BTF.ext.
  static std::unique_ptr<const BpfObject> open(const std::string& path, Reading reading = Reading::All);
  ~BpfObject();

  const std::string& path() const { return path_; }
  // The ELF file, for what the CO-RE records do not say: code, symbols, relocations (reach.h, loader.h).
  const ElfFile& elf() const { return *elf_; }
  const Btf& btf() const { return *btf_; }
  std::shared_ptr<const Btf> btf_shared() const { return btf_; }
  bool has_ext() const { return has_ext_; }
  std::uint32_t func_info_count() const { return func_info_count_; }
  std::uint32_t line_info_count() const { return line_info_count_; }
  const std::vector<ProgramSection>& sections() const { return sections_; }
  std::span<const CoreRelocation> relocations() const { return relocations_; }
  // How many CO-RE relocation records the object has (whether or not they were kept: Reading).
  std::size_t relocation_count() const { return relocation_count_; }
  // How many questions the relocations ask (CoreRelocation::question is below this).
  std::uint32_t question_count() const { return question_count_; }

  // Whether another record names `r`'s instruction too. clang writes one record an instruction; a
  // mutated or hand-made object may not, and libbpf patches such an instruction record after record,
  // each later one meeting it as the ones before left it (resolve.cc follows).
  bool shares_insn(const CoreRelocation& r) const;
  bool shares_insns() const { return !shared_insns_.empty(); }

  std::string_view access(const CoreRelocation& r) const { return btf_->str(r.access_off); }
  // The function holding the relocated instruction, or nullptr.
  const BpfFunction* function_of(const CoreRelocation& r) const;

  // The essential names of the named local root types the relocations ask candidates for (all but
  // local_type_id's), each once, with the kinds (a bit per Kind) of the roots of that name: what a
  // candidate index looks up, read once so that indexing never goes back to the object's pages.
  struct RootName {
    std::string_view name;
    std::uint32_t kinds = 0;
  };
  std::span<const RootName> root_names() const { return root_names_; }

  // Gives back the memory of the object's file pages: they are read again from the page cache when
  // next touched. Many objects read one after another then hold one object's pages at a time.
  void release_pages() const;
  // The same for the pages wholly inside `part` (a section's bytes, or a part of them).
  void release_pages(std::span<const std::uint8_t> part) const;

 private:
  BpfObject() = default;
  void read_ext(std::span<const std::uint8_t> ext, const ElfFile& elf, Reading reading);
  // From the local types relocations ask candidates for, each once, in first-asked order.
  void read_root_names(std::span<const TypeId> roots);
  // Numbers the questions; says whether each section's records rise (no two can share an instruction).
  bool number_questions();
  // Which instructions more than one record names, unless `rising`.
  void find_shared_insns(bool rising);

  std::string path_;
  std::shared_ptr<const ElfFile> elf_;  // the mapped file and ELF the spans point into
  std::shared_ptr<const Btf> btf_;
  bool has_ext_ = false;
  std::uint32_t func_info_count_ = 0;
  std::uint32_t line_info_count_ = 0;
  std::vector<ProgramSection> sections_;
  std::vector<CoreRelocation> relocations_;
  std::uint32_t question_count_ = 0;
  std::vector<std::uint64_t> shared_insns_;  // section << 32 | insn_off, sorted; mostly none
  std::size_t relocation_count_ = 0;
  std::unique_ptr<char[]> root_name_bytes_;  // root_names_ point here
  std::vector<RootName> root_names_;
};

// The BTF relocations resolve against: a kernel's vmlinux BTF, and module BTFs split on it that libbpf
// searches only for types vmlinux lacks (as it does on a live kernel; with btf_custom_path it searches
// no modules). A split main BTF is searched whole, base and own types: the rest of a kernel's types,
// split off onto a base.
class CoreTarget {
 public:
  explicit CoreTarget(std::shared_ptr<const Btf> main, std::vector<std::shared_ptr<const Btf>> modules = {});
  const Btf& main() const { return *main_; }
  const std::vector<std::shared_ptr<const Btf>>& modules() const { return modules_; }
  const std::string& name() const { return main_->name(); }

 private:
  std::shared_ptr<const Btf> main_;
  std::vector<std::shared_ptr<const Btf>> modules_;
};

// A target type a relocation may resolve to.
struct Candidate {
  const Btf* btf = nullptr;
  TypeId id = 0;
};

// The candidates of a target for a set of local root types, found by one pass over the target's types
// (not one per relocation): for each essential name the objects ask for, the target types of that name.
class CandidateIndex {
 public:
  // `objects`: every root type their relocations name is looked up.
  CandidateIndex(const CoreTarget& target, std::span<const BpfObject* const> objects);
  // The same for root names gathered from objects no longer open (RootNames): `roots` must outlive
  // the index, which keeps views of their names.
  CandidateIndex(const CoreTarget& target, std::span<const BpfObject::RootName> roots);
  // libbpf's candidate list for a local type: same kind (enum ~ enum64) and essential name, the main
  // BTF first, modules only when it has none.
  std::vector<Candidate> candidates(const Btf& local, TypeId local_id) const;

 private:
  struct Slot {
    std::string_view name;
    std::vector<Candidate> main, modules;
  };
  const Slot* find(std::string_view essential) const;

  void index(const CoreTarget& target, std::uint32_t kinds, std::unordered_map<std::string_view, std::uint32_t>& by_name);

  std::vector<Slot> slots_;  // sorted by name; the names are the objects' root_names()
};

// The root names of objects read one after another and closed, each name once with the kinds of every
// root of that name (BpfObject::RootName): what a CandidateIndex needs of objects that are no longer
// open. Grows with the distinct names, not with the objects.
class RootNames {
 public:
  void add(const BpfObject& object);
  std::span<const BpfObject::RootName> roots() const { return roots_; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> index_;  // name -> its place in roots_
  std::vector<BpfObject::RootName> roots_;                // views of index_'s keys (node-based: stable)
};

enum class CoreStatus : std::uint8_t {
  Ok,         // `value` is patched in
  Poisoned,   // libbpf replaces the instruction with a call to an invalid helper
  Ambiguous,  // candidates disagree: libbpf fails the load
  Error,      // libbpf fails the load (bad record, unsatisfiable bitfield, unexpected instruction, ...)
};
std::string_view status_name(CoreStatus s);

// Where a matched candidate's access leads in the target: minimize keeps exactly these.
struct TargetSpec {
  const Btf* btf = nullptr;
  TypeId root = 0;
  std::uint32_t bit_offset = 0;
  // The low-level path: for each step, the type whose member or element is taken, and its index.
  // Array steps have member = false.
  struct Step {
    TypeId type = 0;
    std::uint32_t index = 0;
    bool member = false;
  };
  std::vector<Step> steps;
};

// The candidates a relocation matched, in candidate order: one list, shared by every relocation of an
// object that asks the same question (the same local type, access and kind), as most of a big object's do.
//
// Its count of holders is a plain integer, not an atomic one as a shared_ptr's is once the process has
// a second thread (Btf::parse may start one): an agent's results copy and drop a list some 100,000
// times, and the atomic count cost check 0.7 ms of 7. So a list and its copies stay on the thread that
// resolved them: results may be moved to another thread, after it is told, but not copied or dropped
// on two threads at once. (Each of a batch's threads resolves its own source's objects.)
class Matches {
 public:
  Matches() = default;
  explicit Matches(std::vector<TargetSpec> specs) : list_(specs.empty() ? nullptr : new List{1, std::move(specs)}) {}
  Matches(const Matches& o) noexcept : list_(o.list_) {
    if (list_) ++list_->holders;
  }
  Matches(Matches&& o) noexcept : list_(std::exchange(o.list_, nullptr)) {}
  Matches& operator=(const Matches& o) noexcept {
    if (o.list_) ++o.list_->holders;
    drop();
    list_ = o.list_;
    return *this;
  }
  Matches& operator=(Matches&& o) noexcept {
    if (this != &o) {
      drop();
      list_ = std::exchange(o.list_, nullptr);
    }
    return *this;
  }
  ~Matches() { drop(); }

  const TargetSpec* begin() const { return list_ ? list_->specs.data() : nullptr; }
  const TargetSpec* end() const { return list_ ? list_->specs.data() + list_->specs.size() : nullptr; }
  std::size_t size() const { return list_ ? list_->specs.size() : 0; }
  bool empty() const { return size() == 0; }
  const TargetSpec& operator[](std::size_t i) const { return list_->specs[i]; }
  // The same list (shared), for work done once per question: nullptr when empty.
  const void* identity() const { return list_; }
  // The roots alone (no paths, no BTF), to keep after the target is dropped.
  Matches roots_only() const;

 private:
  struct List {
    std::size_t holders;
    const std::vector<TargetSpec> specs;
  };
  void drop() noexcept {
    if (list_ && --list_->holders == 0) delete list_;
  }
  List* list_ = nullptr;
};

// Why a relocation is not Ok, or a note on one that is: a pointer to its text, which is kept once per
// distinct text for the whole process. Relocations asking the same question share one reason, and a
// result stays small (an agent has tens of thousands of them).
class Reason {
 public:
  Reason() = default;
  Reason(std::string_view text) : text_(text.empty() ? nullptr : intern(text)) {}  // NOLINT: implicit, as text
  Reason(const std::string& text) : Reason(std::string_view(text)) {}             // NOLINT
  Reason(const char* text) : Reason(std::string_view(text)) {}                    // NOLINT
  bool empty() const { return text_ == nullptr; }
  std::string_view view() const { return text_ ? std::string_view(*text_) : std::string_view(); }
  operator std::string_view() const { return view(); }  // NOLINT: read as the text it is

 private:
  static const std::string* intern(std::string_view text);
  const std::string* text_ = nullptr;
};

struct CoreResult {
  CoreStatus status = CoreStatus::Ok;
  std::uint8_t local_size = 0, target_size = 0;  // load/store sizes (1, 2, 4 or 8) when they are adjusted
  std::uint64_t value = 0;        // the new value (Ok)
  std::uint64_t local_value = 0;  // what the compiler put in, from the local types
  Reason reason;                   // why not Ok; also a note for Ok results worth one
  Matches matches;                 // the candidates that matched, in candidate order
};

// An object's results, one per relocation: from the pool of huge pages (memory.h), as an agent's are
// a megabyte and more, each 4 KiB page of which would take a fault.
using CoreResults = std::vector<CoreResult, PoolAllocator<CoreResult>>;

// The answers one resolution of an object took, to compare another resolution of it with (on another
// target) without reading its code again: a relocation's result is its answer, made of the
// candidates, judged with its instruction, so two relocations with the same answer on both targets
// have the same result on both, whatever their instructions. An answer is kept once per question and
// candidate generation; an agent's tens of thousands of relocations take a few hundred.
struct AnswerLog {
  struct Entry;                    // resolve.cc
  std::vector<std::uint32_t> of;   // per relocation: the entry it took
  std::vector<Entry> entries;
  AnswerLog();
  AnswerLog(AnswerLog&&) noexcept;
  AnswerLog& operator=(AnswerLog&&) noexcept;
  ~AnswerLog();
};

// Resolves every relocation of `object` against `target`, in record order, as libbpf 1.1.2 does on
// load, including the pruning of a local type's candidates by earlier relocations. Unlike libbpf it
// goes on after a failing relocation, so that every problem is reported. A question asked again (the
// same local type, access and kind, while that type's candidates are unchanged) is answered from the
// first asking: only the instruction is judged anew. With `log`, the answers are kept there too.
// With `along`, the object's code is read along (BpfCodeReader) once a relocation is poisoned.
CoreResults resolve_object(const BpfObject& object, const CandidateIndex& index, AnswerLog* log = nullptr,
                           BpfCodeReader* along = nullptr);
// The same into `results` (cleared first): for a caller resolving object after object, whose results
// reuse one vector's memory.
void resolve_object_into(CoreResults& results, const BpfObject& object, const CandidateIndex& index,
                         AnswerLog* log = nullptr, BpfCodeReader* along = nullptr);
// The same, each result handed to `each` with its relocation's index as it is made, kept nowhere: for
// a caller that needs one at a time.
void resolve_object(const BpfObject& object, const CandidateIndex& index,
                    const std::function<void(std::size_t, CoreResult&&)>& each);
// Resolves `object` against `index`'s target beside an earlier resolution of it, whose answers are in
// `earlier`: `each(i, result)` for each relocation whose answer here is not the same as its earlier
// one, in record order, until `each` returns false. Every other relocation has its earlier result
// (a type id is a different question on another target: those are all handed on), and its
// instruction is not read.
void resolve_changed(const BpfObject& object, const CandidateIndex& index, const AnswerLog& earlier,
                     const std::function<bool(std::size_t, CoreResult&&)>& each);

// The local root type and the access its record spells, readable: "struct task_struct.pid",
// "struct s[1].arr[3]", "enum e::B" (libbpf's notation).
std::string describe_access(const BpfObject& object, const CoreRelocation& r);

}  // namespace btfslim

template <>
struct fmt::formatter<btfslim::Reason> : fmt::formatter<std::string_view> {
  auto format(const btfslim::Reason& r, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(r.view(), ctx);
  }
};
