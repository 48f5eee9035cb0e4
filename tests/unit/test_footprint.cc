// The footprint model on BTF whose every figure is worked out by hand, the dominator algorithm against
// a brute-force one on random graphs, and the model's invariants on the running kernel's BTF.
#include "btfslim/footprint.h"
#include "btfslim/graph.h"
#include "btfslim/input.h"
#include "btfslim/kernel_memory.h"
#include "btfslim/parallel.h"
#include "btf_bytes.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

using namespace btfslim;
using test::BtfPtr;
using btfslim::test::TempDir;

namespace {

std::shared_ptr<const Btf> parsed(struct btf* b, std::shared_ptr<const Btf> base = nullptr) {
  return test::parse(test::raw_bytes(b), std::move(base), "test");
}

std::shared_ptr<const Btf> parsed_raw(const std::string& raw) { return test::parse(raw, nullptr, "test"); }

}  // namespace

TEST_CASE("own, retained and closure bytes of a hand-built BTF", "[footprint]") {
  const auto btf = parsed_raw(btfslim::test::footprint_btf(false));
  const Footprint fp(*btf);

  // Strings: "" + int node next val node_t n walk lonely = 1+4+5+5+4+7+2+5+7; "val" is shared by [3] and [7].
  CHECK(fp.file.string_bytes == 40);
  CHECK(fp.file.unreferenced_string_bytes == 1);
  CHECK(fp.file.referenced_string_bytes == 39);
  const std::vector<double> strings{4, 0, 12, 7, 2, 5, 9};
  const std::vector<double> own{20, 12, 48, 19, 22, 17, 33};
  for (std::size_t i = 0; i < own.size(); ++i) {
    INFO("type " << i + 1);
    CHECK(fp.strings.per_type[i] == Approx(strings[i]));
    CHECK(fp.own[i] == Approx(own[i]));
  }
  CHECK(fp.file.type_bytes == 132);
  CHECK(fp.file.file_bytes == 24 + 132 + 40);

  // Roots: node_t, walk, lonely. int, node * and node are shared between roots; the proto only by walk.
  const std::vector<std::uint32_t> idom{kVirtualRoot, kVirtualRoot, kVirtualRoot, kVirtualRoot, 5, kVirtualRoot,
                                        kVirtualRoot};
  CHECK(std::vector<std::uint32_t>(fp.dominators.idom.begin(), fp.dominators.idom.end()) == idom);
  const std::vector<double> retained{20, 12, 48, 19, 22, 39, 33};
  for (std::size_t i = 0; i < retained.size(); ++i) CHECK(fp.retained[i] == Approx(retained[i]));
  std::set<std::uint32_t> roots(fp.dominators.roots.begin(), fp.dominators.roots.end());
  CHECK(roots == std::set<std::uint32_t>{3, 5, 6});

  const Closure node_t = closure_size(fp.graph, 3, fp.own);  // node_t: node, node *, int
  CHECK(node_t.bytes == Approx(99));
  CHECK(node_t.types == 4);
  const Closure walk = closure_size(fp.graph, 5, fp.own);
  CHECK(walk.bytes == Approx(119));
  CHECK(walk.types == 5);
  CHECK(closure_size(fp.graph, 6, fp.own).bytes == Approx(53));  // lonely
  CHECK(closure_size(fp.graph, 2, fp.own).bytes == Approx(80));  // node
  // Taken together, the same figures. The rows are taken from the last: node's closure is kept, and
  // node_t and walk reach node, so they take its closure whole (node * and int only through it, for
  // node_t).
  const std::vector<std::uint32_t> rows{3, 5, 2, 6};
  const std::vector<Closure> together = closure_sizes(fp.graph, rows, fp.own);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Closure alone = closure_size(fp.graph, rows[i], fp.own);
    CHECK(together[i].bytes == alone.bytes);
    CHECK(together[i].types == alone.types);
  }

  // Without FUNC: walk goes, and the proto only it kept alive.
  std::vector<bool> excluded(7, false);
  excluded[5] = true;
  const auto kept = reachable_without(fp.graph, fp.dominators, excluded);
  CHECK(kept == std::vector<bool>{true, true, true, true, false, false, true});
}

TEST_CASE("a decl tag is retained by the type it annotates", "[footprint]") {
  const auto btf = parsed_raw(btfslim::test::footprint_btf(true));
  const Footprint fp(*btf);
  CHECK(fp.own[7] == Approx(16 + 4));  // record 12 + 4, string "tag"
  CHECK(fp.dominators.idom[7] == 2);
  CHECK(fp.retained[2] == Approx(48 + 20));
}

TEST_CASE("split BTF: only the split part is measured, base references are edges to the base", "[footprint]") {
  BtfPtr base(btf__new_empty());
  btf__add_int(base.get(), "int", 4, BTF_INT_SIGNED);
  BtfPtr split(btf__new_empty_split(base.get()));
  btf__add_struct(split.get(), "pair", 8);
  btf__add_field(split.get(), "int", 1, 0, 0);  // a name that resolves in the base costs nothing
  btf__add_field(split.get(), "b", 1, 32, 0);
  const auto base_btf = parsed(base.get());
  const auto btf = parsed(split.get(), base_btf);
  const Footprint fp(*btf);
  CHECK(fp.file.file_bytes == 24 + 36 + 7);
  CHECK(fp.file.string_bytes == 7);  // "pair" "b"
  CHECK(fp.file.unreferenced_string_bytes == 0);
  CHECK(fp.own.size() == 1);
  CHECK(fp.own[0] == Approx(43));
  CHECK(fp.retained[0] == Approx(43));
  CHECK(fp.graph.base_edge_count() == 2);
  CHECK(fp.graph.edge_count() == 0);
  CHECK(fp.kernel.as == LoadedAs::Module);
  CHECK(fp.kernel.data_copied);
  CHECK(fp.kernel.type_slots == 1);
}

TEST_CASE("the kernel's types array grows by max(capacity/4, 16)", "[footprint]") {
  CHECK(kernel_types_capacity(0) == 0);
  CHECK(kernel_types_capacity(1) == 16);
  CHECK(kernel_types_capacity(16) == 16);
  CHECK(kernel_types_capacity(17) == 32);
  CHECK(kernel_types_capacity(65) == 80);    // 16, 32, 48, 64, 80
  CHECK(kernel_types_capacity(81) == 100);   // 80 + 20
  const KernelMemory vm = kernel_memory(1000, 10, LoadedAs::Vmlinux);
  CHECK(vm.type_slots == 11);  // void takes slot 0
  CHECK(vm.type_array_bytes == 16 * 8);
  CHECK(vm.total() == 1000 + 128);
  CHECK_FALSE(vm.data_copied);
  const KernelMemory load = kernel_memory(1000, 10, LoadedAs::BtfLoad);
  CHECK(load.resolved_bytes == 11 * 8);
}

TEST_CASE("semi-NCA dominators equal brute-force dominators on random graphs", "[footprint]") {
  std::mt19937 rng(7);
  // The larger graphs of the second half have several DFS trees whose roots reach shared nodes, which
  // is where the scan of a node's predecessors stops early (at the virtual root).
  for (int round = 0; round < 300; ++round) {
    const int n = 2 + static_cast<int>(rng() % (round < 150 ? 24 : 90));
    BtfPtr b(btf__new_empty());
    for (int i = 0; i < n; ++i) {
      const int members = static_cast<int>(rng() % 4);
      btf__add_struct(b.get(), "", 8 * members);
      for (int m = 0; m < members; ++m) btf__add_field(b.get(), "", 1 + rng() % n, 64 * m, 0);
    }
    const auto btf = parsed(b.get());
    const TypeGraph g(*btf);
    const DominatorTree tree = compute_dominators(g);

    // Dominator sets by iteration to a fixed point, the virtual root (index n) pointing at tree.roots.
    const int root = n;
    std::vector<std::vector<bool>> dom(n + 1, std::vector<bool>(n + 1, true));
    dom[root].assign(n + 1, false);
    dom[root][root] = true;
    std::vector<std::vector<int>> preds(n);
    for (int v = 0; v < n; ++v)
      for (const auto p : g.predecessors(v)) preds[v].push_back(static_cast<int>(p));
    for (const auto r : tree.roots) preds[r].push_back(root);
    for (bool changed = true; changed;) {
      changed = false;
      for (int v = 0; v < n; ++v) {
        std::vector<bool> d(n + 1, true);
        for (const int p : preds[v])
          for (int k = 0; k <= n; ++k) d[k] = d[k] && dom[p][k];
        d[v] = true;
        if (d != dom[v]) dom[v] = d, changed = true;
      }
    }
    for (int v = 0; v < n; ++v) {
      // The immediate dominator is the strict dominator with the most dominators of its own.
      int best = -1;
      int best_size = -1;
      for (int k = 0; k <= n; ++k) {
        if (k == v || !dom[v][k]) continue;
        const int size = static_cast<int>(std::count(dom[k].begin(), dom[k].end(), true));
        if (size > best_size) best = k, best_size = size;
      }
      const std::uint32_t expected = best == root ? kVirtualRoot : static_cast<std::uint32_t>(best);
      INFO("round " << round << " node " << v);
      REQUIRE(tree.idom[v] == expected);
    }
  }
}

TEST_CASE("footprint invariants on the running kernel's BTF", "[footprint]") {
  const std::string path = btfslim::test::running_vmlinux();
  if (path.empty()) return btfslim::test::skip("no /sys/kernel/btf/vmlinux on this machine");
  const auto btf = load_btf(path);
  const Footprint fp(*btf);
  const auto& f = fp.file;
  CHECK(f.header_bytes + f.type_bytes + f.string_bytes + f.gap_bytes == f.file_bytes);
  CHECK(f.referenced_string_bytes + f.unreferenced_string_bytes == f.string_bytes);
  const double own_total = std::accumulate(fp.own.begin(), fp.own.end(), 0.0);
  CHECK(own_total == Approx(static_cast<double>(f.type_bytes + f.referenced_string_bytes)).epsilon(1e-9));
  double root_children = 0;
  std::size_t below_own = 0;
  for (std::size_t v = 0; v < fp.own.size(); ++v) {
    if (fp.retained[v] + 1e-6 < fp.own[v]) ++below_own;
    if (fp.dominators.idom[v] == kVirtualRoot) root_children += fp.retained[v];
  }
  CHECK(below_own == 0);
  CHECK(root_children == Approx(own_total).epsilon(1e-9));
  // Every node appears once in preorder, after its dominator.
  std::vector<std::uint32_t> position(fp.own.size());
  for (std::size_t i = 0; i < fp.dominators.preorder.size(); ++i) position[fp.dominators.preorder[i]] = i;
  std::size_t misplaced = 0;
  for (std::size_t v = 0; v < fp.own.size(); ++v)
    if (const auto d = fp.dominators.idom[v]; d != kVirtualRoot && position[d] >= position[v]) ++misplaced;
  CHECK(misplaced == 0);

  // The closures of the 40 largest types by retained bytes, as the table takes them (together, so that
  // most reuse a kept closure: they share the kernel's web of structs), equal each one walked alone,
  // and the count equals a plain search's.
  // Over 1,024 nodes, closure_sizes keeps no closures: the 2,000 largest give the same figures again.
  std::vector<std::uint32_t> rows(fp.own.size());
  std::iota(rows.begin(), rows.end(), 0u);
  std::partial_sort(rows.begin(), rows.begin() + 2000, rows.end(),
                    [&](std::uint32_t a, std::uint32_t b) { return fp.retained[a] > fp.retained[b]; });
  rows.resize(2000);
  const std::vector<Closure> many = closure_sizes(fp.graph, rows, fp.own);
  rows.resize(40);
  const std::vector<Closure> together = closure_sizes(fp.graph, rows, fp.own);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("node " << rows[i]);
    const Closure alone = closure_size(fp.graph, rows[i], fp.own);
    CHECK(together[i].bytes == alone.bytes);
    CHECK(together[i].types == alone.types);
    CHECK(many[i].bytes == alone.bytes);
    CHECK(many[i].types == alone.types);
    std::vector<bool> seen(fp.own.size());
    std::vector<std::uint32_t> work{rows[i]};
    seen[rows[i]] = true;
    std::uint32_t count = 0;
    while (!work.empty()) {
      const std::uint32_t v = work.back();
      work.pop_back();
      ++count;
      for (const std::uint32_t w : fp.graph.successors(v))
        if (!seen[w]) seen[w] = true, work.push_back(w);
    }
    CHECK(alone.types == count);
    double bytes = 0;
    for (std::size_t v = 0; v < seen.size(); ++v)
      if (seen[v]) bytes += fp.own[v];
    CHECK(alone.bytes == Approx(bytes).margin(1e-3));  // each own rounded to 2^-24 of a byte
  }
}

// The reference graph is built on a second CPU beside the string shares (Beside), or after them on this
// one where there is no other: the same figures either way.
TEST_CASE("the footprint of the running kernel's BTF on one CPU is the one on two", "[footprint]") {
  const std::string path = btfslim::test::running_vmlinux();
  if (path.empty()) return btfslim::test::skip("no /sys/kernel/btf/vmlinux on this machine");
  const auto btf = load_btf(path);
  const Footprint both(*btf);
  std::optional<Footprint> one;
  btfslim::test::on_one_cpu([&] { one.emplace(*btf); });
  auto same = [](const auto& a, const auto& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); };
  CHECK(same(both.own, one->own));
  CHECK(same(both.retained, one->retained));
  CHECK(same(both.strings.per_type, one->strings.per_type));
  CHECK(same(both.dominators.idom, one->dominators.idom));
  CHECK(same(both.dominators.preorder, one->dominators.preorder));
  CHECK(both.graph.edge_count() == one->graph.edge_count());
  CHECK(both.file.referenced_string_bytes == one->file.referenced_string_bytes);
  for (unsigned k = 0; k <= kMaxKind; ++k) CHECK(both.file.kinds[k].string_bytes == one->file.kinds[k].string_bytes);
}

TEST_CASE("Beside: work on another CPU, what it throws rethrown by wait, and on one CPU done at wait", "[footprint]") {
  const std::thread::id here = std::this_thread::get_id();
  std::thread::id ran_on;
  {
    Beside b([&] { ran_on = std::this_thread::get_id(); });
    b.wait();
  }
  if (available_cpus() > 1) CHECK(ran_on != here);
  Beside failing([] { throw std::runtime_error("from beside"); });
  CHECK_THROWS_WITH(failing.wait(), "from beside");
  CHECK_NOTHROW(failing.wait());  // once
  btfslim::test::on_one_cpu([&] {
    int done = 0;
    Beside b([&] {
      ran_on = std::this_thread::get_id();
      ++done;
    });
    CHECK(done == 0);
    b.wait();
    CHECK(done == 1);
    CHECK(ran_on == here);
  });
  {
    Beside unwaited([] { throw std::runtime_error("nobody waits"); });  // the destructor waits and swallows it
  }
}

TEST_CASE("measure --all --format json lists every type with retained >= own", "[footprint]") {
  const std::string path = btfslim::test::running_vmlinux();
  if (path.empty()) return btfslim::test::skip("no /sys/kernel/btf/vmlinux on this machine");
  const auto r = btfslim::test::btfslim({"measure", "--all", "--format", "json", path});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["types"].size() == j["type_count"].get<std::size_t>());
  double own = 0;
  for (const auto& t : j["types"]) {
    own += t["own_bytes"].get<double>();
    REQUIRE(t["retained_bytes"].get<double>() + 1e-6 >= t["own_bytes"].get<double>());
  }
  const double expected = j["type_bytes"].get<double>() + j["referenced_string_bytes"].get<double>();
  CHECK(own == Approx(expected).epsilon(1e-9));
  CHECK(j["kernel_memory"]["total_bytes"].get<std::uint64_t>() ==
        j["file_bytes"].get<std::uint64_t>() + j["kernel_memory"]["type_array_bytes"].get<std::uint64_t>());
}
