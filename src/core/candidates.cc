// Relocation kinds, essential names, and the candidate index.
//
// libbpf scans every target type for each local root type (and caches the list per object). We read the
// names all objects ask for first, then make one pass over the target: a type whose kind some local root
// has and whose essential name is asked for joins that name's list. A lookup is then a hash probe and a
// filter by kind, whatever the number of objects and relocations.
#include "btfslim/core.h"
#include "btfslim/name_prefixes.h"

#include <algorithm>
#include <unordered_map>

namespace btfslim {

std::string_view reloc_kind_name(std::uint32_t kind) {
  static constexpr std::string_view kNames[] = {
      "byte_off",      "byte_sz",         "field_exists",   "signed",        "lshift_u64",
      "rshift_u64",    "local_type_id",   "target_type_id", "type_exists",   "type_size",
      "enumval_exists", "enumval_value",  "type_matches",
  };
  return kind <= kMaxRelocKind ? kNames[kind] : "unknown";
}

bool is_field_kind(std::uint32_t kind) { return kind <= 5; }
bool is_type_kind(std::uint32_t kind) { return (kind >= 6 && kind <= 9) || kind == 12; }
bool is_enumval_kind(std::uint32_t kind) { return kind == 10 || kind == 11; }
bool is_existence_kind(std::uint32_t kind) {
  return kind == 2 || kind == 8 || kind == 10 || kind == 12;
}

std::string_view status_name(CoreStatus s) {
  switch (s) {
    case CoreStatus::Ok:
      return "ok";
    case CoreStatus::Poisoned:
      return "poisoned";
    case CoreStatus::Ambiguous:
      return "ambiguous";
    case CoreStatus::Error:
      return "error";
  }
  return "error";
}

std::string_view essential_name(std::string_view name) {
  // The last "X___Y" where neither X nor Y is an underscore ends the essential part after X.
  if (name.size() < 5) return name;
  for (std::size_t i = name.size() - 5 + 1; i-- > 0;) {
    if (name[i] != '_' && name[i + 1] == '_' && name[i + 2] == '_' && name[i + 3] == '_' && name[i + 4] != '_')
      return name.substr(0, i + 1);
  }
  return name;
}

CoreTarget::CoreTarget(std::shared_ptr<const Btf> main, std::vector<std::shared_ptr<const Btf>> modules)
    : main_(std::move(main)), modules_(std::move(modules)) {}

namespace {

bool any_enum(Kind k) { return k == Kind::Enum || k == Kind::Enum64; }

// libbpf's btf_kind_core_compat.
bool kinds_compatible(Kind a, Kind b) { return a == b || (any_enum(a) && any_enum(b)); }

}  // namespace

CandidateIndex::CandidateIndex(const CoreTarget& target, std::span<const BpfObject* const> objects) {
  std::unordered_map<std::string_view, std::uint32_t> by_name;
  std::uint32_t kinds = 0;  // bit per kind some root has
  for (const BpfObject* obj : objects) {
    for (const BpfObject::RootName& root : obj->root_names()) {
      kinds |= root.kinds;
      if (by_name.try_emplace(root.name, static_cast<std::uint32_t>(slots_.size())).second) slots_.push_back({root.name, {}, {}});
    }
  }
  index(target, kinds, by_name);
}

CandidateIndex::CandidateIndex(const CoreTarget& target, std::span<const BpfObject::RootName> roots) {
  std::unordered_map<std::string_view, std::uint32_t> by_name;
  std::uint32_t kinds = 0;
  for (const BpfObject::RootName& root : roots) {
    kinds |= root.kinds;
    if (by_name.try_emplace(root.name, static_cast<std::uint32_t>(slots_.size())).second) slots_.push_back({root.name, {}, {}});
  }
  index(target, kinds, by_name);
}

// One pass over the target for the names in `by_name` (slots_ in the order of their values).
void CandidateIndex::index(const CoreTarget& target, std::uint32_t kinds,
                           std::unordered_map<std::string_view, std::uint32_t>& by_name) {
  if (kinds & ((1u << static_cast<unsigned>(Kind::Enum)) | (1u << static_cast<unsigned>(Kind::Enum64))))
    kinds |= (1u << static_cast<unsigned>(Kind::Enum)) | (1u << static_cast<unsigned>(Kind::Enum64));
  if (slots_.empty()) return;

  // Most target names share no first four bytes with any name asked for (NamePrefixes). A flavor keeps
  // the essential name's first bytes, and a shorter essential name ("ab") is also asked for as the start
  // of a flavored one ("ab___v2": "ab__").
  NamePrefixes prefixes;
  for (const Slot& slot : slots_) prefixes.add(slot.name);

  // A split main BTF is one BTF with its base (the rest of a kernel's types, split off): searched
  // whole. A module is searched for its own types.
  auto add_to = [&](bool module) {
    return [&, module](const Btf& btf, TypeId id, Kind, const char* raw) {
      if (!prefixes.may_hold(raw)) return;
      const auto it = by_name.find(essential_name(raw));
      if (it == by_name.end()) return;
      Slot& slot = slots_[it->second];
      (module ? slot.modules : slot.main).push_back({&btf, id});
    };
  };
  for_each_named_record_with_bases(target.main(), kinds, add_to(false));
  for (const auto& m : target.modules()) for_each_named_record(*m, kinds, add_to(true));

  // Sorted for lookup by name; the names are the objects' own copies (root_names()).
  std::sort(slots_.begin(), slots_.end(), [](const Slot& a, const Slot& b) { return a.name < b.name; });
}

void RootNames::add(const BpfObject& object) {
  for (const BpfObject::RootName& root : object.root_names()) {
    if (const auto it = index_.find(root.name); it != index_.end()) {
      roots_[it->second].kinds |= root.kinds;
      continue;
    }
    const auto it = index_.emplace(std::string(root.name), static_cast<std::uint32_t>(roots_.size())).first;
    roots_.push_back({it->first, root.kinds});
  }
}

const CandidateIndex::Slot* CandidateIndex::find(std::string_view essential) const {
  auto it = std::lower_bound(slots_.begin(), slots_.end(), essential,
                             [](const Slot& s, std::string_view n) { return s.name < n; });
  return it != slots_.end() && it->name == essential ? &*it : nullptr;
}

std::vector<Candidate> CandidateIndex::candidates(const Btf& local, TypeId local_id) const {
  std::vector<Candidate> out;
  if (local_id == 0) return out;
  const TypeView t = local.type(local_id);
  if (t.name_off() == 0) return out;
  const Slot* slot = find(essential_name(local.str(t.name_off())));
  if (!slot) return out;
  for (const auto* list : {&slot->main, &slot->modules}) {
    for (const Candidate& c : *list)
      if (kinds_compatible(c.btf->type(c.id).kind(), t.kind())) out.push_back(c);
    if (!out.empty()) break;  // modules only when the main BTF has none
  }
  return out;
}

}  // namespace btfslim
