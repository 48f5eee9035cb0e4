// The focused views of `btfslim measure`: one type in detail (--type) and the BTF without some kinds
// (--without).
#include "btfslim/csv.h"
#include "btfslim/error.h"
#include "btfslim/report.h"
#include "btfslim/view.h"

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

  // Whole bytes per kind, rounded so that each column adds up to its TOTAL (CSV's figures).
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

  // One row per kind present, then TOTAL.
  std::vector<unsigned> present;
  for (unsigned k = 1; k <= kMaxKind; ++k)
    if (per[k].removed || per[k].kept) present.push_back(k);
  static constexpr std::array<Column, 5> kColumns{{
      {"KIND", "kind", Show::Text, -14},
      {"REMOVED", "removed_type_count", Show::Count, 10},
      {"BYTES", "removed_bytes", Show::Bytes, 12},
      {"KEPT", "kept_type_count", Show::Count, 10},
      {"BYTES", "kept_bytes", Show::Bytes, 12},
  }};
  const View view{kColumns, present.size() + 1, [&](std::size_t i, std::span<Cell> c) {
    if (i == present.size()) {
      c[0] = Cell::of("TOTAL");
      c[1] = Cell::count(direct + dragged);
      c[2] = Cell::number(removed_bytes);
      c[3] = Cell::count(kept_types);
      c[4] = Cell::number(kept_bytes);
      return RowIs::Summary;
    }
    const unsigned k = present[i];
    c[0] = Cell::of(kind_name(static_cast<Kind>(k)));
    c[1] = Cell::count(per[k].removed);
    c[2] = Cell::number(per[k].removed_bytes).in_csv(static_cast<double>(removed_rounded[k - 1]));
    c[3] = Cell::count(per[k].kept);
    c[4] = Cell::number(per[k].kept_bytes).in_csv(static_cast<double>(kept_rounded[k - 1]));
    return RowIs::Item;
  }};

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
    print_json_items(&view, w, "kinds");
    w.end_object();
    w.finish();
    return;
  }
  if (format == Format::Csv) {
    print_csv(view, out);
    return;
  }
  out.print("{} without {}:\n", esc(btf.name()), names);
  out.print("  removed {} types, {} ({:.1f}% of {}): {} of those kinds and {} more that only they kept alive\n",
            with_commas(direct + dragged), human_size(removed_bytes), percent(removed_bytes, file), human_size(file),
            with_commas(direct), with_commas(dragged));
  out.print("  remaining {}: {}\n\n", human_size(file - removed_bytes),
            fmt::format("{} types", with_commas(n - direct - dragged)));
  print_table(view, out);
}

}  // namespace btfslim
