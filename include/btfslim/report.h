// The views of `btfslim measure`: one roll-up of a Footprint, printed as a table, CSV or JSON.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/dump.h"
#include "btfslim/footprint.h"
#include "btfslim/output.h"

#include <optional>
#include <string>
#include <vector>

namespace btfslim {

enum class MeasureBy { KindsAndTypes, Kind, Type, Prefix };
enum class MeasureSort { Own, Retained };
enum class Format { Table, Csv, Json };

// The module-delivered kernel model: vmlinux BTF in a module, optionally with a small resident base.
struct ModuleDelivery {
  bool enabled = false;
  std::shared_ptr<const Btf> resident_base;  // e.g. the output of `btfslim minimize`; may be null
};

struct MeasureOptions {
  MeasureBy by = MeasureBy::KindsAndTypes;
  MeasureSort sort = MeasureSort::Retained;
  std::size_t top = 20;
  bool all = false;            // every type (JSON: all types; table/CSV: no [N others])
  bool closure_all = false;    // closure bytes for every listed type, not only the top rows
  TypeSelection filter;        // --kind, --name
  ModuleDelivery delivery;
  Format format = Format::Table;
};

void print_measure(const Btf& btf, const Footprint& fp, const MeasureOptions& options, OutputBuffer& out);

// One row of the kind table as `measure` prints it: a kind's types (records plus their string shares,
// rounded so that the rows add up), or bytes no type owns ("[header]", kind 0). The SVG's kind strip
// draws exactly these.
struct KindTotal {
  std::string label;
  unsigned kind = 0;
  std::uint64_t type_count = 0;
  std::uint64_t total_bytes = 0;
};
std::vector<KindTotal> kind_totals(const FileFootprint& file);

// The row of the strings only .BTF.ext names for one use: "[.BTF.ext line info]".
std::string ext_row_label(ExtUse use);

// The footprint fields of one type, inside an open JSON object: id, kind, name, record_bytes,
// string_bytes, own_bytes, retained_bytes.
void json_type_footprint(JsonWriter& w, const Btf& btf, const Footprint& fp, TypeId id);

// --type NAME: one type (every type of that name) in detail. Throws InputError when none matches.
void print_type_detail(const Btf& btf, const Footprint& fp, std::string_view name, Format format,
                       OutputBuffer& out);

// --without KIND,...: the BTF without all types of those kinds and what only they keep alive.
void print_without(const Btf& btf, const Footprint& fp, const std::vector<Kind>& kinds, Format format,
                   OutputBuffer& out);

// --modules: bytes per module and the types several modules each carry a copy of; `types_only`
// (--by type): only those types.
void print_modules(const std::vector<std::shared_ptr<const Btf>>& modules, Format format, std::size_t top,
                   bool types_only, OutputBuffer& out);

// --svg FILE: an icicle of the dominator tree by retained bytes, as a standalone SVG document.
std::string render_svg(const Btf& btf, const Footprint& fp);

}  // namespace btfslim
