// `btfslim dedup`'s pass: merge the inputs into one BTF, let libbpf's btf__dedup fold it, and count what
// went.
//
// libbpf does the deduplication itself (it is the reference: the kernel build, pahole and bpftool all
// use it), so the output is exactly what btf__dedup makes of the merged inputs. What this file adds is
// the merging libbpf 1.1.2 cannot do alone, and the accounting:
//
// - Standalone inputs are merged with btf__add_btf, which renumbers each one's types after the ones
//   before it. Split inputs (modules on one vmlinux) cannot be: btf__add_btf refuses split BTF and
//   btf__new_split is not exported. They are merged type by type into btf__new_empty_split(base) with
//   btf__add_type, after this file has moved each record's references to the split part up by the types
//   already added (references into the base stay). btf__dedup on split BTF folds the split types among
//   themselves and into the base, and btf__raw_data writes only the split part: the output stays split.
//
// - What was removed is counted twice, per kind and per (kind, name): the inputs' records on one side,
//   the output's on the other. Dedup only ever keeps one copy of equal types, so for every kind and
//   every name the output has at most as many as the inputs, and the difference is what dedup folded.
//   Anonymous types (pointers, prototypes, modifiers, anonymous structs) have no name to group by; they
//   appear only in the per-kind counts. Names are grouped by sorting 16-byte records on a hash of the
//   name and the kind (integers; names are compared only to confirm a group), not in a map: a quarter of
//   a million types on each side must cost little next to btf__dedup itself. When no type at all went
//   (an already deduplicated vmlinux), the per-name pass is skipped.
//
// - A BPF object's .BTF.ext names strings of its .BTF (line info, access strings, section names) and
//   types (func_info's FUNCs, relocations' local types). Deduplicated alone, libbpf would drop those
//   strings as unreferenced and renumber the types under it. Given to btf__dedup (opts.btf_ext), as
//   libbpf's linker does, it is rewritten with the types and its strings are kept: what is reported
//   removed is then what can go without breaking the object. libbpf 1.1.2 reads .BTF.ext only in the
//   host's byte order, so a foreign one is swapped first.
//
// libbpf's output is parsed again by our own reader before anything is reported or written: libbpf's
// bytes are what is written, and the reader would refuse them if they were not valid BTF.
#include "btfslim/dedup.h"

#include "btfslim/btf_ext.h"
#include "btfslim/error.h"
#include "btfslim/libbpf.h"
#include "btfslim/radix_sort.h"

#include <bpf/btf.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <span>
#include <tuple>

namespace btfslim {
namespace {

// "Too many levels of symbolic links (ELOOP)": libbpf returns negative errnos.
std::string errno_text(int err) {
  err = err < 0 ? -err : err;
  const char* name = strerrorname_np(err);
  return fmt::format("{} ({})", std::strerror(err), name ? name : std::to_string(err));
}

LibbpfBtfPtr libbpf_from_memory(const Btf& btf) {
  check_libbpf_reads(btf);
  const auto raw = btf.raw();
  errno = 0;
  struct btf* b = btf__new(raw.data(), static_cast<__u32>(raw.size()));
  if (!b) fail(btf.name(), "libbpf cannot read this BTF: {}", errno_text(errno));
  return LibbpfBtfPtr(b);
}

// A split input, read by libbpf from its file (raw or ELF) on the libbpf copy of its base.
LibbpfBtfPtr libbpf_split(const Btf& btf, struct btf* base) {
  check_libbpf_reads(btf);
  errno = 0;
  struct btf* b = btf__parse_split(btf.name().c_str(), base);
  if (!b) fail(btf.name(), "libbpf cannot read this split BTF: {}", errno_text(errno));
  return LibbpfBtfPtr(b);
}

// Calls fn(id&) for each type id a native-order record holds.
template <typename Fn>
void for_each_type_id_slot(std::uint8_t* p, Fn&& fn) {
  std::uint32_t info;
  std::memcpy(&info, p + 4, sizeof info);
  for_each_type_field(info, [&](std::uint32_t off, RefRole) {
    std::uint32_t id;
    std::memcpy(&id, p + off, sizeof id);
    fn(id);
    std::memcpy(p + off, &id, sizeof id);
  });
}

// Appends the own types of `src` (libbpf's copy of `input`, split on the same base as `dst`) to `dst`,
// moving references to `src`'s own types to where they land in `dst`.
void append_split(struct btf* dst, const struct btf* src, const Btf& input) {
  const TypeId first = input.first_id();
  const TypeId landing = btf__type_cnt(dst);  // where src's first own type will be
  std::vector<std::uint8_t> record;
  for (TypeId id = first; id < input.end_id(); ++id) {
    const struct btf_type* t = btf__type_by_id(src, id);
    const auto size = trailing_size(static_cast<Kind>(btf_kind(t)), btf_vlen(t));
    if (!size) fail(input.name(), "libbpf reads type [{}] with unknown kind {}", id, btf_kind(t));
    record.assign(reinterpret_cast<const std::uint8_t*>(t),
                  reinterpret_cast<const std::uint8_t*>(t) + kTypeHeaderSize + *size);
    for_each_type_id_slot(record.data(), [&](std::uint32_t& ref) {
      if (ref >= first) ref = ref - first + landing;
    });
    const int err = btf__add_type(dst, src, reinterpret_cast<const struct btf_type*>(record.data()));
    if (err < 0) fail(input.name(), "libbpf cannot merge type [{}]: {}", id, errno_text(err));
  }
}

struct Merged {
  LibbpfBtfPtr base;  // the split inputs' base, which `btf` continues
  LibbpfBtfPtr btf;
};

Merged merge(const std::vector<std::shared_ptr<const Btf>>& inputs) {
  Merged m;
  const Btf& first = *inputs.front();
  if (!first.is_split()) {
    m.btf = libbpf_from_memory(first);
    for (std::size_t i = 1; i < inputs.size(); ++i) {
      const LibbpfBtfPtr more = libbpf_from_memory(*inputs[i]);
      if (const int err = btf__add_btf(m.btf.get(), more.get()); err < 0)
        fail(inputs[i]->name(), "libbpf cannot merge this BTF: {}", errno_text(err));
    }
    return m;
  }
  m.base = libbpf_from_memory(*first.base());
  if (inputs.size() == 1) {
    m.btf = libbpf_split(first, m.base.get());
    return m;
  }
  m.btf.reset(btf__new_empty_split(m.base.get()));
  if (!m.btf) fail(first.name(), "libbpf cannot start a split BTF on {}: {}", esc(first.base()->name()), errno_text(errno));
  // Each input is read on a copy of the base of its own. libbpf 1.1.2's btf__add_str looks every name
  // up in the output's base first, and a lookup appends the name to that base's string buffer, which
  // may move it: a name that pointed into that same buffer (an input's name in the base's strings)
  // would then be read after it was freed, as AddressSanitizer found.
  for (const auto& input : inputs) {
    const LibbpfBtfPtr own_base = libbpf_from_memory(*first.base());
    const LibbpfBtfPtr src = libbpf_split(*input, own_base.get());
    append_split(m.btf.get(), src.get(), *input);
  }
  return m;
}

struct BtfExtDeleter {
  void operator()(struct btf_ext* e) const { btf_ext__free(e); }
};
using LibbpfBtfExtPtr = std::unique_ptr<struct btf_ext, BtfExtDeleter>;

// libbpf's copy of an object's .BTF.ext, in the host's byte order.
LibbpfBtfExtPtr libbpf_ext(const Btf& btf, std::span<const std::uint8_t> ext) {
  const bool host_big = std::endian::native == std::endian::big;
  std::vector<std::uint8_t> swapped;
  if (btf.big_endian() != host_big) {
    swapped = btf_ext_in_host_order(ext);
    ext = swapped;
  }
  errno = 0;
  struct btf_ext* e = btf_ext__new(ext.data(), static_cast<__u32>(ext.size()));
  if (!e) fail(btf.name() + ": .BTF.ext", "libbpf cannot read it: {}", errno_text(errno));
  return LibbpfBtfExtPtr(e);
}

// Runs btf__dedup (rewriting `ext` with the types, where given); on failure names the input that fails
// alone, or all of them.
void dedup_or_fail(struct btf* btf, struct btf_ext* ext, const std::vector<std::shared_ptr<const Btf>>& inputs) {
  LIBBPF_OPTS(btf_dedup_opts, opts, .btf_ext = ext);
  const int err = btf__dedup(btf, &opts);
  if (err == 0) return;
  if (inputs.size() > 1) {
    for (const auto& input : inputs) {
      Merged alone = merge({input});
      if (const int e = btf__dedup(alone.btf.get(), nullptr); e != 0)
        fail(input->name(), "libbpf's btf__dedup fails on this BTF: {}", errno_text(e));
    }
  }
  std::string names;
  for (const auto& input : inputs) names += (names.empty() ? "" : " + ") + input->name();
  fail(names, "libbpf's btf__dedup fails on {}: {}", inputs.size() > 1 ? "the merged BTF" : "this BTF",
       errno_text(err));
}

// A named type, for counting copies per (kind, name): 16 bytes, as there is one per named type on each
// side (a quarter of a million for two vmlinux). The key holds a 39-bit hash of the name over the kind
// over the record's bytes, so that sorting compares integers only and a group of one (kind, name) is a
// run of equal key >> kBytesBits; a run that mixes names (a hash collision) is sorted by name.
struct NamedRecord {
  static constexpr unsigned kBytesBits = 20;  // records are at most 12 + 12 x 65535 bytes, under 2^20
  static constexpr unsigned kKindBits = 5;
  std::uint64_t key;
  const char* name;

  std::uint64_t group() const { return key >> kBytesBits; }
  Kind kind() const { return static_cast<Kind>(group() & ((1u << kKindBits) - 1)); }
  std::uint32_t bytes() const { return static_cast<std::uint32_t>(key & ((1u << kBytesBits) - 1)); }
};

bool same_name(const NamedRecord& a, const NamedRecord& b) {
  return a.name == b.name || std::strcmp(a.name, b.name) == 0;
}
bool same_group(const NamedRecord& a, const NamedRecord& b) { return a.group() == b.group() && same_name(a, b); }
bool by_kind_and_name(const NamedRecord& a, const NamedRecord& b) {
  if (a.kind() != b.kind()) return a.kind() < b.kind();
  return std::strcmp(a.name, b.name) < 0;
}

// A word at a time (names average some twenty bytes), mixed as splitmix64 does.
NamedRecord named_record(const char* name, Kind kind, std::uint32_t bytes) {
  std::size_t n = std::strlen(name);
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  const char* p = name;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  h = (h ^ tail) * 0x94d049bb133111ebull;
  h ^= h >> 29;
  constexpr unsigned low = NamedRecord::kKindBits + NamedRecord::kBytesBits;
  return {(h >> low << low) | std::uint64_t{static_cast<std::uint8_t>(kind)} << NamedRecord::kBytesBits | bytes, name};
}

void tally(const Btf& btf, DedupSide& side, std::vector<NamedRecord>* names) {
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    const std::uint32_t bytes = t.record_size();
    KindTally& k = side.kinds[static_cast<unsigned>(t.kind())];
    ++k.count;
    k.bytes += bytes;
    if (names && t.name_off() != 0) names->push_back(named_record(btf.c_str(t.name_off()), t.kind(), bytes));
  }
  side.types += btf.own_count();
  side.record_bytes += btf.type_section().size();
  side.string_bytes += btf.string_section().size();
  side.total_bytes += btf.raw().size();
  side.header_bytes = side.total_bytes - side.record_bytes - side.string_bytes;
}

// Appends the (kind, name) groups of `before` with fewer copies in `after`; both sorted so that each
// group is one run, in the same order on both sides (`less`).
template <typename Less>
void compare_groups(std::span<const NamedRecord> before, std::span<const NamedRecord> after, Less less,
                    std::vector<DuplicatedType>& out) {
  std::size_t a = 0;
  for (std::size_t b = 0; b < before.size();) {
    const NamedRecord& group = before[b];
    std::uint64_t copies = 0, bytes_before = 0, copies_after = 0, bytes_after = 0;
    for (; b < before.size() && same_group(before[b], group); ++b) {
      ++copies;
      bytes_before += before[b].bytes();
    }
    while (a < after.size() && less(after[a], group)) ++a;
    for (; a < after.size() && same_group(after[a], group); ++a) {
      ++copies_after;
      bytes_after += after[a].bytes();
    }
    if (copies_after < copies)
      out.push_back({group.kind(), group.name, copies, copies - copies_after,
                     bytes_before - std::min(bytes_before, bytes_after)});
  }
}

std::vector<DuplicatedType> duplicated(std::vector<NamedRecord>& before, std::vector<NamedRecord>& after) {
  // Grouped by a radix sort on the hash: a quarter of a million records, where comparisons cost
  // several times as much.
  constexpr unsigned kGroupBits = 64 - NamedRecord::kBytesBits;
  radix_sort(before, kGroupBits, [](const NamedRecord& r) { return r.group(); });
  radix_sort(after, kGroupBits, [](const NamedRecord& r) { return r.group(); });
  std::vector<DuplicatedType> out;
  out.reserve(before.size() - std::min(before.size(), after.size()));  // each group listed removes a named copy
  std::size_t a = 0;
  for (std::size_t b = 0; b < before.size();) {
    const std::uint64_t group = before[b].group();
    std::size_t b_end = b;
    bool one_name = true;
    for (; b_end < before.size() && before[b_end].group() == group; ++b_end)
      one_name = one_name && same_name(before[b_end], before[b]);
    while (a < after.size() && after[a].group() < group) ++a;
    std::size_t a_end = a;
    for (; a_end < after.size() && after[a_end].group() == group; ++a_end)
      one_name = one_name && same_name(after[a_end], before[b]);
    const std::span<NamedRecord> run_before(before.data() + b, b_end - b), run_after(after.data() + a, a_end - a);
    if (!one_name) {
      // Names that collide in the hash: order the run by name.
      std::sort(run_before.begin(), run_before.end(), by_kind_and_name);
      std::sort(run_after.begin(), run_after.end(), by_kind_and_name);
    }
    compare_groups(run_before, run_after, by_kind_and_name, out);
    b = b_end;
    a = a_end;
  }
  return out;
}

}  // namespace

void rank_duplicates(std::vector<DuplicatedType>& duplicates, std::size_t top) {
  auto larger = [](const DuplicatedType& x, const DuplicatedType& y) {
    if (x.bytes_freed != y.bytes_freed) return x.bytes_freed > y.bytes_freed;
    if (x.removed != y.removed) return x.removed > y.removed;
    if (x.kind != y.kind) return x.kind < y.kind;
    return x.name < y.name;
  };
  if (top >= duplicates.size()) {
    std::sort(duplicates.begin(), duplicates.end(), larger);
    return;
  }
  std::nth_element(duplicates.begin(), duplicates.begin() + static_cast<std::ptrdiff_t>(top), duplicates.end(), larger);
  std::sort(duplicates.begin(), duplicates.begin() + static_cast<std::ptrdiff_t>(top), larger);
}

DedupResult dedup(const std::vector<std::shared_ptr<const Btf>>& inputs, std::span<const std::uint8_t> ext) {
  if (inputs.empty()) fail("dedup", "no input");
  if (!ext.empty() && inputs.size() != 1) fail("dedup", "a .BTF.ext goes with one input only");
  const Btf& first = *inputs.front();
  for (const auto& input : inputs) {
    if (input->is_split() != first.is_split())
      fail(input->name(), "is {} BTF while {} is {}: give inputs of one kind (all standalone, or all split on one base)",
           input->is_split() ? "split" : "standalone", esc(first.name()), first.is_split() ? "split" : "standalone");
    if (input->is_split() && input->base()->name() != first.base()->name())
      fail(input->name(), "is split on {} while {} is split on {}: split inputs must share their base",
           esc(input->base()->name()), esc(first.name()), esc(first.base()->name()));
  }

  DedupResult r;
  LibbpfBtfExtPtr libbpf_btf_ext;
  if (!ext.empty()) {
    const BtfExtReferences refs = read_btf_ext_references(first, ext, first.name() + ": .BTF.ext");
    r.ext = DedupResult::Ext{refs.func_info, refs.line_info, refs.core_relo};
    libbpf_btf_ext = libbpf_ext(first, ext);
  }
  Merged merged = merge(inputs);
  dedup_or_fail(merged.btf.get(), libbpf_btf_ext.get(), inputs);
  btf__set_endianness(merged.btf.get(), first.big_endian() ? BTF_BIG_ENDIAN : BTF_LITTLE_ENDIAN);
  __u32 size = 0;
  const void* data = btf__raw_data(merged.btf.get(), &size);
  if (!data) fail(first.name(), "libbpf cannot write the deduplicated BTF: {}", errno_text(errno));

  // The parsed output owns libbpf's BTF, whose buffer its bytes are.
  auto owner = std::make_shared<Merged>(std::move(merged));
  r.output = Btf::parse(first.name() + " (deduplicated)", owner,
                        {static_cast<const std::uint8_t*>(data), size}, first.base_shared());

  // Names are only needed when some type went: the output has fewer types than the inputs.
  std::uint64_t input_types = 0;
  for (const auto& input : inputs) input_types += input->own_count();
  std::vector<NamedRecord> names_before, names_after;
  const bool removed = r.output->own_count() < input_types;
  if (removed) {
    names_before.reserve(input_types);
    names_after.reserve(r.output->own_count());
  }
  for (const auto& input : inputs) tally(*input, r.before, removed ? &names_before : nullptr);
  tally(*r.output, r.after, removed ? &names_after : nullptr);
  if (removed) r.duplicates = duplicated(names_before, names_after);
  return r;
}

}  // namespace btfslim
