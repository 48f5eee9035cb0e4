// Deduplicating BTF with libbpf's btf__dedup: one input or several merged first, and what it removed.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/output.h"
#include "btfslim/report.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace btfslim {

struct KindTally {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;  // record bytes: the 12-byte header and the kind's trailing data
};

// One side of the dedup: the inputs together (before) or the output (after). Only a split BTF's own
// types count, never its base's. The byte rows add up: record bytes of all kinds + string_bytes +
// header_bytes = total_bytes.
struct DedupSide {
  std::array<KindTally, kMaxKind + 1> kinds{};
  std::uint64_t types = 0;
  std::uint64_t record_bytes = 0;
  std::uint64_t string_bytes = 0;
  std::uint64_t header_bytes = 0;  // the header and anything between or after the sections
  std::uint64_t total_bytes = 0;   // the raw BTF (before: of every input, added up)
};

// A named (kind, name) of which the output has fewer copies than the inputs: the removed copies were
// folded into the one left (or, in split BTF, into the base's).
struct DuplicatedType {
  Kind kind;
  std::string_view name;       // points into the inputs
  std::uint64_t copies = 0;    // in the inputs
  std::uint64_t removed = 0;   // copies - copies in the output
  std::uint64_t bytes_freed = 0;  // record bytes of the removed copies
};

struct DedupResult {
  // libbpf's deduplicated BTF as written, parsed (it owns the bytes); split on the inputs' base when
  // they are split, holding only the split part.
  std::shared_ptr<const Btf> output;
  DedupSide before, after;
  // In no particular order until rank_duplicates.
  std::vector<DuplicatedType> duplicates;

  std::uint64_t removed_types() const { return before.types - after.types; }

  // A BPF object's .BTF.ext, given to libbpf with its .BTF: its records, whose strings libbpf keeps and
  // whose type ids it moves with the types (none when no .BTF.ext was given).
  struct Ext {
    std::uint32_t func_info = 0, line_info = 0, core_relo = 0;
  };
  std::optional<Ext> ext;
};

// Merges `inputs` in order (all standalone, or all split on one base) into one BTF and has libbpf
// deduplicate it, in the first input's byte order. `ext`, the .BTF.ext of a single input (a .bpf.o),
// goes to btf__dedup with it, as libbpf's linker does: what .BTF.ext names is then kept, and a type is
// removed only where .BTF.ext can follow it to the copy that stays. (A merge of several inputs belongs
// to none of their .BTF.ext.) Throws InputError naming the file when the inputs cannot be merged or
// libbpf fails, with libbpf's errno.
DedupResult dedup(const std::vector<std::shared_ptr<const Btf>>& inputs, std::span<const std::uint8_t> ext = {});

// Puts the `top` largest duplicated types first, in order: largest bytes_freed first, then most copies
// removed, kind, name. The rest follow in no particular order (all are ordered when `top` covers them):
// a table shows ten of seventy thousand, and ordering them all would cost more than finding the ten.
void rank_duplicates(std::vector<DuplicatedType>& duplicates, std::size_t top);

struct DedupReportOptions {
  std::string output;  // what the output is called: a path, "-", or "" (--check: not written)
  std::size_t top = 10;  // rows of the largest duplicated types in the table (JSON lists them all)
  Format format = Format::Table;
};

// The report: inputs, output, per-kind counts and bytes before and after, the largest duplicated types
// (ranked: options.top of them for a table, all for JSON).
void print_dedup(const std::vector<std::shared_ptr<const Btf>>& inputs, const DedupResult& result,
                 const DedupReportOptions& options, OutputBuffer& out);

}  // namespace btfslim
