// Module BTFs side by side: what each costs, and which types several of them carry a copy of.
#pragma once

#include "btfslim/btf.h"

#include <memory>
#include <string>
#include <vector>

namespace btfslim {

struct ModuleCost {
  std::string module;  // as lsmod shows it (module_name)
  std::string file;
  std::uint64_t file_bytes = 0;
  std::uint32_t type_count = 0;
  std::uint64_t kernel_bytes = 0;  // copied data + types array (kernel_memory.h)
};

// One type that `copies` modules each define with the same kind, name and structure.
struct DuplicateType {
  Kind kind = Kind::Unknown;
  std::string name;
  std::uint32_t copies = 0;
  double bytes_each = 0;     // own bytes (record + string share), averaged over the copies
  double saved_bytes = 0;    // all copies but the smallest: what moving it into the base saves
  std::vector<std::string> modules;  // module names, in the order given
};

struct ModuleReport {
  std::vector<ModuleCost> modules;          // largest BTF first, then by name
  std::vector<DuplicateType> duplicates;    // largest saving first
  double saved_bytes = 0;
};

// Types are "the same" when kind, name, size and members (names, offsets, and what their types are:
// the base id, or the kind-and-name chain of a module-local type) agree. All modules must share a base.
ModuleReport analyze_modules(const std::vector<std::shared_ptr<const Btf>>& modules);

}  // namespace btfslim
