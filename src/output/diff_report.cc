// The printers of `btfslim diff`: bloat-o-meter's table, CSV and JSON over one BtfDiff.
//
// The table is scripts/bloat-o-meter's, so that it reads the same in a commit message: the summary
// line (add/remove counts rows only in the new/old BTF, grow/shrink rows in both that changed, up/down
// the sums of the positive and negative deltas, then their sum), the rows as "%-40s %7s %7s %+7d" with
// "-" where a side lacks the type, and the Total line with the change in percent. With -c each kind is a
// block of its own, with its own summary and total, and [header] and [strings] close the list as "Other".
#include "btfslim/diff.h"

#include <fmt/format.h>

#include <limits>

namespace btfslim {
namespace {

struct Summary {
  std::uint64_t add = 0, remove = 0, grow = 0, shrink = 0;
  std::int64_t up = 0, down = 0;
};

Summary summarize(const std::vector<const DiffRow*>& rows) {
  Summary s;
  for (const DiffRow* r : rows) {
    if (!r->old_size)
      ++s.add;
    else if (!r->new_size)
      ++s.remove;
    else if (r->delta > 0)
      ++s.grow;
    else
      ++s.shrink;
    if (r->delta > 0)
      s.up += r->delta;
    else
      s.down += r->delta;
  }
  return s;
}

std::string size_or_dash(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : "-"; }

double change_percent(std::uint64_t before, std::uint64_t after) {
  return before == 0 ? 0.0 : 100.0 * (static_cast<double>(after) - static_cast<double>(before)) / static_cast<double>(before);
}

void table_block(std::string_view title, const std::vector<const DiffRow*>& rows, std::uint64_t before,
                 std::uint64_t after, bool details, OutputBuffer& out) {
  const Summary s = summarize(rows);
  out.print("add/remove: {}/{} grow/shrink: {}/{} up/down: {}/{} ({})\n", s.add, s.remove, s.grow, s.shrink, s.up,
            s.down, s.up + s.down);
  out.print("{:<40} {:>7} {:>7} {:>7}\n", title, "old", "new", "delta");
  for (const DiffRow* r : rows) {
    out.print("{:<40} {:>7} {:>7} {:>+7}\n", r->name, size_or_dash(r->old_size), size_or_dash(r->new_size), r->delta);
    if (details)
      for (const std::string& c : r->changes) out.print("    {}\n", c);
  }
  out.print("Total: Before={}, After={}, chg {:+.2f}%\n", before, after, change_percent(before, after));
}

void summary_json(JsonWriter& w, const Summary& s, std::uint64_t before, std::uint64_t after) {
  w.field("add", s.add);
  w.field("remove", s.remove);
  w.field("grow", s.grow);
  w.field("shrink", s.shrink);
  w.field("up", s.up);
  w.field("down", s.down);
  w.field("before", before);
  w.field("after", after);
  w.field("delta", static_cast<std::int64_t>(after) - static_cast<std::int64_t>(before));
}

// A side's size, or null where the type is absent (JsonWriter writes null for a number that is not finite).
void size_json(JsonWriter& w, std::string_view key, const std::optional<std::uint64_t>& v) {
  w.key(key);
  if (v)
    w.value(*v);
  else
    w.value(std::numeric_limits<double>::quiet_NaN());
}

}  // namespace

void print_diff(const BtfDiff& diff, const DiffPrintOptions& options, OutputBuffer& out) {
  std::vector<const DiffRow*> all;
  all.reserve(diff.rows.size());
  for (const DiffRow& r : diff.rows) all.push_back(&r);
  auto of_kind = [&](std::optional<Kind> kind) {
    std::vector<const DiffRow*> rows;
    for (const DiffRow* r : all)
      if (r->kind == kind) rows.push_back(r);
    return rows;
  };

  switch (options.format) {
    case Format::Table:
      if (!options.by_kind) {
        table_block("Type", all, diff.old_total, diff.new_total, options.details, out);
        return;
      }
      for (const Kind k : diff.kinds) {
        const auto i = static_cast<std::size_t>(k);
        table_block(kind_name(k), of_kind(k), diff.old_by_kind[i], diff.new_by_kind[i], options.details, out);
        out.put('\n');
      }
      table_block("Other", of_kind(std::nullopt), diff.old_other, diff.new_other, options.details, out);
      return;
    case Format::Csv:
      out.write("kind,name,old,new,delta\n");
      for (const DiffRow* r : all)
        out.print("{},{},{},{},{}\n", r->kind ? kind_name(*r->kind) : "", csv_quoted(r->name),
                  r->old_size ? std::to_string(*r->old_size) : "", r->new_size ? std::to_string(*r->new_size) : "",
                  r->delta);
      return;
    case Format::Json: {
      JsonWriter w(out);
      w.begin_object();
      w.field("old", options.old_name);
      w.field("new", options.new_name);
      summary_json(w, summarize(all), diff.old_total, diff.new_total);
      w.key("kinds");
      w.begin_array();
      for (const Kind k : diff.kinds) {
        const auto i = static_cast<std::size_t>(k);
        w.begin_object();
        w.field("kind", kind_name(k));
        summary_json(w, summarize(of_kind(k)), diff.old_by_kind[i], diff.new_by_kind[i]);
        w.end_object();
      }
      w.begin_object();
      w.field("kind", "other");
      summary_json(w, summarize(of_kind(std::nullopt)), diff.old_other, diff.new_other);
      w.end_object();
      w.end_array();
      w.key("rows");
      w.begin_array();
      for (const DiffRow* r : all) {
        w.begin_object();
        w.field("kind", r->kind ? kind_name(*r->kind) : std::string_view("other"));
        w.field("name", r->name);
        size_json(w, "old", r->old_size);
        size_json(w, "new", r->new_size);
        w.field("delta", r->delta);
        if (options.details) {
          w.key("changes");
          w.begin_array();
          for (const std::string& c : r->changes) w.value(c);
          w.end_array();
        }
        w.end_object();
      }
      w.end_array();
      w.end_object();
      w.finish();
      return;
    }
  }
}

}  // namespace btfslim
