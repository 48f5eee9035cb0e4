// `btfslim measure --modules`: what each module's BTF costs, and the types several modules each carry a
// copy of. Two views (view.h): the modules, largest first, and the duplicated types, most saved first;
// the table shows both, CSV one (the modules, or the types with --by type), JSON both.
#include "btfslim/escape.h"
#include "btfslim/kernel_memory.h"
#include "btfslim/modules.h"
#include "btfslim/report.h"
#include "btfslim/view.h"

#include <algorithm>
#include <array>
#include <optional>

namespace btfslim {
namespace {

// The rows: the largest modules, the rest folded into one row, then the total of all.
struct ModulesView {
  const ModuleReport& report;
  std::size_t shown;
  ModuleCost others{"", "", 0, 0, 0};
  ModuleCost total{"TOTAL", "", 0, 0, 0};
  std::array<Column, 6> columns{{
      {"MODULE", "module", Show::Label, 0, true},
      {"", "file", Show::Text, 0, true},
      {"TYPES", "type_count", Show::Count, 10},
      {"BTF", "file_bytes", Show::Bytes, 12},
      {"KERNEL MEMORY", "kernel_memory_bytes", Show::Bytes, 15},
      {"", "module_count", Show::Count, 0, false, false},
  }};

  ModulesView(const ModuleReport& r, std::size_t top) : report(r), shown(std::min(top, r.modules.size())) {
    others.module = fmt::format("[{} others]", with_commas(r.modules.size() - shown));
    auto add = [](ModuleCost& sum, const ModuleCost& m) {
      sum.file_bytes += m.file_bytes, sum.type_count += m.type_count, sum.kernel_bytes += m.kernel_bytes;
    };
    for (std::size_t i = 0; i < r.modules.size(); ++i) {
      add(total, r.modules[i]);
      if (i >= shown) add(others, r.modules[i]);
    }
  }
  bool folds() const { return shown < report.modules.size(); }
  View view() const {
    View v{columns, shown + (folds() ? 1 : 0) + 1, [this](std::size_t i, std::span<Cell> c) { return row(i, c); }};
    v.min_label_chars = 6;
    v.narrowest_label = 16;
    return v;
  }
  RowIs row(std::size_t i, std::span<Cell> c) const {
    const RowIs is = i < shown ? RowIs::Item : i == shown && folds() ? RowIs::Folded : RowIs::Summary;
    const ModuleCost& m = is == RowIs::Item ? report.modules[i] : is == RowIs::Folded ? others : total;
    c[0] = Cell::of(m.module);
    c[1] = is == RowIs::Item ? Cell::of(m.file) : Cell::empty();
    c[2] = Cell::count(m.type_count);
    c[3] = Cell::count(m.file_bytes);
    c[4] = Cell::count(m.kernel_bytes);
    c[5] = is == RowIs::Folded ? Cell::count(report.modules.size() - shown) : Cell::empty();
    return is;
  }
};

// The duplicated types: the ones that save most, the rest folded, then the total saved.
struct DuplicatesView {
  const ModuleReport& report;
  std::size_t shown;
  double others = 0;
  std::string label, modules;  // the current row's
  std::array<Column, 7> columns{{
      {"TYPE", "", Show::Label},
      {"", "kind", Show::Text},
      {"", "name", Show::Text, 0, true},
      {"COPIES", "copy_count", Show::Count, 8},
      {"EACH", "each_bytes", Show::Bytes, 12},
      {"SAVED", "saved_bytes", Show::Bytes, 12},
      {"", "modules", Show::List, 0, true},
  }};

  DuplicatesView(const ModuleReport& r, std::size_t top) : report(r), shown(std::min(top, r.duplicates.size())) {
    for (std::size_t i = shown; i < r.duplicates.size(); ++i) others += r.duplicates[i].saved_bytes;
  }
  bool folds() const { return shown < report.duplicates.size(); }
  View view() {
    View v{columns, shown + (folds() ? 1 : 0) + 1, [this](std::size_t i, std::span<Cell> c) { return row(i, c); }};
    v.min_label_chars = 4;
    v.narrowest_label = 16;
    return v;
  }
  RowIs row(std::size_t i, std::span<Cell> c) {
    std::fill(c.begin(), c.end(), Cell::empty());
    if (i < shown) {
      const DuplicateType& d = report.duplicates[i];
      label = fmt::format("{} {}", kind_name(d.kind), esc(d.name));
      modules.clear();
      for (const std::string& m : d.modules) (modules.empty() ? modules : modules += ' ') += m;
      c[0] = Cell::of(label);
      c[1] = Cell::of(kind_name(d.kind));
      c[2] = Cell::of(d.name);
      c[3] = Cell::count(d.copies);
      c[4] = Cell::number(d.bytes_each);
      c[5] = Cell::number(d.saved_bytes);
      c[6] = Cell::of(modules);
      return RowIs::Item;
    }
    if (i == shown && folds()) {
      label = fmt::format("[{} others]", with_commas(report.duplicates.size() - shown));
      c[0] = c[2] = Cell::of(label);
      c[5] = Cell::number(others);
      return RowIs::Folded;
    }
    c[0] = c[2] = Cell::of("TOTAL");
    c[5] = Cell::number(report.saved_bytes);
    return RowIs::Summary;
  }
};

}  // namespace

void print_modules(const std::vector<std::shared_ptr<const Btf>>& modules, Format format, std::size_t top,
                   bool types_only, OutputBuffer& out) {
  const ModuleReport report = analyze_modules(modules);
  const ModulesView by_module(report, top);
  DuplicatesView by_type(report, top);
  // The kernel they are split on, with every one of them loaded: what a system that loads them all keeps.
  const Btf* base = modules.empty() || !modules.front()->is_split() ? nullptr : modules.front()->base_shared().get();
  const std::uint64_t base_memory =
      base ? kernel_memory(base->raw().size(), base->own_count(), LoadedAs::Vmlinux).total() : 0;

  if (format == Format::Json) {
    JsonWriter w(out);
    w.begin_object();
    w.field("module_count", report.modules.size());
    w.field("file_bytes", by_module.total.file_bytes);
    w.field("type_count", by_module.total.type_count);
    w.field("kernel_memory_bytes", by_module.total.kernel_bytes);
    w.key("base");
    if (base) {
      w.begin_object();
      w.field("file", base->name());
      w.field("kernel_memory_bytes", base_memory);
      w.field("loaded_with_modules_bytes", base_memory + by_module.total.kernel_bytes);
      w.end_object();
    } else {
      w.value(nullptr);
    }
    const std::optional<View> mv = types_only ? std::nullopt : std::optional<View>(by_module.view());
    print_json_items(mv ? &*mv : nullptr, w, "modules");
    print_json_folded(mv ? &*mv : nullptr, w, "folded");
    w.field("duplicate_count", report.duplicates.size());
    w.field("saved_bytes", report.saved_bytes);
    const View dv = by_type.view();
    print_json_items(&dv, w, "duplicates");
    print_json_folded(&dv, w, "duplicates_folded");
    w.end_object();
    w.finish();
    return;
  }
  if (format == Format::Csv) {
    if (types_only)
      print_csv(by_type.view(), out);
    else
      print_csv(by_module.view(), out);
    return;
  }
  if (!types_only) {
    print_table(by_module.view(), out);
    if (base)
      out.print("\nthe kernel with these modules loaded: {} = {} ({}, as vmlinux) + {} (modules)\n",
                human_size(base_memory + by_module.total.kernel_bytes), human_size(base_memory), esc(base->name()),
                human_size(by_module.total.kernel_bytes));
    out.put('\n');
  }
  out.print("{} types are carried by more than one module; moving them into the base saves {}\n",
            with_commas(report.duplicates.size()), human_size(report.saved_bytes));
  if (report.duplicates.empty()) return;
  out.put('\n');
  print_table(by_type.view(), out);
}

}  // namespace btfslim
