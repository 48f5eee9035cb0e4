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

// A vmlinux ELF image: its BTF, and where in the file .BTF and .BTF_ids are.
struct KernelImage {
  std::shared_ptr<const FileBytes> file;
  std::shared_ptr<const Btf> btf;
  std::uint64_t btf_offset = 0, btf_size = 0;  // .BTF in the file
  std::uint64_t ids_offset = 0, ids_size = 0;  // .BTF_ids in the file (size 0: the image has none)
  bool big_endian = false;
  std::vector<BtfIdSlot> slots;  // in symbol table order
  std::vector<BtfIdSet> sets;
  std::string release;           // from the image's linux_banner, where it has one

  const std::string& path() const { return file->path(); }
  std::span<const std::uint8_t> btf_ids() const { return file->bytes().subspan(ids_offset, ids_size); }
};

// Reads `path`: an ELF with .BTF and a symbol table (a kernel build's vmlinux, a distribution's debug
// vmlinux). Throws InputError for anything else, and for a .BTF_ids that does not agree with its .BTF.
KernelImage read_kernel_image(const std::string& path);

// What a kernel looks up in its BTF by name, besides .BTF_ids (read in Linux 6.1's sources).
struct KernelLookup {
  std::string_view name;
  Kind kind;
  bool whole;              // the kernel reads its members
  std::string_view reader;  // who looks it up, and since when
};
std::span<const KernelLookup> kernel_lookups();

// Families of attach points a system may need without naming its programs.
enum class KernelFamily : std::uint8_t { Tracepoints, Iterators };

// What must work on the slim kernel.
struct KernelProfile {
  std::vector<const BpfObject*> objects;
  AttachOptions attach;
  std::vector<std::string> keep;  // types kept whole, named as `minimize --keep` names them
  std::vector<KernelFamily> families;
};

// Why a type is kept: the first thing that needed it.
struct KernelKeep {
  enum class Why : std::uint8_t {
    None,        // not kept
    BtfId,       // a .BTF_ids slot names it: `a` the slot
    Lookup,      // the kernel looks it up by name: `a` the kernel_lookups() entry
    StructOps,   // a struct_ops type the kernel registers (bpf_struct_ops_NAME and NAME)
    Reference,   // an object's kernel reference: `a` the object, `b` the reference
    Relocation,  // an object's CO-RE relocation: `a` the object, `b` the relocation
    Access,      // a load through a pointer the verifier types by BTF: `a` the object, `b` the access
    Unfollowed,  // a load through one the walk could not place, its struct kept whole: `a` the object,
                 // `b` the unfollowed access
    Keep,        // --keep: `a` the name
    Family,      // a family: `a` the KernelFamily
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
