// Resolving relocations: libbpf's bpf_core_calc_relo_insn and bpf_core_patch_insn, and the loop of
// bpf_object__relocate_core around them.
//
// For each record: parse the local spec, match it against every candidate of its root type, compute
// the value each matching candidate gives, and demand that they agree (else: ambiguity). With no match,
// existence kinds give 0 and the others poison the instruction. Then what libbpf's patching would say
// about the instruction itself: the value the compiler left must be the local one (where libbpf
// validates it), an offset must fit a 16-bit field, a load whose size changes must read a pointer or an
// unsigned integer (else the instruction is poisoned). As in libbpf, the candidates of a local type are
// narrowed to those that matched the first relocation that matched any, for every later relocation of
// that type in the same object.
#include "btfslim/core.h"
#include "btfslim/error.h"
#include "btfslim/escape.h"
#include "btfslim/input.h"
#include "btfslim/memory.h"
#include "btfslim/reach.h"
#include "spec.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace btfslim {
namespace {

using core::Context;
using core::Spec;

// What libbpf computes for one candidate (or for none).
struct Calc {
  std::uint64_t orig_val = 0, new_val = 0;
  std::uint32_t orig_sz = 0, new_sz = 0;
  TypeId orig_type = 0, new_type = 0;
  bool poison = false, validate = true, fail_memsz_adjust = false;
};

// libbpf's bpf_core_calc_field_relo; `spec` null: no target matched.
int calc_field(Context& cx, std::uint32_t kind, const Spec* spec, bool little_endian, std::uint64_t& val,
               std::uint32_t& field_sz, TypeId& type_id, bool* validate, std::string& why) {
  field_sz = 0;
  if (kind == static_cast<std::uint32_t>(RelocKind::FieldExists)) {
    val = spec ? 1 : 0;
    return 0;
  }
  if (!spec) return -EUCLEAN;
  const Btf& btf = *spec->btf;
  const core::Accessor& acc = spec->acc[spec->len - 1];
  if (!acc.named) {
    if (kind == static_cast<std::uint32_t>(RelocKind::FieldByteOffset)) {
      val = spec->bit_offset / 8;
      const std::int64_t sz = core::resolve_size(cx, btf, acc.type);
      if (sz < 0) return -EINVAL;
      field_sz = static_cast<std::uint32_t>(sz);
      type_id = acc.type;
    } else if (kind == static_cast<std::uint32_t>(RelocKind::FieldByteSize)) {
      const std::int64_t sz = core::resolve_size(cx, btf, acc.type);
      if (sz < 0) return -EINVAL;
      val = static_cast<std::uint64_t>(sz);
    } else {
      why = fmt::format("a {} relocation cannot be applied to an array element", reloc_kind_name(kind));
      return -EINVAL;
    }
    if (validate) *validate = true;
    return 0;
  }

  const TypeView t = btf.type(acc.type);
  const Member m = t.member(acc.idx);
  TypeId field_type = 0;
  if (!core::skip_mods_and_typedefs(btf, m.type, field_type)) return -EINVAL;
  const Kind mk = core::kind_of(btf, field_type);
  const std::uint32_t bit_off = spec->bit_offset;
  std::uint32_t bit_sz = t.member_bitfield_size(m);
  std::uint32_t byte_sz = 0, byte_off = 0;
  const bool bitfield = bit_sz > 0;
  if (bitfield) {
    // The union of size and type in the record, as libbpf reads it whatever the kind.
    byte_sz = field_type == 0 ? 0 : btf.type(field_type).size();
    if (byte_sz == 0) {
      why = "bitfield of a type without size";  // libbpf divides by zero here
      return -EINVAL;
    }
    byte_off = bit_off / 8 / byte_sz * byte_sz;
    while (bit_off + bit_sz - byte_off * 8 > byte_sz * 8) {
      if (byte_sz >= 8) {
        why = "bitfield cannot be read with one 8-byte load";
        return -E2BIG;
      }
      byte_sz *= 2;
      byte_off = bit_off / 8 / byte_sz * byte_sz;
    }
  } else {
    const std::int64_t sz = core::resolve_size(cx, btf, field_type);
    if (sz < 0) return -EINVAL;
    byte_sz = static_cast<std::uint32_t>(sz);
    byte_off = spec->bit_offset / 8;
    bit_sz = byte_sz * 8;
  }
  if (validate) *validate = !bitfield;

  switch (static_cast<RelocKind>(kind)) {
    case RelocKind::FieldByteOffset:
      val = byte_off;
      if (!bitfield) {
        field_sz = byte_sz;
        type_id = field_type;
      }
      break;
    case RelocKind::FieldByteSize:
      val = byte_sz;
      break;
    case RelocKind::FieldSigned: {
      const bool is_signed = (core::is_any_enum(mk) && btf.type(field_type).kflag()) ||
                             (mk == Kind::Int && (btf.type(field_type).int_encoding() & 1));
      val = is_signed ? 1 : 0;
      if (validate) *validate = true;
      break;
    }
    case RelocKind::FieldLshiftU64:
      val = little_endian ? 64u - (bit_off + bit_sz - byte_off * 8) : (8u - byte_sz) * 8u + (bit_off - byte_off * 8);
      // libbpf computes in 32 bits and widens.
      val = static_cast<std::uint32_t>(val);
      break;
    case RelocKind::FieldRshiftU64:
      val = static_cast<std::uint32_t>(64u - bit_sz);
      if (validate) *validate = true;
      break;
    default:
      return -EOPNOTSUPP;
  }
  return 0;
}

// libbpf's bpf_core_calc_type_relo.
int calc_type(Context& cx, std::uint32_t kind, const Spec* spec, std::uint64_t& val, bool* validate) {
  if (validate) *validate = true;
  if (!spec) {
    val = 0;
    return 0;
  }
  switch (static_cast<RelocKind>(kind)) {
    case RelocKind::TypeIdTarget:
      val = spec->root;
      if (validate) *validate = false;
      return 0;
    case RelocKind::TypeExists:
    case RelocKind::TypeMatches:
      val = 1;
      return 0;
    case RelocKind::TypeSize: {
      const std::int64_t sz = core::resolve_size(cx, *spec->btf, spec->root);
      if (sz < 0) return -EINVAL;
      val = static_cast<std::uint64_t>(sz);
      return 0;
    }
    default:
      return -EOPNOTSUPP;
  }
}

// libbpf's bpf_core_calc_enumval_relo. btf_enum's value is an __s32: libbpf widens it with its sign.
int calc_enumval(std::uint32_t kind, const Spec* spec, std::uint64_t& val) {
  switch (static_cast<RelocKind>(kind)) {
    case RelocKind::EnumvalExists:
      val = spec ? 1 : 0;
      return 0;
    case RelocKind::EnumvalValue: {
      if (!spec) return -EUCLEAN;
      const TypeView t = spec->btf->type(spec->acc[0].type);
      if (t.kind() == Kind::Enum)
        val = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(t.enum_value(spec->acc[0].idx).value)));
      else
        val = t.enum64_value(spec->acc[0].idx).value;
      return 0;
    }
    default:
      return -EOPNOTSUPP;
  }
}

// libbpf's bpf_core_calc_relo.
int calc_relo(Context& cx, std::uint32_t kind, const Spec& local, const Spec* target, bool little_endian, Calc& res,
              std::string& why) {
  res = Calc{};
  int err = -EOPNOTSUPP;
  if (is_field_kind(kind)) {
    err = calc_field(cx, kind, &local, little_endian, res.orig_val, res.orig_sz, res.orig_type, &res.validate, why);
    if (!err)
      err = calc_field(cx, kind, target, little_endian, res.new_val, res.new_sz, res.new_type, nullptr, why);
    if (!err && res.orig_sz != res.new_sz) {
      const Kind ok = core::kind_of(*local.btf, res.orig_type), nk = core::kind_of(*target->btf, res.new_type);
      const bool both_ptr = ok == Kind::Ptr && nk == Kind::Ptr;
      const bool both_unsigned = ok == Kind::Int && nk == Kind::Int &&
                                 local.btf->type(res.orig_type).int_encoding() != 1 &&
                                 target->btf->type(res.new_type).int_encoding() != 1;
      res.fail_memsz_adjust = !both_ptr && !both_unsigned;
    }
  } else if (is_type_kind(kind)) {
    err = calc_type(cx, kind, &local, res.orig_val, &res.validate);
    if (!err) err = calc_type(cx, kind, target, res.new_val, nullptr);
  } else if (is_enumval_kind(kind)) {
    err = calc_enumval(kind, &local, res.orig_val);
    if (!err) err = calc_enumval(kind, target, res.new_val);
  }
  if (err == -EUCLEAN) {
    res.poison = true;
    err = 0;
  } else if (err == -EOPNOTSUPP && why.empty()) {
    why = fmt::format("unrecognized CO-RE relocation kind {}", kind);
  }
  return err;
}

// One BPF instruction as libbpf's patching reads it.
struct Insn {
  std::uint8_t code = 0, dst = 0, src = 0;
  std::int16_t off = 0;
  std::int32_t imm = 0;
};

Insn read_insn(const std::uint8_t* p, bool little_endian) {
  const ByteOrder order(little_endian != (std::endian::native == std::endian::little));
  Insn i;
  i.code = p[0];
  // struct bpf_insn's bitfields: dst_reg is the low nibble on little-endian, the high one on big-endian.
  i.dst = little_endian ? p[1] & 0x0f : p[1] >> 4;
  i.src = little_endian ? p[1] >> 4 : p[1] & 0x0f;
  i.off = static_cast<std::int16_t>(order.u16(p + 2));
  i.imm = static_cast<std::int32_t>(order.u32(p + 4));
  return i;
}

// libbpf's bpf_core_patch_insn, without writing: the outcome for the instruction at `p` (with `left`
// bytes of the section from there).
void judge_patch(const Calc& res, const std::uint8_t* p, std::size_t left, bool little_endian, CoreResult& out) {
  constexpr std::uint8_t kClassLd = 0x00, kClassLdx = 0x01, kClassSt = 0x02, kClassStx = 0x03, kClassAlu = 0x04,
                         kClassAlu64 = 0x07, kSrcX = 0x08, kLdImm64 = 0x18;
  out.local_value = res.orig_val;
  out.value = res.new_val;
  if (res.poison) {
    out.status = CoreStatus::Poisoned;
    return;
  }
  const Insn insn = read_insn(p, little_endian);
  auto error = [&](std::string why) {
    out.status = CoreStatus::Error;
    out.reason = std::move(why);
  };
  switch (insn.code & 0x07) {
    case kClassAlu:
    case kClassAlu64:
      if (insn.code & kSrcX) return error("the relocated instruction is an ALU operation on a register, not an immediate");
      if (res.validate && static_cast<std::uint64_t>(static_cast<std::int64_t>(insn.imm)) != res.orig_val)
        return error(fmt::format("unexpected instruction value: got {}, expected {}", insn.imm, res.orig_val));
      return;
    case kClassLdx:
    case kClassSt:
    case kClassStx: {
      if (res.validate && static_cast<std::uint64_t>(static_cast<std::int64_t>(insn.off)) != res.orig_val)
        return error(fmt::format("unexpected instruction offset: got {}, expected {}", insn.off, res.orig_val));
      if (res.new_val > SHRT_MAX) return error(fmt::format("offset {} is too big for a load or store", res.new_val));
      if (res.fail_memsz_adjust) {
        out.status = CoreStatus::Poisoned;
        out.reason = fmt::format(
            "the field's size changes ({} -> {} bytes) and it is neither a pointer nor an unsigned integer",
            res.orig_sz, res.new_sz);
        return;
      }
      if (res.new_sz != res.orig_sz) {
        static constexpr std::uint32_t kSizes[] = {4, 2, 1, 8};  // BPF_W, BPF_H, BPF_B, BPF_DW
        const std::uint32_t insn_bytes = kSizes[(insn.code >> 3) & 0x03];
        if (insn_bytes != res.orig_sz)
          return error(fmt::format("unexpected load/store size: got {}, expected {}", insn_bytes, res.orig_sz));
        if (res.new_sz != 1 && res.new_sz != 2 && res.new_sz != 4 && res.new_sz != 8)
          return error(fmt::format("invalid new load/store size {}", res.new_sz));
        out.local_size = static_cast<std::uint8_t>(res.orig_sz);
        out.target_size = static_cast<std::uint8_t>(res.new_sz);
      }
      return;
    }
    case kClassLd: {
      if (insn.code != kLdImm64 || left < 16) return error("the relocated instruction is not a 64-bit immediate load");
      const Insn next = read_insn(p + 8, little_endian);
      if (insn.src != 0 || insn.off != 0 || next.code != 0 || next.dst != 0 || next.src != 0 || next.off != 0)
        return error("the 64-bit immediate load has an unexpected form");
      const std::uint64_t imm = static_cast<std::uint32_t>(insn.imm) | (std::uint64_t{static_cast<std::uint32_t>(next.imm)} << 32);
      if (res.validate && imm != res.orig_val)
        return error(fmt::format("unexpected instruction value: got {}, expected {}", imm, res.orig_val));
      return;
    }
    default:
      return error(fmt::format("cannot relocate an instruction with opcode {:#04x}", insn.code));
  }
}

std::string errno_text(int err) {
  switch (-err) {
    case EINVAL:
      return "invalid";
    case E2BIG:
      return "too deep or too large";
    default:
      return std::strerror(-err);
  }
}

}  // namespace

const std::string* Reason::intern(std::string_view text) {
  // Few distinct texts (one per question that fails, at most), asked for by any thread of a batch.
  static std::mutex mutex;
  static std::unordered_set<std::string> texts;
  const std::scoped_lock lock(mutex);
  return &*texts.emplace(text).first;
}

Matches Matches::roots_only() const {
  std::vector<TargetSpec> roots;
  for (const TargetSpec& m : *this) roots.push_back({nullptr, m.root, m.bit_offset, {}});
  return Matches(std::move(roots));
}

namespace {

// The answer to a question, up to the instruction: judge_patch() decides what the instruction makes of it.
constexpr std::uint32_t kNever = UINT32_MAX;
constexpr std::uint32_t kAlways = UINT32_MAX - 1;  // an answer the candidates play no part in

struct Answer {
  std::uint32_t generation = kNever;  // of the local type's candidate list it holds for
  std::uint32_t logged = 0;           // its entry in the AnswerLog kept, if one is
  bool final = false;            // `result` is the whole outcome: the instruction is not looked at
  bool matched = false;
  CoreResult result;  // final: all of it; else its matches, and the reason a miss gives
  Calc calc;
};

// libbpf's per-object candidate cache, narrowed as relocations match: a generation counts the changes.
struct CandidateList {
  std::vector<Candidate> list;
  std::uint32_t generation = 0;
};

// The answer to `r`'s question, with the candidates as they are: libbpf's bpf_core_calc_relo_insn.
void answer(Context& cx, const BpfObject& object, const CoreRelocation& r, CandidateList* cands, bool little_endian,
            Answer& a) {
  CoreResult& out = a.result;
  a.final = true;
  a.generation = kAlways;
  auto error = [&](CoreStatus status, std::string why) {
    out.status = status;
    out.reason = std::move(why);
  };
  const Btf& local = object.btf();
  const std::uint32_t kind = r.kind;
  Spec local_spec, cand_spec, targ_spec;
  if (kind > kMaxRelocKind) return error(CoreStatus::Error, fmt::format("unrecognized CO-RE relocation kind {}", kind));
  if (kind != static_cast<std::uint32_t>(RelocKind::TypeIdLocal) && !cands)
    return error(CoreStatus::Error, "the local type is anonymous: libbpf finds no candidates for it");
  if (const int err = core::parse_spec(cx, local, r, object.access(r), local_spec); err != 0)
    return error(CoreStatus::Error, fmt::format("cannot parse access '{}' on local type [{}]: {}", esc(object.access(r)),
                                                r.local_type, errno_text(err)));
  if (kind == static_cast<std::uint32_t>(RelocKind::TypeIdLocal)) {
    // libbpf takes the local root as it is (unvalidated: the immediate may be out of date after
    // linking), then patches the instruction with it like any other result: one that is no ALU
    // immediate, load, store or well-formed 64-bit load fails there.
    a.final = false;
    a.matched = true;
    a.calc.orig_val = a.calc.new_val = local_spec.root;
    a.calc.validate = false;
    return;
  }

  // A candidate's part in the result, also when it is the one that makes the relocation fail.
  std::vector<TargetSpec> kept;
  auto keep = [&](const Spec& spec) {
    TargetSpec& ts = kept.emplace_back();
    ts.btf = spec.btf;
    ts.root = spec.root;
    ts.bit_offset = spec.bit_offset;
    ts.steps.assign(spec.raw.begin(), spec.raw.begin() + spec.raw_len);
  };
  Calc targ_res, cand_res;
  std::string why;
  std::size_t matched = 0;
  bool failed = false, changed = false;
  std::vector<Candidate>& list = cands->list;
  for (std::size_t i = 0; i < list.size() && !failed; ++i) {
    const int m = core::spec_match(cx, local_spec, *list[i].btf, list[i].id, cand_spec);
    if (m < 0) {
      error(CoreStatus::Error, fmt::format("matching candidate [{}] failed: {}", list[i].id,
                                           cx.over_budget() ? "too much work (crafted BTF?)" : errno_text(m)));
      failed = true;
      break;
    }
    if (m == 0) continue;
    if (const int err = calc_relo(cx, kind, local_spec, &cand_spec, little_endian, cand_res, why); err != 0) {
      keep(cand_spec);
      error(CoreStatus::Error, why.empty() ? errno_text(err) : why);
      failed = true;
      break;
    }
    if (matched == 0) {
      targ_res = cand_res;
      targ_spec = cand_spec;
    } else if (cand_spec.bit_offset != targ_spec.bit_offset) {
      keep(cand_spec);
      error(CoreStatus::Ambiguous, fmt::format("field offset ambiguity: candidates [{}] and [{}] put it at bit {} and {}",
                                               targ_spec.root, cand_spec.root, targ_spec.bit_offset, cand_spec.bit_offset));
      failed = true;
      break;
    } else if (cand_res.poison != targ_res.poison || cand_res.new_val != targ_res.new_val) {
      keep(cand_spec);
      error(CoreStatus::Ambiguous, fmt::format("candidates [{}] and [{}] give different values: {} and {}",
                                               targ_spec.root, cand_spec.root, targ_res.new_val, cand_res.new_val));
      failed = true;
      break;
    }
    keep(cand_spec);
    changed |= matched != i;
    list[matched++] = list[i];
  }
  out.matches = Matches(std::move(kept));
  if (failed) {
    // A list a failure rewrote in part need not answer the same again: asked anew every time.
    if (changed) ++cands->generation;
    a.generation = changed ? kNever : cands->generation;
    cx.take_why();
    return;
  }
  // Narrowed to the candidates that matched, the list answers this question the same way again.
  if (matched > 0 && matched < list.size()) {
    list.resize(matched);
    ++cands->generation;
  }
  a.generation = cands->generation;

  if (matched == 0) {
    if (const int err = calc_relo(cx, kind, local_spec, nullptr, little_endian, targ_res, why); err != 0)
      return error(CoreStatus::Error, why.empty() ? errno_text(err) : why);
    std::string miss = cx.take_why();
    if (list.empty()) {
      const std::string_view local_name = local.str(local.type(r.local_type).name_off());
      const TypeView lt = local.type(r.local_type);
      miss = fmt::format("no {} named '{}' in the target", core::kind_word(lt.kind()), esc(essential_name(local_name)));
    }
    out.reason = std::move(miss);  // also for an existence check that found nothing: it says why
  } else {
    cx.take_why();
  }
  a.final = false;
  a.matched = matched > 0;
  a.calc = targ_res;
}

}  // namespace

struct AnswerLog::Entry {
  bool final = false;
  CoreResult result;  // final: all of it
  Calc calc;          // else: what judge_patch() makes of the instruction
};

AnswerLog::AnswerLog() = default;
AnswerLog::AnswerLog(AnswerLog&&) noexcept = default;
AnswerLog& AnswerLog::operator=(AnswerLog&&) noexcept = default;
AnswerLog::~AnswerLog() = default;

namespace {

// libbpf's loop over an object's relocations, up to their instructions: a question is answered when
// it is first asked, and again when its local type's candidates have changed since (or every time,
// after a failure that changed them). `on(i, answer)` for each relocation in record order, while it
// returns true; with `log`, each answer made is kept there and each relocation's noted.
template <typename On>
void walk_answers(const BpfObject& object, const CandidateIndex& index, AnswerLog* log, On&& on) {
  const Btf& local = object.btf();
  const bool little_endian = !local.big_endian();
  Context cx;
  std::unordered_map<TypeId, CandidateList> cache;
  // By question (CoreRelocation::question): its answer, and the candidate list of its local type, found
  // when the question is first asked (nullptr where it takes none).
  std::vector<Answer> answers(object.question_count());
  std::vector<CandidateList*> lists(object.question_count());
  std::vector<bool> asked(object.question_count());
  const auto relocations = object.relocations();
  if (log) log->of.reserve(relocations.size());
  for (std::size_t i = 0; i < relocations.size(); ++i) {
    const CoreRelocation& r = relocations[i];
    const bool fresh = !asked[r.question];
    if (fresh) {
      asked[r.question] = true;
      if (r.kind <= kMaxRelocKind && r.kind != static_cast<std::uint32_t>(RelocKind::TypeIdLocal) && r.local_type != 0 &&
          local.c_str(local.type(r.local_type).name_off())[0] != 0) {
        auto [it, inserted] = cache.try_emplace(r.local_type);
        if (inserted) it->second.list = index.candidates(local, r.local_type);
        lists[r.question] = &it->second;
      }
    }
    CandidateList* cands = lists[r.question];
    const std::uint32_t generation = cands ? cands->generation : 0;
    Answer& a = answers[r.question];
    if (fresh || (a.generation != kAlways && a.generation != generation)) {
      a = Answer{};
      cx.reset_work();
      answer(cx, object, r, cands, little_endian, a);
      if (log) {
        a.logged = static_cast<std::uint32_t>(log->entries.size());
        AnswerLog::Entry& e = log->entries.emplace_back();
        e.final = a.final;
        if (a.final) e.result = a.result;
        e.calc = a.calc;
      }
    }
    if (log) log->of.push_back(a.logged);
    if (!on(i, std::as_const(a))) return;
  }
}

void write_insn(std::uint8_t* p, const Insn& i, bool little_endian) {
  const bool swapped = little_endian != (std::endian::native == std::endian::little);
  p[0] = i.code;
  p[1] = static_cast<std::uint8_t>(little_endian ? (i.dst & 0x0f) | i.src << 4 : i.dst << 4 | (i.src & 0x0f));
  const auto off = static_cast<std::uint16_t>(i.off);
  const auto imm = static_cast<std::uint32_t>(i.imm);
  const std::uint16_t off_bytes = swapped ? __builtin_bswap16(off) : off;
  const std::uint32_t imm_bytes = swapped ? __builtin_bswap32(imm) : imm;
  std::memcpy(p + 2, &off_bytes, sizeof off_bytes);
  std::memcpy(p + 4, &imm_bytes, sizeof imm_bytes);
}

// The instructions more than one record names (BpfObject::shares_insn), as the records before have
// patched them: libbpf's bpf_core_patch_insn writes each result into the program's copy of its code,
// so a later record's check of the immediate, offset or opcode meets the earlier one's value.
class PatchedInsns {
 public:
  explicit PatchedInsns(const BpfObject& object) : object_(object) {}
  // The instruction of a shared `r` (and the one after, for a 64-bit load) as the records before left
  // it, and how many bytes of the section there are from it.
  std::span<const std::uint8_t> at(const CoreRelocation& r) {
    const std::span<const std::uint8_t> code = object_.sections()[r.section].insns.subspan(r.insn_off);
    auto [it, fresh] = insns_.try_emplace(std::uint64_t{r.section} << 32 | r.insn_off);
    if (fresh) std::memcpy(it->second.data(), code.data(), std::min(code.size(), it->second.size()));
    return {it->second.data(), std::min(code.size(), it->second.size())};
  }
  // What libbpf writes for `result` into `r`'s instruction, when another record comes to it later.
  void patched(const CoreRelocation& r, const CoreResult& result) {
    const auto it = insns_.find(std::uint64_t{r.section} << 32 | r.insn_off);
    if (it == insns_.end()) return;
    const bool le = !object_.btf().big_endian();
    std::uint8_t* p = it->second.data();
    const std::size_t left = std::min(object_.sections()[r.section].insns.size() - r.insn_off, it->second.size());
    Insn insn = read_insn(p, le);
    constexpr std::uint8_t kLdImm64 = 0x18;
    if (result.status == CoreStatus::Poisoned) {
      // bpf_core_poison_insn: a call of helper 0xbad2310, both halves of a 64-bit load.
      const Insn poison{0x85, 0, 0, 0, 0xbad2310};
      if (insn.code == kLdImm64 && left >= 16) write_insn(p + 8, poison, le);
      write_insn(p, poison, le);
      return;
    }
    if (result.status != CoreStatus::Ok) return;  // libbpf stops the load there
    switch (insn.code & 0x07) {
      case 0x04:  // ALU
      case 0x07:  // ALU64
        insn.imm = static_cast<std::int32_t>(result.value);
        break;
      case 0x01:  // LDX
      case 0x02:  // ST
      case 0x03:  // STX
        insn.off = static_cast<std::int16_t>(result.value);
        if (result.target_size != 0) {
          const std::uint8_t size = result.target_size == 8 ? 0x18 : result.target_size == 4 ? 0x00
                                    : result.target_size == 2 ? 0x08 : 0x10;
          insn.code = static_cast<std::uint8_t>((insn.code & 0xe7) | size);
        }
        break;
      case 0x00: {  // a 64-bit load: the value's halves
        insn.imm = static_cast<std::int32_t>(static_cast<std::uint32_t>(result.value));
        Insn next = read_insn(p + 8, le);
        next.imm = static_cast<std::int32_t>(static_cast<std::uint32_t>(result.value >> 32));
        write_insn(p + 8, next, le);
        break;
      }
      default:
        return;
    }
    write_insn(p, insn, le);
  }

 private:
  const BpfObject& object_;
  std::unordered_map<std::uint64_t, std::array<std::uint8_t, 16>> insns_;
};

// What answer `a` makes of relocation `r` whose instruction is at `insn` (with `left` bytes of the
// section from there): the instruction judged, unless the answer is final.
CoreResult result_of(const BpfObject& object, const Answer& a, const std::uint8_t* insn, std::size_t left) {
  if (a.final) return a.result;
  CoreResult out;
  judge_patch(a.calc, insn, left, !object.btf().big_endian(), out);
  out.matches = a.result.matches;
  // A miss says why nothing matched, unless the instruction fails the load first: then that is why.
  if (!a.matched && out.status != CoreStatus::Error) out.reason = a.result.reason;
  return out;
}

// The same for any relocation of the object: on the code, or where records share its instruction
// (`shared`, made only for an object that has such), as the records before left it.
CoreResult result_of(const BpfObject& object, const CoreRelocation& r, const Answer& a, PatchedInsns* shared) {
  if (!shared || !object.shares_insn(r)) {
    const ProgramSection& section = object.sections()[r.section];
    return result_of(object, a, section.insns.data() + r.insn_off, section.insns.size() - r.insn_off);
  }
  const std::span<const std::uint8_t> insn = shared->at(r);
  CoreResult out = result_of(object, a, insn.data(), insn.size());
  shared->patched(r, out);
  return out;
}

// Whether judge_patch() makes the same of `a` and of `b`, whatever the instruction: every field it reads.
bool same_patch(const Calc& a, const Calc& b) {
  return a.orig_val == b.orig_val && a.new_val == b.new_val && a.orig_sz == b.orig_sz && a.new_sz == b.new_sz &&
         a.poison == b.poison && a.validate == b.validate && a.fail_memsz_adjust == b.fail_memsz_adjust;
}

// Each relocation's result, `each(i, result)` in record order. Each reads its instruction: the code's
// pages are given back behind the records as they go (records come a section at a time, in the code's
// order), so that an agent's megabytes of code are not all in memory at once. Out of order, a page is
// only read again. Only where the code is large (FileBytes::kWorthReleasing): an object of a few dozen
// small sections would make a call for each, to give back nothing that matters. `along`, once a
// relocation is poisoned, reads the code before its pages are given back (BpfCodeReader).
template <typename Each>
void resolve(const BpfObject& object, const CandidateIndex& index, AnswerLog* log, BpfCodeReader* along, Each&& each) {
  constexpr std::uint32_t kStretch = FileBytes::kStretch;
  std::size_t code_bytes = 0;
  for (const ProgramSection& s : object.sections()) code_bytes += s.insns.size();
  const bool give_back = code_bytes >= FileBytes::kWorthReleasing;
  std::uint32_t code_section = UINT32_MAX, kept_from = 0;  // the section read, and where its kept pages start
  auto release_code = [&](std::uint32_t upto) {
    const std::span<const std::uint8_t> code = object.sections()[code_section].insns;
    if (give_back && upto > kept_from && upto <= code.size()) {
      if (along) along->read_before(code.data() + upto);
      object.release_pages(code.subspan(kept_from, upto - kept_from));
    }
    kept_from = upto;
  };
  const auto relocations = object.relocations();
  constexpr std::size_t kAhead = 16;
  std::optional<PatchedInsns> shared;
  if (object.shares_insns()) shared.emplace(object);
  walk_answers(object, index, log, [&](std::size_t i, const Answer& a) {
    const CoreRelocation& r = relocations[i];
    if (r.section != code_section) {
      if (code_section != UINT32_MAX) release_code(static_cast<std::uint32_t>(object.sections()[code_section].insns.size()));
      code_section = r.section;
      kept_from = 0;
    } else if (r.insn_off >= kept_from + 2 * kStretch) {
      release_code(r.insn_off - kStretch);
    }
    // The instruction a few records on, asked for now: records follow the code, a cache line or two
    // apart, and each is otherwise a wait for memory.
    if (i + kAhead < relocations.size() && relocations[i + kAhead].section == r.section)
      __builtin_prefetch(object.sections()[r.section].insns.data() + relocations[i + kAhead].insn_off);
    CoreResult result = result_of(object, r, a, shared ? &*shared : nullptr);
    if (along && result.status == CoreStatus::Poisoned) along->start();
    each(i, std::move(result));
    return true;
  });
  if (code_section != UINT32_MAX) release_code(static_cast<std::uint32_t>(object.sections()[code_section].insns.size()));
}

}  // namespace

CoreResults resolve_object(const BpfObject& object, const CandidateIndex& index, AnswerLog* log,
                           BpfCodeReader* along) {
  CoreResults results;
  resolve_object_into(results, object, index, log, along);
  return results;
}

void resolve_object_into(CoreResults& results, const BpfObject& object, const CandidateIndex& index, AnswerLog* log,
                         BpfCodeReader* along) {
  results.clear();
  results.reserve(object.relocations().size());
  resolve(object, index, log, along, [&](std::size_t, CoreResult&& r) { results.push_back(std::move(r)); });
}

void resolve_object(const BpfObject& object, const CandidateIndex& index,
                    const std::function<void(std::size_t, CoreResult&&)>& each) {
  resolve(object, index, nullptr, nullptr, each);
}

void resolve_changed(const BpfObject& object, const CandidateIndex& index, const AnswerLog& earlier,
                     const std::function<bool(std::size_t, CoreResult&&)>& each) {
  const auto relocations = object.relocations();
  const bool logged = earlier.of.size() == relocations.size();  // else not this object's: all handed on
  std::optional<PatchedInsns> shared;
  if (object.shares_insns()) shared.emplace(object);
  walk_answers(object, index, nullptr, [&](std::size_t i, const Answer& a) {
    // An instruction records share is as the ones before left it, which may have changed: judged anew.
    if (logged && !a.final && relocations[i].kind != static_cast<std::uint32_t>(RelocKind::TypeIdTarget) &&
        !object.shares_insn(relocations[i])) {
      const AnswerLog::Entry& before = earlier.entries[earlier.of[i]];
      if (!before.final && same_patch(a.calc, before.calc)) return true;
    }
    return each(i, result_of(object, relocations[i], a, shared ? &*shared : nullptr));
  });
}

std::string describe_access(const BpfObject& object, const CoreRelocation& r) {
  Context cx;
  Spec spec;
  const std::string_view access = object.access(r);
  if (r.kind <= kMaxRelocKind && core::parse_spec(cx, object.btf(), r, access, spec) == 0) return core::format_spec(spec);
  const Btf& btf = object.btf();
  const std::uint32_t off = r.local_type ? btf.type(r.local_type).name_off() : 0;
  return fmt::format("[{}] {} + {}", r.local_type, esc(off ? btf.str(off) : std::string_view("(anon)")), esc(access));
}

}  // namespace btfslim
