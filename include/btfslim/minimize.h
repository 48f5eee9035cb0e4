// Minimizing BTF for a set of BPF objects: keep only the types and members their CO-RE relocations
// resolve against, such that every relocation resolves the same against the result.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/core.h"

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace btfslim {

struct MinimizeOptions {
  std::vector<std::string> keep;  // type names kept with all their members
  // Emit split BTF on this base: only the types it lacks. Unset: standalone BTF for a standalone
  // source, and split BTF on its own base for a split source (a module).
  std::shared_ptr<const Btf> base;
};

// Why a type or member is kept: the first relocation that needed it.
struct KeepReason {
  int object = -1;       // index into the objects; -1: not kept, or kept by --keep / the pointer size
  std::uint32_t relocation = 0;
};

struct Minimized {
  std::string bytes;  // the raw BTF written, in the source's byte order
  std::shared_ptr<const Btf> base;  // what `bytes` is split on; null: standalone
  std::uint32_t types = 0;  // types in it (own types, for split output)
  // Only kept types have entries (a vmlinux has 126k types; a minimized one a few hundred).
  std::unordered_map<TypeId, KeepReason> type_reasons;
  // The kept members (or enumerators) of a type, and why.
  std::unordered_map<TypeId, std::vector<std::pair<std::uint32_t, KeepReason>>> member_reasons;
  std::vector<bool> kept;  // per source type id
  std::vector<bool> named;    // kept with its name (else: a struct or union written anonymous)
  std::vector<bool> pointee;  // a pointer written with its target (else: void *)
  std::vector<bool> whole;    // a composite written with its anonymous members as they are
  // Anonymous members written flattened: (holder, member index) whose members went into the struct
  // holding it, at their absolute bit offsets.
  std::set<std::pair<TypeId, std::uint32_t>> flattened;

  // The kept type ids from `first` on, ascending.
  std::vector<TypeId> kept_ids(TypeId first = 1) const;

  // `bytes` read back (on `base` when split), named `name` in errors.
  std::shared_ptr<const Btf> parse(const std::string& name) const;
};

// The CO-RE target a BTF is when minimized or verified: a split BTF (a module) is searched as libbpf
// searches modules, after its base.
CoreTarget minimize_target(const std::shared_ptr<const Btf>& btf);

// What minimize() marks for the relocations alone, nothing written: the types (type_reasons, kept,
// named, pointee, whole) and members (member_reasons) `results` resolved against.
Minimized mark_relocations(const Btf& source, const std::vector<const BpfObject*>& objects,
                           const std::vector<CoreResults>& results);

// The same, object by object: each object's results are marked and may then be dropped, so that only
// the marks (a bit per type, the kept members) outlive an object. `index` is the object's place in the
// run (KeepReason::object).
class RelocationMarker {
 public:
  explicit RelocationMarker(const Btf& source);
  ~RelocationMarker();
  RelocationMarker(const RelocationMarker&) = delete;
  RelocationMarker& operator=(const RelocationMarker&) = delete;
  void add(const BpfObject& object, int index, const CoreResults& results);
  // The marks so far; the marker is spent.
  Minimized finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// `results[i]` are objects[i]'s relocations resolved against `source`.
Minimized minimize(const Btf& source, const std::vector<const BpfObject*>& objects,
                   const std::vector<CoreResults>& results, const MinimizeOptions& options);
// The same from the marks of the relocations (mark_relocations, RelocationMarker).
Minimized minimize(const Btf& source, Minimized marked, const MinimizeOptions& options);

// Resolves every object against `minimized` (on its base when split) and compares with `expected`
// (against the source's minimize_target, with the answers in `answers`): the first difference,
// described, or "".
std::string verify_minimized(const Btf& source, const Minimized& minimized, const std::vector<const BpfObject*>& objects,
                             const std::vector<CoreResults>& expected, const std::vector<AnswerLog>& answers);

// The same, object by object, for objects read one at a time: `roots` are every object's root names
// (RootNames), which the minimized BTF is indexed for once.
class MinimizedVerifier {
 public:
  MinimizedVerifier(const Btf& source, const Minimized& minimized, std::span<const BpfObject::RootName> roots);
  // The first relocation of `object` that resolves differently on the minimized BTF than `expected`
  // (with `answers`) on the source, described, or "".
  std::string check(const BpfObject& object, const CoreResults& expected, const AnswerLog& answers) const;
  // What check() compares, folded into 64 bits, for an object's results on the source; and the object
  // resolved on the output, folded the same way. Equal digests: every relocation resolves as on the
  // source, found without holding the source's results or resolving on it again. Different ones: check()
  // says where (with the results and answers of a resolution on the source).
  static std::uint64_t source_digest(const Btf& source, const BpfObject& object, const CoreResults& results);
  std::uint64_t output_digest(const BpfObject& object) const;

 private:
  const Btf& source_;
  std::shared_ptr<const Btf> out_;
  CoreTarget target_;
  CandidateIndex index_;
};

}  // namespace btfslim
