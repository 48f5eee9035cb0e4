// String attribution and the per-kind footprint (the model is described in footprint.h).
//
// A type's string bytes are the sum, over the offsets it names, of the string's extent divided by how
// many references name it. That takes two passes over the names (counts are only known at the end of
// the first) with a sweep over the string section between them; the passes are what this costs, so the
// data they share is kept small enough to stay in cache:
// - pass 1 is the records' name list (RecordNames, btf.h), which Btf::parse's index pass collects
//   where it is asked to (measure, budget) or which is collected here: one bit per named offset in a
//   bitmap of the string section (290 KiB for vmlinux's 2.3 MB of strings), the named offsets as a
//   flat list, and per name its record's kind and whether it is the record's own;
// - each named offset gets a rank, its position among the named offsets, from the bitmap and a running
//   count per 64-bit word; the list is rewritten to ranks while counting references per rank;
// - the sweep finds each extent with bit operations on the bitmap and on a bitmap of the NULs, and
//   turns each rank's count into its weight, extent / count;
// - pass 2 walks the list once, sums the weights per record and the records' sums per kind.
// Offsets that name no string of this BTF (0, or the base's strings) rank one past the last, whose
// weight is 0, so that pass 2 needs no branch for them. Nothing is allocated per type.
//
// What .BTF.ext names (a BPF object's line info, access strings, section names) is attributed after
// the sweep, to the bytes the types left: types keep exactly what they had.
#include "btfslim/footprint.h"
#include "btfslim/memory.h"
#include "btfslim/parallel.h"
#include "records.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>
#include <vector>

#ifdef __SSE2__
#include <cpuid.h>
#include <emmintrin.h>
#endif

namespace btfslim {
namespace {

// Bit i of the result is set when p[i] is NUL; p has 64 bytes.
std::uint64_t nul_mask(const std::uint8_t* p) {
#ifdef __SSE2__
  const __m128i zero = _mm_setzero_si128();
  std::uint64_t mask = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    mask |= std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, zero)))} << (16 * i);
  }
  return mask;
#else
  std::uint64_t mask = 0;
  for (int i = 0; i < 64; ++i) mask |= std::uint64_t{p[i] == 0} << i;
  return mask;
#endif
}

// below[w] = the set bits of named[0, w); returns all of them.
[[gnu::always_inline]] inline std::uint32_t count_below_in(const ZeroedArray<std::uint64_t>& named,
                                                          ZeroedArray<std::uint32_t>& below) {
  std::uint32_t count = 0;
  for (std::size_t w = 0; w < named.size(); ++w) {
    below[w] = count;
    count += static_cast<std::uint32_t>(std::popcount(named[w]));
  }
  return count;
}

// Replaces each offset in `refs` by its rank, the number of named offsets below it, and counts the
// references to each rank in `count`.
[[gnu::always_inline]] inline void rank_and_count_in(const ZeroedArray<std::uint64_t>& named,
                                                     const ZeroedArray<std::uint32_t>& below,
                                                     ZeroedArray<std::uint32_t>& refs, ZeroedArray<double>& count) {
  for (std::uint32_t& ref : refs) {
    const std::uint32_t i = ref;
    const std::uint64_t lower = named[i / 64] & ((std::uint64_t{1} << (i % 64)) - 1);
    ref = below[i / 64] + static_cast<std::uint32_t>(std::popcount(lower));
    count[ref] += 1;
  }
}

// x86-64 before popcnt has no population count instruction, and a rank is taken once per name: the two
// functions that count bits are built twice, once for popcnt, and the CPU is asked once, the first time
// they are called. Not target_clones: its resolver has libgcc ask the CPU about everything it has when
// any process starts, for every command: a few dozen cpuid instructions, each trapped by a VM's
// hypervisor (1.3% of the samples of a `check` of the corpus's largest object, before main).
#if defined(__x86_64__) && !defined(__POPCNT__)
#define BTFSLIM_POPCNT_DISPATCH 1
bool has_popcnt() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_POPCNT) != 0;
  }();
  return has;
}
[[gnu::target("popcnt")]] std::uint32_t count_below_popcnt(const ZeroedArray<std::uint64_t>& named,
                                                           ZeroedArray<std::uint32_t>& below) {
  return count_below_in(named, below);
}
[[gnu::target("popcnt")]] void rank_and_count_popcnt(const ZeroedArray<std::uint64_t>& named,
                                                     const ZeroedArray<std::uint32_t>& below,
                                                     ZeroedArray<std::uint32_t>& refs, ZeroedArray<double>& count) {
  rank_and_count_in(named, below, refs, count);
}
#endif

std::uint32_t count_below(const ZeroedArray<std::uint64_t>& named, ZeroedArray<std::uint32_t>& below) {
#ifdef BTFSLIM_POPCNT_DISPATCH
  if (has_popcnt()) return count_below_popcnt(named, below);
#endif
  return count_below_in(named, below);
}

void rank_and_count(const ZeroedArray<std::uint64_t>& named, const ZeroedArray<std::uint32_t>& below,
                    ZeroedArray<std::uint32_t>& refs, ZeroedArray<double>& count) {
#ifdef BTFSLIM_POPCNT_DISPATCH
  if (has_popcnt()) return rank_and_count_popcnt(named, below, refs, count);
#endif
  rank_and_count_in(named, below, refs, count);
}

// Pass 2 (see attribute): per record, the sum of its names' weights; per kind, the sum of its records'
// sums, kept in locals until the end. A record's sum goes to its kind when the next record starts.
template <bool PerType>
void sum_shares(const std::uint8_t* marks, std::span<const std::uint32_t> ranks, const ZeroedArray<double>& weight,
                double* per_type, FileFootprint* kinds) {
  double sums[kMaxKind + 1] = {};
  double share = 0;
  unsigned kind = 0;
  double* out = per_type;
  for (std::size_t j = 0; j < ranks.size(); ++j) {
    const unsigned mark = marks[j];
    if (mark & RecordNames::kOwnName) {
      if (j > 0) {
        if constexpr (PerType) *out++ = share;
        sums[kind] += share;
      }
      share = 0;
      kind = mark & ~unsigned{RecordNames::kOwnName};
    }
    share += weight[ranks[j]];
  }
  if (!ranks.empty()) {
    if constexpr (PerType) *out = share;
    sums[kind] += share;
  }
  if (kinds)
    for (unsigned k = 0; k <= kMaxKind; ++k) kinds->kinds[k].string_bytes = sums[k];
}

// The records' names, for a BTF whose index pass did not collect them: the same decoding, here.
RecordNames collect_names(const Btf& btf) {
  RecordNames names;
  RecordNames::Writer writer = names.start(static_cast<std::uint32_t>(btf.type_section().size()),
                                           btf.string_base(), static_cast<std::uint32_t>(btf.string_section().size()));
  for_each_record(btf, [&](std::uint32_t, const TypeView& t) {
    writer.record(static_cast<unsigned>(t.kind()), t.record_size());
    for_each_name_ref(t, [&](std::uint32_t off) { writer.name(off); });
  });
  names.finish(writer);
  return names;
}

// The bytes that no type names but .BTF.ext does, per use. A string's bytes from its first named offset
// to its NUL are the types' (their extents tile that run); an offset .BTF.ext names before that, or in
// a string no type names, gives the use that names it first (in position order, then use order) the
// bytes up to the types' first offset or through the NUL. Strings are walked once each.
std::array<std::uint64_t, kExtUses> attribute_ext(std::span<const std::uint8_t> strings, std::uint32_t string_base,
                                                  const ZeroedArray<std::uint64_t>& named,
                                                  const BtfExtReferences& ext) {
  const auto len = static_cast<std::uint32_t>(strings.size());
  std::vector<std::pair<std::uint32_t, std::uint8_t>> at;  // position in the section, use
  for (std::size_t use = 0; use < kExtUses; ++use)
    for (const std::uint32_t off : ext.strings[use])
      if (off >= string_base && off - string_base < len) at.emplace_back(off - string_base, static_cast<std::uint8_t>(use));
  std::sort(at.begin(), at.end());
  auto named_at = [&](std::uint32_t i) { return (named[i / 64] >> (i % 64)) & 1; };
  std::array<std::uint64_t, kExtUses> out{};
  std::uint32_t done = 0;  // positions below this are attributed already
  for (const auto& [p, use] : at) {
    if (p < done) continue;
    std::uint32_t start = p;
    while (start > 0 && strings[start - 1] != 0) --start;
    bool typed_before = false;
    for (std::uint32_t i = start; i < p && !typed_before; ++i) typed_before = named_at(i);
    std::uint32_t nul = p;
    while (strings[nul] != 0) ++nul;  // the section ends in a NUL
    std::uint32_t typed = p;  // the first byte the types hold from here, or one past the NUL
    while (typed <= nul && !named_at(typed)) ++typed;
    if (!typed_before) out[use] += typed - p;
    done = nul + 1;
  }
  return out;
}

// The string totals, every type's share where `per_type` is set, and, where `kinds` is given, the
// per-kind counts and sums.
StringAttribution attribute(const Btf& btf, bool per_type, FileFootprint* kinds, RecordNames names,
                            const BtfExtReferences* ext) {
  StringAttribution out;
  if (per_type) out.per_type = ZeroedArray<double>::for_overwrite(btf.own_count());
  const auto strings = btf.string_section();
  const auto len = static_cast<std::uint32_t>(strings.size());
  const std::uint32_t words = len / 64 + 1;  // one more bit than the section: `len` is "not ours"

  // Pass 1: which offsets are named, and the list of names in record order, each marked with its
  // record's kind and whether it is the record's own (first) name.
  if (!names.complete()) names = collect_names(btf);
  if (kinds)
    for (unsigned k = 0; k <= kMaxKind; ++k) {
      kinds->kinds[k].count = names.records[k];
      kinds->kinds[k].record_bytes = names.record_bytes[k];
    }
  const ZeroedArray<std::uint64_t>& named = names.named;
  ZeroedArray<std::uint32_t>& refs = names.at;

  // Ranks: rank(i) = named offsets below i; rank(len) is the count of named offsets, the "not ours" slot.
  // Per rank, first the reference count, then the weight; exact in a double either way.
  auto below = ZeroedArray<std::uint32_t>::for_overwrite(words);
  const std::uint32_t distinct = count_below(named, below);
  ZeroedArray<double> weight(std::size_t{distinct} + 1);
  rank_and_count(named, below, refs, weight);
  weight[distinct] = 0;
  below = {};

  // The sweep: a named offset's extent runs to the next named offset inside the same string, or through
  // its NUL. Bytes before a string's first named offset are unreferenced. 64 bytes at a time: `open` is
  // the named offset whose extent has not ended yet, if any.
  std::uint32_t rank = 0;
  std::uint32_t open = 0;
  bool is_open = false;
  auto close = [&](std::uint32_t end) {
    const std::uint32_t extent = end - open;
    out.referenced_bytes += extent;
    weight[rank] = static_cast<double>(extent) / weight[rank];
    ++rank;
  };
  std::uint8_t tail[64] = {};
  for (std::uint32_t w = 0; w < words; ++w) {
    const std::uint32_t at = w * 64;
    const std::uint8_t* bytes = strings.data() + at;
    if (len - at < 64) {  // the last word: bytes past the section are not NULs
      std::memset(tail, 0xff, sizeof tail);
      if (len > at) std::memcpy(tail, bytes, len - at);
      bytes = tail;
    }
    std::uint64_t refs_here = named[w];
    std::uint64_t nuls = nul_mask(bytes);
    for (;;) {
      if (!is_open) {
        if (!refs_here) break;
        const int r = std::countr_zero(refs_here);
        refs_here &= refs_here - 1;
        nuls &= ~std::uint64_t{0} << r;  // NULs before it end earlier strings
        open = at + r;
        is_open = true;
        continue;
      }
      const int next_ref = refs_here ? std::countr_zero(refs_here) : 64;
      const int next_nul = nuls ? std::countr_zero(nuls) : 64;
      if (next_ref == 64 && next_nul == 64) break;  // the extent goes on into the next word
      if (next_ref <= next_nul) {  // the next named offset comes first (or names the NUL itself)
        close(at + next_ref);
        refs_here &= refs_here - 1;
        open = at + next_ref;
      } else {
        close(at + next_nul + 1);
        nuls &= nuls - 1;
        is_open = false;
      }
    }
  }
  if (ext) out.ext_bytes = attribute_ext(strings, btf.string_base(), named, *ext);
  std::uint64_t ext_total = 0;
  for (const std::uint64_t b : out.ext_bytes) ext_total += b;
  out.unreferenced_bytes = len - out.referenced_bytes - ext_total;

  // Pass 2: each type's share, the names' weights summed in record order, and each kind's sum of its
  // types' shares, also in record order (so that every way of measuring adds the same doubles alike).
  if (per_type)
    sum_shares<true>(names.marks.data(), refs, weight, out.per_type.data(), kinds);
  else
    sum_shares<false>(names.marks.data(), refs, weight, nullptr, kinds);
  return out;
}

// The file's figures; the per-kind sums come from pass 2.
FileFootprint file_figures(const Btf& btf) {
  FileFootprint f;
  const Header& h = btf.header();
  f.file_bytes = btf.raw().size();
  f.header_bytes = h.hdr_len;
  f.type_bytes = h.type_len;
  f.string_bytes = h.str_len;
  f.gap_bytes = f.file_bytes - f.header_bytes - f.type_bytes - f.string_bytes;
  f.type_count = btf.own_count();
  return f;
}

void add_strings(FileFootprint& f, const StringAttribution& strings) {
  f.referenced_string_bytes = strings.referenced_bytes;
  f.unreferenced_string_bytes = strings.unreferenced_bytes;
  f.ext_string_bytes = strings.ext_bytes;
}

}  // namespace

StringAttribution attribute_strings(const Btf& btf, RecordNames names, const BtfExtReferences* ext) {
  return attribute(btf, true, nullptr, std::move(names), ext);
}

FileFootprint measure_file(const Btf& btf) {
  FileFootprint f = file_figures(btf);
  add_strings(f, attribute(btf, false, &f, {}, nullptr));
  return f;
}

FileFootprint measure_file(const Btf& btf, const StringAttribution& strings) {
  FileFootprint f = file_figures(btf);
  add_strings(f, strings);
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    KindFootprint& k = f.kinds[static_cast<unsigned>(t.kind())];
    ++k.count;
    k.record_bytes += t.record_size();
    k.string_bytes += strings.per_type[id - btf.first_id()];
  }
  return f;
}

Footprint::Footprint(const Btf& btf, Depth depth, RecordNames names, const BtfExtReferences* ext)
    : file(file_figures(btf)), kernel(kernel_memory(btf)) {
  file.has_ext = ext != nullptr;
  if (depth == Depth::Kinds) {
    add_strings(file, attribute(btf, false, &file, std::move(names), ext));
    return;
  }
  // The reference graph on a second CPU, beside the string shares (whose temporaries, the names' list,
  // the weights, are then gone before the dominators' working arrays are made: what is live at the
  // busiest moment is the same as one step after the other, 6.6 MB for vmlinux (memory.h)). The shares
  // are this thread's, whose caches hold the names the index pass collected. `own` only at the end.
  Beside graph_beside([&] { graph = TypeGraph(btf); }, btf.type_section().size() >= kTypesWorthAThread);
  strings = attribute(btf, true, &file, std::move(names), ext);
  add_strings(file, strings);
  graph_beside.wait();
  dominators = compute_dominators(graph);
  // A record's size is the distance to the next one (the records are contiguous).
  const std::uint32_t n = btf.own_count();
  own = ZeroedArray<double>::for_overwrite(n);
  for (std::uint32_t node = 0; node < n; ++node) {
    const TypeId id = btf.first_id() + node;
    const std::uint32_t end = node + 1 < n ? btf.type_offset(id + 1) : btf.header().type_len;
    own[node] = (end - btf.type_offset(id)) + strings.per_type[node];
  }
  retained = retained_sizes(dominators, own);
}

}  // namespace btfslim
