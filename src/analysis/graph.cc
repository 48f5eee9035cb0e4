// Building the reference graph, dominators, retained and closure sizes (see graph.h for the model).
//
// Everything here is linear or near-linear in the types and edges, and vmlinux has 126k types and
// 256k edges, so the costs are memory traffic and passes over the records. The records are decoded
// once: successor lists come out in id order and go straight into their CSR arrays, the few DECL_TAG
// edges (which run the other way) are spliced in afterwards, and the predecessor lists are the
// successor lists turned around rather than a second decoding.
#include "btfslim/graph.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace btfslim {
namespace {

// Splices the DECL_TAG edges (target -> tag, in tag order) into the successor lists, in place, where a
// pass over the types in id order would have put them: before a node's own edges when the tag's id is
// lower than the node's, after them when it is higher. `edges` has room for all of them.
template <typename Node>  // TypeGraph's: where its list starts is `start`
void splice_tag_edges(std::vector<std::pair<std::uint32_t, std::uint32_t>>& tags, Node* nodes, std::uint32_t* edges,
                      std::uint32_t n) {
  std::stable_sort(tags.begin(), tags.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // From the highest target down: the lists above it move up, as one block, by the number of tag edges
  // still to place below them; then the target's own list is rebuilt around its tag edges.
  auto shift = static_cast<std::uint32_t>(tags.size());
  std::uint32_t done = n;                  // nodes from here up are in place
  std::uint32_t done_old_start = nodes[n].start;  // where node `done`'s list began before the move
  nodes[n].start += shift;
  std::size_t k = tags.size();  // tags[0, k) are still to place
  while (k > 0) {
    const std::uint32_t u = tags[k - 1].first;
    std::size_t lo = k;
    while (lo > 0 && tags[lo - 1].first == u) --lo;
    std::size_t mid = lo;  // tags[lo, mid) come before u's own edges, tags[mid, k) after
    while (mid < k && tags[mid].second < u) ++mid;

    const std::uint32_t own_begin = nodes[u].start;
    const std::uint32_t own_end = u + 1 < done ? nodes[u + 1].start : done_old_start;
    if (u + 1 < done) {
      std::memmove(edges + own_end + shift, edges + own_end, (done_old_start - own_end) * sizeof *edges);
      for (std::uint32_t x = u + 1; x < done; ++x) nodes[x].start += shift;
    }
    std::uint32_t at = own_end + shift;
    for (std::size_t j = k; j > mid; --j) edges[--at] = tags[j - 1].second;
    at -= own_end - own_begin;
    std::memmove(edges + at, edges + own_begin, (own_end - own_begin) * sizeof *edges);
    for (std::size_t j = mid; j > lo; --j) edges[--at] = tags[j - 1].second;
    nodes[u].start = at;

    shift -= static_cast<std::uint32_t>(k - lo);
    done = u;
    done_old_start = own_begin;
    k = lo;
  }
}

// Where a record's type ids are, as for_each_field() visits them, for the graph to read them without
// a switch on the kind (as btf.cc's index pass does): which kind comes next follows no pattern, and
// the switch's jump was mispredicted for most records (vmlinux's graph: 1.43 -> 1.32 ms without it).
// `header` masks in the id in the header's third word; then `entries` (or vlen, with per_vlen) ids
// `stride` bytes apart from `at` past the header.
struct RefLayout {
  std::uint32_t header = 0;
  std::uint8_t stride = 0, at = 0, entries = 0;
  bool per_vlen = false;
};

constexpr std::array<RefLayout, 32> kRefLayout = [] {
  std::array<RefLayout, 32> t{};
  for (const Kind k : {Kind::Ptr, Kind::Typedef, Kind::Volatile, Kind::Const, Kind::Restrict, Kind::Func, Kind::Var,
                       Kind::TypeTag, Kind::DeclTag, Kind::FuncProto})
    t[static_cast<unsigned>(k)].header = 0xffffffffu;
  t[static_cast<unsigned>(Kind::Array)] = {0, 4, 0, 2, false};
  t[static_cast<unsigned>(Kind::Struct)] = {0, 12, 4, 0, true};
  t[static_cast<unsigned>(Kind::Union)] = {0, 12, 4, 0, true};
  t[static_cast<unsigned>(Kind::FuncProto)] = {0xffffffffu, 8, 4, 0, true};
  t[static_cast<unsigned>(Kind::Datasec)] = {0, 12, 0, 0, true};
  return t;
}();

// Whether the table puts the type ids where for_each_field() does, in its order, for every kind,
// with no entries and with some.
constexpr bool ref_layout_is_for_each_field() {
  for (unsigned k = 0; k < 32; ++k) {
    for (const unsigned vlen : {0u, 3u}) {
      std::array<std::uint32_t, 8> want{}, got{};
      std::size_t n_want = 0, n_got = 0;
      for_each_field(
          std::uint32_t{k} << 24 | vlen, [](std::uint32_t, NameRole) {},
          [&](std::uint32_t at, RefRole) { want[n_want++] = at; });
      const RefLayout& l = kRefLayout[k];
      if (l.header) got[n_got++] = 8;
      const unsigned count = l.per_vlen ? vlen : l.entries;
      for (unsigned i = 0; i < count; ++i) got[n_got++] = kTypeHeaderSize + l.at + i * l.stride;
      if (n_want != n_got || want != got) return false;
    }
  }
  return true;
}
static_assert(ref_layout_is_for_each_field(), "kRefLayout puts a type id elsewhere than for_each_field()");

}  // namespace

// Built on first use by a counting sort of the successor lists (see predecessors()).
struct TypeGraph::Predecessors {
  std::once_flag built;
  ZeroedArray<std::uint32_t> start, list;
};

TypeGraph::TypeGraph(const Btf& btf) : preds_(std::make_unique<Predecessors>()) {
  const std::uint32_t n = btf.own_count();
  const TypeId first = btf.first_id();

  // Successors, in one pass: a type's references come out in id order, straight into the CSR arrays. A
  // record holds at most one reference in its header and one per 6 trailing bytes (an array's two ids in
  // 12), which bounds the edges; the array gives back what it does not use.
  nodes_ = ZeroedArray<Node>::for_overwrite(n + 1);
  const std::uint64_t trailing = btf.type_section().size() - std::uint64_t{kTypeHeaderSize} * n;
  succ_ = ZeroedArray<std::uint32_t>::for_overwrite(n + trailing / 6);
  std::uint32_t* const out = succ_.data();
  std::uint32_t edges = 0;
  std::uint64_t base_edges = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> tags;  // (target, tag): edges that run backwards
  // Without branches: whether a reference is void, the base's or an own type follows no pattern the
  // branch predictor could learn (a prototype's void return, its parameters), and a slot written and
  // not counted is overwritten by the next (the bound above leaves room for it: a record writes one
  // slot for its header, masked to void where it holds no id, and one per id past it).
  auto add = [&](TypeId ref) {
    out[edges] = ref - first;
    edges += ref >= first;
    base_edges += ref != 0 && ref < first;
  };
  auto decode = [&](auto swapped) {
    constexpr ByteOrder order(decltype(swapped)::value);
    const std::uint8_t* const types = btf.type_section().data();
    const std::uint32_t* const offsets = btf.type_offsets().data();
    for (std::uint32_t node = 0; node < n; ++node) {
      const std::uint8_t* const p = types + offsets[node];
      const std::uint32_t info = order.u32(p + 4);
      const unsigned kind = (info >> 24) & 0x1f;
      nodes_[node] = {edges, 0};
      if (kind == static_cast<unsigned>(Kind::DeclTag)) {
        const TypeId ref = order.u32(p + 8);
        if (ref >= first)
          tags.emplace_back(ref - first, node);
        else if (ref != 0)
          ++base_edges;
        continue;
      }
      const RefLayout& l = kRefLayout[kind];
      add(order.u32(p + 8) & l.header);
      const unsigned count = l.per_vlen ? info & 0xffff : l.entries;
      const std::uint8_t* e = p + kTypeHeaderSize + l.at;
      for (unsigned i = 0; i < count; ++i, e += l.stride) add(order.u32(e));
    }
  };
  if (btf.byte_order().swapped())
    decode(std::true_type{});
  else
    decode(std::false_type{});
  nodes_[n] = {edges, 0};
  base_edges_ = base_edges;
  if (!tags.empty()) splice_tag_edges(tags, nodes_.data(), out, n);
  succ_.truncate(nodes_[n].start);
  // Here rather than where the dominators are taken, which then waits for nothing but the graph: this
  // is built on a second CPU beside the string shares (footprint.cc).
  for (const std::uint32_t v : succ_) ++nodes_[v].referrers;
}

TypeGraph::TypeGraph() : nodes_(1), preds_(std::make_unique<Predecessors>()) {}
TypeGraph::TypeGraph(TypeGraph&&) noexcept = default;
TypeGraph& TypeGraph::operator=(TypeGraph&&) noexcept = default;
TypeGraph::~TypeGraph() = default;

// The successor lists turned around: v's list is sized by its referrers, and its start goes one slot up
// so that the fill can use start[v + 1] as v's cursor, which leaves it at v's end, the start of v + 1.
std::span<const std::uint32_t> TypeGraph::predecessors(std::uint32_t node) const {
  Predecessors& p = *preds_;
  std::call_once(p.built, [&] {
    const std::uint32_t n = node_count();
    p.start = ZeroedArray<std::uint32_t>(std::size_t{n} + 2);
    for (std::uint32_t v = 0; v < n; ++v) p.start[v + 2] = p.start[v + 1] + nodes_[v].referrers;
    p.list = ZeroedArray<std::uint32_t>::for_overwrite(succ_.size());
    for (std::uint32_t u = 0; u < n; ++u)
      for (const std::uint32_t v : successors(u)) p.list[p.start[v + 1]++] = u;
  });
  return {p.list.data() + p.start[node], p.list.data() + p.start[node + 1]};
}

DominatorTree compute_dominators(const TypeGraph& graph) {
  const std::uint32_t n = graph.node_count();
  DominatorTree tree;

  // What costs here is cache misses and mispredicted branches, not instructions: the walks below jump
  // around arrays of a few hundred KiB to a few MiB, and whether an edge leads somewhere new follows no
  // pattern. So the checks made per edge go to bitmaps that stay in L1 or L2, and what Semi-NCA needs
  // of the predecessors is told apart by what the DFS sees, so that few are placed:
  // - A node with one referrer (a third of vmlinux's) was reached from it: its semidominator is its
  //   parent whatever the rest.
  // - A node referred to from a later DFS tree than its own (cross): a path from the virtual root
  //   through that tree to it meets its own tree's path to it nowhere else, so its semidominator and
  //   immediate dominator are the virtual root (0). A referrer is never in an earlier tree (the DFS of
  //   a tree reaches all that the tree refers to), so a referrer the DFS finds reached but outside the
  //   tree it walks is in a later one. Most nodes with several referrers are cross (in vmlinux 14,242
  //   of 15,224, with 208,622 of their 211,480 edges): a type that functions of two files refer to.
  // - The rest (982 nodes, 2,858 edges) need their predecessor lists, rebuilt in DFS numbering by a
  //   counting sort, so that Semi-NCA reads them in order. The counts are the nodes' referrer counts,
  //   the graph's (in the cache line the DFS reads the node's edges' start from), moved to their
  //   numbers' slots as the DFS numbers them.
  const std::size_t words = (std::size_t{n} + 64) / 64;  // n + 1 bits: numbers go up to n
  // Bitmaps by node: reached, in the tree being walked, referred to from a later tree, and referred to
  // more than once (then: and its list is needed); by number: cross, and Semi-NCA's slot written. From
  // the pool (92 KB for vmlinux): as a vector they were a page fault for every 4 KiB.
  ZeroedArray<std::uint64_t> bitmaps(6 * words);
  std::uint64_t* const reached = bitmaps.data();
  std::uint64_t* const in_tree = reached + words;
  std::uint64_t* const cross = in_tree + words;
  std::uint64_t* const listed = cross + words;
  std::uint64_t* const cross_number = listed + words;
  std::uint64_t* const slot_written = cross_number + words;
  auto test = [](const std::uint64_t* bits, std::uint32_t v) { return (bits[v / 64] >> (v % 64)) & 1; };
  auto set = [](std::uint64_t* bits, std::uint32_t v) { bits[v / 64] |= std::uint64_t{1} << (v % 64); };

  // The arrays, in the order that keeps the most memory live at once smallest (it is what the resident
  // set peaks at): `num` is needed only until the predecessors are renumbered, so it goes on top, and
  // its place is taken by `slots`; the semidominators need no array of their own (see below).
  //   num[v]      v's depth-first number, once the DFS reaches v: 0 is the virtual root, nodes get
  //               1..n; preorder[i - 1] is the node numbered i
  //   dom[i - 1]  number i's DFS tree parent, which becomes its immediate dominator
  //   pred        the predecessors of number b, as numbers, are pred[pred_end[b - 1], pred_end[b]),
  //               for a b whose list is needed (above)
  tree.preorder = ZeroedArray<std::uint32_t>::for_overwrite(n);
  std::uint32_t* const preorder = tree.preorder.data();
  auto dom = ZeroedArray<std::uint32_t>::for_overwrite(n);
  auto pred_end = ZeroedArray<std::uint32_t>::for_overwrite(std::size_t{n} + 2);
  pred_end[0] = pred_end[1] = 0;  // the DFS writes the counts of numbers 1..n, at 2..n + 1
  auto num = ZeroedArray<std::uint32_t>::for_overwrite(n);
  // The roots: every node nothing refers to, then one per cycle that nothing outside reaches (rare).
  // They are flagged in `preorder` (kRoot, the top bit, which no node uses: a type takes 12 bytes of a
  // section of at most 4 GiB) and gathered at the end, when the working arrays are gone, into memory
  // from the pool: a vector grown here took 800 KB of fresh pages for vmlinux's 67,857 roots, and a
  // page fault for every 4 KiB.
  constexpr std::uint32_t kRoot = 0x80000000u;
  std::uint32_t root_count = 0;

  std::uint32_t next = 0;
  struct Frame {
    std::uint32_t number;
    const std::uint32_t* edge;
    const std::uint32_t* end;
  };
  std::vector<Frame> stack;
  auto reach = [&](std::uint32_t v, std::uint32_t parent) {
    set(reached, v);
    set(in_tree, v);
    const std::uint32_t referrers = graph.referrers(v);
    ++next;
    num[v] = next;
    listed[v / 64] |= std::uint64_t{referrers > 1} << (v % 64);
    pred_end[next + 1] = referrers > 1 ? referrers : 0;
    preorder[next - 1] = v | (parent == 0 ? kRoot : 0);
    dom[next - 1] = parent;
    const auto succ = graph.successors(v);
    if (!succ.empty()) stack.push_back({next, succ.data(), succ.data() + succ.size()});
  };
  auto dfs_from = [&](std::uint32_t start) {
    ++root_count;
    const std::uint32_t first = next + 1;  // the tree's numbers are first..next
    reach(start, 0);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.edge == f.end) {
        stack.pop_back();
        continue;
      }
      const std::uint32_t v = *f.edge++;
      // Reached, but not in this tree: cross. Without a branch, which would follow no pattern.
      const std::uint64_t bit = std::uint64_t{1} << (v % 64);
      cross[v / 64] |= reached[v / 64] & ~in_tree[v / 64] & bit;
      if (!(reached[v / 64] & bit)) reach(v, f.number);
    }
    for (std::uint32_t i = first; i <= next; ++i) {
      const std::uint32_t v = preorder[i - 1] & ~kRoot;
      in_tree[v / 64] &= ~(std::uint64_t{1} << (v % 64));
    }
  };
  for (std::uint32_t v = 0; v < n; ++v)
    if (graph.referrers(v) == 0) dfs_from(v);
  for (std::uint32_t v = 0; v < n; ++v)
    if (!test(reached, v)) dfs_from(v);

  // A cross node's list is not needed: its count goes, and its number is noted for Semi-NCA.
  for (std::size_t w = 0; w < words; ++w) {
    listed[w] &= ~cross[w];
    for (std::uint64_t bits = cross[w]; bits; bits &= bits - 1) {
      const std::uint32_t b = num[w * 64 + static_cast<std::uint32_t>(std::countr_zero(bits))];
      pred_end[b + 1] = 0;
      set(cross_number, b);
    }
  }
  // The needed lists' edges turned around and renumbered, placed by their target's number.
  for (std::uint32_t b = 1; b <= n + 1; ++b) pred_end[b] += pred_end[b - 1];
  auto pred = ZeroedArray<std::uint32_t>::for_overwrite(pred_end[n + 1]);
  // One loop over all the edges, not one per node: a loop's end per node, after a number of edges that
  // follows no pattern, was a mispredicted branch per node, most of what this cost. The node an edge
  // comes from is looked up only for the few edges placed.
  const std::span<const std::uint32_t> edges = graph.succ_;
  const TypeGraph::Node* const nodes = graph.nodes_.data();
  for (std::uint32_t e = 0, u = 0; e < edges.size(); ++e) {
    const std::uint32_t v = edges[e];
    if (!test(listed, v)) continue;
    while (nodes[u + 1].start <= e) ++u;
    pred[pred_end[num[v]]++] = num[u];
  }
  num = {};

  // Semidominators, numbers from n down, with path compression over the already-processed part of the
  // DFS tree (numbers from last_linked up). Number i's semidominator is written over pred_end[i], which
  // is spent once i is done (numbers below i read only pred_end[i - 1] and lower), so `semi` below is
  // pred_end read at numbers already processed.
  struct Slot {
    std::uint32_t ancestor;  // path-compressed forest of the numbers processed so far
    std::uint32_t label;     // the number of least semidominator on the compressed path
  };
  // Each starts as {its parent, itself}, written when first used: few are (only the listed nodes'
  // predecessors are evaluated, and their ancestors), and writing all of them was a megabyte.
  auto slots = ZeroedArray<Slot>::for_overwrite(std::size_t{n} + 1);
  auto slot = [&](std::uint32_t i) -> Slot& {
    if (!test(slot_written, i)) {
      set(slot_written, i);
      slots[i] = {i ? dom[i - 1] : 0, i};
    }
    return slots[i];
  };
  std::uint32_t* const semi = pred_end.data();
  std::vector<std::uint32_t> path;
  auto eval = [&](std::uint32_t v, std::uint32_t last_linked) {
    if (slot(v).ancestor < last_linked) return slot(v).label;
    path.clear();
    do {
      path.push_back(v);
      v = slot(v).ancestor;
    } while (slot(v).ancestor >= last_linked);
    std::uint32_t p = v;
    std::uint32_t p_label = slot(p).label;
    while (!path.empty()) {
      const std::uint32_t w = path.back();
      path.pop_back();
      slot(w).ancestor = slot(p).ancestor;
      if (semi[p_label] < semi[slot(w).label])
        slot(w).label = p_label;
      else
        p_label = slot(w).label;
      p = w;
    }
    return slot(p).label;
  };
  for (std::uint32_t i = n; i >= 1; --i) {
    // A cross node's, and a root's (its parent is the virtual root), is 0; a node with one referrer's is
    // its parent (its list is empty).
    std::uint32_t best = dom[i - 1] & (0u - !test(cross_number, i));
    // Nothing is below the virtual root (0): once it is found, the other predecessors cannot lower it.
    for (std::uint32_t k = pred_end[i - 1]; k < pred_end[i] && best != 0; ++k) {
      // A predecessor numbered up to i is not processed yet: its semidominator is still itself.
      const std::uint32_t u = pred[k];
      const std::uint32_t s = u <= i ? u : semi[eval(u, i + 1)];
      if (s < best) best = s;
    }
    semi[i] = best;
  }
  pred = {};
  slots = {};

  // Immediate dominators: the nearest common ancestor of the parent and the semidominator. Then the
  // roots, and the immediate dominators by node, in memory the working arrays have just given back.
  for (std::uint32_t i = 1; i <= n; ++i) {
    // Most often the virtual root or the parent, found without a branch; the walk is for the rest.
    const std::uint32_t s = semi[i];
    std::uint32_t d = dom[i - 1] & (0u - (s != 0));
    while (d > s) d = dom[d - 1];
    dom[i - 1] = d;
  }
  // Without a branch (roots and other nodes come in no pattern): each node is written to the slot past
  // the roots so far, which only a root keeps.
  tree.roots = ZeroedArray<std::uint32_t>::for_overwrite(std::size_t{root_count} + 1);
  for (std::uint32_t i = 0, r = 0; i < n; ++i) {
    const std::uint32_t v = preorder[i];
    preorder[i] = v & ~kRoot;
    tree.roots[r] = v & ~kRoot;
    r += v >> 31;
  }
  tree.roots.truncate(root_count);
  tree.idom = ZeroedArray<std::uint32_t>::for_overwrite(n);
  for (std::uint32_t i = 1; i <= n; ++i) {
    const std::uint32_t d = dom[i - 1];
    // Branch-free: the virtual root (0) is the immediate dominator of every root, scattered through.
    const std::uint32_t node = preorder[d - (d != 0)];
    tree.idom[preorder[i - 1]] = node | (0u - (d == 0));  // kVirtualRoot is all ones
  }
  return tree;
}

ZeroedArray<double> retained_sizes(const DominatorTree& tree, std::span<const double> own) {
  // One slot more, where what the virtual root would get goes: whether a node's dominator is the
  // virtual root follows no pattern, so a branch on it would be mispredicted for half the nodes.
  const std::size_t n = own.size();
  auto retained = ZeroedArray<double>::for_overwrite(n + 1);
  std::copy(own.begin(), own.end(), retained.begin());
  retained[n] = 0;
  // Children come after their dominator in preorder: fold from the end.
  for (auto it = tree.preorder.rbegin(); it != tree.preorder.rend(); ++it)
    retained[std::min<std::size_t>(tree.idom[*it], n)] += retained[*it];  // kVirtualRoot is above n
  retained.truncate(n);
  return retained;
}

std::vector<bool> reachable_without(const TypeGraph& graph, const DominatorTree& tree,
                                    const std::vector<bool>& excluded) {
  std::vector<bool> seen(graph.node_count(), false);
  std::vector<std::uint32_t> work;
  for (const std::uint32_t r : tree.roots)
    if (!excluded[r]) {
      seen[r] = true;
      work.push_back(r);
    }
  while (!work.empty()) {
    const std::uint32_t v = work.back();
    work.pop_back();
    for (const std::uint32_t s : graph.successors(v))
      if (!seen[s] && !excluded[s]) {
        seen[s] = true;
        work.push_back(s);
      }
  }
  return seen;
}

namespace {

// closure_sizes' walks, with the kept closures (Keep) or without.
template <bool Keep>
std::vector<Closure> walk_closures(const TypeGraph& graph, std::span<const std::uint32_t> nodes,
                                   std::span<const double> own, const ClosureProgress& progress) {
  constexpr std::size_t kKept = 64;
  const std::size_t words = (std::size_t{graph.node_count()} + 63) / 64;
  // The bytes are added in fixed point, 2^-24 of a byte, so that the sum is exact and the same in any
  // order: a closure taken whole and a walk add up alike, and so do closure_sizes with and without
  // the kept closures. Every own figure is a share of the file's bytes (a u32 type section and a u32
  // string section), so no sum comes near 2^63 (2^33 x 2^24).
  constexpr double kScale = 16777216.0;
  auto fixed = [&](std::uint32_t v) { return static_cast<std::int64_t>(own[v] * kScale + 0.5); };
  // A walk's visited set is a bitmap of the nodes (16 KiB for vmlinux), which stays in L1, where an
  // array of epochs took half a megabyte and missed the cache on every edge. So does the filter that
  // tells a node whose closure may be kept (512 bytes, by node modulo 4096), where a second bitmap of
  // all the nodes would crowd the first.
  std::vector<std::uint64_t> visited(words);
  std::array<std::uint64_t, 64> maybe_kept{};
  auto may_be_kept = [&](std::uint32_t v) { return (maybe_kept[v / 64 % 64] >> (v % 64)) & 1; };
  // The kept closures, `words` each, in the order of kept_node: one array for as many as there can be,
  // from the pool, where a vector grown closure by closure copied itself over and over into fresh
  // pages (a millisecond for a table of vmlinux's top 20 types).
  auto kept = ZeroedArray<std::uint64_t>::for_overwrite(Keep ? std::min(kKept, nodes.size()) * words : 0);
  std::vector<std::uint32_t> kept_node, work;
  std::vector<Closure> out(nodes.size());
  for (std::size_t i = nodes.size(); i-- > 0;) {
    const std::uint32_t start = nodes[i];
    std::fill(visited.begin(), visited.end(), 0);
    auto first_visit = [&](std::uint32_t v) {
      std::uint64_t& word = visited[v / 64];
      const std::uint64_t bit = std::uint64_t{1} << (v % 64);
      const bool first = !(word & bit);
      word |= bit;
      return first;
    };
    std::int64_t sum = 0;
    std::uint32_t types = 0;
    first_visit(start);
    work.assign(1, start);
    // A node whose closure is kept is taken whole when it is first seen, before anything else is
    // walked: what it reaches is then marked visited for the rest of the walk.
    auto take_kept = [&](std::uint32_t v) {
      if (!Keep || !may_be_kept(v)) return false;
      const auto k = static_cast<std::size_t>(std::find(kept_node.begin(), kept_node.end(), v) - kept_node.begin());
      if (k == kept_node.size()) return false;
      const std::uint64_t* const closure = kept.data() + k * words;
      for (std::size_t w = 0; w < words; ++w) {
        std::uint64_t fresh = closure[w] & ~visited[w];
        visited[w] |= fresh;
        for (; fresh; fresh &= fresh - 1) {
          sum += fixed(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(fresh))));
          ++types;
        }
      }
      return true;
    };
    while (!work.empty()) {
      const std::uint32_t v = work.back();
      work.pop_back();
      sum += fixed(v);
      ++types;
      for (const std::uint32_t s : graph.successors(v)) {
        if (Keep && !((visited[s / 64] >> (s % 64)) & 1) && take_kept(s)) continue;
        if (first_visit(s)) work.push_back(s);
      }
    }
    out[i] = {static_cast<double>(sum) / kScale, types};
    if (progress && (nodes.size() - i) % 1024 == 0) progress(nodes.size() - i);
    // Taking a closure whole costs a pass over every word of the bitmap; walking it, a few nanoseconds
    // a type: small closures are walked again.
    if (Keep && kept_node.size() < kKept && types >= words / 8 &&
        std::find(kept_node.begin(), kept_node.end(), start) == kept_node.end()) {
      std::copy(visited.begin(), visited.end(), kept.data() + kept_node.size() * words);
      kept_node.push_back(start);
      maybe_kept[start / 64 % 64] |= std::uint64_t{1} << (start % 64);
    }
  }
  return out;
}

}  // namespace

std::vector<Closure> closure_sizes(const TypeGraph& graph, std::span<const std::uint32_t> nodes,
                                   std::span<const double> own, const ClosureProgress& progress) {
  // A table's rows are few and large and meet each other's closures; every type of vmlinux
  // (measure --all --closure) met a kept closure in 310 of 126,668 walks, and looking cost more.
  if (nodes.size() <= 1024) return walk_closures<true>(graph, nodes, own, progress);
  return walk_closures<false>(graph, nodes, own, progress);
}

}  // namespace btfslim
