// String attribution and the per-kind footprint (the model is described in footprint.h).
//
// A type's string bytes are the sum, over the offsets it names, of the string's extent divided by how
// many references name it. That takes two passes over the records (counts are only known at the end
// of the first) with a sweep over the string section between them; the passes are what this costs, so
// the data they share is kept small enough to stay in cache:
// - pass 1 decodes each record's name offsets once, sets one bit per named offset in a bitmap of the
//   string section (290 KiB for vmlinux's 2.3 MB of strings), and appends the offsets to a flat list;
// - each named offset gets a rank, its position among the named offsets, from the bitmap and a running
//   count per 64-bit word; the list is rewritten to ranks while counting references per rank;
// - the sweep finds each extent with bit operations on the bitmap and on a bitmap of the NULs, and
//   turns each rank's count into its weight, extent / count;
// - pass 2 walks the records and the flat list together, sums weights, and rolls up the per-kind
//   figures on the way; for the per-kind figures alone it walks only the list, whose names pass 1
//   marked with their record's kind.
// Offsets that name no string of this BTF (0, or the base's strings) rank one past the last, whose
// weight is 0, so that pass 2 needs no branch for them. Nothing is allocated per type.
#include "btfslim/footprint.h"
#include "btfslim/memory.h"
#include "records.h"

#include <bit>
#include <cstring>

#ifdef __SSE2__
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

// x86-64 before popcnt has no population count instruction, and a rank is taken once per name: let the
// loader pick a popcnt build of the two functions that count bits where the CPU has one.
#if defined(__x86_64__) && !defined(__POPCNT__)
#define BTFSLIM_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define BTFSLIM_POPCNT_CLONES
#endif

// below[w] = the set bits of named[0, w); returns all of them.
BTFSLIM_POPCNT_CLONES
std::uint32_t count_below(const ZeroedArray<std::uint64_t>& named, ZeroedArray<std::uint32_t>& below) {
  std::uint32_t count = 0;
  for (std::size_t w = 0; w < named.size(); ++w) {
    below[w] = count;
    count += static_cast<std::uint32_t>(std::popcount(named[w]));
  }
  return count;
}

// Replaces each offset in `refs` by its rank, the number of named offsets below it, and counts the
// references to each rank in `count`.
BTFSLIM_POPCNT_CLONES
void rank_and_count(const ZeroedArray<std::uint64_t>& named, const ZeroedArray<std::uint32_t>& below,
                    ZeroedArray<std::uint32_t>& refs, ZeroedArray<double>& count) {
  for (std::uint32_t& ref : refs) {
    const std::uint32_t i = ref;
    const std::uint64_t lower = named[i / 64] & ((std::uint64_t{1} << (i % 64)) - 1);
    ref = below[i / 64] + static_cast<std::uint32_t>(std::popcount(lower));
    count[ref] += 1;
  }
}

// Names per record: its own, plus one per member, enumerator or parameter (what for_each_name_ref calls),
// by kind and vlen without a branch.
std::uint32_t name_count(const TypeView& t) {
  constexpr std::uint32_t kNamedEntries = 1u << static_cast<unsigned>(Kind::Struct) |
                                          1u << static_cast<unsigned>(Kind::Union) |
                                          1u << static_cast<unsigned>(Kind::Enum) |
                                          1u << static_cast<unsigned>(Kind::Enum64) |
                                          1u << static_cast<unsigned>(Kind::FuncProto);
  return 1 + ((kNamedEntries >> static_cast<unsigned>(t.kind())) & 1) * t.vlen();
}

// The string totals, every type's share where `per_type` is set, and, where `kinds` is given, the
// per-kind counts and sums (pass 2 below).
StringAttribution attribute(const Btf& btf, bool per_type, FileFootprint* kinds) {
  StringAttribution out;
  const std::uint32_t n = btf.own_count();
  if (per_type) out.per_type = ZeroedArray<double>::for_overwrite(n);
  const auto strings = btf.string_section();
  const std::uint32_t base = btf.string_base();
  const auto len = static_cast<std::uint32_t>(strings.size());
  const std::uint32_t words = len / 64 + 1;  // one more bit than the section: `len` is "not ours"

  // Pass 1: which offsets are named, and the list of names in record order. Offset 0 is "no name", not
  // a use of a string; offsets below `base` are the base's strings. The list's bound: a record names
  // one string in its header and at most one per 8 trailing bytes.
  // For the kinds alone, pass 1 also counts the records and notes, per name, its record's kind and
  // whether it is the record's first (its own name, which every record has), so that pass 2 is a loop
  // over the names that adds the same weights in the same order as the walk over the records would.
  const bool kinds_only = kinds && !per_type;
  constexpr std::uint8_t kFirstName = 0x80;
  ZeroedArray<std::uint64_t> named(words);
  const std::uint64_t trailing = btf.type_section().size() - std::uint64_t{kTypeHeaderSize} * n;
  auto refs = ZeroedArray<std::uint32_t>::for_overwrite(n + trailing / 8);
  auto ref_kinds = kinds_only ? ZeroedArray<std::uint8_t>::for_overwrite(refs.size()) : ZeroedArray<std::uint8_t>();
  std::uint32_t* ref = refs.data();
  std::uint8_t* ref_kind = ref_kinds.data();
  for_each_record(btf, [&](std::uint32_t, const TypeView& t) {
    std::uint8_t kind_mark = static_cast<std::uint8_t>(t.kind()) | kFirstName;
    if (kinds_only) {
      KindFootprint& kind = kinds->kinds[static_cast<unsigned>(t.kind())];
      ++kind.count;
      kind.record_bytes += t.record_size();
    }
    for_each_name_ref(t, [&](std::uint32_t off) {
      const std::uint32_t i = off != 0 && off >= base ? off - base : len;
      named[i / 64] |= std::uint64_t{1} << (i % 64);
      *ref++ = i;
      if (kinds_only) {
        *ref_kind++ = kind_mark;
        kind_mark &= ~kFirstName;
      }
    });
  });
  refs.truncate(static_cast<std::size_t>(ref - refs.data()));
  named[len / 64] &= ~(std::uint64_t{1} << (len % 64));

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
  out.unreferenced_bytes = len - out.referenced_bytes;

  // Pass 2: each type's share, the names' weights summed in record order.
  if (kinds_only) {
    double share = 0;
    unsigned kind = 0;
    for (std::size_t j = 0; j < refs.size(); ++j) {
      if (ref_kinds[j] & kFirstName) {
        if (j > 0) kinds->kinds[kind].string_bytes += share;
        share = 0;
        kind = ref_kinds[j] & ~kFirstName;
      }
      share += weight[refs[j]];
    }
    if (!refs.empty()) kinds->kinds[kind].string_bytes += share;
    return out;
  }
  const std::uint32_t* r = refs.data();
  for_each_record(btf, [&](std::uint32_t node, const TypeView& t) {
    double share = 0;
    for (std::uint32_t k = name_count(t); k > 0; --k) share += weight[*r++];
    if (per_type) out.per_type[node] = share;
    if (kinds) {
      KindFootprint& kind = kinds->kinds[static_cast<unsigned>(t.kind())];
      ++kind.count;
      kind.record_bytes += t.record_size();
      kind.string_bytes += share;
    }
  });
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
}

}  // namespace

StringAttribution attribute_strings(const Btf& btf) { return attribute(btf, true, nullptr); }

FileFootprint measure_file(const Btf& btf) {
  FileFootprint f = file_figures(btf);
  add_strings(f, attribute(btf, false, &f));
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

Footprint::Footprint(const Btf& btf, Depth depth) : file(file_figures(btf)), kernel(kernel_memory(btf)) {
  if (depth == Depth::Kinds) {
    add_strings(file, attribute(btf, false, &file));
    return;
  }
  // One step after the other, not on two threads, and `own` only at the end: what is live at the
  // busiest moment (the dominators' working arrays) then fits in three huge pages instead of four (see
  // memory.h), 2 MiB less resident for vmlinux.
  strings = attribute(btf, true, &file);
  add_strings(file, strings);
  graph = TypeGraph(btf);
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
