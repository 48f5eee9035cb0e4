// Building the reference graph, dominators, retained and closure sizes (see graph.h for the model).
#include "btfslim/graph.h"

#include <algorithm>

namespace btfslim {
namespace {

// Calls fn(from, to) for each edge between own nodes; counts edges into the base.
template <typename Fn>
void for_each_edge(const Btf& btf, std::uint64_t& base_edges, Fn&& fn) {
  const TypeId first = btf.first_id();
  base_edges = 0;
  for (TypeId id = first; id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    const bool tag = t.kind() == Kind::DeclTag;
    for_each_type_ref(t, [&](TypeId ref) {
      if (ref == 0) return;
      if (ref < first) {
        ++base_edges;
        return;
      }
      if (tag)
        fn(ref - first, id - first);
      else
        fn(id - first, ref - first);
    });
  }
}

void to_csr(ZeroedArray<std::uint32_t>& start, ZeroedArray<std::uint32_t>& edges) {
  // `start` holds counts in [1..n]; turn them into offsets.
  for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  edges = ZeroedArray<std::uint32_t>(start[start.size() - 1]);
}

}  // namespace

TypeGraph::TypeGraph(const Btf& btf) {
  const std::uint32_t n = btf.own_count();
  succ_start_ = ZeroedArray<std::uint32_t>(n + 1);
  pred_start_ = ZeroedArray<std::uint32_t>(n + 1);
  for_each_edge(btf, base_edges_, [&](std::uint32_t from, std::uint32_t to) {
    ++succ_start_[from + 1];
    ++pred_start_[to + 1];
  });
  to_csr(succ_start_, succ_);
  to_csr(pred_start_, pred_);
  ZeroedArray<std::uint32_t> succ_fill(n), pred_fill(n);
  std::copy(succ_start_.begin(), succ_start_.end() - 1, succ_fill.begin());
  std::copy(pred_start_.begin(), pred_start_.end() - 1, pred_fill.begin());
  for_each_edge(btf, base_edges_, [&](std::uint32_t from, std::uint32_t to) {
    succ_[succ_fill[from]++] = to;
    pred_[pred_fill[to]++] = from;
  });
}

DominatorTree compute_dominators(const TypeGraph& graph) {
  const std::uint32_t n = graph.node_count();
  // DFS numbers: 1 is the virtual root, nodes get 2..n+1; 0 means not reached yet.
  ZeroedArray<std::uint32_t> num(n), node_of(n + 2), parent(n + 2);
  std::uint32_t next = 1;

  struct Frame {
    std::uint32_t node;
    std::uint32_t edge;
  };
  std::vector<std::uint32_t> roots;
  std::vector<Frame> stack;
  auto dfs_from = [&](std::uint32_t start) {
    roots.push_back(start);
    num[start] = ++next;
    node_of[next] = start;
    parent[next] = 1;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto succ = graph.successors(f.node);
      if (f.edge == succ.size()) {
        stack.pop_back();
        continue;
      }
      const std::uint32_t v = succ[f.edge++];
      if (num[v]) continue;
      num[v] = ++next;
      node_of[next] = v;
      parent[next] = num[f.node];
      stack.push_back({v, 0});
    }
  };
  for (std::uint32_t v = 0; v < n; ++v)
    if (!num[v] && graph.predecessors(v).empty()) dfs_from(v);
  for (std::uint32_t v = 0; v < n; ++v)
    if (!num[v]) dfs_from(v);

  // Semidominators, with path compression over the already-processed part of the DFS tree.
  ZeroedArray<std::uint32_t> semi(n + 2), label(n + 2), ancestor(n + 2), idom(n + 2);
  for (std::uint32_t i = 0; i < n + 2; ++i) {
    semi[i] = label[i] = i;
    ancestor[i] = idom[i] = parent[i];
  }
  std::vector<std::uint32_t> path;
  auto eval = [&](std::uint32_t v, std::uint32_t last_linked) {
    if (ancestor[v] < last_linked) return label[v];
    path.clear();
    do {
      path.push_back(v);
      v = ancestor[v];
    } while (ancestor[v] >= last_linked);
    std::uint32_t p = v;
    std::uint32_t p_label = label[p];
    while (!path.empty()) {
      const std::uint32_t w = path.back();
      path.pop_back();
      ancestor[w] = ancestor[p];
      if (semi[p_label] < semi[label[w]])
        label[w] = p_label;
      else
        p_label = label[w];
      p = w;
    }
    return label[p];
  };
  for (std::uint32_t i = n + 1; i >= 2; --i) {
    semi[i] = parent[i];
    for (const std::uint32_t pred : graph.predecessors(node_of[i])) {
      const std::uint32_t s = semi[eval(num[pred], i + 1)];
      if (s < semi[i]) semi[i] = s;
    }
  }
  for (std::uint32_t i = 2; i <= n + 1; ++i) {
    std::uint32_t d = idom[i];
    while (d > semi[i]) d = idom[d];
    idom[i] = d;
  }

  DominatorTree tree;
  tree.roots = std::move(roots);
  tree.idom = ZeroedArray<std::uint32_t>(n);
  tree.preorder = ZeroedArray<std::uint32_t>(n);
  for (std::uint32_t i = 2; i <= n + 1; ++i) {
    tree.preorder[i - 2] = node_of[i];
    tree.idom[node_of[i]] = idom[i] == 1 ? kVirtualRoot : node_of[idom[i]];
  }
  return tree;
}

ZeroedArray<double> retained_sizes(const DominatorTree& tree, std::span<const double> own) {
  ZeroedArray<double> retained(own.size());
  std::copy(own.begin(), own.end(), retained.begin());
  // Children come after their dominator in preorder: fold from the end.
  for (auto it = tree.preorder.rbegin(); it != tree.preorder.rend(); ++it) {
    const std::uint32_t d = tree.idom[*it];
    if (d != kVirtualRoot) retained[d] += retained[*it];
  }
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

double closure_size(const TypeGraph& graph, std::uint32_t node, std::span<const double> own,
                    std::vector<std::uint32_t>& visited, std::uint32_t epoch, std::uint32_t* count) {
  if (visited.size() != graph.node_count()) visited.assign(graph.node_count(), 0);
  std::vector<std::uint32_t> work{node};
  visited[node] = epoch;
  double total = 0;
  std::uint32_t nodes = 0;
  while (!work.empty()) {
    const std::uint32_t v = work.back();
    work.pop_back();
    total += own[v];
    ++nodes;
    for (const std::uint32_t s : graph.successors(v))
      if (visited[s] != epoch) {
        visited[s] = epoch;
        work.push_back(s);
      }
  }
  if (count) *count = nodes;
  return total;
}

}  // namespace btfslim
