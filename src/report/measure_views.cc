// The focused views of `btfslim measure`: one type in detail (--type), the BTF without some kinds
// (--without), and the copies that several modules carry (--modules).
#include "btfslim/csv.h"
#include "btfslim/error.h"
#include "btfslim/modules.h"
#include "btfslim/report.h"
#include "btfslim/kernel_memory.h"
#include "btfslim/terminal.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace btfslim {
namespace {

std::string type_label(const Btf& btf, TypeId id) {
  const TypeView t = btf.type(id);
  return fmt::format("[{}] {} '{}'", id, kind_name(t.kind()), type_summary(btf, id));
}

struct Detail {
  TypeId id;
  std::uint32_t node;
  double closure;
  std::uint32_t closure_types;
  std::uint32_t retained_types;
  std::vector<std::uint32_t> referrers;
  std::vector<std::uint32_t> dominated;  // direct dominator children, largest retained first
};

}  // namespace

void print_type_detail(const Btf& btf, const Footprint& fp, std::string_view query, Format format,
                       OutputBuffer& out) {
  const auto ids = find_types(btf, query, "--type");

  // Dominator subtree sizes in types, one pass like retained bytes.
  std::vector<std::uint32_t> subtree(fp.own.size(), 1);
  for (auto it = fp.dominators.preorder.rbegin(); it != fp.dominators.preorder.rend(); ++it)
    if (const auto d = fp.dominators.idom[*it]; d != kVirtualRoot) subtree[d] += subtree[*it];

  std::vector<Detail> details;
  std::vector<std::uint32_t> nodes;
  for (const TypeId id : ids) nodes.push_back(id - btf.first_id());
  const std::vector<Closure> closures = closure_sizes(fp.graph, nodes, fp.own);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const TypeId id = ids[i];
    Detail d{id, nodes[i], closures[i].bytes, closures[i].types, 0, {}, {}};
    d.retained_types = subtree[d.node];
    const auto preds = fp.graph.predecessors(d.node);
    d.referrers.assign(preds.begin(), preds.end());
    std::sort(d.referrers.begin(), d.referrers.end());
    d.referrers.erase(std::unique(d.referrers.begin(), d.referrers.end()), d.referrers.end());
    for (std::uint32_t v = 0; v < fp.own.size(); ++v)
      if (fp.dominators.idom[v] == d.node) d.dominated.push_back(v);
    std::sort(d.dominated.begin(), d.dominated.end(), [&](std::uint32_t a, std::uint32_t b) {
      return fp.retained[a] != fp.retained[b] ? fp.retained[a] > fp.retained[b] : a < b;
    });
    details.push_back(std::move(d));
  }

  if (format == Format::Json) {
    JsonWriter w(out);
    w.begin_object();
    w.field("file", btf.name());
    w.key("types");
    w.begin_array();
    for (const Detail& d : details) {
      w.begin_object();
      json_type_footprint(w, btf, fp, d.id);
      w.field("retained_type_count", d.retained_types);
      w.field("closure_bytes", d.closure);
      w.field("closure_type_count", d.closure_types);
      w.key("referrer_type_ids");
      w.begin_array();
      for (const auto r : d.referrers) w.value(btf.first_id() + r);
      w.end_array();
      w.key("keeps_alive");
      w.begin_array();
      for (const auto c : d.dominated) {
        w.begin_object();
        w.field("type_id", btf.first_id() + c);
        w.field("retained_bytes", fp.retained[c]);
        w.end_object();
      }
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
    w.finish();
    return;
  }
  if (format == Format::Csv) {
    CsvWriter csv(out, {"id", "kind", "name", "record_bytes", "string_bytes", "own_bytes", "retained_bytes",
                        "retained_type_count", "closure_bytes", "closure_type_count", "referrer_count",
                        "keeps_alive_count"});
    for (const Detail& d : details) {
      const TypeView t = btf.type(d.id);
      csv.row({fmt::format("{}", d.id), kind_name(t.kind()), CsvWriter::name(btf.str(t.name_off())),
               fmt::format("{}", t.record_size()), fmt::format("{:.0f}", fp.strings.per_type[d.node]),
               fmt::format("{:.0f}", fp.own[d.node]), fmt::format("{:.0f}", fp.retained[d.node]),
               fmt::format("{}", d.retained_types), fmt::format("{:.0f}", d.closure), fmt::format("{}", d.closure_types),
               fmt::format("{}", d.referrers.size()), fmt::format("{}", d.dominated.size())});
    }
    return;
  }

  constexpr std::size_t kListed = 10;
  for (const Detail& d : details) {
    const TypeView t = btf.type(d.id);
    out.print("{}", type_label(btf, d.id));
    if (t.kind() == Kind::Struct || t.kind() == Kind::Union || t.kind() == Kind::Enum || t.kind() == Kind::Enum64)
      out.print(" size={} vlen={}", t.size(), t.vlen());
    out.put('\n');
    const double record = btf.type(d.id).record_size();
    out.print("  own       {:>10}  record {} + strings {}\n", human_size(fp.own[d.node]), human_size(record),
              human_size(fp.strings.per_type[d.node]));
    out.print("  retained  {:>10}  {} types go if it goes ({:.2f}% of the BTF)\n", human_size(fp.retained[d.node]),
              with_commas(d.retained_types), percent(fp.retained[d.node], fp.file.file_bytes));
    out.print("  closure   {:>10}  {} types reachable from it: what keeping it whole costs\n", human_size(d.closure),
              with_commas(d.closure_types));
    out.print("  referred to by {} types{}\n", with_commas(d.referrers.size()), d.referrers.empty() ? "" : ":");
    for (std::size_t i = 0; i < std::min(kListed, d.referrers.size()); ++i)
      out.print("    {}\n", type_label(btf, btf.first_id() + d.referrers[i]));
    if (d.referrers.size() > kListed) out.print("    [{} more]\n", with_commas(d.referrers.size() - kListed));
    out.print("  keeps alive {} types directly{}\n", with_commas(d.dominated.size()), d.dominated.empty() ? "" : ":");
    for (std::size_t i = 0; i < std::min(kListed, d.dominated.size()); ++i)
      out.print("    {:<60} retained {}\n", type_label(btf, btf.first_id() + d.dominated[i]),
                human_size(fp.retained[d.dominated[i]]));
    if (d.dominated.size() > kListed) out.print("    [{} more]\n", with_commas(d.dominated.size() - kListed));
  }
}

void print_without(const Btf& btf, const Footprint& fp, const std::vector<Kind>& kinds, Format format,
                   OutputBuffer& out) {
  const std::uint32_t n = btf.own_count();
  std::vector<bool> excluded(n, false);
  for (std::uint32_t v = 0; v < n; ++v)
    excluded[v] = std::find(kinds.begin(), kinds.end(), btf.type(btf.first_id() + v).kind()) != kinds.end();
  const std::vector<bool> kept = reachable_without(fp.graph, fp.dominators, excluded);

  struct PerKind {
    std::uint64_t removed = 0, kept = 0;
    double removed_bytes = 0, kept_bytes = 0;
  };
  std::array<PerKind, kMaxKind + 1> per{};
  std::uint64_t direct = 0, dragged = 0;
  double removed_bytes = 0;
  for (std::uint32_t v = 0; v < n; ++v) {
    PerKind& k = per[static_cast<unsigned>(btf.type(btf.first_id() + v).kind())];
    if (kept[v]) {
      ++k.kept;
      k.kept_bytes += fp.own[v];
    } else {
      ++k.removed;
      k.removed_bytes += fp.own[v];
      removed_bytes += fp.own[v];
      ++(excluded[v] ? direct : dragged);
    }
  }
  const double file = static_cast<double>(fp.file.file_bytes);
  std::string names;
  for (const Kind k : kinds) {
    if (!names.empty()) names += ',';
    names += kind_name(k);
  }

  if (format == Format::Json) {
    JsonWriter w(out);
    w.begin_object();
    w.field("file", btf.name());
    w.key("without");
    w.begin_array();
    for (const Kind k : kinds) w.value(kind_name(k));
    w.end_array();
    w.field("file_bytes", fp.file.file_bytes);
    w.field("removed_type_count", direct + dragged);
    w.field("removed_of_those_kinds_count", direct);
    w.field("removed_kept_alive_only_by_them_count", dragged);
    w.field("saved_bytes", removed_bytes);
    w.field("remaining_bytes", file - removed_bytes);
    w.key("kinds");
    w.begin_array();
    for (unsigned k = 1; k <= kMaxKind; ++k) {
      if (!per[k].removed && !per[k].kept) continue;
      w.begin_object();
      w.field("kind", kind_name(static_cast<Kind>(k)));
      w.field("removed_type_count", per[k].removed);
      w.field("removed_bytes", per[k].removed_bytes);
      w.field("kept_type_count", per[k].kept);
      w.field("kept_bytes", per[k].kept_bytes);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    w.finish();
    return;
  }
  // Whole bytes per kind, rounded so that each column adds up to its TOTAL.
  std::vector<double> removed_parts, kept_parts;
  std::uint64_t kept_types = 0;
  double kept_bytes = 0;
  for (unsigned k = 1; k <= kMaxKind; ++k) {
    removed_parts.push_back(per[k].removed_bytes);
    kept_parts.push_back(per[k].kept_bytes);
    kept_types += per[k].kept;
    kept_bytes += per[k].kept_bytes;
  }
  const auto removed_rounded = round_to_total(removed_parts, static_cast<std::uint64_t>(removed_bytes + 0.5));
  const auto kept_rounded = round_to_total(kept_parts, static_cast<std::uint64_t>(kept_bytes + 0.5));
  if (format == Format::Csv) {
    CsvWriter csv(out, {"kind", "removed_type_count", "removed_bytes", "kept_type_count", "kept_bytes"});
    for (unsigned k = 1; k <= kMaxKind; ++k) {
      if (!per[k].removed && !per[k].kept) continue;
      csv.row({kind_name(static_cast<Kind>(k)), fmt::format("{}", per[k].removed),
               fmt::format("{}", removed_rounded[k - 1]), fmt::format("{}", per[k].kept),
               fmt::format("{}", kept_rounded[k - 1])});
    }
    csv.row({"TOTAL", fmt::format("{}", direct + dragged), fmt::format("{:.0f}", removed_bytes),
             fmt::format("{}", kept_types), fmt::format("{:.0f}", kept_bytes)});
    return;
  }
  out.print("{} without {}:\n", esc(btf.name()), names);
  out.print("  removed {} types, {} ({:.1f}% of {}): {} of those kinds and {} more that only they kept alive\n",
            with_commas(direct + dragged), human_size(removed_bytes), percent(removed_bytes, file), human_size(file),
            with_commas(direct), with_commas(dragged));
  out.print("  remaining {}: {}\n\n", human_size(file - removed_bytes),
            fmt::format("{} types", with_commas(n - direct - dragged)));
  out.print("{:<14}{:>10}{:>12}{:>10}{:>12}\n", "KIND", "REMOVED", "BYTES", "KEPT", "BYTES");
  for (unsigned k = 1; k <= kMaxKind; ++k) {
    if (!per[k].removed && !per[k].kept) continue;
    out.print("{:<14}{:>10}{:>12}{:>10}{:>12}\n", kind_name(static_cast<Kind>(k)), with_commas(per[k].removed),
              human_size(per[k].removed_bytes), with_commas(per[k].kept), human_size(per[k].kept_bytes));
  }
  out.print("{:<14}{:>10}{:>12}{:>10}{:>12}\n", "TOTAL", with_commas(direct + dragged), human_size(removed_bytes),
            with_commas(kept_types), human_size(kept_bytes));
}

void print_modules(const std::vector<std::shared_ptr<const Btf>>& modules, Format format, std::size_t top,
                   OutputBuffer& out) {
  const ModuleReport report = analyze_modules(modules);
  // The rows shown: the largest modules, the rest folded into one row; then the total of all.
  const std::size_t shown = std::min(top, report.modules.size());
  ModuleCost others{fmt::format("[{} others]", with_commas(report.modules.size() - shown)), "", 0, 0, 0};
  ModuleCost total{"TOTAL", "", 0, 0, 0};
  auto add = [](ModuleCost& sum, const ModuleCost& m) {
    sum.file_bytes += m.file_bytes, sum.type_count += m.type_count, sum.kernel_bytes += m.kernel_bytes;
  };
  for (std::size_t i = 0; i < report.modules.size(); ++i) {
    add(total, report.modules[i]);
    if (i >= shown) add(others, report.modules[i]);
  }
  // The kernel they are split on, with every one of them loaded: what a system that loads them all keeps.
  const Btf* base = modules.empty() || !modules.front()->is_split() ? nullptr : modules.front()->base_shared().get();
  const std::uint64_t base_memory =
      base ? kernel_memory(base->raw().size(), base->own_count(), LoadedAs::Vmlinux).total() : 0;
  const std::size_t dup_shown = std::min(top, report.duplicates.size());
  double dup_others = 0;
  for (std::size_t i = dup_shown; i < report.duplicates.size(); ++i) dup_others += report.duplicates[i].saved_bytes;

  if (format == Format::Json) {
    JsonWriter w(out);
    auto module = [&](const ModuleCost& m) {
      w.begin_object();
      w.field("module", m.module);
      w.field("file", m.file);
      w.field("file_bytes", m.file_bytes);
      w.field("type_count", m.type_count);
      w.field("kernel_memory_bytes", m.kernel_bytes);
      w.end_object();
    };
    w.begin_object();
    w.field("module_count", report.modules.size());
    w.field("file_bytes", total.file_bytes);
    w.field("type_count", total.type_count);
    w.field("kernel_memory_bytes", total.kernel_bytes);
    w.key("base");
    if (base) {
      w.begin_object();
      w.field("file", base->name());
      w.field("kernel_memory_bytes", base_memory);
      w.field("loaded_with_modules_bytes", base_memory + total.kernel_bytes);
      w.end_object();
    } else {
      w.value(nullptr);
    }
    w.key("modules");
    w.begin_array();
    for (std::size_t i = 0; i < shown; ++i) module(report.modules[i]);
    w.end_array();
    w.key("folded");
    w.begin_array();
    if (shown < report.modules.size()) {
      w.begin_object();
      w.field("label", others.module);
      w.field("module_count", report.modules.size() - shown);
      w.field("file_bytes", others.file_bytes);
      w.field("type_count", others.type_count);
      w.field("kernel_memory_bytes", others.kernel_bytes);
      w.end_object();
    }
    w.end_array();
    w.field("duplicate_count", report.duplicates.size());
    w.field("saved_bytes", report.saved_bytes);
    w.key("duplicates");
    w.begin_array();
    for (std::size_t i = 0; i < dup_shown; ++i) {
      const auto& d = report.duplicates[i];
      w.begin_object();
      w.field("kind", kind_name(d.kind));
      w.field("name", d.name);
      w.field("copy_count", d.copies);
      w.field("each_bytes", d.bytes_each);
      w.field("saved_bytes", d.saved_bytes);
      w.key("modules");
      w.begin_array();
      for (const auto& m : d.modules) w.value(m);
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
    w.finish();
    return;
  }
  if (format == Format::Csv) {
    CsvWriter csv(out, {"module", "file", "type_count", "file_bytes", "kernel_memory_bytes"});
    auto row = [&](const ModuleCost& m) {
      csv.row({CsvWriter::name(m.module), CsvWriter::name(m.file), fmt::format("{}", m.type_count),
               fmt::format("{}", m.file_bytes), fmt::format("{}", m.kernel_bytes)});
    };
    for (std::size_t i = 0; i < shown; ++i) row(report.modules[i]);
    if (shown < report.modules.size()) row(others);
    row(total);
    return;
  }

  std::size_t longest = 6;
  for (std::size_t i = 0; i < shown; ++i) longest = std::max(longest, display_width(fmt::format("{}", esc(report.modules[i].module))));
  longest = std::max(longest, others.module.size());
  std::size_t w = name_column_width(longest, 37, 16, terminal_columns(STDOUT_FILENO));
  out.print("{:<{}}{:>10}{:>12}{:>15}\n", "MODULE", w, "TYPES", "BTF", "KERNEL MEMORY");
  auto row = [&](std::string_view name, const ModuleCost& m) {
    out.print("{:<{}}{:>10}{:>12}{:>15}\n", fit_to_column(name, w), w, with_commas(m.type_count),
              human_size(m.file_bytes), human_size(m.kernel_bytes));
  };
  for (std::size_t i = 0; i < shown; ++i) row(fmt::format("{}", esc(report.modules[i].module)), report.modules[i]);
  if (shown < report.modules.size()) row(others.module, others);
  row("TOTAL", total);
  if (base)
    out.print("\nthe kernel with these modules loaded: {} = {} ({}, as vmlinux) + {} (modules)\n",
              human_size(base_memory + total.kernel_bytes), human_size(base_memory), esc(base->name()),
              human_size(total.kernel_bytes));
  out.print("\n{} types are carried by more than one module; moving them into the base saves {}\n",
            with_commas(report.duplicates.size()), human_size(report.saved_bytes));
  if (report.duplicates.empty()) return;
  std::vector<std::string> labels;
  longest = 4;
  for (std::size_t i = 0; i < dup_shown; ++i) {
    const auto& d = report.duplicates[i];
    labels.push_back(fmt::format("{} {}", kind_name(d.kind), esc(d.name)));
    longest = std::max(longest, display_width(labels.back()));
  }
  const std::string folded = fmt::format("[{} others]", with_commas(report.duplicates.size() - dup_shown));
  longest = std::max(longest, folded.size());
  w = name_column_width(longest, 32, 16, terminal_columns(STDOUT_FILENO));
  out.print("\n{:<{}}{:>8}{:>12}{:>12}\n", "TYPE", w, "COPIES", "EACH", "SAVED");
  for (std::size_t i = 0; i < dup_shown; ++i) {
    const auto& d = report.duplicates[i];
    out.print("{:<{}}{:>8}{:>12}{:>12}\n", fit_to_column(labels[i], w), w, d.copies, human_size(d.bytes_each),
              human_size(d.saved_bytes));
  }
  if (report.duplicates.size() > dup_shown)
    out.print("{:<{}}{:>8}{:>12}{:>12}\n", folded, w, "", "", human_size(dup_others));
  out.print("{:<{}}{:>8}{:>12}{:>12}\n", "TOTAL", w, "", "", human_size(report.saved_bytes));
}

}  // namespace btfslim
