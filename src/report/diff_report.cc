// The printers of `btfslim diff`: three views over one BtfDiff, each as a table or CSV, and one JSON
// document that holds them all.
//
// --by type (the default) is what people diff kernels for: one line per type whose layout changed
// ("struct task_struct: size 9,728 -> 3,264; 3 members added, 192 moved"), then the types only one side
// has; with -v each member's change under its type. --by member is one line per member, enumerator or
// parameter that changed, for grep. --by kind is the BTF footprint in scripts/bloat-o-meter's format,
// one block per kind, so that it reads the same in a commit message: the summary line (add/remove
// counts rows only in the new/old BTF, grow/shrink rows in both that changed, up/down the sums of the
// positive and negative deltas, then their sum), the rows as "%-40s %7s %7s %+7d" with "-" where a side
// lacks the type, and the Total line with the change in percent; [header] and [strings] close the list
// as "Other", and the whole BTF's Total line ends it. Past -n, the rows of a table fold into "[N others]"; the last line is the total.
#include "btfslim/diff.h"
#include "btfslim/terminal.h"

#include <fmt/format.h>

#include <functional>
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

// A table line, cut to the width when there is one (a terminal or COLUMNS; never in a pipe).
void line(OutputBuffer& out, const DiffPrintOptions& o, std::string_view text) {
  if (o.columns > 3 && display_width(text) > o.columns) {
    out.write(prefix_of_width(text, o.columns - 3));  // whole characters: names are UTF-8
    out.write("...");
  } else {
    out.write(text);
  }
  out.put('\n');
}

void footprint_block(std::string_view title, const std::vector<const DiffRow*>& rows, std::uint64_t before,
                     std::uint64_t after, const DiffPrintOptions& o, OutputBuffer& out) {
  const Summary s = summarize(rows);
  out.print("add/remove: {}/{} grow/shrink: {}/{} up/down: {}/{} ({})\n", s.add, s.remove, s.grow, s.shrink, s.up,
            s.down, s.up + s.down);
  out.print("{:<40} {:>7} {:>7} {:>7}\n", title, "old", "new", "delta");
  const std::size_t shown = o.top && rows.size() > o.top ? o.top : rows.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const DiffRow* r = rows[i];
    line(out, o, fmt::format("{:<40} {:>7} {:>7} {:>+7}", r->name, size_or_dash(r->old_size), size_or_dash(r->new_size), r->delta));
  }
  if (shown < rows.size()) {
    std::uint64_t old_sum = 0, new_sum = 0;
    for (std::size_t i = shown; i < rows.size(); ++i) {
      old_sum += rows[i]->old_size.value_or(0);
      new_sum += rows[i]->new_size.value_or(0);
    }
    line(out, o, fmt::format("{:<40} {:>7} {:>7} {:>+7}", fmt::format("[{} others]", with_commas(rows.size() - shown)),
                             old_sum, new_sum, static_cast<std::int64_t>(new_sum) - static_cast<std::int64_t>(old_sum)));
  }
  out.print("Total: Before={}, After={}, chg {:+.2f}%\n", before, after, change_percent(before, after));
}

std::string value_text(const std::optional<std::uint64_t>& v, bool is_signed) {
  if (!v) return {};
  return is_signed ? std::to_string(static_cast<std::int64_t>(*v)) : std::to_string(*v);
}

// "offset 16", "bit 35".
std::string place(std::uint64_t bit_offset, std::uint32_t bits) {
  if (bits || bit_offset % 8) return fmt::format("bit {}", with_commas(bit_offset));
  return fmt::format("offset {}", with_commas(bit_offset / 8));
}
std::string typed(const std::string& type, std::uint32_t bits) { return bits ? fmt::format("{}:{}", type, bits) : type; }

// One member change as the detail line of --by type -v and the text of --by member.
std::string change_text(const MemberChange& c) {
  const bool enumerator = c.old_value || c.new_value;
  switch (c.change) {
    case Change::Added:
      if (enumerator) return fmt::format("+ {} = {}", c.member, value_text(c.new_value, c.value_signed));
      if (!c.new_bit_offset) return fmt::format("+ {}: {}", c.member, c.new_type);
      return fmt::format("+ {}: {} at {}", c.member, typed(c.new_type, *c.new_bits), place(*c.new_bit_offset, *c.new_bits));
    case Change::Removed:
      if (enumerator) return fmt::format("- {} = {}", c.member, value_text(c.old_value, c.value_signed));
      if (!c.old_bit_offset) return fmt::format("- {}: {}", c.member, c.old_type);
      return fmt::format("- {}: {} at {}", c.member, typed(c.old_type, *c.old_bits), place(*c.old_bit_offset, *c.old_bits));
    case Change::Moved: {
      const bool bits = *c.old_bits || *c.new_bits || *c.old_bit_offset % 8 || *c.new_bit_offset % 8;
      return bits ? fmt::format("~ {}: bit {} -> {}", c.member, with_commas(*c.old_bit_offset), with_commas(*c.new_bit_offset))
                  : fmt::format("~ {}: offset {} -> {}", c.member, with_commas(*c.old_bit_offset / 8),
                                with_commas(*c.new_bit_offset / 8));
    }
    case Change::Retyped:
      return fmt::format("~ {}: {} -> {}", c.member.empty() ? "(type)" : c.member, c.old_type, c.new_type);
    case Change::Resized:
      return fmt::format("~ {}: bitfield {} -> {} bits", c.member, *c.old_bits, *c.new_bits);
    case Change::Revalued:
      return fmt::format("~ {}: value {} -> {}", c.member, value_text(c.old_value, c.value_signed),
                         value_text(c.new_value, c.value_signed));
    case Change::Renamed:
      return fmt::format("~ {}: renamed from {}", c.member, c.old_member);
  }
  return {};
}

std::string layout_line(const LayoutChange& l) {
  switch (l.status) {
    case LayoutStatus::Added: return fmt::format("{}: added", l.name);
    case LayoutStatus::Removed: return fmt::format("{}: removed", l.name);
    case LayoutStatus::Changed: break;
  }
  return fmt::format("{}: {}", l.name, l.summary);
}

struct LayoutTally {
  std::uint64_t changed = 0, added = 0, removed = 0;
};
LayoutTally tally(const BtfDiff& d) {
  LayoutTally t;
  for (const LayoutChange& l : d.layout)
    ++(l.status == LayoutStatus::Changed ? t.changed : l.status == LayoutStatus::Added ? t.added : t.removed);
  return t;
}

void type_table(const BtfDiff& d, const DiffPrintOptions& o, OutputBuffer& out) {
  const std::size_t shown = o.top && d.layout.size() > o.top ? o.top : d.layout.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const LayoutChange& l = d.layout[i];
    line(out, o, layout_line(l));
    if (o.details)
      for (const MemberChange& c : l.changes)
        if (!c.member.empty()) line(out, o, "    " + change_text(c));
  }
  if (shown < d.layout.size()) line(out, o, fmt::format("[{} others]", with_commas(d.layout.size() - shown)));
  const LayoutTally t = tally(d);
  line(out, o, fmt::format("total: {} changed, {} added, {} removed, of {} types on both sides", with_commas(t.changed),
                           with_commas(t.added), with_commas(t.removed), with_commas(d.layout_compared)));
}

// Every member change, with the type it is in.
std::vector<std::pair<const LayoutChange*, const MemberChange*>> member_rows(const BtfDiff& d) {
  std::vector<std::pair<const LayoutChange*, const MemberChange*>> rows;
  for (const LayoutChange& l : d.layout)
    for (const MemberChange& c : l.changes) rows.emplace_back(&l, &c);
  return rows;
}

void member_table(const BtfDiff& d, const DiffPrintOptions& o, OutputBuffer& out) {
  const auto rows = member_rows(d);
  const std::size_t shown = o.top && rows.size() > o.top ? o.top : rows.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& [l, c] = rows[i];
    // "~ pid: offset 8 -> 16" becomes "struct task ~ pid: offset 8 -> 16".
    line(out, o, fmt::format("{} {}", l->name, change_text(*c)));
  }
  if (shown < rows.size()) line(out, o, fmt::format("[{} others]", with_commas(rows.size() - shown)));
  std::uint64_t types = 0;
  for (const LayoutChange& l : d.layout) types += !l.changes.empty();
  line(out, o, fmt::format("total: {} changes in {} types", with_commas(rows.size()), with_commas(types)));
}

std::string opt_text(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string(); }
std::string opt_kind(const std::optional<Kind>& k) { return k ? std::string(kind_name(*k)) : std::string(); }
std::string opt_delta(const LayoutChange& l) {
  if (!l.old_size || !l.new_size) return {};
  return std::to_string(static_cast<std::int64_t>(*l.new_size) - static_cast<std::int64_t>(*l.old_size));
}

void type_csv(const BtfDiff& d, OutputBuffer& out) {
  out.write("name,status,old_kind,new_kind,old_type_id,new_type_id,old_size_bytes,new_size_bytes,delta_bytes,"
            "added_count,removed_count,moved_count,retyped_count,resized_count,revalued_count,renamed_count,summary\n");
  for (const LayoutChange& l : d.layout) {
    std::uint64_t counts[7] = {};
    for (const MemberChange& c : l.changes)
      if (!c.member.empty()) ++counts[static_cast<unsigned>(c.change)];
    const std::string_view status = l.status == LayoutStatus::Changed ? "changed" : l.status == LayoutStatus::Added ? "added" : "removed";
    out.print("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_quoted(l.name), status, opt_kind(l.old_kind),
              opt_kind(l.new_kind), l.old_id ? std::to_string(l.old_id) : "", l.new_id ? std::to_string(l.new_id) : "",
              opt_text(l.old_size), opt_text(l.new_size), opt_delta(l), counts[0], counts[1], counts[2], counts[3],
              counts[4], counts[5], counts[6], csv_quoted(l.summary));
  }
}

void member_csv(const BtfDiff& d, OutputBuffer& out) {
  out.write("type,member,change,old_type,new_type,old_bit_offset,new_bit_offset,old_bitfield_bits,new_bitfield_bits,"
            "old_value,new_value,old_member\n");
  for (const auto& [l, c] : member_rows(d))
    out.print("{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_quoted(l->name), csv_quoted(c->member), change_name(c->change),
              csv_quoted(c->old_type), csv_quoted(c->new_type), opt_text(c->old_bit_offset), opt_text(c->new_bit_offset),
              c->old_bits ? std::to_string(*c->old_bits) : "", c->new_bits ? std::to_string(*c->new_bits) : "",
              value_text(c->old_value, c->value_signed), value_text(c->new_value, c->value_signed),
              csv_quoted(c->old_member));
}

void kind_csv(const std::vector<const DiffRow*>& rows, OutputBuffer& out) {
  out.write("kind,name,old_bytes,new_bytes,delta_bytes\n");
  for (const DiffRow* r : rows)
    out.print("{},{},{},{},{}\n", r->kind ? kind_name(*r->kind) : "", csv_quoted(r->name), opt_text(r->old_size),
              opt_text(r->new_size), r->delta);
}

// JSON's null, for a number or a string that is absent (JsonWriter writes null for a number that is not finite).
void null_value(JsonWriter& w) { w.value(std::numeric_limits<double>::quiet_NaN()); }
template <typename T>
void opt_field(JsonWriter& w, std::string_view key, const std::optional<T>& v) {
  w.key(key);
  if (v)
    w.value(*v);
  else
    null_value(w);
}
void text_field(JsonWriter& w, std::string_view key, const std::string& v, bool present) {
  w.key(key);
  if (present)
    w.value(v);
  else
    null_value(w);
}
void value_field(JsonWriter& w, std::string_view key, const std::optional<std::uint64_t>& v, bool is_signed) {
  w.key(key);
  if (!v)
    null_value(w);
  else if (is_signed)
    w.value(static_cast<std::int64_t>(*v));
  else
    w.value(*v);
}

void footprint_json(JsonWriter& w, const Summary& s, std::uint64_t before, std::uint64_t after) {
  w.field("added_count", s.add);
  w.field("removed_count", s.remove);
  w.field("grown_count", s.grow);
  w.field("shrunk_count", s.shrink);
  w.field("up_bytes", s.up);
  w.field("down_bytes", s.down);
  w.field("old_bytes", before);
  w.field("new_bytes", after);
  w.field("delta_bytes", static_cast<std::int64_t>(after) - static_cast<std::int64_t>(before));
}

void side_json(JsonWriter& w, std::string_view key, const std::string& file, std::uint64_t types, std::uint64_t bytes) {
  w.key(key);
  w.begin_object();
  w.field("file", file);
  w.field("type_count", types);
  w.field("size_bytes", bytes);
  w.end_object();
}

void print_json(const BtfDiff& d, const DiffPrintOptions& o, const std::vector<const DiffRow*>& all,
                const std::function<std::vector<const DiffRow*>(std::optional<Kind>)>& of_kind, OutputBuffer& out) {
  JsonWriter w(out);
  w.begin_object();
  side_json(w, "old", o.old_name, d.old_types, d.old_total);
  side_json(w, "new", o.new_name, d.new_types, d.new_total);
  const LayoutTally t = tally(d);
  w.field("compared_count", d.layout_compared);
  w.field("changed_count", t.changed);
  w.field("added_count", t.added);
  w.field("removed_count", t.removed);
  w.key("layout_changes");
  w.begin_array();
  for (const LayoutChange& l : d.layout) {
    w.begin_object();
    w.field("name", l.name);
    w.field("status", l.status == LayoutStatus::Changed ? "changed" : l.status == LayoutStatus::Added ? "added" : "removed");
    text_field(w, "old_kind", opt_kind(l.old_kind), l.old_kind.has_value());
    text_field(w, "new_kind", opt_kind(l.new_kind), l.new_kind.has_value());
    opt_field(w, "old_type_id", l.old_id ? std::optional<std::uint64_t>(l.old_id) : std::nullopt);
    opt_field(w, "new_type_id", l.new_id ? std::optional<std::uint64_t>(l.new_id) : std::nullopt);
    opt_field(w, "old_size_bytes", l.old_size);
    opt_field(w, "new_size_bytes", l.new_size);
    w.key("delta_bytes");
    if (l.old_size && l.new_size)
      w.value(static_cast<std::int64_t>(*l.new_size) - static_cast<std::int64_t>(*l.old_size));
    else
      null_value(w);
    w.field("summary", l.summary);
    w.key("changes");
    w.begin_array();
    for (const MemberChange& c : l.changes) {
      w.begin_object();
      w.field("change", change_name(c.change));
      w.field("member", c.member);
      text_field(w, "old_member", c.old_member, c.change == Change::Renamed);
      text_field(w, "old_type", c.old_type, !c.old_type.empty());
      text_field(w, "new_type", c.new_type, !c.new_type.empty());
      opt_field(w, "old_bit_offset", c.old_bit_offset);
      opt_field(w, "new_bit_offset", c.new_bit_offset);
      opt_field(w, "old_bitfield_bits", c.old_bits);
      opt_field(w, "new_bitfield_bits", c.new_bits);
      value_field(w, "old_value", c.old_value, c.value_signed);
      value_field(w, "new_value", c.new_value, c.value_signed);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("footprint");
  w.begin_object();
  footprint_json(w, summarize(all), d.old_total, d.new_total);
  w.end_object();
  w.key("kinds");
  w.begin_array();
  for (const Kind k : d.kinds) {
    const auto i = static_cast<std::size_t>(k);
    w.begin_object();
    w.field("kind", kind_name(k));
    footprint_json(w, summarize(of_kind(k)), d.old_by_kind[i], d.new_by_kind[i]);
    w.end_object();
  }
  w.end_array();
  w.key("other");
  w.begin_object();
  footprint_json(w, summarize(of_kind(std::nullopt)), d.old_other, d.new_other);
  w.end_object();
  w.key("types");
  w.begin_array();
  for (const DiffRow* r : all) {
    w.begin_object();
    text_field(w, "kind", opt_kind(r->kind), r->kind.has_value());
    w.field("name", r->name);
    opt_field(w, "old_bytes", r->old_size);
    opt_field(w, "new_bytes", r->new_size);
    w.field("delta_bytes", r->delta);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.finish();
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

  if (options.format == Format::Json) {
    print_json(diff, options, all, of_kind, out);
    return;
  }
  if (options.format == Format::Csv) {
    switch (options.view) {
      case DiffView::Type: type_csv(diff, out); return;
      case DiffView::Member: member_csv(diff, out); return;
      case DiffView::Kind: kind_csv(all, out); return;
    }
  }
  switch (options.view) {
    case DiffView::Type:
      type_table(diff, options, out);
      return;
    case DiffView::Member:
      member_table(diff, options, out);
      return;
    case DiffView::Kind:
      for (const Kind k : diff.kinds) {
        const auto i = static_cast<std::size_t>(k);
        footprint_block(kind_name(k), of_kind(k), diff.old_by_kind[i], diff.new_by_kind[i], options, out);
        out.put('\n');
      }
      footprint_block("Other", of_kind(std::nullopt), diff.old_other, diff.new_other, options, out);
      // The whole BTF's, last: the blocks add up to it.
      out.print("\nTotal: Before={}, After={}, chg {:+.2f}%\n", diff.old_total, diff.new_total,
                change_percent(diff.old_total, diff.new_total));
      return;
  }
}

}  // namespace btfslim
