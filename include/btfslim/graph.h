// The type-reference graph and its dominator tree: what refers to what, and what keeps what alive.
//
// Nodes are a BTF's own types (node i is type first_id() + i). An edge u -> v means "u needs v": a
// pointer its target, a struct its members' types, a func its prototype. A DECL_TAG is the exception:
// it annotates its target and is gone when the target is, so its edge runs target -> tag. References
// to void and, for split BTF, into the base are not nodes; base references are counted.
//
// The dominator tree hangs every node under a virtual root that points at each node nothing refers to
// (and, to reach cycles nothing outside refers to, at the lowest-numbered node of each). A node's
// dominator subtree is exactly what the BTF would lose if the node were removed together with
// everything only reachable through it: summing own bytes over it gives the node's retained bytes.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/memory.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace btfslim {

struct DominatorTree;

class TypeGraph {
 public:
  TypeGraph();
  explicit TypeGraph(const Btf& btf);
  TypeGraph(TypeGraph&&) noexcept;
  TypeGraph& operator=(TypeGraph&&) noexcept;
  ~TypeGraph();

  std::uint32_t node_count() const { return static_cast<std::uint32_t>(nodes_.size() - 1); }
  std::span<const std::uint32_t> successors(std::uint32_t node) const {
    return {succ_.data() + nodes_[node].start, succ_.data() + nodes_[node + 1].start};
  }
  // How many edges lead to the node (a struct that has two members of one type refers to it twice).
  std::uint32_t referrers(std::uint32_t node) const { return nodes_[node].referrers; }
  // Built on first use (thread-safe): the dominators and everything else on measure's main path need
  // no predecessor lists by node, so that path does not pay for them.
  std::span<const std::uint32_t> predecessors(std::uint32_t node) const;
  std::uint64_t edge_count() const { return succ_.size(); }
  std::uint64_t base_edge_count() const { return base_edges_; }

 private:
  friend DominatorTree compute_dominators(const TypeGraph& graph);  // reads the edges as one array
  struct Predecessors;
  // Side by side, so that a walk reaching a node finds both in one cache line: its successors are
  // succ_[start, the next node's start).
  struct Node {
    std::uint32_t start;
    std::uint32_t referrers;
  };
  ZeroedArray<Node> nodes_;  // one more than the nodes: the last start is the edge count
  ZeroedArray<std::uint32_t> succ_;
  std::uint64_t base_edges_ = 0;
  std::unique_ptr<Predecessors> preds_;
};

inline constexpr std::uint32_t kVirtualRoot = 0xffffffffu;

struct DominatorTree {
  ZeroedArray<std::uint32_t> idom;      // per node: its immediate dominator node, or kVirtualRoot
  ZeroedArray<std::uint32_t> preorder;  // every node, in depth-first preorder from the virtual root
  ZeroedArray<std::uint32_t> roots;     // the nodes the virtual root points at, in preorder
};

// Semi-NCA (Georgiadis, Tarjan, Werneck): near-linear, iterative (no recursion on deep chains).
DominatorTree compute_dominators(const TypeGraph& graph);

// Sums `own` over each node's dominator subtree.
ZeroedArray<double> retained_sizes(const DominatorTree& tree, std::span<const double> own);

// Nodes reachable from the roots without entering a node for which excluded(node) is true: what a BTF
// keeps when those nodes go (with everything only they kept alive).
std::vector<bool> reachable_without(const TypeGraph& graph, const DominatorTree& tree,
                                    const std::vector<bool>& excluded);

// Everything reachable from a node (itself included): its own bytes summed, and how many types.
struct Closure {
  double bytes = 0;
  std::uint32_t types = 0;
};

// The closure of each of `nodes`. The bytes are added exactly (in fixed point, 2^-24 of a byte), so a
// set of types has one figure however it was reached. Up to 1,024 nodes (a table's rows), the closures
// are taken from the last node to the first, and the first 64 of them that are not small (an eighth of
// a bitmap word per node or more) are kept: a walk that reaches a node whose closure is kept takes that
// closure whole instead of walking it again. Rows by retained bytes gain from it: the types of one
// strongly connected web (task_struct, net_device, ...) share a closure, and a row further down is
// often what a row above reaches through a chain (FUNC, its prototype, a pointer, the struct).
// `progress`, when given, is told how many closures are done every 1,024 (a progress bar's).
using ClosureProgress = std::function<void(std::size_t done)>;
std::vector<Closure> closure_sizes(const TypeGraph& graph, std::span<const std::uint32_t> nodes,
                                   std::span<const double> own, const ClosureProgress& progress = {});
inline Closure closure_size(const TypeGraph& graph, std::uint32_t node, std::span<const double> own) {
  return closure_sizes(graph, {&node, 1}, own).front();
}

}  // namespace btfslim
