// The BTF a kernel carries, made small (`btfslim minimize --kernel VMLINUX`).
//
// A user-space BTF (btf_custom_path) serves CO-RE only. What the kernel resolves against its own BTF
// must be in the BTF it carries: attach targets, kfuncs, typed ksyms, struct_ops, the types of the
// pointers it hands programs (whose members the verifier checks each access against), and what the
// kernel itself looks up. This part reads a vmlinux image, decides what a profile of BPF objects needs
// of its BTF, writes that BTF, and patches the image: `.BTF` replaced in place, `.BTF_ids` remapped.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/btf_access.h"
#include "btfslim/core.h"
#include "btfslim/input.h"
#include "btfslim/loader.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace btfslim {

// One `__BTF_ID__<kind>__<name>__<n>` symbol: a u32 in .BTF_ids that resolve_btfids filled with the id
// of the type of that kind and name (0 when it found none).
struct BtfIdSlot {
  std::string symbol;
  std::string kind;    // "struct", "union", "typedef", "func"
  std::string name;
  std::uint64_t offset = 0;  // into .BTF_ids
  TypeId id = 0;             // as the image holds it
};

// One `__BTF_ID__set__<name>` (u32 count, then count ids) or `__BTF_ID__set8__<name>` (u32 count,
// u32 flags, then count {u32 id, u32 flags}): kept sorted by id for the kernel's binary search.
struct BtfIdSet {
  std::string symbol;
  std::uint64_t offset = 0;  // into .BTF_ids: the count
  std::uint32_t count = 0;
  bool set8 = false;
};

// A kernel's version as its release begins: "6.12.118+deb12-cloud-amd64" is 6.12.118 (Debian's 6.1 says
// "6.1.0-57-cloud-amd64": its third number is an ABI's, not the stable release's).
struct KernelVersion {
  std::uint32_t major = 0, minor = 0, patch = 0;
  auto operator<=>(const KernelVersion&) const = default;
};
std::optional<KernelVersion> parse_kernel_version(std::string_view release);
// "6.12", or "6.11.11" where the third number is not 0.
std::string version_text(KernelVersion v);

// A vmlinux ELF image: its BTF, where in the file .BTF and .BTF_ids are, and its own data at the addresses
// it was linked for, with its symbols: what the kernel reads of itself when it looks its BTF up by the name
// of a function it points to (struct_ops stubs, tracepoint templates).
struct KernelImage {
  std::shared_ptr<const FileBytes> file;
  std::shared_ptr<const Btf> btf;
  std::uint64_t btf_offset = 0, btf_size = 0;  // .BTF in the file
  std::uint64_t ids_offset = 0, ids_size = 0;  // .BTF_ids in the file (size 0: the image has none)
  bool big_endian = false;
  std::vector<BtfIdSlot> slots;  // in symbol table order
  std::vector<BtfIdSet> sets;
  std::string release;           // from the image's linux_banner, where it has one
  std::optional<KernelVersion> version;  // of `release`

  // The allocated sections with contents, by address, over the mapped file. .data..percpu is left out:
  // its addresses are offsets into each CPU's copy, not addresses.
  struct Region {
    std::uint64_t addr = 0;
    std::span<const std::uint8_t> bytes;
  };
  std::vector<Region> memory;
  // The symbols defined in a section (functions, objects, and the linker's section bounds), by address;
  // names point into the mapped file.
  struct Symbol {
    std::uint64_t addr = 0, size = 0;
    std::string_view name;
    std::uint8_t type = 0;  // STT_*
  };
  std::vector<Symbol> symbols;
  std::uint8_t pointer_size = 8;  // ELFCLASS64, or 4

  const std::string& path() const { return file->path(); }
  std::span<const std::uint8_t> btf_ids() const { return file->bytes().subspan(ids_offset, ids_size); }

  // `size` bytes at address `addr`, or nullopt where no one section holds them all (NOBITS, unmapped).
  std::optional<std::span<const std::uint8_t>> bytes_at(std::uint64_t addr, std::uint64_t size) const;
  // The pointer at `addr`, in the image's byte order and size.
  std::optional<std::uint64_t> pointer_at(std::uint64_t addr) const;
  // The NUL-terminated string at `addr` (at most 256 bytes, within one section).
  std::optional<std::string_view> string_at(std::uint64_t addr) const;
  // What kallsyms_lookup names code address `addr`: the functions that start there (aliases: all), else
  // the one that holds it; none for an address no function holds. Without a clang LTO ".llvm.N" suffix.
  std::vector<std::string_view> functions_at(std::uint64_t addr) const;
  // The first symbol of that name (or that name with a clang LTO ".llvm.N" suffix), or nullptr.
  const Symbol* symbol_named(std::string_view name) const;
};

// Reads `path`: an ELF with .BTF and a symbol table (a kernel build's vmlinux, a distribution's debug
// vmlinux). Throws InputError for anything else, and for a .BTF_ids that does not agree with its .BTF.
KernelImage read_kernel_image(const std::string& path);

// What kernels look up in their BTF by a name their sources spell out, besides .BTF_ids (read in the
// sources of Linux 6.1 and 6.12 and the history of the newest; kernel_lookups.cc), each for the releases
// that do it.
struct KernelLookup {
  std::string_view name;
  Kind kind;
  bool whole;               // the kernel reads its members
  std::string_view reader;  // who looks it up (function and file)
  KernelVersion since;      // the first release that does
  KernelVersion until;      // the first release that no longer does; 0.0: none yet
  std::string_view symbol;  // "", or a symbol of the subsystem that does it: where the image lacks it, not built in
};
std::span<const KernelLookup> kernel_lookups();
// Whether the image's kernel does `lookup`: its release in [since, until) (an image that does not say
// its release: yes), and it has the symbol.
bool lookup_applies(const KernelLookup& lookup, const KernelImage& image);
// "6.9+", "5.6 to 6.8": the releases of a lookup, as the report and --explain print them.
std::string lookup_releases(const KernelLookup& lookup);

// Families of attach points a system may need without naming its programs.
enum class KernelFamily : std::uint8_t { Tracepoints, Iterators };

// What must work on the slim kernel.
struct KernelProfile {
  std::vector<const BpfObject*> objects;
  AttachOptions attach;
  std::vector<std::string> keep;  // types kept whole, named as `minimize --keep` names them
  std::vector<KernelFamily> families;
  // --keep-for-modules: the image's types that modules built for it refer to, kept whole with all they
  // reach, so that those modules' types still find their equals in the slim base.
  std::vector<TypeId> module_types;
};

// A name this kernel looks up that its image or the profile tells, not its sources (kernel_lookups.cc).
struct FoundLookup {
  enum class Source : std::uint8_t {
    StructOpsStub,       // the FUNC of a function a struct_ops' cfi_stubs points to (6.9+)
    TracepointTemplate,  // the FUNC of a tp_btf tracepoint's template, __bpf_trace_T (6.12, 6.11.11+)
    SafeType,            // a STRUCT T__safe_rcu (etc.) whose members say which pointers are trusted
    Kptr,                // the STRUCT a map value's kptr points to, by its name in an object's BTF
  };
  Source source;
  std::string name;
  Kind kind;
  bool whole;
  std::string why;  // one line: where the name comes from, who looks it up, since when
};
// What the image and the profile's objects (`refs`: their kernel references, as kernel_references gives
// them) make this kernel look up by name, in that order: each struct_ops stub, tracepoint template,
// __safe_ type and kptr struct once. Throws InputError where the image's own data cannot be read where
// its symbols and BTF say it is.
std::vector<FoundLookup> found_lookups(const KernelImage& image, const KernelProfile& profile,
                                       std::span<const std::vector<KernelRef>> refs);
std::string_view found_source_name(FoundLookup::Source source);

// Why a type is kept: the first thing that needed it.
struct KernelKeep {
  enum class Why : std::uint8_t {
    None,        // not kept
    BtfId,       // a .BTF_ids slot names it: `a` the slot
    Lookup,      // the kernel looks it up by name: `a` the kernel_lookups() entry
    Found,       // the kernel looks it up by a name the image or an object tells: `a` into SlimKernel::found
    StructOps,   // a struct_ops type the kernel registers (bpf_struct_ops_NAME and NAME)
    Reference,   // an object's kernel reference: `a` the object, `b` the reference
    Relocation,  // an object's CO-RE relocation: `a` the object, `b` the relocation
    Access,      // a load through a pointer the verifier types by BTF: `a` the object, `b` the access
    Unfollowed,  // a load through one the walk could not place, its struct kept whole: `a` the object,
                 // `b` the unfollowed access
    Keep,        // --keep: `a` the name
    Family,      // a family: `a` the KernelFamily
    Modules,     // --keep-for-modules: a module refers to it, or to a type that reaches it
    Type,        // a kept type refers to it: `from`
  };
  Why why = Why::None;
  std::uint32_t a = 0, b = 0;
  TypeId from = 0;
};

// An object's loads through pointers the verifier types by the kernel's BTF, as its programs make
// them on the source (btf_access.h), and what they need of a slim BTF (src/minimize/kernel_access.cc).
struct KernelAccesses {
  std::vector<BpfCode::Program> programs;  // the object's, to name where an access is
  std::vector<BpfCode::Section> sections;
  std::vector<ProgramContext> contexts;    // per program
  BtfAccesses found;
};

// "FUNCTION insn #N", as a relocation's site is named, with " (program PROGRAM)" where the load is in a
// subprogram: where a program's load is.
std::string access_site(const BpfObject& object, const KernelAccesses& accesses, std::uint32_t program,
                        std::uint32_t insn);

// How the verifier types each program's context (per BpfCode::programs()), from the object's kernel
// references and the ids they resolved to on `kernel` (0: not found).
std::vector<ProgramContext> program_contexts(const BpfObject& object, const BpfCode& code,
                                             std::span<const KernelRef> refs,
                                             std::span<const TypeId> ref_ids, const KernelTypeNames& kernel);

// What an object's accesses need kept of the kernel's BTF.
struct AccessKeeps {
  struct MemberKeep {
    TypeId type = 0;
    std::uint32_t member = 0;
    std::uint32_t access = 0;  // into BtfAccesses::accesses
  };
  struct WholeKeep {
    TypeId type = 0;
    std::uint32_t unfollowed = 0;  // into BtfAccesses::unfollowed
  };
  std::vector<MemberKeep> members;
  std::vector<WholeKeep> whole;
};

// The members each access's walk takes (and a second member of each union of more than one, which the
// kernel tells from a single-member one), and the structs unfollowed accesses need whole: for a load
// whose struct is not known, those of every typed pointer the program was seen with.
AccessKeeps access_keeps(const Btf& kernel, const BtfAccesses& found, std::span<const ProgramContext> contexts);

// Each access walked on `slim` (the source's ids mapped through `new_id`) as on the source: the first
// difference, described with the program, instruction, struct and offset, or "".
std::string verify_accesses(const Btf& source, const Btf& slim, std::span<const TypeId> new_id, const BpfObject& object,
                            const KernelAccesses& accesses);

struct SlimKernel {
  std::string btf;             // the slim raw BTF, in the image's byte order, unpadded
  std::uint32_t types = 0;     // its types (void not counted)
  std::vector<TypeId> new_id;  // by source id: the id in `btf`, 0 where dropped
  std::vector<KernelKeep> why;  // by source id
  // The members kept of each kept struct or union (member indexes, ascending); absent: none.
  std::unordered_map<TypeId, std::vector<std::uint32_t>> members;
  // Why each kept member is kept: the first thing that needed it, by (struct, member index).
  std::map<std::pair<TypeId, std::uint32_t>, KernelKeep> member_why;
  // Each object's kernel references, and the id each resolved to on the source (0: not found).
  std::vector<std::vector<KernelRef>> refs;
  std::vector<std::vector<TypeId>> ref_ids;
  std::vector<CoreResults> results;  // each object's relocations on the source
  std::vector<std::uint32_t> lookups;  // the kernel_lookups() entries this kernel does
  std::vector<FoundLookup> found;      // and what it looks up by names its image and the profile tell,
  std::vector<TypeId> found_ids;       // found in the source as it finds them (0: it has none)
  std::vector<AnswerLog> answers;                // the answers they took, for verify_slim
  std::vector<KernelAccesses> accesses;          // each object's loads through typed pointers
};

// Decides what the profile needs of the image's BTF and writes it. Throws InputError for a --keep
// name with no type.
SlimKernel slim_kernel(const KernelImage& image, const KernelProfile& profile);

// Reads the slim BTF back and checks it against the source: every .BTF_ids slot names a type of the
// same kind and name, every CO-RE relocation resolves to the same result, every kernel reference to the
// same status, every load through a typed pointer walks the same members to the same end. The first
// difference, described, or "".
std::string verify_slim(const KernelImage& image, const KernelProfile& profile, const SlimKernel& slim);

// Whether every name the kernel looks up (SlimKernel::lookups and ::found) finds on `out`, the slim BTF,
// the type it finds on the source: the first difference, described, or "".
std::string verify_lookups(const KernelImage& image, const SlimKernel& slim, const Btf& out);

// The slim BTF padded to the image's .BTF section: its string section extended with NULs (the kernel
// wants a header whose sections cover the data exactly). Throws InputError where it does not fit.
std::string padded_btf(const KernelImage& image, const SlimKernel& slim);

// The image's .BTF_ids with every slot remapped to the slim ids and every set sorted again, as
// resolve_btfids sorts them.
std::string remapped_btf_ids(const KernelImage& image, const SlimKernel& slim);

// A kernel module (.ko) of the image: split BTF on the image's, and the .BTF_ids slots its symbols name.
struct KernelModule {
  std::shared_ptr<const FileBytes> file;
  std::shared_ptr<const Btf> btf;  // split on the image's BTF
  std::vector<BtfIdSlot> slots;    // offsets into the module's .BTF_ids
  std::vector<BtfIdSet> sets;
  std::string ids_bytes;           // the module's .BTF_ids ("" when it has none)
  const std::string& path() const { return file->path(); }
};

// Reads `path`: nullopt for a .ko without .BTF (it needs no rewriting). Throws InputError for a file that
// is not a module, or whose BTF does not fit the image's.
std::optional<KernelModule> read_kernel_module(const std::string& path, const KernelImage& image);

// A module's BTF rewritten for the slim kernel: split on the padded slim BTF (the image's .BTF as -o writes
// it), with all the module's own types, and the types they and its .BTF_ids name from the old base that
// the slim one lacks, copied in (structs and unions as shells of their name and size, as the slim kernel
// keeps what it does not need).
struct SlimModule {
  std::string btf;
  std::uint32_t own = 0, imported = 0;  // types written
  std::string ids;                      // the module's .BTF_ids, remapped and sorted again ("": none)
};
SlimModule slim_module(const KernelImage& image, const SlimKernel& slim, const KernelModule& module);

}  // namespace btfslim
