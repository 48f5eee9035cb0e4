// Printing `btfslim dedup`: what went in, what came out, per kind, and the duplicated types that freed
// the most; as a table or as one JSON document. Sizes are exact byte counts: the report is a CI guard's
// evidence, and a removed 12-byte pointer must not round away.
#include "btfslim/dedup.h"
#include "btfslim/escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace btfslim {
namespace {

std::string output_label(const std::string& output) {
  return output.empty() ? "not written (--check)" : output == "-" ? "stdout" : escape(output);
}

// Kinds present before, the ones that freed the most first (then in kind order).
std::vector<unsigned> kinds_in_order(const DedupResult& r) {
  std::vector<unsigned> kinds;
  for (unsigned k = 0; k <= kMaxKind; ++k)
    if (r.before.kinds[k].count > 0) kinds.push_back(k);
  auto freed = [&](unsigned k) { return r.before.kinds[k].bytes - r.after.kinds[k].bytes; };
  std::stable_sort(kinds.begin(), kinds.end(), [&](unsigned a, unsigned b) { return freed(a) > freed(b); });
  return kinds;
}

// {"type_count": N, "size_bytes": N}: one side's types.
void json_side(JsonWriter& w, std::string_view key, std::uint64_t count, std::uint64_t bytes) {
  w.key(key);
  w.begin_object();
  w.field("type_count", count);
  w.field("size_bytes", bytes);
  w.end_object();
}

// null, for a field that does not apply (JsonWriter writes null for a number that is not finite).
void null_field(JsonWriter& w, std::string_view key) {
  w.key(key);
  w.value(std::numeric_limits<double>::quiet_NaN());
}

// The JSON vocabulary of every command (README, Conventions): `file`, `THING_count`, `WHAT_bytes`,
// `saved_bytes` for what dedup removed; every key present whatever the inputs, null where it does not apply.
void print_json(const std::vector<std::shared_ptr<const Btf>>& inputs, const DedupResult& r,
                const DedupReportOptions& o, OutputBuffer& out) {
  JsonWriter w(out);
  w.begin_object();
  w.key("inputs");
  w.begin_array();
  for (const auto& in : inputs) {
    w.begin_object();
    w.field("file", in->name());
    w.field("type_count", std::uint64_t{in->own_count()});
    w.field("size_bytes", std::uint64_t{in->raw().size()});
    w.end_object();
  }
  w.end_array();
  w.field("split", inputs.front()->is_split());
  if (inputs.front()->is_split())
    w.field("base", inputs.front()->base()->name());
  else
    null_field(w, "base");
  if (o.output.empty())
    null_field(w, "output");
  else
    w.field("output", o.output);
  w.field("written", !o.output.empty());
  w.field("byte_order", r.output->big_endian() ? "big" : "little");
  json_side(w, "before", r.before.types, r.before.total_bytes);
  json_side(w, "after", r.after.types, r.after.total_bytes);
  w.field("removed_count", r.removed_types());
  w.field("saved_bytes", r.before.total_bytes - r.after.total_bytes);
  w.field("deduplicated", r.removed_types() == 0);
  if (r.ext) {  // the records of the object's .BTF.ext that libbpf kept in step
    w.key("btf_ext");
    w.begin_object();
    w.field("func_info_count", std::uint64_t{r.ext->func_info});
    w.field("line_info_count", std::uint64_t{r.ext->line_info});
    w.field("core_relo_count", std::uint64_t{r.ext->core_relo});
    w.end_object();
  } else {
    null_field(w, "btf_ext");
  }
  w.key("kinds");
  w.begin_array();
  for (const unsigned k : kinds_in_order(r)) {
    const KindTally& b = r.before.kinds[k];
    const KindTally& a = r.after.kinds[k];
    w.begin_object();
    w.field("kind", kind_name(static_cast<Kind>(k)));
    json_side(w, "before", b.count, b.bytes);
    json_side(w, "after", a.count, a.bytes);
    w.field("removed_count", b.count - a.count);
    w.field("saved_bytes", b.bytes - a.bytes);
    w.end_object();
  }
  w.end_array();
  w.key("strings");
  w.begin_object();
  w.field("before_bytes", r.before.string_bytes);
  w.field("after_bytes", r.after.string_bytes);
  w.end_object();
  w.key("header");
  w.begin_object();
  w.field("before_bytes", r.before.header_bytes);
  w.field("after_bytes", r.after.header_bytes);
  w.end_object();
  w.key("duplicates");
  w.begin_array();
  for (const DuplicatedType& d : r.duplicates) {
    w.begin_object();
    w.field("kind", kind_name(d.kind));
    w.field("name", d.name);
    w.field("copy_count", d.copies);
    w.field("removed_count", d.removed);
    w.field("saved_bytes", d.bytes_freed);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.finish();
}

constexpr std::string_view kRow = "{:<20}{:>10}{:>10}{:>10}{:>15}{:>15}{:>12}\n";

void row(OutputBuffer& out, std::string_view label, std::string_view before, std::string_view after,
         std::string_view removed, std::uint64_t bytes_before, std::uint64_t bytes_after) {
  out.print(fmt::runtime(kRow), label, before, after, removed, with_commas(bytes_before), with_commas(bytes_after),
            with_commas(bytes_before - bytes_after));
}

void print_table(const std::vector<std::shared_ptr<const Btf>>& inputs, const DedupResult& r,
                 const DedupReportOptions& o, OutputBuffer& out) {
  for (std::size_t i = 0; i < inputs.size(); ++i)
    out.print("{:<9}{}: {} types, {} bytes\n", i == 0 ? (inputs.size() > 1 ? "inputs:" : "input:") : "",
              esc(inputs[i]->name()), with_commas(inputs[i]->own_count()), with_commas(inputs[i]->raw().size()));
  if (inputs.front()->is_split())
    out.print("{:<9}{} (the inputs and the output are split on it)\n", "base:", esc(inputs.front()->base()->name()));
  out.print("{:<9}{}: {} types, {} bytes, {}\n", "output:", output_label(o.output), with_commas(r.after.types),
            with_commas(r.after.total_bytes), r.output->big_endian() ? "big-endian" : "little-endian");
  out.print("{:<9}{} of {} types ({:.1f}%), {} of {} bytes ({:.1f}%)\n", "removed:", with_commas(r.removed_types()),
            with_commas(r.before.types), percent(static_cast<double>(r.removed_types()), static_cast<double>(r.before.types)),
            with_commas(r.before.total_bytes - r.after.total_bytes), with_commas(r.before.total_bytes),
            percent(static_cast<double>(r.before.total_bytes - r.after.total_bytes),
                    static_cast<double>(r.before.total_bytes)));
  if (r.ext)
    out.print("{:<10}{} func_info, {} line_info and {} CO-RE records: their strings kept, their type ids moved "
              "with the types\n",
              ".BTF.ext:", with_commas(r.ext->func_info), with_commas(r.ext->line_info), with_commas(r.ext->core_relo));

  out.print("\n");
  out.print(fmt::runtime(kRow), "KIND", "BEFORE", "AFTER", "REMOVED", "BYTES BEFORE", "BYTES AFTER", "FREED");
  for (const unsigned k : kinds_in_order(r)) {
    const KindTally& b = r.before.kinds[k];
    const KindTally& a = r.after.kinds[k];
    row(out, kind_name(static_cast<Kind>(k)), with_commas(b.count), with_commas(a.count), with_commas(b.count - a.count),
        b.bytes, a.bytes);
  }
  row(out, "[strings]", "", "", "", r.before.string_bytes, r.after.string_bytes);
  row(out, "[header]", "", "", "", r.before.header_bytes, r.after.header_bytes);
  row(out, "TOTAL", with_commas(r.before.types), with_commas(r.after.types), with_commas(r.removed_types()),
      r.before.total_bytes, r.after.total_bytes);

  out.print("\n");
  if (r.duplicates.empty()) {
    out.print("no named type has fewer copies after dedup{}\n",
              r.removed_types() ? " (only anonymous types were removed)" : "");
  } else {
    constexpr std::string_view kDupRow = "{:<44}{:<12}{:>8}{:>10}{:>12}\n";
    out.print(fmt::runtime(kDupRow), "DUPLICATED TYPE", "KIND", "COPIES", "REMOVED", "FREED");
    const std::size_t shown = std::min(o.top, r.duplicates.size());
    for (std::size_t i = 0; i < shown; ++i) {
      const DuplicatedType& d = r.duplicates[i];
      out.print(fmt::runtime(kDupRow), esc(d.name), kind_name(d.kind), with_commas(d.copies), with_commas(d.removed),
                with_commas(d.bytes_freed));
    }
    if (r.duplicates.size() > shown) {
      std::uint64_t removed = 0, freed = 0;
      for (std::size_t i = shown; i < r.duplicates.size(); ++i) {
        removed += r.duplicates[i].removed;
        freed += r.duplicates[i].bytes_freed;
      }
      out.print(fmt::runtime(kDupRow), fmt::format("[{} others]", with_commas(r.duplicates.size() - shown)), "", "",
                with_commas(removed), with_commas(freed));
    }
  }
}

}  // namespace

void print_dedup(const std::vector<std::shared_ptr<const Btf>>& inputs, const DedupResult& result,
                 const DedupReportOptions& options, OutputBuffer& out) {
  if (options.format == Format::Json)
    print_json(inputs, result, options, out);
  else
    print_table(inputs, result, options, out);
}

}  // namespace btfslim
