// Type-by-type comparison of two BTFs (the model is described in diff.h).
//
// Every type gets a key node in one table shared by both sides, so that "the same type" is the same
// node index on both and the comparison is a walk over node indices. A node is a few words - kind, a
// name pointing into the BTF's strings, a parent node, an ordinal - hash-consed: the table holds each
// distinct node once, compared field by field (no hashing of whole keys, so no collisions to worry
// about). No string is built for a key: named types, most of a BTF, are one lookup of (kind, name);
// the spelt-out name is made only for the rows printed.
//
// Keys are computed in two phases per side:
// - phase 1, the key proper: named types by (kind, name); pointers, qualifiers, arrays, type tags and
//   prototypes from the keys of what they refer to (recursively, memoized); anonymous structs and
//   unions from where they are used, which needs the reverse edges, built only for them and for the
//   pointers, qualifiers and arrays that lead to them;
// - phase 2, in id order: the second type with a key already taken on its side becomes `key#2`, etc.
// Recursion is depth-limited and a type met again while its own key is being computed (a cycle, which
// only crafted BTF has) gets the kind's anonymous key, so that any input ends in bounded time.
#include "btfslim/diff.h"
#include "btfslim/escape.h"
#include "btfslim/footprint.h"
#include "btfslim/memory.h"
#include "btfslim/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <unordered_map>
#include <optional>
#include <span>
#include <string_view>

namespace btfslim {
namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
constexpr int kMaxDepth = 200;

// How a node is keyed (and spelt).
enum class Role : std::uint8_t { Void, Named, Wrapper, Proto, Member, EnumFirst, Tag, Unkeyed, Dup };

// 32 bytes: the name is a pointer and a length rather than a string_view, to keep the table small.
struct KeyNode {
  const char* name_ptr = "";
  std::uint32_t name_len = 0;
  std::uint32_t parent = kNone;  // Wrapper: target; Proto: return; Member: owner; Tag: target; Dup: base
  std::uint32_t aux = kNone;     // Array: index type
  std::uint32_t extra = 0;       // Array: nelems; Member: unnamed ordinal; Tag: component + 1; Dup: ordinal; Fwd: kflag
  std::uint32_t params_begin = 0;
  std::uint16_t params_count = 0;
  Kind kind = Kind::Unknown;
  Role role = Role::Void;

  std::string_view name() const { return {name_ptr, name_len}; }
  void set_name(std::string_view s) {
    name_ptr = s.data();
    name_len = static_cast<std::uint32_t>(s.size());
  }
};
static_assert(sizeof(KeyNode) == 32);

struct ParamKey {
  std::string_view name;
  std::uint32_t type;
  bool operator==(const ParamKey&) const = default;
};

// Prototypes' parameters, one run per node, in the huge-page pool like the rest of the table.
class ParamArena {
 public:
  std::size_t size() const { return size_; }
  const ParamKey* data() const { return items_.data(); }
  void push_back(const ParamKey& p) {
    if (size_ == items_.size()) {
      auto bigger = ZeroedArray<ParamKey>::for_overwrite(std::max<std::size_t>(4096, 2 * items_.size()));
      std::copy(items_.begin(), items_.end(), bigger.begin());
      items_ = std::move(bigger);
    }
    items_[size_++] = p;
  }
  void truncate(std::size_t n) { size_ = n; }

 private:
  ZeroedArray<ParamKey> items_;
  std::size_t size_ = 0;
};

// The hash-consing table: open addressing, linear probing. A slot holds a node's index + 1 and 32 bits
// of its hash, so that a probe looks at a node only when the hash matches. The arrays come from the
// huge-page pool (memory.h): sized for the expected node count up front, touched without page faults.
class KeyTable {
 public:
  explicit KeyTable(std::size_t expected) : nodes_(ZeroedArray<KeyNode>::for_overwrite(expected + 16)) {
    std::size_t cap = 64;
    while (cap * 7 < expected * 10) cap *= 2;
    slots_ = ZeroedArray<std::uint64_t>(cap);
    mask_ = cap - 1;
  }

  // The node for `n` whose parameters are params_[pending_begin, end): existing or new.
  std::uint32_t intern(KeyNode n, std::uint32_t pending_begin) {
    n.params_begin = pending_begin;
    n.params_count = static_cast<std::uint16_t>(params_.size() - pending_begin);
    return intern_hashed(n, hash(n));
  }
  std::uint32_t intern(const KeyNode& n) { return intern(n, static_cast<std::uint32_t>(params_.size())); }

  // For a batch of nodes without parameters: hash them, prefetch their first slot, then (once those
  // have arrived) the node a slot points at, then intern them; the loads of the batch overlap instead
  // of waiting one by one (a random slot of a vmlinux-sized table misses every cache).
  std::uint64_t hash_and_prefetch(const KeyNode& n) const {
    const std::uint64_t h = hash(n);
    __builtin_prefetch(&slots_[h & mask_]);
    return h;
  }
  void prefetch_node(std::uint64_t h) const {
    const std::uint64_t slot = slots_[h & mask_];
    if (slot != 0) __builtin_prefetch(&nodes_[static_cast<std::uint32_t>(slot) - 1]);
  }

  std::uint32_t intern_hashed(const KeyNode& n, std::uint64_t h) {
    const std::uint64_t tag = h >> 32 << 32;
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const std::uint64_t slot = slots_[i];
      if (slot == 0) {
        const auto index = static_cast<std::uint32_t>(size_);
        if (size_ == nodes_.size()) {
          auto bigger = ZeroedArray<KeyNode>::for_overwrite(nodes_.size() * 2);
          std::copy(nodes_.begin(), nodes_.end(), bigger.begin());
          nodes_ = std::move(bigger);
        }
        nodes_[size_++] = n;
        slots_[i] = tag | (std::uint64_t{index} + 1);
        if (size_ * 10 > slots_.size() * 7) grow();
        return index;
      }
      if ((slot >> 32 << 32) == tag) {
        const auto at = static_cast<std::uint32_t>(slot) - 1;
        if (equal(nodes_[at], n)) {
          if (n.params_count) params_.truncate(n.params_begin);  // drop the pending copy
          return at;
        }
      }
    }
  }
  // The node equal to `n` (which has no parameters), or kNone.
  std::uint32_t find(const KeyNode& n) const {
    const std::uint64_t h = hash(n);
    const std::uint64_t tag = h >> 32 << 32;
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const std::uint64_t slot = slots_[i];
      if (slot == 0) return kNone;
      if ((slot >> 32 << 32) == tag && equal(nodes_[static_cast<std::uint32_t>(slot) - 1], n))
        return static_cast<std::uint32_t>(slot) - 1;
    }
  }
  ParamArena& params() { return params_; }
  std::span<const ParamKey> params_of(const KeyNode& n) const { return {params_.data() + n.params_begin, n.params_count}; }
  const KeyNode& operator[](std::uint32_t i) const { return nodes_[i]; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(size_); }

 private:
  std::uint64_t hash(const KeyNode& n) const {
    std::uint64_t h = std::hash<std::string_view>{}(n.name());
    auto mix = [&h](std::uint64_t v) {
      h = (h ^ v) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 29;
    };
    mix(static_cast<std::uint64_t>(n.kind) | static_cast<std::uint64_t>(n.role) << 8 | std::uint64_t{n.extra} << 16);
    mix(std::uint64_t{n.parent} | std::uint64_t{n.aux} << 32);
    for (const ParamKey& p : params_of(n)) mix(std::uint64_t{p.type} ^ std::hash<std::string_view>{}(p.name));
    return h;
  }
  bool equal(const KeyNode& a, const KeyNode& b) const {
    if (a.kind != b.kind || a.role != b.role || a.parent != b.parent || a.aux != b.aux || a.extra != b.extra ||
        a.params_count != b.params_count || a.name() != b.name())
      return false;
    const auto pa = params_of(a), pb = params_of(b);
    return std::equal(pa.begin(), pa.end(), pb.begin());
  }
  void grow() {
    ZeroedArray<std::uint64_t> old = std::move(slots_);
    slots_ = ZeroedArray<std::uint64_t>(old.size() * 2);
    mask_ = slots_.size() - 1;
    for (const std::uint64_t slot : old) {
      if (slot == 0) continue;
      std::size_t i = hash(nodes_[static_cast<std::uint32_t>(slot) - 1]) & mask_;
      while (slots_[i] != 0) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  ZeroedArray<KeyNode> nodes_;
  std::size_t size_ = 0;
  ParamArena params_;
  ZeroedArray<std::uint64_t> slots_;
  std::size_t mask_ = 0;
};

bool is_wrapper(Kind k) {
  return k == Kind::Ptr || k == Kind::Const || k == Kind::Volatile || k == Kind::Restrict || k == Kind::TypeTag ||
         k == Kind::Array;
}
bool is_composite(Kind k) { return k == Kind::Struct || k == Kind::Union; }

// A wrapper's one target (an array's element type).
TypeId wrapped(const TypeView& t) { return t.kind() == Kind::Array ? t.array().type : t.ref(); }

// One input's keys.
class Side {
 public:
  Side(const Btf& btf, KeyTable& table, std::uint32_t void_node)
      : btf_(btf), table_(table), void_node_(void_node), key_(btf.end_id()) {
    build_users();
  }

  // Phase 1: the key of every type of the BTF, own or base (own types may refer to the base's).
  // Named types other than type tags and decl tags are keyed by kind and name alone, in batches (see
  // KeyTable::hash_and_prefetch); the rest one by one, recursively.
  void key_all() {
    constexpr TypeId kBatch = 64;
    KeyNode nodes[kBatch];
    std::uint64_t hashes[kBatch];
    bool simple[kBatch];
    const TypeId end = btf_.end_id();
    for (TypeId start = 1; start < end; start += kBatch) {
      const TypeId n = std::min(kBatch, end - start);
      for (TypeId i = 0; i < n; ++i) {
        simple[i] = named_key(btf_.type(start + i), nodes[i]);
        if (simple[i]) hashes[i] = table_.hash_and_prefetch(nodes[i]);
      }
      for (TypeId i = 0; i < n; ++i)
        if (simple[i]) table_.prefetch_node(hashes[i]);
      for (TypeId i = 0; i < n; ++i) {
        const TypeId id = start + i;
        if (!simple[i])
          key_of(id, 0);
        else if (key_[id] == 0)
          key_[id] = table_.intern_hashed(nodes[i], hashes[i]);
      }
    }
    // Only keying anonymous structs and unions reads the users.
    users_begin_ = {};
    users_ = {};
  }
  std::uint32_t key(TypeId id) const { return id == 0 ? void_node_ : key_[id]; }

 private:
  // Users of anonymous structs and unions, and of the pointers, qualifiers and arrays that lead to one:
  // (user, member index or kNone), grouped by the type used.
  struct Use {
    TypeId user;
    std::uint32_t slot;
  };

  void build_users() {
    const TypeId end = btf_.end_id();
    // leads[id]: 1 when the type is an anonymous struct/union or a wrapper chain ending at one.
    ZeroedArray<std::uint8_t> leads(end);
    std::vector<TypeId> chain;
    for (TypeId id = 1; id < end; ++id) {
      if (leads[id]) continue;
      chain.clear();
      TypeId at = id;
      std::uint8_t verdict = 2;  // 2: no
      for (int steps = 0; at != 0 && steps < kMaxDepth; ++steps) {
        if (leads[at]) {
          verdict = leads[at];
          break;
        }
        const TypeView t = btf_.type(at);
        if (is_composite(t.kind()) && t.name_off() == 0) {
          verdict = 1;
          break;
        }
        if (!is_wrapper(t.kind())) break;
        chain.push_back(at);
        leads[at] = 2;  // provisional: a cycle back here ends as "no"
        at = wrapped(t);
      }
      if (at != 0 && verdict == 1) leads[at] = 1;
      for (TypeId c : chain) leads[c] = verdict;
      if (leads[id] == 0) leads[id] = 2;
    }
    auto interesting = [&](TypeId id) { return id != 0 && leads[id] == 1; };

    std::vector<std::pair<TypeId, Use>> edges;
    for (TypeId id = 1; id < end; ++id) {
      const TypeView t = btf_.type(id);
      switch (t.kind()) {
        case Kind::Struct:
        case Kind::Union:
          for (unsigned i = 0; i < t.vlen(); ++i)
            if (const TypeId m = t.member(i).type; interesting(m)) edges.push_back({m, {id, i}});
          break;
        case Kind::Typedef:
        case Kind::Var:
        case Kind::Ptr:
        case Kind::Const:
        case Kind::Volatile:
        case Kind::Restrict:
        case Kind::TypeTag:
        case Kind::Array:
          if (const TypeId r = wrapped(t); interesting(r)) edges.push_back({r, {id, kNone}});
          break;
        default:
          break;
      }
    }
    users_begin_ = ZeroedArray<std::uint32_t>(std::size_t{end} + 1);
    for (const auto& e : edges) ++users_begin_[e.first + 1];
    for (TypeId id = 0; id < end; ++id) users_begin_[id + 1] += users_begin_[id];
    users_.resize(edges.size());
    // Filled backwards from each group's end, which leaves users_begin_ at the starts.
    for (TypeId id = 0; id < end; ++id) users_begin_[id] = users_begin_[id + 1];
    for (auto e = edges.rbegin(); e != edges.rend(); ++e) users_[--users_begin_[e->first]] = e->second;
  }

  std::span<const Use> users(TypeId id) const {
    return {users_.data() + users_begin_[id], users_.data() + users_begin_[id + 1]};
  }

  std::uint32_t unkeyed(Kind kind) {
    KeyNode n;
    n.kind = kind;
    n.role = Role::Unkeyed;
    return table_.intern(n);
  }

  static constexpr std::uint32_t kBusy = kNone;

  std::uint32_t key_of(TypeId id, int depth) {
    if (id == 0) return void_node_;
    if (key_[id] != 0 && key_[id] != kBusy) return key_[id];
    const TypeView t = btf_.type(id);
    if (key_[id] == kBusy || depth > kMaxDepth) return unkeyed(t.kind());
    key_[id] = kBusy;
    const std::uint32_t k = compute(id, t, depth);
    key_[id] = k;
    return k;
  }

  // The key of a type already keyed, without recursing (for the second loop over a prototype's
  // parameters, whose keys the first loop computed).
  std::uint32_t known(TypeId id) {
    if (id == 0) return void_node_;
    return key_[id] != 0 && key_[id] != kBusy ? key_[id] : unkeyed(btf_.type(id).kind());
  }

  // The key of a type keyed by kind and name alone, in `n`; false for the others.
  bool named_key(const TypeView& t, KeyNode& n) const {
    switch (t.kind()) {
      case Kind::Ptr:
      case Kind::Const:
      case Kind::Volatile:
      case Kind::Restrict:
      case Kind::TypeTag:
      case Kind::Array:
      case Kind::FuncProto:
      case Kind::DeclTag:
        return false;
      default:
        break;
    }
    if (t.name_off() == 0) return false;
    n = KeyNode();
    n.kind = t.kind();
    n.role = Role::Named;
    n.set_name(btf_.str(t.name_off()));
    if (t.kind() == Kind::Fwd) n.extra = t.kflag();
    return true;
  }

  std::uint32_t compute(TypeId id, const TypeView& t, int depth) {
    KeyNode n;
    n.kind = t.kind();
    switch (t.kind()) {
      case Kind::Ptr:
      case Kind::Const:
      case Kind::Volatile:
      case Kind::Restrict:
      case Kind::TypeTag:
        n.role = Role::Wrapper;
        if (t.name_off()) n.set_name(btf_.str(t.name_off()));
        n.parent = key_of(t.ref(), depth + 1);
        return table_.intern(n);
      case Kind::Array: {
        const ArrayInfo a = t.array();
        n.role = Role::Wrapper;
        n.parent = key_of(a.type, depth + 1);
        n.aux = key_of(a.index_type, depth + 1);
        n.extra = a.nelems;
        return table_.intern(n);
      }
      case Kind::FuncProto: {
        n.role = Role::Proto;
        n.parent = key_of(t.ref(), depth + 1);
        for (unsigned i = 0; i < t.vlen(); ++i) key_of(t.param(i).type, depth + 1);
        auto& params = table_.params();
        const auto begin = static_cast<std::uint32_t>(params.size());
        for (unsigned i = 0; i < t.vlen(); ++i) {
          const Param p = t.param(i);
          params.push_back({p.name_off ? btf_.str(p.name_off) : std::string_view(), known(p.type)});
        }
        return table_.intern(n, begin);
      }
      case Kind::DeclTag:
        n.role = Role::Tag;
        n.set_name(btf_.str(t.name_off()));
        n.parent = key_of(t.ref(), depth + 1);
        n.extra = static_cast<std::uint32_t>(t.decl_tag_component_idx()) + 1;  // -1 (whole) is 0; unsigned: 0x7fffffff + 1 must not overflow
        return table_.intern(n);
      case Kind::Enum:
      case Kind::Enum64:
        if (t.name_off() == 0 && t.vlen() > 0) {
          n.role = Role::EnumFirst;
          const std::uint32_t first = t.kind() == Kind::Enum ? t.enum_value(0).name_off : t.enum64_value(0).name_off;
          n.set_name(btf_.str(first));
          return table_.intern(n);
        }
        break;
      default:
        break;
    }
    if (named_key(t, n)) return table_.intern(n);
    if (is_composite(t.kind()) || t.kind() == Kind::Enum || t.kind() == Kind::Enum64)
      if (const std::uint32_t k = by_use(id, t.kind(), depth); k != kNone) return k;
    return unkeyed(t.kind());
  }

  // An anonymous struct or union keyed by the smallest of the places it is used, or kNone.
  std::uint32_t by_use(TypeId id, Kind kind, int depth);

  const Btf& btf_;
  KeyTable& table_;
  std::uint32_t void_node_;
  // Per type id: 0 not keyed yet (node 0 is void, no type's key), kBusy while being keyed, or the node.
  ZeroedArray<std::uint32_t> key_;
  ZeroedArray<std::uint32_t> users_begin_;
  std::vector<Use> users_;
};


// A total order on nodes that does not depend on the order they were interned in.
int compare_nodes(const KeyTable& table, std::uint32_t a, std::uint32_t b, int depth = 0) {
  if (a == b) return 0;
  if (a == kNone || b == kNone) return a == kNone ? -1 : 1;
  if (depth > 4 * kMaxDepth) return a < b ? -1 : 1;
  const KeyNode& x = table[a];
  const KeyNode& y = table[b];
  if (x.role != y.role) return x.role < y.role ? -1 : 1;
  if (x.kind != y.kind) return x.kind < y.kind ? -1 : 1;
  if (const int c = x.name().compare(y.name())) return c;
  if (x.extra != y.extra) return x.extra < y.extra ? -1 : 1;
  if (const int c = compare_nodes(table, x.parent, y.parent, depth + 1)) return c;
  if (const int c = compare_nodes(table, x.aux, y.aux, depth + 1)) return c;
  const auto px = table.params_of(x), py = table.params_of(y);
  for (std::size_t i = 0; i < px.size() && i < py.size(); ++i) {
    if (const int c = px[i].name.compare(py[i].name)) return c;
    if (const int c = compare_nodes(table, px[i].type, py[i].type, depth + 1)) return c;
  }
  return px.size() == py.size() ? 0 : px.size() < py.size() ? -1 : 1;
}

// Among unnamed members of `t`, the 1-based position of member `slot` counting only those whose type
// has the same kind (the second unnamed union is #2 however many unnamed structs come before it).
std::uint32_t unnamed_ordinal(const Btf& btf, const TypeView& t, unsigned slot) {
  auto kind_of = [&btf](TypeId id) { return id == 0 ? Kind::Unknown : btf.type(id).kind(); };
  const Kind kind = kind_of(t.member(slot).type);
  std::uint32_t n = 0;
  for (unsigned i = 0; i <= slot; ++i) {
    const Member m = t.member(i);
    if (m.name_off == 0 && kind_of(m.type) == kind) ++n;
  }
  return n;
}

std::uint32_t Side::by_use(TypeId id, Kind kind, int depth) {
  KeyNode best;
  bool have = false;
  auto consider = [&](const KeyNode& c) {
    if (have) {
      int order = compare_nodes(table_, c.parent, best.parent);
      if (order == 0) order = c.name().compare(best.name());
      if (order == 0) order = c.extra < best.extra ? -1 : c.extra > best.extra ? 1 : 0;
      if (order >= 0) return;
    }
    best = c;
    have = true;
  };
  // Through pointers, qualifiers and arrays to the members, typedefs and variables that hold them.
  std::vector<TypeId> todo{id};
  std::vector<TypeId> seen{id};
  while (!todo.empty() && seen.size() <= kMaxDepth) {
    const TypeId at = todo.back();
    todo.pop_back();
    for (const Use& use : users(at)) {
      const TypeView u = btf_.type(use.user);
      if (is_wrapper(u.kind())) {
        if (std::find(seen.begin(), seen.end(), use.user) == seen.end()) {
          seen.push_back(use.user);
          todo.push_back(use.user);
        }
        continue;
      }
      KeyNode c;
      c.kind = kind;
      c.role = Role::Member;
      c.parent = key_of(use.user, depth + 1);
      if (use.slot != kNone) {
        const Member m = u.member(use.slot);
        if (m.name_off != 0)
          c.set_name(btf_.str(m.name_off));
        else
          c.extra = unnamed_ordinal(btf_, u, use.slot);
      }
      consider(c);
    }
  }
  return have ? table_.intern(best) : kNone;
}

// Spelling a key out, only for the rows printed.
std::string_view kind_word(Kind k) {
  switch (k) {
    case Kind::Int: return "int";
    case Kind::Ptr: return "ptr";
    case Kind::Array: return "array";
    case Kind::Struct: return "struct";
    case Kind::Union: return "union";
    case Kind::Enum: return "enum";
    case Kind::Fwd: return "fwd";
    case Kind::Typedef: return "typedef";
    case Kind::Volatile: return "volatile";
    case Kind::Const: return "const";
    case Kind::Restrict: return "restrict";
    case Kind::Func: return "func";
    case Kind::FuncProto: return "func_proto";
    case Kind::Var: return "var";
    case Kind::Datasec: return "datasec";
    case Kind::Float: return "float";
    case Kind::DeclTag: return "decl_tag";
    case Kind::TypeTag: return "type_tag";
    case Kind::Enum64: return "enum64";
    default: return "unknown";
  }
}

class Speller {
 public:
  // `c_names`: as C names a member's type (`u32`, `struct foo *`, `enum e`), not as a key
  // (`typedef u32`, `enum64 e`).
  explicit Speller(const KeyTable& table, bool c_names = false) : table_(table), c_names_(c_names) {}
  std::string operator()(std::uint32_t node) {
    std::string out;
    spell(node, out, 0);
    return out;
  }

 private:
  bool is_ptr(std::uint32_t node) const {
    return node != kNone && table_[node].role == Role::Wrapper && table_[node].kind == Kind::Ptr;
  }

  void proto(const KeyNode& n, std::string_view inner, std::string& out, int depth) {
    spell(n.parent, out, depth + 1);
    out += ' ';
    if (!inner.empty()) {
      out += inner;
    }
    out += '(';
    const auto params = table_.params_of(n);
    if (params.empty()) out += "void";
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (i) out += ", ";
      if (table_[params[i].type].role == Role::Void) {
        out += "...";
        continue;
      }
      spell(params[i].type, out, depth + 1);
      if (!params[i].name.empty()) {
        if (out.back() != '*') out += ' ';
        append_escaped(out, params[i].name);
      }
    }
    out += ')';
  }

  void spell(std::uint32_t node, std::string& out, int depth) {
    if (node == kNone || depth > 4 * kMaxDepth) {
      out += "...";
      return;
    }
    const KeyNode& n = table_[node];
    switch (n.role) {
      case Role::Void:
        out += "void";
        return;
      case Role::Named:
        if (c_names_) {
          if (n.kind == Kind::Fwd)
            out += n.extra ? "union " : "struct ";
          else if (n.kind == Kind::Struct || n.kind == Kind::Union || n.kind == Kind::Enum)
            (out += kind_word(n.kind)) += ' ';
          else if (n.kind == Kind::Enum64)
            out += "enum ";
        } else if (n.kind != Kind::Int && n.kind != Kind::Float) {
          out += kind_word(n.kind);
          out += ' ';
          if (n.kind == Kind::Fwd) out += n.extra ? "union " : "struct ";
        }
        append_escaped(out, n.name());
        return;
      case Role::Wrapper:
        if (n.kind == Kind::Ptr && n.parent != kNone && table_[n.parent].role == Role::Proto) {
          proto(table_[n.parent], "(*)", out, depth);
          return;
        }
        if (n.kind == Kind::Array) {
          spell(n.parent, out, depth + 1);
          out += fmt::format("[{}]", n.extra);
          return;
        }
        if (n.kind == Kind::Ptr) {
          spell(n.parent, out, depth + 1);
          out += out.empty() || out.back() == '*' ? "*" : " *";
          return;
        }
        {
          const std::string q = n.kind == Kind::TypeTag ? fmt::format("__tag({})", esc(n.name())) : std::string(kind_word(n.kind));
          if (is_ptr(n.parent)) {
            spell(n.parent, out, depth + 1);
            out += ' ';
            out += q;
          } else if (n.parent != kNone && (table_[n.parent].role == Role::Proto || table_[n.parent].kind == Kind::Array)) {
            // A qualified array or prototype: C would read "const int[4]" as an array of const int.
            out += q;
            out += " (";
            spell(n.parent, out, depth + 1);
            out += ')';
          } else {
            out += q;
            out += ' ';
            spell(n.parent, out, depth + 1);
          }
        }
        return;
      case Role::Proto:
        proto(n, "", out, depth);
        return;
      case Role::Member:
        spell(n.parent, out, depth + 1);
        out += "::(anon ";
        out += kind_word(n.kind);
        if (!n.name().empty()) {
          out += ' ';
          append_escaped(out, n.name());
          out += ')';
        } else if (n.extra) {
          out += fmt::format(")#{}", n.extra);
        } else {
          out += ')';
        }
        return;
      case Role::EnumFirst:
        out += kind_word(n.kind);
        out += " {";
        append_escaped(out, n.name());
        out += ",...}";
        return;
      case Role::Tag:
        out += "decl_tag ";
        append_escaped(out, n.name());
        out += " on ";
        spell(n.parent, out, depth + 1);
        if (n.extra) out += fmt::format(" (component {})", n.extra - 1);
        return;
      case Role::Unkeyed:
        out += "(anon ";
        out += kind_word(n.kind);
        out += ')';
        return;
      case Role::Dup:
        spell(n.parent, out, depth + 1);
        out += fmt::format("#{}", n.extra);
        return;
    }
  }

  const KeyTable& table_;
  bool c_names_;
};

// A type's side: its BTF and its keys.
struct SideRef {
  const Btf& btf;
  const Side& keys;
};

bool has_layout(Kind k) {
  switch (k) {
    case Kind::Int:
    case Kind::Struct:
    case Kind::Union:
    case Kind::Enum:
    case Kind::Enum64:
    case Kind::Fwd:
    case Kind::Typedef:
    case Kind::Func:
    case Kind::Var:
    case Kind::Float:
    case Kind::Datasec:
      return true;
    default:
      return false;
  }
}
bool is_enum(Kind k) { return k == Kind::Enum || k == Kind::Enum64; }
bool has_size(Kind k) {
  return is_composite(k) || is_enum(k) || k == Kind::Int || k == Kind::Float || k == Kind::Datasec;
}

// Comparing the layouts of two types with the same key: what `diff --by type` and `--by member` show.
// Members are matched by name (unnamed ones as "(anon union)#N", counted per kind), enumerators by name,
// parameters by position. A named member only the old side has and one only the new side has, at the
// same bit offset, of the same bitfield width and type, are one member renamed (paired in member
// order); a member's type is compared by key, so that a renumbered type is no change,
// and spelt as C spells it only when it differs.
class LayoutComparer {
 public:
  LayoutComparer(const KeyTable& table, const SideRef& a, const SideRef& b) : c_(table, true), a_(a), b_(b) {}

  // Fills `out.changes` and `out.summary`; false when the layouts are the same.
  bool compare(TypeId ida, TypeId idb, LayoutChange& out) {
    const TypeView ta = a_.btf.type(ida), tb = b_.btf.type(idb);
    const Kind ka = ta.kind(), kb = tb.kind();
    bool changed = ka != kb;
    if (has_size(ka)) {
      out.old_size = ta.size();
      out.new_size = tb.size();
      changed |= ta.size() != tb.size();
    }
    if (is_composite(ka))
      members(ta, tb, out.changes);
    else if (is_enum(ka))
      enumerators(ta, tb, out.changes);
    else if (ka == Kind::Typedef || ka == Kind::Var)
      target(ta.ref(), tb.ref(), "", out.changes);
    else if (ka == Kind::Func)
      function(ta.ref(), tb.ref(), out.changes);
    else if (ka == Kind::Int && (ta.int_encoding() != tb.int_encoding() || ta.int_bits() != tb.int_bits())) {
      changed = true;
      out.old_encoding = int_encoding(ta);
      out.new_encoding = int_encoding(tb);
    }
    changed |= !out.changes.empty();
    if (changed) out.summary = summary(ka, kb, out);
    return changed;
  }

 private:
  struct MemberFacts {
    std::string name;
    std::uint32_t node;
    std::uint32_t bit_offset;
    std::uint32_t bits;
    TypeId type;
    bool named;
  };

  static std::vector<MemberFacts> member_list(const SideRef& s, const TypeView& t) {
    std::vector<MemberFacts> out;
    out.reserve(t.vlen());
    for (unsigned i = 0; i < t.vlen(); ++i) {
      const Member m = t.member(i);
      std::string name;
      if (m.name_off != 0)
        name = escape(s.btf.str(m.name_off));
      else
        name = fmt::format("(anon {})#{}", m.type ? kind_word(s.btf.type(m.type).kind()) : "void",
                           unnamed_ordinal(s.btf, t, i));
      out.push_back({std::move(name), s.keys.key(m.type), t.member_bit_offset(m), t.member_bitfield_size(m), m.type,
                     m.name_off != 0});
    }
    return out;
  }

  void members(const TypeView& ta, const TypeView& tb, std::vector<MemberChange>& out) {
    // Most members of most types are as they were: the same names in the same order, the same places.
    if (ta.vlen() == tb.vlen()) {
      bool same = true;
      for (unsigned i = 0; i < ta.vlen() && same; ++i) {
        const Member ma = ta.member(i), mb = tb.member(i);
        same = ta.member_bit_offset(ma) == tb.member_bit_offset(mb) &&
               ta.member_bitfield_size(ma) == tb.member_bitfield_size(mb) &&
               a_.keys.key(ma.type) == b_.keys.key(mb.type) &&
               (ma.name_off == 0) == (mb.name_off == 0) &&
               (ma.name_off == 0 || a_.btf.str(ma.name_off) == b_.btf.str(mb.name_off));
      }
      if (same) return;
    }
    const auto before = member_list(a_, ta);
    const auto after = member_list(b_, tb);
    std::unordered_map<std::string_view, const MemberFacts*> old_by_name, new_by_name;
    for (const MemberFacts& m : before) old_by_name.emplace(m.name, &m);
    for (const MemberFacts& m : after) new_by_name.emplace(m.name, &m);
    // Renamed: per member only the new side has, the old-only member it pairs with, if any.
    std::vector<const MemberFacts*> renamed_from(after.size(), nullptr);
    std::vector<bool> renamed(before.size(), false);
    for (std::size_t i = 0; i < before.size(); ++i) {
      const MemberFacts& o = before[i];
      if (!o.named || new_by_name.count(o.name)) continue;
      for (std::size_t k = 0; k < after.size() && !renamed[i]; ++k) {
        const MemberFacts& m = after[k];
        if (renamed_from[k] || !m.named || old_by_name.count(m.name) || m.bit_offset != o.bit_offset ||
            m.bits != o.bits || m.node != o.node)
          continue;
        renamed_from[k] = &o;
        renamed[i] = true;
      }
    }
    for (std::size_t i = 0; i < before.size(); ++i) {
      const MemberFacts& m = before[i];
      if (renamed[i] || new_by_name.count(m.name)) continue;
      MemberChange c;
      c.change = Change::Removed;
      c.member = m.name;
      c.old_type = c_(m.node);
      c.old_bit_offset = m.bit_offset;
      c.old_bits = m.bits;
      out.push_back(std::move(c));
    }
    for (std::size_t k = 0; k < after.size(); ++k) {
      const MemberFacts& m = after[k];
      const auto was = old_by_name.find(m.name);
      MemberChange c;
      c.member = m.name;
      c.new_type = c_(m.node);
      c.new_bit_offset = m.bit_offset;
      c.new_bits = m.bits;
      if (const MemberFacts* o = renamed_from[k]) {
        c.change = Change::Renamed;
        c.old_member = o->name;
        c.old_type = c.new_type;
        c.old_bit_offset = o->bit_offset;
        c.old_bits = o->bits;
        out.push_back(std::move(c));
        continue;
      }
      if (was == old_by_name.end()) {
        c.change = Change::Added;
        out.push_back(std::move(c));
        continue;
      }
      const MemberFacts& o = *was->second;
      c.old_type = o.node == m.node ? c.new_type : c_(o.node);
      c.old_bit_offset = o.bit_offset;
      c.old_bits = o.bits;
      if (o.node != m.node) {
        c.change = Change::Retyped;
        out.push_back(c);
      }
      if (o.bits != m.bits) {
        c.change = Change::Resized;
        out.push_back(c);
      }
      if (o.bit_offset != m.bit_offset) {
        c.change = Change::Moved;
        out.push_back(std::move(c));
      }
    }
  }

  struct Enumerator {
    std::string_view name;
    std::uint64_t value;
  };
  static std::vector<Enumerator> enumerator_list(const SideRef& s, const TypeView& t) {
    std::vector<Enumerator> out;
    out.reserve(t.vlen());
    for (unsigned i = 0; i < t.vlen(); ++i) {
      if (t.kind() == Kind::Enum) {
        const EnumValue v = t.enum_value(i);
        // A signed enum's 32-bit value, sign-extended, so that ENUM and ENUM64 values compare.
        const std::uint64_t value = t.kflag() ? static_cast<std::uint64_t>(std::int64_t{static_cast<std::int32_t>(v.value)})
                                              : std::uint64_t{v.value};
        out.push_back({s.btf.str(v.name_off), value});
      } else {
        const Enum64Value v = t.enum64_value(i);
        out.push_back({s.btf.str(v.name_off), v.value});
      }
    }
    return out;
  }

  void enumerators(const TypeView& ta, const TypeView& tb, std::vector<MemberChange>& out) {
    const auto before = enumerator_list(a_, ta);
    const auto after = enumerator_list(b_, tb);
    if (before.size() == after.size()) {
      bool same = true;
      for (std::size_t i = 0; i < before.size() && same; ++i)
        same = before[i].name == after[i].name && before[i].value == after[i].value;
      if (same) return;
    }
    const bool is_signed = tb.kflag();
    std::unordered_map<std::string_view, std::uint64_t> old_by_name, new_by_name;
    for (const Enumerator& e : before) old_by_name.emplace(e.name, e.value);
    for (const Enumerator& e : after) new_by_name.emplace(e.name, e.value);
    for (const Enumerator& e : before) {
      if (new_by_name.count(e.name)) continue;
      MemberChange c;
      c.change = Change::Removed;
      c.member = escape(e.name);
      c.old_value = e.value;
      c.value_signed = is_signed;
      out.push_back(std::move(c));
    }
    for (const Enumerator& e : after) {
      const auto was = old_by_name.find(e.name);
      if (was != old_by_name.end() && was->second == e.value) continue;
      MemberChange c;
      c.change = was == old_by_name.end() ? Change::Added : Change::Revalued;
      c.member = escape(e.name);
      if (was != old_by_name.end()) c.old_value = was->second;
      c.new_value = e.value;
      c.value_signed = is_signed;
      out.push_back(std::move(c));
    }
  }

  // A typedef's or variable's target, a return type (member ""), or a parameter's type.
  void target(TypeId ida, TypeId idb, std::string member, std::vector<MemberChange>& out) {
    const std::uint32_t na = a_.keys.key(ida), nb = b_.keys.key(idb);
    if (na == nb) return;
    MemberChange c;
    c.change = Change::Retyped;
    c.member = std::move(member);
    c.old_type = c_(na);
    c.new_type = c_(nb);
    out.push_back(std::move(c));
  }

  // A function's prototype: its return type, then its parameters by position.
  void function(TypeId proto_a, TypeId proto_b, std::vector<MemberChange>& out) {
    if (a_.keys.key(proto_a) == b_.keys.key(proto_b)) return;
    if (proto_a == 0 || proto_b == 0 || a_.btf.type(proto_a).kind() != Kind::FuncProto ||
        b_.btf.type(proto_b).kind() != Kind::FuncProto) {
      target(proto_a, proto_b, "", out);
      return;
    }
    const TypeView pa = a_.btf.type(proto_a), pb = b_.btf.type(proto_b);
    target(pa.ref(), pb.ref(), "", out);
    auto param_name = [](const SideRef& s, const TypeView& t, unsigned i) {
      const Param p = t.param(i);
      if (p.type == 0) return std::string("...");
      return p.name_off ? escape(s.btf.str(p.name_off)) : fmt::format("#{}", i + 1);
    };
    const unsigned common = std::min(pa.vlen(), pb.vlen());
    for (unsigned i = 0; i < common; ++i) target(pa.param(i).type, pb.param(i).type, param_name(b_, pb, i), out);
    // The parameters past the other prototype's: removed from a, added in b.
    auto past_common = [&](const SideRef& s, const TypeView& t, Change change) {
      for (unsigned i = common; i < t.vlen(); ++i) {
        MemberChange c;
        c.change = change;
        c.member = param_name(s, t, i);
        (change == Change::Removed ? c.old_type : c.new_type) = c_(s.keys.key(t.param(i).type));
        out.push_back(std::move(c));
      }
    };
    past_common(a_, pa, Change::Removed);
    past_common(b_, pb, Change::Added);
  }

  // "signed", "unsigned", "signed char", "bool"; with the width in bits where it is not the size's.
  static std::string int_encoding(const TypeView& t) {
    const std::uint32_t e = t.int_encoding();
    std::string out = e & 4 ? "bool" : e & 2 ? (e & 1 ? "signed char" : "char") : e & 1 ? "signed" : "unsigned";
    if (t.int_bits() != 8 * t.size()) out += fmt::format(":{}", t.int_bits());
    return out;
  }

  static std::string summary(Kind ka, Kind kb, const LayoutChange& l) {
    std::vector<std::string> parts;
    if (ka != kb) parts.push_back(fmt::format("{} -> {}", kind_name(ka), kind_name(kb)));
    if (l.old_size && l.new_size && *l.old_size != *l.new_size)
      parts.push_back(fmt::format("size {} -> {}", with_commas(*l.old_size), with_commas(*l.new_size)));
    const std::string_view noun = is_composite(ka) ? "member" : is_enum(ka) ? "enumerator" : "parameter";
    std::size_t counts[7] = {};
    for (const MemberChange& c : l.changes) {
      if (c.member.empty()) {  // the type itself: a typedef's target, a return type
        parts.push_back(fmt::format("{}{} -> {}", ka == Kind::Func ? "returns " : "", c.old_type, c.new_type));
        continue;
      }
      ++counts[static_cast<unsigned>(c.change)];
    }
    std::string tally;  // "3 members added, 192 moved"
    for (const Change c : {Change::Added, Change::Removed, Change::Renamed, Change::Moved, Change::Retyped, Change::Resized,
                           Change::Revalued}) {
      const std::size_t n = counts[static_cast<unsigned>(c)];
      if (n == 0) continue;
      tally += tally.empty() ? fmt::format("{} {}{} {}", with_commas(n), noun, n == 1 ? "" : "s", change_name(c))
                             : fmt::format(", {} {}", with_commas(n), change_name(c));
    }
    if (!tally.empty()) parts.push_back(std::move(tally));
    if (parts.empty()) parts.push_back(fmt::format("encoding {} -> {}", l.old_encoding, l.new_encoding));
    std::string out;
    for (const std::string& p : parts) {
      if (!out.empty()) out += "; ";
      out += p;
    }
    return out;
  }

  Speller c_;
  const SideRef& a_;
  const SideRef& b_;
};

// Phase 2: each own type's final key, in id order: a key already taken on this side gets an ordinal.
ZeroedArray<std::uint32_t> final_keys(const Btf& btf, const Side& side, KeyTable& table, std::uint32_t base_nodes) {
  ZeroedArray<std::uint32_t> uses(base_nodes);
  auto out = ZeroedArray<std::uint32_t>::for_overwrite(btf.own_count());
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const std::uint32_t base = side.key(id);
    const std::uint32_t seen = uses[base]++;
    if (seen == 0) {
      out[id - btf.first_id()] = base;
      continue;
    }
    KeyNode dup;
    dup.kind = table[base].kind;
    dup.role = Role::Dup;
    dup.parent = base;
    dup.extra = seen + 1;
    out[id - btf.first_id()] = table.intern(dup);
  }
  return out;
}

// One side's sizes by final node (0: absent; every type has a record of 12 bytes or more), and the
// type behind each node.
struct Sizes {
  ZeroedArray<std::uint32_t> by_node;
  ZeroedArray<TypeId> id_of;
  std::vector<std::uint64_t> by_kind = std::vector<std::uint64_t>(kMaxKind + 1, 0);
  std::uint64_t header = 0;
  std::uint64_t strings = 0;
  std::uint64_t total = 0;
};

Sizes side_sizes(const Btf& btf, const ZeroedArray<std::uint32_t>& keys, const StringAttribution& strings,
                 std::uint32_t nodes) {
  Sizes s;
  s.by_node = ZeroedArray<std::uint32_t>(nodes);
  s.id_of = ZeroedArray<TypeId>(nodes);
  std::uint64_t named_strings = 0;
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const std::uint32_t node = id - btf.first_id();
    const TypeView t = btf.type(id);
    // Rounded down, so that what the types hold never exceeds the string section.
    const auto share = static_cast<std::uint32_t>(std::floor(strings.per_type[node] + 1e-9));
    const std::uint32_t size = t.record_size() + share;
    named_strings += share;
    s.by_node[keys[node]] = size;
    s.id_of[keys[node]] = id;
    s.by_kind[static_cast<unsigned>(t.kind())] += size;
  }
  const Header& h = btf.header();
  s.total = btf.raw().size();
  s.strings = h.str_len - std::min<std::uint64_t>(named_strings, h.str_len);
  s.header = s.total - h.type_len - h.str_len;
  return s;
}

// The layouts that differ between the sides: types of a kind with a layout (not pointers, qualifiers,
// arrays, prototypes or tags: their changes show in the types that use them), present on both sides
// and compared, or on one side only. An ENUM on one side only and an ENUM64 of the same key on the
// other are one type.
std::vector<LayoutChange> layout_changes(const KeyTable& table, const SideRef& a, const Sizes& before,
                                         const SideRef& b, const Sizes& after, std::uint64_t& compared) {
  Speller spell(table);
  LayoutComparer cmp(table, a, b);
  std::vector<LayoutChange> changed, added, removed;
  // Anonymous types used nowhere but in prototypes are keyed `(anon struct)`, `(anon struct)#2`, ... in
  // id order: the same key on both sides says nothing about being the same type, so they are left out.
  // So are the anonymous types keyed through one of them.
  auto comparable = [&](std::uint32_t node) {
    for (int depth = 0; node != kNone && depth < kMaxDepth; ++depth) {
      const KeyNode& n = table[node];
      if (n.role == Role::Unkeyed) return false;
      if (n.role != Role::Member && n.role != Role::Dup) return true;
      node = n.parent;
    }
    return true;
  };
  // The node of the other enum kind with the same key, when only the other side has it.
  auto enum_partner = [&](std::uint32_t node, const Sizes& other) -> std::uint32_t {
    KeyNode n = table[node];
    if (!is_enum(n.kind) || (n.role != Role::Named && n.role != Role::EnumFirst)) return kNone;
    n.kind = n.kind == Kind::Enum ? Kind::Enum64 : Kind::Enum;
    const std::uint32_t p = table.find(n);
    return p != kNone && p < other.id_of.size() && other.id_of[p] != 0 ? p : kNone;
  };
  for (std::uint32_t node = 0; node < table.size(); ++node) {
    const TypeId ida = before.id_of[node], idb = after.id_of[node];
    if ((ida == 0 && idb == 0) || !has_layout(table[node].kind) || !comparable(node)) continue;
    LayoutChange l;
    if (ida && idb) {
      ++compared;
      if (!cmp.compare(ida, idb, l)) continue;
    } else if (ida) {
      // An ENUM that became an ENUM64 (or back): compared once, from the old side.
      if (const std::uint32_t p = enum_partner(node, after); p != kNone && before.id_of[p] == 0) {
        ++compared;
        l.name = spell(node);
        l.old_kind = table[node].kind;
        l.new_kind = table[p].kind;
        l.old_id = ida;
        l.new_id = after.id_of[p];
        if (cmp.compare(ida, l.new_id, l)) changed.push_back(std::move(l));
        continue;
      }
      l.status = LayoutStatus::Removed;
    } else {
      if (const std::uint32_t p = enum_partner(node, before); p != kNone && after.id_of[p] == 0) continue;
      l.status = LayoutStatus::Added;
    }
    l.name = spell(node);
    l.old_id = ida;
    l.new_id = idb;
    if (ida) l.old_kind = table[node].kind;
    if (idb) l.new_kind = table[node].kind;
    if (l.status != LayoutStatus::Changed && has_size(table[node].kind)) {
      const TypeView t = (ida ? a.btf : b.btf).type(ida ? ida : idb);
      (ida ? l.old_size : l.new_size) = t.size();
    }
    (l.status == LayoutStatus::Changed ? changed : l.status == LayoutStatus::Added ? added : removed).push_back(std::move(l));
  }
  auto by_name = [](const LayoutChange& x, const LayoutChange& y) { return x.name < y.name; };
  std::sort(changed.begin(), changed.end(), by_name);
  std::sort(added.begin(), added.end(), by_name);
  std::sort(removed.begin(), removed.end(), by_name);
  for (auto* more : {&added, &removed}) std::move(more->begin(), more->end(), std::back_inserter(changed));
  return changed;
}

}  // namespace

std::string_view change_name(Change c) {
  switch (c) {
    case Change::Added: return "added";
    case Change::Removed: return "removed";
    case Change::Moved: return "moved";
    case Change::Retyped: return "retyped";
    case Change::Resized: return "resized";
    case Change::Revalued: return "revalued";
    case Change::Renamed: return "renamed";
  }
  return "changed";
}

BtfDiff diff_btf(const Btf& old_btf, const Btf& new_btf, const DiffParts& parts) {
  const bool same = &old_btf == &new_btf;
  // Mostly the same types on both sides: room for the larger side and an eighth more before the table grows.
  const std::size_t larger = std::max(old_btf.end_id(), new_btf.end_id());
  KeyTable table((same ? larger : larger + larger / 8) + 64);
  KeyNode void_key;
  const std::uint32_t void_node = table.intern(void_key);

  // The same BTF on both sides (one file named twice, read once) has the same keys and sizes: they are
  // computed once and compared with themselves.
  Side old_side(old_btf, table, void_node);
  old_side.key_all();
  std::optional<Side> other_side;
  if (!same) {
    other_side.emplace(new_btf, table, void_node);
    other_side->key_all();
  }
  const Side& new_side = same ? old_side : *other_side;
  const std::uint32_t base_nodes = table.size();

  const ZeroedArray<std::uint32_t> old_keys = final_keys(old_btf, old_side, table, base_nodes);
  const ZeroedArray<std::uint32_t> new_keys = same ? ZeroedArray<std::uint32_t>() : final_keys(new_btf, new_side, table, base_nodes);

  const StringAttribution old_strings = attribute_strings(old_btf);
  const Sizes before = side_sizes(old_btf, old_keys, old_strings, table.size());
  std::optional<Sizes> other_sizes;
  if (!same) other_sizes.emplace(side_sizes(new_btf, new_keys, attribute_strings(new_btf), table.size()));
  const Sizes& after = same ? before : *other_sizes;

  BtfDiff out;
  out.old_total = before.total;
  out.new_total = after.total;
  out.old_by_kind = before.by_kind;
  out.new_by_kind = after.by_kind;
  out.old_other = before.header + before.strings;
  out.new_other = after.header + after.strings;
  for (int k = 1; k <= kMaxKind; ++k)
    if (before.by_kind[k] || after.by_kind[k]) out.kinds.push_back(static_cast<Kind>(k));

  out.old_types = old_btf.own_count();
  out.new_types = new_btf.own_count();
  Speller spell(table);
  for (std::uint32_t node = 0; parts.footprint && node < table.size(); ++node) {
    const std::uint32_t o = before.by_node[node], n = after.by_node[node];
    if (o == n) continue;
    DiffRow row;
    row.name = spell(node);
    row.kind = table[node].kind;
    if (o) row.old_size = o;
    if (n) row.new_size = n;
    row.delta = std::int64_t{n} - std::int64_t{o};
    out.rows.push_back(std::move(row));
  }
  if (parts.layout) out.layout = layout_changes(table, {old_btf, old_side}, before, {new_btf, new_side}, after, out.layout_compared);
  auto other = [&](std::string name, std::uint64_t o, std::uint64_t n) {
    if (o == n) return;
    DiffRow row;
    row.name = std::move(name);
    row.old_size = o;
    row.new_size = n;
    row.delta = static_cast<std::int64_t>(n) - static_cast<std::int64_t>(o);
    out.rows.push_back(std::move(row));
  };
  other("[header]", before.header, after.header);
  other("[strings]", before.strings, after.strings);
  std::sort(out.rows.begin(), out.rows.end(), [](const DiffRow& x, const DiffRow& y) {
    if (x.delta != y.delta) return x.delta > y.delta;
    if (x.name != y.name) return x.name < y.name;
    return x.kind < y.kind;
  });
  return out;
}

}  // namespace btfslim
