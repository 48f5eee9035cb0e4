// Finding types that several modules each carry (see modules.h).
//
// Each named struct, union, enum, typedef, fwd, int and float of each module gets a structural key.
// References into the shared base are keyed by base id (the same type for every module); references to
// module-local types by the chain of kinds down to the first named type, so that two modules' private
// copies of `struct foo *` compare equal. The walk is bounded, so reference loops cannot hang it.
#include "btfslim/modules.h"
#include "btfslim/targets.h"

#include "btfslim/footprint.h"
#include "btfslim/kernel_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace btfslim {
namespace {

constexpr int kMaxChain = 32;

void append_ref(const Btf& btf, TypeId id, std::string& key) {
  for (int step = 0; step < kMaxChain; ++step) {
    if (id == 0) {
      key += "void";
      return;
    }
    if (id < btf.first_id()) {
      fmt::format_to(std::back_inserter(key), "b{}", id);
      return;
    }
    const TypeView t = btf.type(id);
    const std::string_view name = btf.str(t.name_off());
    if (!name.empty()) {
      fmt::format_to(std::back_inserter(key), "{}:{}", static_cast<unsigned>(t.kind()), name);
      return;
    }
    switch (t.kind()) {
      case Kind::Array:
        fmt::format_to(std::back_inserter(key), "[{}]", t.array().nelems);
        id = t.array().type;
        break;
      case Kind::Struct:
      case Kind::Union:
      case Kind::Enum:
      case Kind::Enum64:
      case Kind::FuncProto:
        fmt::format_to(std::back_inserter(key), "anon{}/{}/{}", static_cast<unsigned>(t.kind()), t.size(), t.vlen());
        return;
      default:
        fmt::format_to(std::back_inserter(key), "{}>", static_cast<unsigned>(t.kind()));
        id = t.ref();
    }
  }
  key += "...";
}

bool keyed_kind(Kind k) {
  switch (k) {
    case Kind::Struct:
    case Kind::Union:
    case Kind::Enum:
    case Kind::Enum64:
    case Kind::Typedef:
    case Kind::Fwd:
    case Kind::Int:
    case Kind::Float:
      return true;
    default:
      return false;
  }
}

std::string structural_key(const Btf& btf, TypeId id) {
  const TypeView t = btf.type(id);
  std::string key = fmt::format("{}|{}|{}|{}|{}|", static_cast<unsigned>(t.kind()), btf.str(t.name_off()), t.size(),
                                t.vlen(), t.kflag());
  const unsigned vlen = t.vlen();
  switch (t.kind()) {
    case Kind::Struct:
    case Kind::Union:
      for (unsigned i = 0; i < vlen; ++i) {
        const Member m = t.member(i);
        fmt::format_to(std::back_inserter(key), "{}@{}:", btf.str(m.name_off), m.offset);
        append_ref(btf, m.type, key);
        key += ';';
      }
      break;
    case Kind::Enum:
      for (unsigned i = 0; i < vlen; ++i)
        fmt::format_to(std::back_inserter(key), "{}={};", btf.str(t.enum_value(i).name_off), t.enum_value(i).value);
      break;
    case Kind::Enum64:
      for (unsigned i = 0; i < vlen; ++i)
        fmt::format_to(std::back_inserter(key), "{}={};", btf.str(t.enum64_value(i).name_off),
                       t.enum64_value(i).value);
      break;
    case Kind::Typedef:
      append_ref(btf, t.ref(), key);
      break;
    case Kind::Int:
      fmt::format_to(std::back_inserter(key), "{}", t.int_data());
      break;
    default:
      break;
  }
  return key;
}

}  // namespace

ModuleReport analyze_modules(const std::vector<std::shared_ptr<const Btf>>& modules) {
  ModuleReport report;
  struct Group {
    Kind kind;
    std::string name;
    std::vector<double> bytes;
    std::vector<std::string> modules;
  };
  std::unordered_map<std::string, Group> groups;
  for (const auto& m : modules) {
    const Btf& btf = *m;
    const KernelMemory km = kernel_memory(btf.raw().size(), btf.own_count(), LoadedAs::Module);
    const std::string name = module_name(btf.name());
    report.modules.push_back({name, btf.name(), btf.raw().size(), btf.own_count(), km.total()});
    const StringAttribution strings = attribute_strings(btf);
    for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
      const TypeView t = btf.type(id);
      if (t.name_off() == 0 || !keyed_kind(t.kind())) continue;
      Group& g = groups[structural_key(btf, id)];
      if (!g.modules.empty() && g.modules.back() == name) continue;  // one copy per module counts
      g.kind = t.kind();
      g.name = std::string(btf.str(t.name_off()));
      g.bytes.push_back(t.record_size() + strings.per_type[id - btf.first_id()]);
      g.modules.push_back(name);
    }
  }
  for (auto& [key, g] : groups) {
    if (g.modules.size() < 2) continue;
    DuplicateType d;
    d.kind = g.kind;
    d.name = g.name;
    d.copies = static_cast<std::uint32_t>(g.modules.size());
    double sum = 0, smallest = g.bytes.front();
    for (const double b : g.bytes) sum += b, smallest = std::min(smallest, b);
    d.bytes_each = sum / d.copies;
    d.saved_bytes = sum - smallest;
    d.modules = std::move(g.modules);
    report.saved_bytes += d.saved_bytes;
    report.duplicates.push_back(std::move(d));
  }
  std::stable_sort(report.modules.begin(), report.modules.end(), [](const ModuleCost& a, const ModuleCost& b) {
    return a.file_bytes != b.file_bytes ? a.file_bytes > b.file_bytes : a.module < b.module;
  });
  std::sort(report.duplicates.begin(), report.duplicates.end(), [](const DuplicateType& a, const DuplicateType& b) {
    if (a.saved_bytes != b.saved_bytes) return a.saved_bytes > b.saved_bytes;
    if (a.name != b.name) return a.name < b.name;
    return a.kind < b.kind;
  });
  return report;
}

}  // namespace btfslim
