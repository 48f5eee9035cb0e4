// The keys `diff` matches types by (diff.h says what a key is): the hash-consed table of key nodes, one
// input's keys (Side), and spelling a key out (Speller). Only diff.cc and diff_keys.cc include this.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/memory.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace btfslim::diff_keys {

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

inline bool is_wrapper(Kind k) {
  return k == Kind::Ptr || k == Kind::Const || k == Kind::Volatile || k == Kind::Restrict || k == Kind::TypeTag ||
         k == Kind::Array;
}
inline bool is_composite(Kind k) { return k == Kind::Struct || k == Kind::Union; }

// A wrapper's one target (an array's element type).
inline TypeId wrapped(const TypeView& t) { return t.kind() == Kind::Array ? t.array().type : t.ref(); }

// One input's keys.
class Side {
 public:
  // `before`: the old side, keyed already, when this is the new one: unnamed members are then keyed by
  // the ordinal of the old side's unnamed member they pair with (anon_members.h), not by position.
  Side(const Btf& btf, KeyTable& table, std::uint32_t void_node, const Side* before = nullptr)
      : btf_(btf), table_(table), void_node_(void_node), key_(btf.end_id()), before_(before) {
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
        n.extra = static_cast<std::uint32_t>(t.decl_tag_component_idx()) + 1;  // -1 (whole) is 0; 0x7fffffff + 1 must not overflow
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

  // The ordinal of unnamed member `slot` of `user` (keyed `user_key`): by position, or on the new side
  // that of the old side's unnamed member it pairs with.
  std::uint32_t unnamed_member_ordinal(TypeId user, const TypeView& u, unsigned slot, std::uint32_t user_key);

  const Btf& btf_;
  KeyTable& table_;
  std::uint32_t void_node_;
  // Per type id: 0 not keyed yet (node 0 is void, no type's key), kBusy while being keyed, or the node.
  ZeroedArray<std::uint32_t> key_;
  ZeroedArray<std::uint32_t> users_begin_;
  std::vector<Use> users_;
  const Side* before_;
  // The old side's structs and unions with unnamed members, by key (built when first needed), and the
  // ordinals paired per struct of this side.
  std::optional<std::unordered_map<std::uint32_t, TypeId>> before_by_key_;
  std::unordered_map<TypeId, std::vector<std::uint32_t>> paired_;
};


// A total order on nodes that does not depend on the order they were interned in.
int compare_nodes(const KeyTable& table, std::uint32_t a, std::uint32_t b, int depth = 0);

// Spelling a key out, only for the rows printed.
std::string_view kind_word(Kind k);

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

  void proto(const KeyNode& n, std::string_view inner, std::string& out, int depth);
  void spell(std::uint32_t node, std::string& out, int depth);

  const KeyTable& table_;
  bool c_names_;
};

// A type's side: its BTF and its keys.
struct SideRef {
  const Btf& btf;
  const Side& keys;
};

}  // namespace btfslim::diff_keys
