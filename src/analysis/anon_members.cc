// Pairing unnamed members by their contents (anon_members.h says the rule).
//
// The kernel moves members between the unnamed unions of a struct and adds unnamed unions in the middle
// of one (sk_buff from 6.1 to 6.12: `mark` from the third unnamed union into the fourth). Keyed by
// position, the third union of one side is compared with the third of the other, and a member that
// moved shows as removed from one union and added to another. Here each unnamed member is summed up by
// the names it holds, and the pairing maximises the names shared. A struct has a handful of unnamed
// members, so the quadratic pairing costs nothing; it runs only for types whose unnamed members differ.
#include "anon_members.h"

#include <algorithm>
#include <string_view>
#include <tuple>

namespace btfslim {
namespace {

constexpr int kMaxNesting = 16;

Kind kind_of(const Btf& btf, TypeId id) { return id == 0 ? Kind::Unknown : btf.type(id).kind(); }
bool is_composite(Kind k) { return k == Kind::Struct || k == Kind::Union; }

// The names an unnamed member of type `id` holds, its own unnamed members' included.
void held_names(const Btf& btf, TypeId id, std::vector<std::string_view>& out, int depth) {
  if (depth > kMaxNesting || !is_composite(kind_of(btf, id))) return;
  const TypeView t = btf.type(id);
  for (unsigned i = 0; i < t.vlen(); ++i) {
    const Member m = t.member(i);
    if (m.name_off != 0)
      out.push_back(btf.str(m.name_off));
    else
      held_names(btf, m.type, out, depth + 1);
  }
}

struct Unnamed {
  unsigned slot;                        // the member's index in its struct
  Kind kind;                            // of its type: ordinals count per kind
  std::uint32_t ordinal;                // by position, among those of its kind
  std::vector<std::string_view> names;  // sorted, unique
};

std::vector<Unnamed> unnamed_members(const Btf& btf, const TypeView& t) {
  std::vector<Unnamed> out;
  for (unsigned i = 0; i < t.vlen(); ++i) {
    const Member m = t.member(i);
    if (m.name_off != 0) continue;
    Unnamed u{i, kind_of(btf, m.type), 0, {}};
    u.ordinal = 1 + static_cast<std::uint32_t>(
                        std::count_if(out.begin(), out.end(), [&](const Unnamed& x) { return x.kind == u.kind; }));
    held_names(btf, m.type, u.names, 0);
    std::sort(u.names.begin(), u.names.end());
    u.names.erase(std::unique(u.names.begin(), u.names.end()), u.names.end());
    out.push_back(std::move(u));
  }
  return out;
}

std::size_t shared(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::size_t n = 0;
  for (auto x = a.begin(), y = b.begin(); x != a.end() && y != b.end();) {
    if (*x < *y)
      ++x;
    else if (*y < *x)
      ++y;
    else
      ++n, ++x, ++y;
  }
  return n;
}

}  // namespace

std::uint32_t unnamed_ordinal(const Btf& btf, const TypeView& t, unsigned slot) {
  const Kind kind = kind_of(btf, t.member(slot).type);
  std::uint32_t n = 0;
  for (unsigned i = 0; i <= slot; ++i) {
    const Member m = t.member(i);
    if (m.name_off == 0 && kind_of(btf, m.type) == kind) ++n;
  }
  return n;
}

std::vector<std::uint32_t> paired_unnamed_ordinals(const Btf& old_btf, const TypeView& before, const Btf& new_btf,
                                                   const TypeView& after) {
  std::vector<std::uint32_t> ordinals(after.vlen(), 0);
  const std::vector<Unnamed> olds = unnamed_members(old_btf, before);
  const std::vector<Unnamed> news = unnamed_members(new_btf, after);
  // Candidate pairs of one kind that share a name, best first.
  struct Candidate {
    std::size_t shared;
    std::uint32_t distance;
    std::size_t o, n;
  };
  std::vector<Candidate> candidates;
  for (std::size_t o = 0; o < olds.size(); ++o)
    for (std::size_t n = 0; n < news.size(); ++n) {
      if (olds[o].kind != news[n].kind) continue;
      if (const std::size_t s = shared(olds[o].names, news[n].names)) {
        const std::uint32_t a = olds[o].ordinal, b = news[n].ordinal;
        candidates.push_back({s, a > b ? a - b : b - a, o, n});
      }
    }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
    return std::tuple(-static_cast<std::int64_t>(x.shared), x.distance, x.o, x.n) <
           std::tuple(-static_cast<std::int64_t>(y.shared), y.distance, y.o, y.n);
  });
  std::vector<bool> old_paired(olds.size(), false), new_paired(news.size(), false);
  for (const Candidate& c : candidates) {
    if (old_paired[c.o] || new_paired[c.n]) continue;
    old_paired[c.o] = new_paired[c.n] = true;
    ordinals[news[c.n].slot] = olds[c.o].ordinal;
  }
  // The rest by position, kind by kind; new ones left over past the old side's last ordinal.
  for (std::size_t n = 0; n < news.size(); ++n) {
    if (new_paired[n]) continue;
    std::size_t o = 0;
    while (o < olds.size() && (old_paired[o] || olds[o].kind != news[n].kind)) ++o;
    if (o < olds.size()) {
      old_paired[o] = new_paired[n] = true;
      ordinals[news[n].slot] = olds[o].ordinal;
      continue;
    }
    std::uint32_t last = 0;
    for (const Unnamed& u : olds)
      if (u.kind == news[n].kind) last = std::max(last, u.ordinal);
    for (std::size_t k = 0; k < news.size(); ++k)
      if (news[k].kind == news[n].kind && new_paired[k]) last = std::max(last, ordinals[news[k].slot]);
    ordinals[news[n].slot] = last + 1;
    new_paired[n] = true;
  }
  return ordinals;
}

}  // namespace btfslim
