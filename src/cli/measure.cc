// `btfslim measure`: where the bytes of a BTF go, per kind, adding up to the blob's size.
#include "btfslim/cli.h"
#include "btfslim/error.h"
#include "btfslim/footprint.h"
#include "btfslim/input.h"
#include "btfslim/output.h"

#include <algorithm>

namespace btfslim::cli {
namespace {

struct MeasureArgs {
  InputArgs in;
  std::string format = "table";
};

struct Row {
  std::string label;
  std::uint64_t count = 0;
  std::uint64_t records = 0;
  std::uint64_t strings = 0;
  std::uint64_t total() const { return records + strings; }
};

// Per-kind rows (largest first), then the bytes no type owns; the TOTAL is the blob size.
std::vector<Row> rows_of(const FileFootprint& f) {
  std::vector<double> shares;
  std::vector<unsigned> kinds;
  for (unsigned k = 1; k <= kMaxKind; ++k) {
    if (f.kinds[k].count == 0) continue;
    kinds.push_back(k);
    shares.push_back(f.kinds[k].string_bytes);
  }
  const auto strings = round_to_total(shares, f.referenced_string_bytes);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const KindFootprint& k = f.kinds[kinds[i]];
    rows.push_back({std::string(kind_name(static_cast<Kind>(kinds[i]))), k.count, k.record_bytes, strings[i]});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.total() > b.total(); });
  rows.push_back({"[header]", 0, f.header_bytes, 0});
  rows.push_back({"[unreferenced strings]", 0, 0, f.unreferenced_string_bytes});
  if (f.gap_bytes) rows.push_back({"[gaps]", 0, f.gap_bytes, 0});
  return rows;
}

void print_table(const Btf& btf, const FileFootprint& f, OutputBuffer& out) {
  out.print("{}: {}BTF, {}, {} types{}\n", btf.name(), btf.is_split() ? "split " : "",
            btf.big_endian() ? "big-endian" : "little-endian", with_commas(f.type_count),
            btf.is_split() ? fmt::format(" on {} ({} types)", btf.base()->name(), with_commas(btf.first_id() - 1))
                           : "");
  out.print("header {}, types {}, strings {}: {} ({} bytes)\n\n", human_size(f.header_bytes),
            human_size(f.type_bytes), human_size(f.string_bytes), human_size(f.file_bytes),
            with_commas(f.file_bytes));
  out.print("{:<24}{:>10}{:>12}{:>12}{:>12}{:>8}\n", "KIND", "COUNT", "RECORDS", "STRINGS", "TOTAL", "%");
  auto pct = [&](std::uint64_t v) { return f.file_bytes ? 100.0 * static_cast<double>(v) / f.file_bytes : 0.0; };
  for (const Row& r : rows_of(f)) {
    out.print("{:<24}{:>10}{:>12}{:>12}{:>12}{:>7.1f}%\n", r.label, r.count ? with_commas(r.count) : "",
              r.records ? human_size(r.records) : "", r.strings ? human_size(r.strings) : "",
              human_size(r.total()), pct(r.total()));
  }
  out.print("{:<24}{:>10}{:>12}{:>12}{:>12}{:>7.1f}%\n", "TOTAL", with_commas(f.type_count),
            human_size(f.type_bytes + f.header_bytes + f.gap_bytes),
            human_size(f.string_bytes), human_size(f.file_bytes), pct(f.file_bytes));
}

void print_csv(const FileFootprint& f, OutputBuffer& out) {
  out.write("row,count,record_bytes,string_bytes,total_bytes\n");
  for (const Row& r : rows_of(f))
    out.print("{},{},{},{},{}\n", r.label, r.count, r.records, r.strings, r.total());
  out.print("TOTAL,{},{},{},{}\n", f.type_count, f.type_bytes + f.header_bytes + f.gap_bytes, f.string_bytes,
            f.file_bytes);
}

void print_json(const Btf& btf, const FileFootprint& f, OutputBuffer& out) {
  JsonWriter w(out);
  w.begin_object();
  w.field("input", btf.name());
  w.field("split", btf.is_split());
  if (btf.is_split()) w.field("base", btf.base()->name());
  w.field("byte_order", btf.big_endian() ? "big" : "little");
  w.field("file_bytes", f.file_bytes);
  w.field("header_bytes", f.header_bytes);
  w.field("type_bytes", f.type_bytes);
  w.field("string_bytes", f.string_bytes);
  w.field("referenced_string_bytes", f.referenced_string_bytes);
  w.field("unreferenced_string_bytes", f.unreferenced_string_bytes);
  w.field("gap_bytes", f.gap_bytes);
  w.field("type_count", f.type_count);
  w.key("kinds");
  w.begin_array();
  for (unsigned k = 1; k <= kMaxKind; ++k) {
    const KindFootprint& kf = f.kinds[k];
    if (kf.count == 0) continue;
    w.begin_object();
    w.field("kind", kind_name(static_cast<Kind>(k)));
    w.field("count", kf.count);
    w.field("record_bytes", kf.record_bytes);
    w.field("string_bytes", kf.string_bytes);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.finish();
}

void run_measure(const MeasureArgs& args) {
  const auto btf = load_btf(args.in.input, {args.in.base});
  const FileFootprint f = measure_file(*btf);
  OutputBuffer out;
  if (args.format == "json")
    print_json(*btf, f, out);
  else if (args.format == "csv")
    print_csv(f, out);
  else
    print_table(*btf, f, out);
  out.flush();
}

}  // namespace

void register_measure(CLI::App& app) {
  auto args = std::make_shared<MeasureArgs>();
  CLI::App* cmd = app.add_subcommand("measure", "where the bytes of a BTF go: header, types and strings by kind");
  add_input_options(*cmd, args->in);
  cmd->add_option("--format,-f", args->format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->callback([args] { run_measure(*args); });
}

}  // namespace btfslim::cli
