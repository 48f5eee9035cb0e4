// String attribution and the per-kind footprint (the model is described in footprint.h).
//
// Reference counts live in one byte per string-section byte, saturating into a small overflow map for
// the few strings named more than 254 times ("next", "flags", ...): 2.3 MB for vmlinux, no per-type
// allocation, two linear passes over the types and one over the strings.
#include "btfslim/footprint.h"

#include <cstring>
#include <unordered_map>

namespace btfslim {
namespace {

class RefCounts {
 public:
  explicit RefCounts(std::size_t n) : small_(n, 0) {}
  void add(std::uint32_t i) {
    if (small_[i] < kSaturated) {
      ++small_[i];
      if (small_[i] == kSaturated) big_[i] = kSaturated;
    } else {
      ++big_[i];
    }
  }
  std::uint32_t get(std::uint32_t i) const { return small_[i] < kSaturated ? small_[i] : big_.at(i); }
  bool any(std::uint32_t i) const { return small_[i] != 0; }

 private:
  static constexpr std::uint8_t kSaturated = 255;
  std::vector<std::uint8_t> small_;
  std::unordered_map<std::uint32_t, std::uint32_t> big_;
};

}  // namespace

StringAttribution attribute_strings(const Btf& btf) {
  StringAttribution out;
  out.per_type.assign(btf.own_count(), 0.0);
  const auto strings = btf.string_section();
  const std::uint32_t base = btf.string_base();
  const auto len = static_cast<std::uint32_t>(strings.size());
  RefCounts counts(len);

  // Offset 0 is "no name", not a use of a string; offsets below `base` are the base's strings.
  auto own = [&](std::uint32_t off) { return off != 0 && off >= base; };
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id)
    for_each_name_ref(btf.type(id), [&](std::uint32_t off) {
      if (own(off)) counts.add(off - base);
    });

  // A referenced string's extent: to its NUL, or up to the next referenced offset inside it. The sweep
  // over the section finds whether any string has such an interior reference at all; pahole and libbpf
  // never write one, so the per-reference extent is then just strlen + 1.
  const char* chars = reinterpret_cast<const char*>(strings.data());
  bool interior_refs = false;
  for (std::uint32_t i = 0; i < len;) {
    if (!counts.any(i)) {
      ++out.unreferenced_bytes;
      ++i;
      continue;
    }
    std::uint32_t j = i;
    while (strings[j] != 0) {
      ++j;
      if (counts.any(j)) break;
    }
    if (strings[j] != 0) {
      interior_refs = true;
    } else {
      ++j;
    }
    out.referenced_bytes += j - i;
    i = j;
  }
  auto extent = [&](std::uint32_t i) -> std::uint32_t {
    if (!interior_refs) return static_cast<std::uint32_t>(std::strlen(chars + i)) + 1;
    std::uint32_t j = i;
    while (strings[j] != 0) {
      ++j;
      if (counts.any(j)) return j - i;
    }
    return j - i + 1;
  };

  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    double share = 0;
    for_each_name_ref(btf.type(id), [&](std::uint32_t off) {
      if (!own(off)) return;
      const std::uint32_t i = off - base;
      share += static_cast<double>(extent(i)) / counts.get(i);
    });
    out.per_type[id - btf.first_id()] = share;
  }
  return out;
}

FileFootprint measure_file(const Btf& btf) { return measure_file(btf, attribute_strings(btf)); }

FileFootprint measure_file(const Btf& btf, const StringAttribution& strings) {
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
    KindFootprint& k = f.kinds[static_cast<unsigned>(t.kind())];
    ++k.count;
    k.record_bytes += t.record_size();
    k.string_bytes += strings.per_type[id - btf.first_id()];
  }
  return f;
}

Footprint::Footprint(const Btf& btf, Depth depth)
    : strings(attribute_strings(btf)), file(measure_file(btf, strings)), kernel(kernel_memory(btf)) {
  own.resize(btf.own_count());
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const std::uint32_t node = id - btf.first_id();
    own[node] = btf.type(id).record_size() + strings.per_type[node];
  }
  if (depth == Depth::Kinds) return;
  graph = TypeGraph(btf);
  dominators = compute_dominators(graph);
  retained = retained_sizes(dominators, own);
}

}  // namespace btfslim
