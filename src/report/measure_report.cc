// Printing `btfslim measure`: the per-kind roll-up, the top types, prefixes, and the kernel's memory.
//
// Every table ends in a TOTAL equal to the blob's size: whatever a view leaves out is folded into rows
// such as "[N others]", "[header]" and "[unreferenced strings]", never dropped. Fractional string shares
// are rounded so that the printed integers still add up (round_to_total). Retained and closure columns
// overlap between rows by nature and are not summed.
#include "btfslim/csv.h"
#include "btfslim/error.h"
#include "btfslim/kernel_memory.h"
#include "btfslim/report.h"
#include "btfslim/terminal.h"

#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace btfslim {
namespace {

struct KindRow {
  std::string label;
  std::uint64_t count = 0;
  std::uint64_t records = 0;
  std::uint64_t strings = 0;
  unsigned kind = 0;  // 0: a row no type owns
  std::uint64_t total() const { return records + strings; }
};

// Per-kind rows (largest first), then the bytes no type owns; together they make the blob size.
std::vector<KindRow> kind_rows(const FileFootprint& f) {
  std::vector<double> shares;
  std::vector<unsigned> kinds;
  for (unsigned k = 1; k <= kMaxKind; ++k) {
    if (f.kinds[k].count == 0) continue;
    kinds.push_back(k);
    shares.push_back(f.kinds[k].string_bytes);
  }
  const auto strings = round_to_total(shares, f.referenced_string_bytes);
  std::vector<KindRow> rows;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const KindFootprint& k = f.kinds[kinds[i]];
    rows.push_back({std::string(kind_name(static_cast<Kind>(kinds[i]))), k.count, k.record_bytes, strings[i], kinds[i]});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const KindRow& a, const KindRow& b) { return a.total() > b.total(); });
  return rows;
}

// The rows that belong to no type: what only a BPF object's .BTF.ext names, where it does, then what
// nothing names.
std::vector<KindRow> overhead_rows(const FileFootprint& f) {
  std::vector<KindRow> rows{{"[header]", 0, f.header_bytes, 0}};
  for (std::size_t use = 0; use < kExtUses; ++use)
    if (f.ext_string_bytes[use]) rows.push_back({ext_row_label(static_cast<ExtUse>(use)), 0, 0, f.ext_string_bytes[use]});
  rows.push_back({"[unreferenced strings]", 0, 0, f.unreferenced_string_bytes});
  if (f.gap_bytes) rows.push_back({"[gaps]", 0, f.gap_bytes, 0});
  return rows;
}

struct TypeRow {
  TypeId id = 0;
  std::uint32_t node = 0;
  double closure = -1;  // < 0: not computed
  std::uint32_t closure_types = 0;
};

// A group of types folded into one row: "[N others]", "[not selected]".
struct FoldedRow {
  std::string label;
  std::uint64_t count = 0;
  double own = 0;
};

struct TypeTable {
  std::vector<TypeRow> rows;
  std::vector<FoldedRow> folded;
};

// The selected nodes in id order, calling keep(node) for each and fold(node) for the others.
template <typename Keep, typename Fold>
void select_nodes(const Btf& btf, const TypeSelection& filter, Keep&& keep, Fold&& fold) {
  const bool all = filter.selects_all();
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const std::uint32_t node = id - btf.first_id();
    if (all || filter.matches(btf, id))
      keep(node);
    else
      fold(node);
  }
}

// A table's rows, best first, and what "[N others]" folds.
struct Ranked {
  std::vector<std::uint32_t> rows;
  std::uint64_t others = 0;
  double others_own = 0;
};

// The `top` (> 0) selected nodes that rank first by `keys` (ties: the lower id), and the other selected
// ones' own bytes, summed in the order std::partial_sort of every selected node leaves them behind its
// rows, so that the JSON's double is what it always was: at each place past the rows, partial_sort
// leaves the node that stood there or, where that one ranks above the worst row so far, the worst row,
// which it replaces. `order` is a total order, so the worst row is the same however the heap is kept.
// The rows are kept in a heap of their own, rather than by sorting an array of every node (half a
// megabyte of fresh memory for a kernel, and a page fault for every 4 KiB of it). Nodes come in id
// order, so one ranks above the worst row exactly when its key is larger: one comparison of doubles
// per node, and the sum runs in a loop of its own between two nodes that make the rows, where it stays
// in a register (in one loop with the call that replaces a row, it went through memory for every node:
// four times slower).
template <typename Selected, typename Order>
Ranked top_rows(std::uint32_t n, std::size_t top, bool all, Selected&& selected, std::span<const double> keys,
                std::span<const double> own, Order&& order) {
  Ranked r;
  std::vector<std::uint32_t>& rows = r.rows;
  std::uint32_t node = 0;
  for (; node < n && rows.size() < top; ++node)
    if (selected(node)) rows.push_back(node);
  std::make_heap(rows.begin(), rows.end(), order);
  double worst = rows.empty() ? 0 : keys[rows.front()];
  double sum = 0;
  while (node < n) {
    if (all) {
      double s = sum;
      const std::uint32_t from = node;
      for (; node < n && keys[node] <= worst; ++node) s += own[node];
      sum = s;
      r.others += node - from;
      if (node == n) break;
    } else if (!selected(node)) {
      ++node;
      continue;
    } else if (keys[node] <= worst) {
      ++r.others;
      sum += own[node++];
      continue;
    }
    // `node` ranks above the worst row, which makes way for it.
    ++r.others;
    sum += own[rows.front()];
    std::pop_heap(rows.begin(), rows.end(), order);
    rows.back() = node++;
    std::push_heap(rows.begin(), rows.end(), order);
    worst = keys[rows.front()];
  }
  r.others_own = sum;
  if (rows.size() < top)
    std::sort(rows.begin(), rows.end(), order);
  else
    std::sort_heap(rows.begin(), rows.end(), order);
  return r;
}

TypeTable type_table(const Btf& btf, const Footprint& fp, const MeasureOptions& o) {
  FoldedRow not_selected{"[not selected]", 0, 0};
  auto fold_unselected = [&](std::uint32_t node) {
    ++not_selected.count;
    not_selected.own += fp.own[node];
  };
  const auto& key = o.sort == MeasureSort::Retained ? fp.retained : fp.own;
  auto order = [&](std::uint32_t a, std::uint32_t b) { return key[a] != key[b] ? key[a] > key[b] : a < b; };
  // --all and -n 0 sort every selected node (-n 0: partial_sort keeps the best node so far in front,
  // where it is summed first; top_rows does not do that).
  Ranked ranked;
  if (!o.all && o.top > 0) {
    const bool all = o.filter.selects_all();
    auto selected = [&](std::uint32_t node) {
      if (all || o.filter.matches(btf, btf.first_id() + node)) return true;
      fold_unselected(node);
      return false;
    };
    ranked = top_rows(btf.own_count(), o.top, all, selected, key, fp.own, order);
  } else {
    std::vector<std::uint32_t>& nodes = ranked.rows;
    if (o.filter.selects_all()) nodes.reserve(btf.own_count());
    select_nodes(btf, o.filter, [&](std::uint32_t node) { nodes.push_back(node); }, fold_unselected);
    const std::size_t shown = o.all ? nodes.size() : 0;
    std::partial_sort(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(shown), nodes.end(), order);
    ranked.others = nodes.size() - shown;
    for (std::size_t i = shown; i < nodes.size(); ++i) ranked.others_own += fp.own[nodes[i]];
    nodes.resize(shown);
  }
  const std::vector<std::uint32_t>& nodes = ranked.rows;
  const std::size_t shown = nodes.size();

  TypeTable table;
  const bool with_closures = !o.all || o.closure_all;
  const auto closures =
      with_closures ? closure_sizes(fp.graph, {nodes.data(), shown}, fp.own) : std::vector<Closure>{};
  for (std::size_t i = 0; i < shown; ++i) {
    TypeRow r{btf.first_id() + nodes[i], nodes[i]};
    if (with_closures) r.closure = closures[i].bytes, r.closure_types = closures[i].types;
    table.rows.push_back(r);
  }
  FoldedRow others{fmt::format("[{} others]", with_commas(ranked.others)), ranked.others, ranked.others_own};
  if (others.count) table.folded.push_back(others);
  if (not_selected.count) table.folded.push_back(not_selected);
  return table;
}

struct PrefixRow {
  std::string prefix;
  std::uint64_t count = 0;
  double own = 0;
};

// Named types grouped by their name up to the first '_' (after leading underscores): a rough view by
// subsystem. Anonymous types form one group.
std::vector<PrefixRow> prefix_rows(const Btf& btf, const Footprint& fp, const TypeSelection& filter) {
  std::vector<PrefixRow> rows;
  std::unordered_map<std::string_view, std::size_t> index;
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    if (!filter.selects_all() && !filter.matches(btf, id)) continue;
    const std::string_view name = btf.str(btf.type(id).name_off());
    std::string_view prefix = "[anonymous types]";
    if (!name.empty()) {
      const std::size_t lead = name.find_first_not_of('_');
      const std::size_t cut = lead == std::string_view::npos ? std::string_view::npos : name.find('_', lead);
      prefix = cut == std::string_view::npos ? name : name.substr(0, cut);
    }
    auto [it, fresh] = index.try_emplace(prefix, rows.size());
    if (fresh) rows.push_back({std::string(prefix), 0, 0});
    PrefixRow& r = rows[it->second];
    ++r.count;
    r.own += fp.own[id - btf.first_id()];
  }
  std::sort(rows.begin(), rows.end(),
            [](const PrefixRow& a, const PrefixRow& b) { return a.own != b.own ? a.own > b.own : a.prefix < b.prefix; });
  return rows;
}

// "[id] summary" of a type row.
std::string type_label(const Btf& btf, TypeId id) { return fmt::format("[{}] {}", id, type_summary(btf, id)); }

// The width of a table's name column (terminal.h): no cut in a pipe, the name column gives way first.
std::size_t name_width(std::size_t longest, std::size_t other_columns) {
  return name_column_width(longest, other_columns, 24, terminal_columns(STDOUT_FILENO));
}

// ---- kernel memory ----

struct KernelLine {
  std::string label;
  KernelMemory memory;
};

std::string describe(const KernelMemory& m) {
  std::string s = fmt::format("{} = {} BTF data {} + {} types array ({} slots, capacity {} x 8 B)",
                              human_size(m.total()), human_size(m.data_bytes),
                              m.data_copied ? "copied" : "in the kernel image", human_size(m.type_array_bytes),
                              with_commas(m.type_slots), with_commas(m.type_capacity));
  if (m.resolved_bytes) s += fmt::format(" + {} resolved ids/sizes", human_size(m.resolved_bytes));
  return s;
}

// vmlinux BTF delivered as a module: all of it copied once used, or a resident base plus the rest.
struct DeliveryCost {
  KernelMemory whole;
  std::optional<KernelMemory> resident;  // the resident base, when one is given
  std::optional<KernelMemory> rest;      // the rest as a module
};

DeliveryCost delivery_cost(const Btf& btf, const Footprint& fp, const ModuleDelivery& d) {
  DeliveryCost c{kernel_memory(fp.file.file_bytes, btf.own_count(), LoadedAs::Module), {}, {}};
  if (const auto& base = d.resident_base) {
    c.resident = kernel_memory(base->raw().size(), base->own_count(), LoadedAs::Vmlinux);
    const std::uint64_t bytes = fp.file.file_bytes > base->raw().size() ? fp.file.file_bytes - base->raw().size() : 0;
    const std::uint32_t types = btf.own_count() > base->own_count() ? btf.own_count() - base->own_count() : 0;
    c.rest = kernel_memory(bytes, types, LoadedAs::Module);
  }
  return c;
}

void print_kernel_memory(const Btf& btf, const Footprint& fp, const ModuleDelivery& d, OutputBuffer& out) {
  if (!d.enabled) {
    out.print("kernel memory (loaded as {}): {}\n", loaded_as_name(fp.kernel.as), describe(fp.kernel));
    return;
  }
  const DeliveryCost c = delivery_cost(btf, fp, d);
  out.print("kernel memory, BTF delivered as a module: 0 B resident until first use, then {}\n", describe(c.whole));
  if (!c.resident) return;
  out.print("  with resident base {}: always {}\n", esc(d.resident_base->name()), describe(*c.resident));
  out.print("  the rest as a module, after first use: {}\n", describe(*c.rest));
  const double change = static_cast<double>(c.resident->total()) - static_cast<double>(fp.kernel.total());
  out.print("  resident before first use: {} instead of {} as vmlinux ({:+.1f}%)\n", human_size(c.resident->total()),
            human_size(fp.kernel.total()), percent(change, fp.kernel.total()));
}

void json_kernel_memory(JsonWriter& w, const KernelMemory& m) {
  w.begin_object();
  w.field("model", loaded_as_name(m.as));
  w.field("total_bytes", m.total());
  w.field("data_bytes", m.data_bytes);
  w.field("data_copied", m.data_copied);
  w.field("type_array_bytes", m.type_array_bytes);
  w.field("type_slot_count", m.type_slots);
  w.field("type_slot_capacity", m.type_capacity);
  w.field("resolved_bytes", m.resolved_bytes);
  w.end_object();
}

// ---- table ----

void table_header(const Btf& btf, const FileFootprint& f, OutputBuffer& out) {
  out.print("{}: {}BTF, {}, {} types{}\n", esc(btf.name()), btf.is_split() ? "split " : "",
            btf.big_endian() ? "big-endian" : "little-endian", with_commas(f.type_count),
            btf.is_split() ? fmt::format(" on {} ({} types)", esc(btf.base()->name()), with_commas(btf.first_id() - 1))
                           : "");
  out.print("header {}, types {}, strings {}: {} ({} bytes)\n", human_size(f.header_bytes),
            human_size(f.type_bytes), human_size(f.string_bytes), human_size(f.file_bytes),
            with_commas(f.file_bytes));
}

void table_kinds(const FileFootprint& f, OutputBuffer& out) {
  auto rows = kind_rows(f);
  for (auto& r : overhead_rows(f)) rows.push_back(r);
  std::size_t longest = 5;
  for (const KindRow& r : rows) longest = std::max(longest, display_width(r.label));
  const std::size_t w = std::max<std::size_t>(name_width(longest, 54), 14);
  out.print("\n{:<{}}{:>10}{:>12}{:>12}{:>12}{:>8}\n", "KIND", w, "COUNT", "RECORDS", "STRINGS", "TOTAL", "%");
  for (const KindRow& r : rows)
    out.print("{:<{}}{:>10}{:>12}{:>12}{:>12}{:>7.1f}%\n", fit_to_column(r.label, w), w,
              r.count ? with_commas(r.count) : "", r.records ? human_size(r.records) : "",
              r.strings ? human_size(r.strings) : "", human_size(r.total()), percent(r.total(), f.file_bytes));
  out.print("{:<{}}{:>10}{:>12}{:>12}{:>12}{:>7.1f}%\n", "TOTAL", w, with_commas(f.type_count),
            human_size(f.type_bytes + f.header_bytes + f.gap_bytes), human_size(f.string_bytes),
            human_size(f.file_bytes), 100.0);
}

void table_types(const Btf& btf, const Footprint& fp, const MeasureOptions& o, OutputBuffer& out) {
  const TypeTable t = type_table(btf, fp, o);
  const std::uint64_t file = fp.file.file_bytes;
  const auto overhead = overhead_rows(fp.file);
  std::vector<std::string> labels;
  for (const TypeRow& r : t.rows) labels.push_back(type_label(btf, r.id));
  const std::string title = o.sort == MeasureSort::Retained ? "TYPE (by retained)" : "TYPE (by own)";
  std::size_t longest = title.size();
  for (const auto& l : labels) longest = std::max(longest, display_width(l));
  for (const FoldedRow& f : t.folded) longest = std::max(longest, display_width(f.label));
  for (const KindRow& r : overhead) longest = std::max(longest, display_width(r.label));
  const std::size_t width = name_width(longest, 52);
  out.print("\n{:<{}}{:<11}{:>11}{:>11}{:>11}{:>8}\n", fit_to_column(title, width), width, "KIND", "OWN", "RETAINED",
            "CLOSURE", "%");
  auto row = [&](std::string_view label, std::string_view kind, double own, std::string_view retained,
                 std::string_view closure, double share) {
    out.print("{:<{}}{:<11}{:>11}{:>11}{:>11}{:>7.1f}%\n", fit_to_column(label, width), width, kind, human_size(own),
              retained, closure, percent(share, file));
  };
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const TypeRow& r = t.rows[i];
    const double sorted = o.sort == MeasureSort::Retained ? fp.retained[r.node] : fp.own[r.node];
    row(labels[i], kind_name(btf.type(r.id).kind()), fp.own[r.node], human_size(fp.retained[r.node]),
        r.closure < 0 ? std::string("-") : human_size(r.closure), sorted);
  }
  for (const FoldedRow& f : t.folded) row(f.label, "", f.own, "", "", f.own);
  for (const KindRow& r : overhead) row(r.label, "", r.total(), "", "", r.total());
  row("TOTAL", "", file, "", "", file);
}

// Prefix rows as printed: the top ones, "[N other prefixes]", what no selected type owns, TOTAL.
struct PrefixTable {
  std::vector<PrefixRow> rows;
  double rest = 0;  // not selected, header, unreferenced strings
};

PrefixTable prefix_table(const Btf& btf, const Footprint& fp, const MeasureOptions& o) {
  auto rows = prefix_rows(btf, fp, o.filter);
  const std::size_t shown = o.all ? rows.size() : std::min(o.top, rows.size());
  PrefixTable t;
  double rest = fp.file.file_bytes;
  for (std::size_t i = 0; i < shown; ++i) {
    t.rows.push_back(rows[i]);
    rest -= rows[i].own;
  }
  if (rows.size() > shown) {
    PrefixRow others{fmt::format("[{} other prefixes]", with_commas(rows.size() - shown)), 0, 0};
    for (std::size_t i = shown; i < rows.size(); ++i) others.own += rows[i].own, others.count += rows[i].count;
    rest -= others.own;
    t.rows.push_back(std::move(others));
  }
  t.rest = std::max(rest, 0.0);
  return t;
}

constexpr std::string_view kPrefixRest = "[not selected, header, unused]";

void table_prefixes(const Btf& btf, const Footprint& fp, const MeasureOptions& o, OutputBuffer& out) {
  const PrefixTable t = prefix_table(btf, fp, o);
  const std::uint64_t file = fp.file.file_bytes;
  std::size_t longest = kPrefixRest.size();
  std::vector<std::string> labels;
  for (const auto& r : t.rows) {
    labels.push_back(fmt::format("{}", esc(r.prefix)));
    longest = std::max(longest, display_width(labels.back()));
  }
  const std::size_t w = name_width(longest, 30);
  out.print("\n{:<{}}{:>10}{:>12}{:>8}\n", "PREFIX", w, "TYPES", "OWN", "%");
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    out.print("{:<{}}{:>10}{:>12}{:>7.1f}%\n", fit_to_column(labels[i], w), w, with_commas(t.rows[i].count),
              human_size(t.rows[i].own), percent(t.rows[i].own, file));
  out.print("{:<{}}{:>10}{:>12}{:>7.1f}%\n", fit_to_column(kPrefixRest, w), w, "", human_size(t.rest),
            percent(t.rest, file));
  out.print("{:<{}}{:>10}{:>12}{:>7.1f}%\n", "TOTAL", w, "", human_size(file), 100.0);
}

// ---- CSV ----

void csv_kinds(const FileFootprint& f, OutputBuffer& out) {
  CsvWriter csv(out, {"kind", "type_count", "record_bytes", "string_bytes", "total_bytes"});
  auto rows = kind_rows(f);
  for (auto& r : overhead_rows(f)) rows.push_back(r);
  for (const KindRow& r : rows)
    csv.row({r.label, fmt::format("{}", r.count), fmt::format("{}", r.records), fmt::format("{}", r.strings),
             fmt::format("{}", r.total())});
  csv.row({"TOTAL", fmt::format("{}", f.type_count), fmt::format("{}", f.type_bytes + f.header_bytes + f.gap_bytes),
           fmt::format("{}", f.string_bytes), fmt::format("{}", f.file_bytes)});
}

void csv_types(const Btf& btf, const Footprint& fp, const MeasureOptions& o, OutputBuffer& out) {
  const TypeTable t = type_table(btf, fp, o);
  // String shares are fractions: round every row's own bytes together so that the column adds up.
  std::vector<double> own;
  for (const TypeRow& r : t.rows) own.push_back(fp.own[r.node]);
  for (const FoldedRow& f : t.folded) own.push_back(f.own);
  const auto rounded = round_to_total(own, fp.file.type_bytes + fp.file.referenced_string_bytes);
  CsvWriter csv(out, {"id", "kind", "name", "record_bytes", "own_bytes", "retained_bytes", "closure_bytes"});
  std::size_t i = 0;
  for (const TypeRow& r : t.rows) {
    const TypeView tv = btf.type(r.id);
    csv.row({fmt::format("{}", r.id), kind_name(tv.kind()), CsvWriter::name(btf.str(tv.name_off())),
             fmt::format("{}", tv.record_size()), fmt::format("{}", rounded[i++]),
             fmt::format("{:.0f}", fp.retained[r.node]), r.closure < 0 ? std::string() : fmt::format("{:.0f}", r.closure)});
  }
  for (const FoldedRow& f : t.folded) csv.row({"", "", f.label, "", fmt::format("{}", rounded[i++]), "", ""});
  for (const KindRow& r : overhead_rows(fp.file)) csv.row({"", "", r.label, "", fmt::format("{}", r.total()), "", ""});
  csv.row({"", "", "TOTAL", "", fmt::format("{}", fp.file.file_bytes), "", ""});
}

void csv_prefixes(const Btf& btf, const Footprint& fp, const MeasureOptions& o, OutputBuffer& out) {
  const PrefixTable t = prefix_table(btf, fp, o);
  std::vector<double> own;
  for (const auto& r : t.rows) own.push_back(r.own);
  own.push_back(t.rest);
  const auto rounded = round_to_total(own, fp.file.file_bytes);
  CsvWriter csv(out, {"prefix", "type_count", "own_bytes"});
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    csv.row({CsvWriter::name(t.rows[i].prefix), fmt::format("{}", t.rows[i].count), fmt::format("{}", rounded[i])});
  csv.row({kPrefixRest, "", fmt::format("{}", rounded.back())});
  csv.row({"TOTAL", "", fmt::format("{}", fp.file.file_bytes)});
}

// ---- JSON ----

void json_measure(const Btf& btf, const Footprint& fp, const MeasureOptions& o, OutputBuffer& out) {
  const FileFootprint& f = fp.file;
  JsonWriter w(out);
  w.begin_object();
  w.field("file", btf.name());
  w.field("split", btf.is_split());
  if (btf.is_split()) w.field("base", btf.base()->name());
  w.field("byte_order", btf.big_endian() ? "big" : "little");
  w.field("file_bytes", f.file_bytes);
  w.field("header_bytes", f.header_bytes);
  w.field("type_bytes", f.type_bytes);
  w.field("string_bytes", f.string_bytes);
  w.field("referenced_string_bytes", f.referenced_string_bytes);
  w.field("unreferenced_string_bytes", f.unreferenced_string_bytes);
  if (f.has_ext) {
    // Strings no type names that the object's .BTF.ext does.
    w.key("btf_ext_string_bytes");
    w.begin_object();
    w.field("section_names", f.ext_string_bytes[static_cast<std::size_t>(ExtUse::SectionNames)]);
    w.field("line_info", f.ext_string_bytes[static_cast<std::size_t>(ExtUse::LineInfo)]);
    w.field("core_access_strings", f.ext_string_bytes[static_cast<std::size_t>(ExtUse::CoreAccess)]);
    w.end_object();
  }
  w.field("gap_bytes", f.gap_bytes);
  w.field("type_count", f.type_count);
  w.field("edge_count", fp.graph.edge_count());
  w.field("base_edge_count", fp.graph.base_edge_count());
  w.key("kernel_memory");
  json_kernel_memory(w, fp.kernel);
  if (o.delivery.enabled) {
    const DeliveryCost c = delivery_cost(btf, fp, o.delivery);
    w.key("kernel_memory_as_module");  // nothing resident until first use, then this
    json_kernel_memory(w, c.whole);
    if (c.resident) {
      w.key("kernel_memory_resident_base");
      json_kernel_memory(w, *c.resident);
      w.key("kernel_memory_rest_as_module");
      json_kernel_memory(w, *c.rest);
    }
  }
  // The kind table's rows: total_bytes is its TOTAL column (string shares rounded to add up).
  w.key("kinds");
  w.begin_array();
  for (const KindRow& r : kind_rows(f)) {
    const KindFootprint& kf = f.kinds[r.kind];
    w.begin_object();
    w.field("kind", r.label);
    w.field("type_count", kf.count);
    w.field("record_bytes", kf.record_bytes);
    w.field("string_bytes", kf.string_bytes);
    w.field("total_bytes", r.total());
    w.end_object();
  }
  w.end_array();
  const TypeTable t = type_table(btf, fp, o);
  w.key("types");
  w.begin_array();
  for (const TypeRow& r : t.rows) {
    w.begin_object();
    json_type_footprint(w, btf, fp, r.id);
    if (r.closure >= 0) {  // computed for the top rows, and for all with --closure
      w.field("closure_bytes", r.closure);
      w.field("closure_type_count", r.closure_types);
    }
    w.end_object();
  }
  w.end_array();
  w.key("folded");
  w.begin_array();
  for (const FoldedRow& fr : t.folded) {
    w.begin_object();
    w.field("label", fr.label);
    w.field("type_count", fr.count);
    w.field("own_bytes", fr.own);
    w.end_object();
  }
  w.end_array();
  w.key("prefixes");
  w.begin_array();
  if (o.by == MeasureBy::Prefix) {
    for (const PrefixRow& r : prefix_rows(btf, fp, o.filter)) {
      w.begin_object();
      w.field("prefix", r.prefix);
      w.field("type_count", r.count);
      w.field("own_bytes", r.own);
      w.end_object();
    }
  }
  w.end_array();
  w.end_object();
  w.finish();
}

}  // namespace

void json_type_footprint(JsonWriter& w, const Btf& btf, const Footprint& fp, TypeId id) {
  const TypeView t = btf.type(id);
  const std::uint32_t node = id - btf.first_id();
  w.field("id", id);
  w.field("kind", kind_name(t.kind()));
  w.field("name", btf.str(t.name_off()));
  w.field("record_bytes", t.record_size());
  w.field("string_bytes", fp.strings.per_type[node]);
  w.field("own_bytes", fp.own[node]);
  w.field("retained_bytes", fp.retained[node]);
}

std::vector<KindTotal> kind_totals(const FileFootprint& file) {
  std::vector<KindTotal> totals;
  auto rows = kind_rows(file);
  for (auto& r : overhead_rows(file)) rows.push_back(r);
  for (const KindRow& r : rows) totals.push_back({r.label, r.kind, r.count, r.total()});
  return totals;
}

std::string ext_row_label(ExtUse use) { return fmt::format("[.BTF.ext {}]", ext_use_name(use)); }

void print_measure(const Btf& btf, const Footprint& fp, const MeasureOptions& o, OutputBuffer& out) {
  switch (o.format) {
    case Format::Json:
      json_measure(btf, fp, o, out);
      return;
    case Format::Csv:
      if (o.by == MeasureBy::Type)
        csv_types(btf, fp, o, out);
      else if (o.by == MeasureBy::Prefix)
        csv_prefixes(btf, fp, o, out);
      else
        csv_kinds(fp.file, out);
      return;
    case Format::Table:
      break;
  }
  table_header(btf, fp.file, out);
  if (o.by == MeasureBy::KindsAndTypes || o.by == MeasureBy::Kind) table_kinds(fp.file, out);
  if (o.by == MeasureBy::KindsAndTypes || o.by == MeasureBy::Type) table_types(btf, fp, o, out);
  if (o.by == MeasureBy::Prefix) table_prefixes(btf, fp, o, out);
  out.put('\n');
  print_kernel_memory(btf, fp, o.delivery, out);
}

}  // namespace btfslim
