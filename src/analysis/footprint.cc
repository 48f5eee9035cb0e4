// String attribution and the per-kind footprint (the model is described in footprint.h).
//
// One 16-bit slot per string-section byte holds, for a referenced offset, its reference count (low byte,
// saturating into a small overflow map for the few strings named more than 254 times: "next", "flags")
// and, once the sweep has found it, its extent (high byte, 0 when 256 or more). Keeping both in one slot
// means one cache miss per reference in each pass over the types, which is what this costs: two linear
// passes over the types, one over the strings, and no per-type allocation.
#include "btfslim/footprint.h"
#include "btfslim/memory.h"

#include <cstring>
#include <exception>
#include <thread>
#include <unordered_map>

namespace btfslim {
namespace {

class StringRefs {
 public:
  explicit StringRefs(std::size_t n) : slots_(n) {}
  void add(std::uint32_t i) {
    const unsigned c = slots_[i] & 0xff;
    if (c < kSaturated) {
      ++slots_[i];
      if (c + 1 == kSaturated) big_[i] = kSaturated;
    } else {
      ++big_[i];
    }
  }
  bool any(std::uint32_t i) const { return slots_[i] != 0; }
  std::uint32_t count(std::uint16_t slot, std::uint32_t i) const {
    const unsigned c = slot & 0xff;
    return c < kSaturated ? c : big_.at(i);
  }
  void set_extent(std::uint32_t i, std::uint32_t extent) {
    if (extent < 256) slots_[i] = static_cast<std::uint16_t>((slots_[i] & 0xff) | (extent << 8));
  }
  std::uint16_t slot(std::uint32_t i) const { return slots_[i]; }
  // The first referenced position in [from, to], or to + 1. Before extents are set, 4 slots at a time.
  std::uint32_t next_ref(std::uint32_t from, std::uint32_t to) const {
    std::uint32_t j = from;
    for (; j + 4 <= to + 1; j += 4) {
      std::uint64_t word;
      std::memcpy(&word, slots_.data() + j, sizeof word);
      if (word) break;
    }
    for (; j <= to; ++j)
      if (slots_[j]) return j;
    return to + 1;
  }

 private:
  static constexpr unsigned kSaturated = 255;
  ZeroedArray<std::uint16_t> slots_;
  std::unordered_map<std::uint32_t, std::uint32_t> big_;
};

}  // namespace

StringAttribution attribute_strings(const Btf& btf) {
  StringAttribution out;
  out.per_type = ZeroedArray<double>(btf.own_count());
  const auto strings = btf.string_section();
  const std::uint32_t base = btf.string_base();
  const auto len = static_cast<std::uint32_t>(strings.size());
  const char* chars = reinterpret_cast<const char*>(strings.data());
  StringRefs refs(len);

  // Offset 0 is "no name", not a use of a string; offsets below `base` are the base's strings.
  auto own = [&](std::uint32_t off) { return off != 0 && off >= base; };
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id)
    for_each_name_ref(btf.type(id), [&](std::uint32_t off) {
      if (own(off)) refs.add(off - base);
    });

  // String by string: a referenced offset's extent runs to the next referenced offset inside the same
  // string, or through its NUL. Bytes before a string's first referenced offset are unreferenced.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> long_extents;  // extents of 256 bytes or more
  for (std::uint32_t s = 0; s < len;) {
    const auto nul = static_cast<std::uint32_t>(s + std::strlen(chars + s));  // the section ends in NUL
    std::uint32_t r = refs.next_ref(s, nul);
    out.unreferenced_bytes += r - s;
    while (r <= nul) {
      const std::uint32_t next = refs.next_ref(r + 1, nul);
      const std::uint32_t extent = (next <= nul ? next : nul + 1) - r;
      out.referenced_bytes += extent;
      if (extent >= 256) long_extents.emplace_back(r, extent);
      refs.set_extent(r, extent);
      r = next;
    }
    s = nul + 1;
  }
  auto long_extent = [&](std::uint32_t i) {
    for (const auto& [at, extent] : long_extents)
      if (at == i) return extent;
    return 0u;
  };

  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    double share = 0;
    for_each_name_ref(btf.type(id), [&](std::uint32_t off) {
      if (!own(off)) return;
      const std::uint32_t i = off - base;
      const std::uint16_t slot = refs.slot(i);
      const std::uint32_t extent = (slot >> 8) ? (slot >> 8) : long_extent(i);
      share += static_cast<double>(extent) / refs.count(slot, i);
    });
    out.per_type[id - btf.first_id()] = share;
  }
  return out;
}

namespace {

// One pass over the types: the per-kind sums and, where `own` is given, each type's own bytes.
FileFootprint roll_up(const Btf& btf, const StringAttribution& strings, double* own) {
  FileFootprint f;
  const Header& h = btf.header();
  f.file_bytes = btf.raw().size();
  f.header_bytes = h.hdr_len;
  f.type_bytes = h.type_len;
  f.string_bytes = h.str_len;
  f.gap_bytes = f.file_bytes - f.header_bytes - f.type_bytes - f.string_bytes;
  f.type_count = btf.own_count();
  f.referenced_string_bytes = strings.referenced_bytes;
  f.unreferenced_string_bytes = strings.unreferenced_bytes;
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    const std::uint32_t node = id - btf.first_id();
    const std::uint32_t record = t.record_size();
    KindFootprint& k = f.kinds[static_cast<unsigned>(t.kind())];
    ++k.count;
    k.record_bytes += record;
    k.string_bytes += strings.per_type[node];
    if (own) own[node] = record + strings.per_type[node];
  }
  return f;
}

}  // namespace

FileFootprint measure_file(const Btf& btf) { return measure_file(btf, attribute_strings(btf)); }

FileFootprint measure_file(const Btf& btf, const StringAttribution& strings) { return roll_up(btf, strings, nullptr); }

Footprint::Footprint(const Btf& btf, Depth depth) : own(btf.own_count()), kernel(kernel_memory(btf)) {
  auto attribute = [&] {
    strings = attribute_strings(btf);
    file = roll_up(btf, strings, own.data());
  };
  if (depth == Depth::Kinds) {
    attribute();
    return;
  }
  // The strings and the reference graph are independent: on two cores they take the time of the slower.
  std::exception_ptr failure;
  std::thread strings_thread([&] {
    try {
      attribute();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  try {
    graph = TypeGraph(btf);
    dominators = compute_dominators(graph);
  } catch (...) {
    strings_thread.join();
    throw;
  }
  strings_thread.join();
  if (failure) std::rethrow_exception(failure);
  retained = retained_sizes(dominators, own);
}

}  // namespace btfslim
