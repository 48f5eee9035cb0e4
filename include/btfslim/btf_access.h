// What the verifier checks of the loads a program makes through pointers it types by the kernel's BTF.
//
// The verifier types some pointers by the kernel's own BTF (PTR_TO_BTF_ID): a tracing, LSM, iterator or
// struct_ops program's arguments, what bpf_get_current_task_btf() and other helpers and kfuncs return,
// typed ksyms, and the pointer members loaded through those. Every load through one is checked against
// the kernel's layout of the pointed-to struct at that offset (btf_struct_access): the member that
// covers the bytes decides whether the load is allowed and what the loaded register holds (a number, or
// a pointer to another struct). A program reads through such pointers whatever its CO-RE relocations
// name: a `struct sockaddr *` cast to `struct sockaddr_in *` reads sockaddr's bytes.
//
// walk_struct() is the kernel's walk (kernel/bpf/btf.c: btf_struct_walk and btf_struct_access) over
// any BTF: the path of members it takes and what it ends on. btf_accesses() walks each program of an
// object as the verifier does (src/core/btf_access.cc) and lists the loads it makes through typed
// pointers: what a BTF a kernel carries must keep for them to load as they do on the source.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/core.h"
#include "btfslim/reach.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace btfslim {

// One step of the kernel's walk: the member of struct or union `type` it takes (an array member's
// element `element`, counted in the array flattened as the kernel does).
struct StructStep {
  TypeId type = 0;
  std::uint32_t member = 0;
  std::uint32_t element = 0;
};

// What the kernel makes of a load of `size` bytes at `off` of a struct or union.
struct StructAccess {
  enum class Result : std::uint8_t { Scalar, Pointer, Error };
  Result result = Result::Error;
  TypeId pointee = 0;      // Pointer: the struct or union the loaded pointer points to
  bool untrusted = false;  // it walked a union of more than one member (newer kernels then distrust it)
  std::vector<StructStep> path;
  std::string error;  // Error: why, as the verifier's log says it
};

// The kernel's walk of `type` (a struct or union, past modifiers) for a load of `size` bytes at `off`,
// as Linux 6.12 walks it (older kernels allow less past a union: see the file's comment).
StructAccess walk_struct(const Btf& btf, TypeId type, std::int64_t off, std::uint32_t size);

// Past typedefs, qualifiers and type tags, as the kernel's btf_type_skip_modifiers (at most 32 deep, so
// that a loop in bad input ends).
TypeId skip_modifiers(const Btf& btf, TypeId id);
// The struct or union a pointer type points to (both past modifiers), or 0 for anything else.
TypeId pointee_struct(const Btf& btf, TypeId id);
// The FUNC_PROTO a pointer type points to (both past modifiers: btf_type_resolve_func_ptr), or 0.
TypeId pointee_function(const Btf& btf, TypeId id);

// "sa_data[2]", "__sk_common.skc_family" (escaped): a path for people.
std::string describe_path(const Btf& btf, std::span<const StructStep> path);

// How the verifier types a program's context (r1 at its entry).
struct ProgramContext {
  enum class Kind : std::uint8_t {
    None,       // not by BTF (kprobes, tracepoints, sockets, ...): nothing is typed from it
    Args,       // an array of u64, the arguments of kernel function prototype `proto` (tracing, LSM,
                // iterators, struct_ops): a pointer to a struct or union is typed by it
    Netfilter,  // struct bpf_nf_ctx: `state` then `skb`, typed as kernel structs `first` and `second`
  };
  Kind kind = Kind::None;
  TypeId proto = 0;          // Args: a FUNC_PROTO of the kernel's BTF
  std::uint32_t skip = 0;    // Args: leading parameters not in the context (tp_btf's `void *__data`)
  bool retval = false;       // Args: the return value follows the arguments (fexit, fmod_ret)
  TypeId from = 0, to = 0;   // Args: an argument pointing to struct `from` is typed as `to` (bpf_tcp_ca
                             // promotes struct sock to tcp_sock); Netfilter: the two pointers' structs
};

// A load through a typed pointer: the first program and instruction that makes it, and what the
// kernel's walk of the source BTF makes of it.
struct BtfAccess {
  std::uint32_t program = 0;  // into BpfCode::programs()
  std::uint32_t insn = 0;     // in the code's image
  TypeId type = 0;            // the struct or union loaded from, in the kernel's BTF
  std::int64_t off = 0;
  std::uint32_t size = 0;
  StructAccess walk;
};

// A load through a typed pointer that the walk could not place: its struct is kept whole (`type`), or,
// where not even the struct is known (0), the structs the program's typed pointers had.
struct UnfollowedAccess {
  std::uint32_t program = 0;
  std::uint32_t insn = 0;
  TypeId type = 0;
  std::string why;
};

struct BtfAccesses {
  std::vector<BtfAccess> accesses;  // each distinct (type, off, size) once
  std::vector<UnfollowedAccess> unfollowed;
};

// The kernel's BTF as btf_accesses() looks names up in it: the first FUNC, VAR, STRUCT or UNION of a
// name, found by one pass over its types the first time a name is asked for.
class KernelTypeNames {
 public:
  explicit KernelTypeNames(const Btf& kernel);
  ~KernelTypeNames();
  const Btf& btf() const { return btf_; }
  TypeId find(std::string_view name, Kind kind) const;  // 0 where there is none
  // Whether VAR `var` is a per-CPU variable (of the .data..percpu section).
  bool percpu(TypeId var) const;

 private:
  struct Index;
  const Index& index() const;
  const Btf& btf_;
  mutable std::unique_ptr<Index> index_;
};

// Walks each program of `code` whose context or calls hand it typed pointers, as the verifier does, with
// the object's relocation `results` on the kernel (CoreResult per relocation, in record order), and lists
// every load through a typed pointer. `contexts` is per BpfCode::programs().
BtfAccesses btf_accesses(const BpfObject& object, const BpfCode& code, std::span<const CoreResult> results,
                         const KernelTypeNames& kernel, std::span<const ProgramContext> contexts);

}  // namespace btfslim
