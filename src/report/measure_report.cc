// Printing `btfslim measure`: the per-kind roll-up, the top types, prefixes, and the kernel's memory.
//
// Every table ends in a TOTAL equal to the blob's size: whatever a view leaves out is folded into rows
// such as "[N others]", "[header]" and "[unreferenced strings]", never dropped. Fractional string shares
// are rounded so that the printed integers still add up (round_to_total). Retained and closure columns
// overlap between rows by nature and are not summed.
//
// Each table is a view (view.h): KindsView, TypesView and PrefixesView say their columns once and fill
// one row at a time; the table, CSV and JSON printers render them, so a view has every format. What
// differs between formats is said in the cell: CSV's rounded share (in_csv), JSON's unrounded one
// (in_json), a blank for zero in the table (blank_zero).
#include "btfslim/error.h"
#include "btfslim/kernel_memory.h"
#include "btfslim/progress.h"
#include "btfslim/report.h"
#include "btfslim/view.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>
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
  // Every type's closure (--all --closure) takes seconds: a progress bar on a terminal.
  std::optional<ProgressBar> bar;
  if (with_closures && shown > 10000) bar.emplace(shown, "closures");
  const auto closures = with_closures ? closure_sizes(fp.graph, {nodes.data(), shown}, fp.own,
                                                      bar ? ClosureProgress([&](std::size_t done) { bar->update(done, ""); })
                                                          : ClosureProgress())
                                      : std::vector<Closure>{};
  if (bar) bar->update(shown, ""), bar->clear();
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

// ---- the views: one row description each, printed as a table, CSV or JSON (view.h) ----

// The kind table: per-kind rows, then the rows no type owns and the TOTAL. In JSON only the kinds, whose
// string_bytes is the unrounded share (the document's fields give the rest).
struct KindsView {
  std::vector<KindRow> rows;
  std::size_t kinds = 0;  // rows[0, kinds) are kinds
  const FileFootprint& f;
  std::array<Column, 6> columns{{
      {"KIND", "kind", Show::Label},
      {"COUNT", "type_count", Show::Count, 10},
      {"RECORDS", "record_bytes", Show::Bytes, 12},
      {"STRINGS", "string_bytes", Show::Bytes, 12},
      {"TOTAL", "total_bytes", Show::Bytes, 12},
      {"%", "", Show::Percent, 8},
  }};

  explicit KindsView(const FileFootprint& file) : rows(kind_rows(file)), kinds(rows.size()), f(file) {
    for (auto& r : overhead_rows(f)) rows.push_back(r);
  }
  View view() const {
    View v{columns, rows.size() + 1, [this](std::size_t i, std::span<Cell> c) { return row(i, c); }};
    v.min_label_chars = 5;
    v.min_label_width = 14;
    return v;
  }
  RowIs row(std::size_t i, std::span<Cell> c) const {
    if (i == rows.size()) {
      c[0] = Cell::of("TOTAL");
      c[1] = Cell::count(f.type_count);
      c[2] = Cell::count(f.type_bytes + f.header_bytes + f.gap_bytes);
      c[3] = Cell::count(f.string_bytes);
      c[4] = Cell::count(f.file_bytes);
      c[5] = Cell::number(100.0);
      return RowIs::Summary;
    }
    const KindRow& r = rows[i];
    c[0] = Cell::of(r.label);
    c[1] = Cell::count(r.count).blank_zero();
    c[2] = Cell::count(r.records).blank_zero();
    c[3] = Cell::count(r.strings).blank_zero();
    if (i < kinds) c[3].in_json(f.kinds[r.kind].string_bytes);
    c[4] = Cell::count(r.total());
    c[5] = Cell::number(percent(r.total(), f.file_bytes));
    return i < kinds ? RowIs::Item : RowIs::Summary;
  }
};

// The type rows: the top ones, what they fold, what no type owns, TOTAL. Own bytes are fractions: the
// table and JSON show them as they are, CSV rounds them together so that the column adds up.
struct TypesView {
  const Btf& btf;
  const Footprint& fp;
  const MeasureOptions& o;
  TypeTable t;
  std::vector<KindRow> overhead;
  std::vector<std::uint64_t> rounded;  // CSV's own bytes of the rows and folded rows
  std::vector<std::string> labels;     // the table's labels of the type rows (the table reads each twice)
  std::array<Column, 12> columns;

  TypesView(const Btf& b, const Footprint& footprint, const MeasureOptions& options)
      : btf(b), fp(footprint), o(options), t(type_table(b, footprint, options)), overhead(overhead_rows(fp.file)) {
    columns = {{
        {o.sort == MeasureSort::Retained ? "TYPE (by retained)" : "TYPE (by own)", "", Show::Label},
        {"", "id", Show::Count},
        {"KIND", "kind", Show::Text, -11},
        {"", "name", Show::Text, 0, true},
        {"", "type_count", Show::Count, 0, false, false},
        {"", "record_bytes", Show::Bytes},
        {"", "string_bytes", Show::Bytes, 0, false, false},
        {"OWN", "own_bytes", Show::Bytes, 11},
        {"RETAINED", "retained_bytes", Show::Bytes, 11},
        {"CLOSURE", "closure_bytes", Show::Bytes, 11},
        {"", "closure_type_count", Show::Count, 0, false, false},
        {"%", "", Show::Percent, 8},
    }};
    if (o.format == Format::Table) {
      labels.reserve(t.rows.size());
      for (const TypeRow& r : t.rows) labels.push_back(type_label(btf, r.id));
    }
    if (o.format == Format::Csv) {
      std::vector<double> own;
      own.reserve(t.rows.size() + t.folded.size());
      for (const TypeRow& r : t.rows) own.push_back(fp.own[r.node]);
      for (const FoldedRow& f : t.folded) own.push_back(f.own);
      rounded = round_to_total(own, fp.file.type_bytes + fp.file.referenced_string_bytes);
    }
  }
  View view() {
    View v{columns, t.rows.size() + t.folded.size() + overhead.size() + 1,
           [this](std::size_t i, std::span<Cell> c) { return row(i, c); }};
    v.min_label_chars = columns[0].heading.size();
    return v;
  }
  RowIs row(std::size_t i, std::span<Cell> c) {
    std::fill(c.begin(), c.end(), Cell::empty());
    const double file = static_cast<double>(fp.file.file_bytes);
    const std::size_t at = i;
    auto own = [&](double v) {
      c[7] = Cell::number(v);
      if (at < rounded.size()) c[7].in_csv(static_cast<double>(rounded[at]));
      c[11] = Cell::number(percent(v, file));
    };
    if (i < t.rows.size()) {
      const TypeRow& r = t.rows[i];
      const TypeView tv = btf.type(r.id);
      c[0] = i < labels.size() ? Cell::of(labels[i]) : Cell::empty();
      c[1] = Cell::count(r.id);
      c[2] = Cell::of(kind_name(tv.kind()));
      c[3] = Cell::of(btf.str(tv.name_off()));
      c[5] = Cell::count(tv.record_size());
      c[6] = Cell::number(fp.strings.per_type[r.node]);
      own(fp.own[r.node]);
      c[8] = Cell::number(fp.retained[r.node]);
      if (r.closure >= 0) {
        c[9] = Cell::number(r.closure);
        c[10] = Cell::count(r.closure_types);
      } else {
        c[9] = Cell::missing();
      }
      // The share of the column the rows are ranked by.
      c[11] = Cell::number(percent(o.sort == MeasureSort::Retained ? fp.retained[r.node] : fp.own[r.node], file));
      return RowIs::Item;
    }
    i -= t.rows.size();
    if (i < t.folded.size()) {
      const FoldedRow& f = t.folded[i];
      c[0] = c[3] = Cell::of(f.label);
      c[4] = Cell::count(f.count);
      own(f.own);
      return RowIs::Folded;
    }
    i -= t.folded.size();
    const bool total = i == overhead.size();
    const std::string_view name = total ? std::string_view("TOTAL") : std::string_view(overhead[i].label);
    c[0] = c[3] = Cell::of(name);
    c[7] = Cell::count(total ? fp.file.file_bytes : overhead[i].total());
    c[11] = Cell::number(percent(c[7].value, file));
    return RowIs::Summary;
  }
};

// Prefix rows as printed: the top ones, "[N other prefixes]", what no selected type owns, TOTAL.
struct PrefixTable {
  std::vector<PrefixRow> rows;
  bool folded = false;  // the last row is "[N other prefixes]"
  double rest = 0;      // not selected, header, unreferenced strings
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
    t.folded = true;
  }
  t.rest = std::max(rest, 0.0);
  return t;
}

constexpr std::string_view kPrefixRest = "[not selected, header, unused]";

struct PrefixesView {
  const Footprint& fp;
  PrefixTable t;
  std::vector<std::uint64_t> rounded;  // CSV's own bytes of the rows and the rest
  std::array<Column, 4> columns{{
      {"PREFIX", "prefix", Show::Label, 0, true},
      {"TYPES", "type_count", Show::Count, 10},
      {"OWN", "own_bytes", Show::Bytes, 12},
      {"%", "", Show::Percent, 8},
  }};

  PrefixesView(const Btf& btf, const Footprint& footprint, const MeasureOptions& o)
      : fp(footprint), t(prefix_table(btf, footprint, o)) {
    std::vector<double> own;
    for (const auto& r : t.rows) own.push_back(r.own);
    own.push_back(t.rest);
    rounded = round_to_total(own, fp.file.file_bytes);
  }
  View view() const {
    View v{columns, t.rows.size() + 2, [this](std::size_t i, std::span<Cell> c) { return row(i, c); }};
    v.min_label_chars = kPrefixRest.size();
    return v;
  }
  RowIs row(std::size_t i, std::span<Cell> c) const {
    const double file = static_cast<double>(fp.file.file_bytes);
    if (i < t.rows.size()) {
      const PrefixRow& r = t.rows[i];
      c[0] = Cell::of(r.prefix);
      c[1] = Cell::count(r.count);
      c[2] = Cell::number(r.own).in_csv(static_cast<double>(rounded[i]));
      c[3] = Cell::number(percent(r.own, file));
      return t.folded && i + 1 == t.rows.size() ? RowIs::Folded : RowIs::Item;
    }
    const bool total = i > t.rows.size();
    c[0] = Cell::of(total ? "TOTAL" : kPrefixRest);
    c[1] = Cell::empty();
    c[2] = total ? Cell::count(fp.file.file_bytes) : Cell::number(t.rest).in_csv(static_cast<double>(rounded.back()));
    c[3] = Cell::number(total ? 100.0 : percent(t.rest, file));
    return RowIs::Summary;
  }
};

void table_header(const Btf& btf, const FileFootprint& f, OutputBuffer& out) {
  out.print("{}: {}BTF, {}, {} types{}\n", esc(btf.name()), btf.is_split() ? "split " : "",
            btf.big_endian() ? "big-endian" : "little-endian", with_commas(f.type_count),
            btf.is_split() ? fmt::format(" on {} ({} types)", esc(btf.base()->name()), with_commas(btf.first_id() - 1))
                           : "");
  out.print("header {}, types {}, strings {}: {} ({} bytes)\n", human_size(f.header_bytes),
            human_size(f.type_bytes), human_size(f.string_bytes), human_size(f.file_bytes),
            with_commas(f.file_bytes));
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
  // The views asked for (kinds and types by default); the others as empty arrays, so that every
  // document has every key. The kind rows' total_bytes is the table's TOTAL column (string shares
  // rounded to add up), their string_bytes the share itself.
  const bool kinds = o.by == MeasureBy::KindsAndTypes || o.by == MeasureBy::Kind;
  const bool types = o.by == MeasureBy::KindsAndTypes || o.by == MeasureBy::Type;
  const bool prefixes = o.by == MeasureBy::Prefix;
  std::optional<KindsView> kinds_view;
  if (kinds) kinds_view.emplace(f);
  std::optional<View> kv;
  if (kinds) kv = kinds_view->view();
  print_json_items(kv ? &*kv : nullptr, w, "kinds");
  std::optional<TypesView> types_view;
  std::optional<PrefixesView> prefixes_view;
  std::optional<View> folded_of;  // the view whose folded rows "folded" lists: the types', or the prefixes'
  std::optional<View> tv, pv;
  if (types) {
    types_view.emplace(btf, fp, o);
    tv = folded_of = types_view->view();
  }
  if (prefixes) {
    prefixes_view.emplace(btf, fp, o);
    pv = folded_of = prefixes_view->view();
  }
  print_json_items(tv ? &*tv : nullptr, w, "types");
  print_json_folded(folded_of ? &*folded_of : nullptr, w, "folded");
  print_json_items(pv ? &*pv : nullptr, w, "prefixes");
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
  if (o.format == Format::Json) {
    json_measure(btf, fp, o, out);
    return;
  }
  // CSV is one table: the types with --by type, the prefixes with --by prefix, else the kinds.
  const bool csv = o.format == Format::Csv;
  const bool kinds = o.by == MeasureBy::KindsAndTypes || o.by == MeasureBy::Kind;
  const bool types = csv ? o.by == MeasureBy::Type : o.by == MeasureBy::KindsAndTypes || o.by == MeasureBy::Type;
  auto print = [&](const View& v) {
    if (csv) {
      print_csv(v, out);
    } else {
      out.put('\n');
      print_table(v, out);
    }
  };
  if (!csv) table_header(btf, fp.file, out);
  if (kinds) print(KindsView(fp.file).view());
  if (types) {
    TypesView t(btf, fp, o);
    print(t.view());
  }
  if (o.by == MeasureBy::Prefix) print(PrefixesView(btf, fp, o).view());
  if (csv) return;
  out.put('\n');
  print_kernel_memory(btf, fp, o.delivery, out);
}

}  // namespace btfslim
