// Inside the CO-RE engine: access specs and the compatibility relations, as libbpf's relo_core.c has them.
// Functions return libbpf's codes: 1 matched, 0 did not, a negative errno for an error.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/core.h"

#include <array>
#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

namespace btfslim::core {

inline constexpr int kSpecMaxLen = 64;  // BPF_CORE_SPEC_MAX_LEN

// A high-level step: a named member, or an array index (the first one indexes the root pointer).
struct Accessor {
  TypeId type = 0;  // the composite a member is taken from, or the element type of an array step
  std::uint32_t idx = 0;
  std::string_view name;  // empty for array steps
  bool named = false;
};

struct Spec {
  const Btf* btf = nullptr;
  TypeId root = 0;
  std::uint32_t kind = 0;
  std::array<Accessor, kSpecMaxLen> acc{};
  int len = 0;
  std::array<TargetSpec::Step, kSpecMaxLen> raw{};  // every step, anonymous members included
  int raw_len = 0;
  std::uint32_t bit_offset = 0;  // wraps as libbpf's __u32 does
};

// What the relations need besides the types: a work budget (hostile BTF can make the recursive
// searches exponential, where libbpf would spin), pointer sizes, and a place for the reason a
// candidate did not match.
class Context {
 public:
  static constexpr std::uint64_t kWorkBudget = 20'000'000;

  // False once the budget is spent: the caller returns -E2BIG.
  bool step() { return ++work_ <= kWorkBudget; }
  void reset_work() { work_ = 0; }
  bool over_budget() const { return work_ > kWorkBudget; }

  // libbpf's btf_ptr_sz: the size of the first INT named like `long`, else the host's pointer size.
  std::uint32_t pointer_size(const Btf& btf);

  // Records why a candidate failed (the first reason per relocation is kept).
  void why(std::string reason) {
    if (why_.empty()) why_ = std::move(reason);
  }
  std::string take_why() { return std::move(why_); }

 private:
  std::uint64_t work_ = 0;
  const Btf* ptr_btf_ = nullptr;
  std::uint32_t ptr_size_ = 0;
  std::string why_;
};

inline Kind kind_of(const Btf& btf, TypeId id) { return id == 0 ? Kind::Unknown : btf.type(id).kind(); }
inline std::uint32_t name_off_of(const Btf& btf, TypeId id) { return id == 0 ? 0 : btf.type(id).name_off(); }
inline bool is_composite(Kind k) { return k == Kind::Struct || k == Kind::Union; }
inline bool is_any_enum(Kind k) { return k == Kind::Enum || k == Kind::Enum64; }
inline bool kinds_core_compatible(Kind a, Kind b) { return a == b || (is_any_enum(a) && is_any_enum(b)); }

// The first INT of 4 or 8 bytes named like `long` ("long", "unsigned long int"...), which libbpf sizes
// pointers by; 0 where there is none.
TypeId long_type(const Btf& btf);

// How C spells a kind before a name: "struct", "enum" (also for ENUM64), "typedef", "void" for id 0;
// other kinds as kind_name spells them.
std::string_view kind_word(Kind k);

// Skips modifiers (const, volatile, restrict, type tags) and typedefs; false on a loop.
bool skip_mods_and_typedefs(const Btf& btf, TypeId id, TypeId& result);
// btf__resolve_size: bytes of a type, or a negative errno.
std::int64_t resolve_size(Context& cx, const Btf& btf, TypeId id);

// libbpf's bpf_core_types_are_compat: the relaxed structural check it also holds kfunc prototypes and
// typed ksyms to (names not compared, any composite ~ any composite, ints of any size).
int core_types_are_compat(Context& cx, const Btf& local, TypeId local_id, const Btf& target, TypeId target_id);

int parse_spec(Context& cx, const Btf& local, const CoreRelocation& r, std::string_view access, Spec& spec);
int spec_match(Context& cx, const Spec& local, const Btf& target, TypeId target_id, Spec& out);

// "struct task_struct.pid", "struct s[1].arr[3]", "enum e::B", from a parsed local spec.
std::string format_spec(const Spec& spec);

}  // namespace btfslim::core
