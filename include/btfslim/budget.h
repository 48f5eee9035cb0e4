// Budgets: limits on what a BTF weighs, kept in a TOML file (btfslim.toml) and checked in CI.
//
// The file is parsed on its own (parse_budget_config takes its text and its name, so that the fuzzer
// and the tests call it without files), into budgets that name an input and their limits, each limit
// remembering the line it was set on. Measuring an input gives the few figures limits talk about
// (BudgetFigures); a saved `btfslim measure --format json` gives the same figures for a baseline. Every
// limit is then checked and all results are kept, so that the report lists every breach, not the first.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/footprint.h"
#include "btfslim/output.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace btfslim {

// "5.5 MiB", "512 KB", "300", "2GiB": bytes, rounded down. Units B, KB, MB, GB (powers of 1000) and
// KiB, MiB, GiB (powers of 1024), case as written; a decimal fraction of up to 9 digits. nullopt with
// `why` set for anything else (no unit words beyond these, no sign, nothing over 2^63).
std::optional<std::uint64_t> parse_size(std::string_view text, std::string& why);
// "1%", "0.25 %": a percentage in millionths of a percent (1% = 1'000'000), up to 6 decimals.
std::optional<std::uint64_t> parse_percent(std::string_view text, std::string& why);

// What a limit limits.
enum class BudgetQuantity {
  Total,         // the BTF blob's bytes (file_bytes)
  KernelMemory,  // what the kernel keeps resident for it (kernel_memory.h)
  Kind,          // the bytes of one kind: records and their share of the strings
  Type,          // the retained bytes of a type (the largest, when several of one kind have the name)
};

struct BudgetLimit {
  BudgetQuantity quantity = BudgetQuantity::Total;
  Kind kind = Kind::Unknown;  // BudgetQuantity::Kind
  std::string type;           // BudgetQuantity::Type: "struct task_struct", "task_struct"
  bool growth = false;        // a limit on growth over the baseline rather than on the size
  std::uint64_t bytes = 0;    // the limit in bytes (for growth: the bytes it may grow by)...
  std::optional<std::uint64_t> percent;  // ...or, for growth, millionths of a percent of the baseline
  std::string key;            // as written: "total", "kind.FUNC", "type.\"struct node\"", "max_growth"
  std::string written;        // the value as written: "5.5 MiB", "1%"
  std::uint32_t line = 0;     // where the limit is set (1-based)
  std::uint32_t column = 0;
};

struct Budget {
  std::string name;
  std::string message;   // what to do about a breach, printed with it
  std::string input;     // as written (relative to the config's directory); "" when not given
  std::string base;      // for a split input
  std::string baseline;  // a saved `btfslim measure --format json`
  std::uint32_t line = 0;  // the [[budget]] header
  std::uint32_t baseline_line = 0;  // where `baseline` is set
  std::vector<BudgetLimit> limits;
  bool needs_types() const;  // a type limit: the full footprint (graph, dominators) is needed
};

struct BudgetConfig {
  std::string file;  // the name the config was read as
  std::vector<Budget> budgets;
};

// Parses a budget file. Any problem is an InputError "FILE:LINE: problem": TOML syntax, an unknown
// key, a value of the wrong type, a bad size or percentage, an unknown kind, a growth limit without a
// baseline, a budget without a name or without limits, a file without budgets.
BudgetConfig parse_budget_config(std::string_view text, const std::string& file);

// The figures limits are checked against, from a measured BTF or from a baseline.
struct BudgetFigures {
  std::string input;
  std::uint64_t total = 0;
  std::uint64_t kernel_memory = 0;
  // Per kind: record bytes plus string shares, the shares rounded so that the kinds add up to the
  // referenced string bytes exactly, as `measure --by kind` prints them.
  std::array<std::uint64_t, kMaxKind + 1> kinds{};
};

BudgetFigures budget_figures(const Btf& btf, const Footprint& fp);
// Reads the figures from the JSON `btfslim measure --format json` wrote. `json_text` is the file's
// content; problems are InputErrors naming `file`.
BudgetFigures baseline_figures(std::string_view json_text, const std::string& file);

struct LimitResult {
  const Budget* budget = nullptr;
  const BudgetLimit* limit = nullptr;
  std::string input;                      // the measured input's name
  std::string what;                       // "total", "kernel_memory", "kind FUNC", "type struct node"
  std::uint64_t measured = 0;             // bytes
  std::uint64_t allowed = 0;              // bytes: the limit, or baseline + allowed growth
  std::optional<std::uint64_t> baseline;  // growth limits
  bool exceeded() const { return measured > allowed; }
  std::uint64_t excess() const { return exceeded() ? measured - allowed : 0; }
  std::uint64_t headroom() const { return exceeded() ? 0 : allowed - measured; }
};

// Checks every limit of `budget` on one input. A type limit naming a type the input does not have is
// an InputError at the limit's line (a stale or misspelt name must not pass silently).
void check_budget(const Budget& budget, const std::string& config_file, const Btf& btf, const Footprint& fp,
                  const BudgetFigures& figures, const BudgetFigures* baseline, std::vector<LimitResult>& results);

enum class BudgetFormat { Table, Json, Junit, Github };

// The report in each format; `file` is the config as named on the command line (its lines are cited).
void print_budget_report(const std::vector<LimitResult>& results, const std::string& file, BudgetFormat format,
                         OutputBuffer& out);
// The Markdown table for $GITHUB_STEP_SUMMARY.
std::string budget_markdown_summary(const std::vector<LimitResult>& results, const std::string& file);

}  // namespace btfslim
