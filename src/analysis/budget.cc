// Checking budgets: the figures limits speak of, from a measured BTF or a saved measure, and the verdict
// of every limit.
//
// The figures are those `btfslim measure` prints, so that a number in a budget report can be found in
// measure's output: file_bytes, kernel_memory.bytes, the per-kind TOTAL column (records plus string
// shares rounded to add up), and a type's retained bytes. A baseline is read back from measure's JSON
// and rounded the same way, so that an unchanged input has exactly zero growth.
#include "btfslim/budget.h"
#include "btfslim/error.h"
#include "btfslim/report.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace btfslim {
namespace {

// A type's retained bytes as `measure` prints them ({:.0f}): the nearest whole byte, a tie to the even
// one (a string shared by two types gives each half a byte).
std::uint64_t whole_bytes(double bytes) {
  const double floor = std::floor(bytes);
  const double fraction = bytes - floor;  // exact for bytes >= 0
  const auto whole = static_cast<std::uint64_t>(floor);
  return fraction > 0.5 || (fraction == 0.5 && whole % 2 == 1) ? whole + 1 : whole;
}

// Record bytes plus string shares per kind, the shares rounded to sum to `referenced`.
std::array<std::uint64_t, kMaxKind + 1> kind_bytes(const std::array<std::uint64_t, kMaxKind + 1>& records,
                                                   const std::array<double, kMaxKind + 1>& strings,
                                                   std::uint64_t referenced) {
  std::vector<double> shares;
  std::vector<unsigned> kinds;
  for (unsigned k = 1; k <= kMaxKind; ++k) {
    if (records[k] == 0 && strings[k] == 0) continue;
    kinds.push_back(k);
    shares.push_back(strings[k]);
  }
  const auto rounded = round_to_total(shares, referenced);
  std::array<std::uint64_t, kMaxKind + 1> bytes = records;
  for (std::size_t i = 0; i < kinds.size(); ++i) bytes[kinds[i]] += rounded[i];
  return bytes;
}

std::string quantity_name(const BudgetLimit& l) {
  switch (l.quantity) {
    case BudgetQuantity::Total:
      return "total";
    case BudgetQuantity::KernelMemory:
      return "kernel_memory";
    case BudgetQuantity::Kind:
      return fmt::format("kind {}", kind_name(l.kind));
    case BudgetQuantity::Type:
      return fmt::format("type {}", l.type);
  }
  return "";
}

std::uint64_t figure(const BudgetFigures& f, const BudgetLimit& l) {
  switch (l.quantity) {
    case BudgetQuantity::Total:
      return f.total;
    case BudgetQuantity::KernelMemory:
      return f.kernel_memory;
    case BudgetQuantity::Kind:
      return f.kinds[static_cast<unsigned>(l.kind)];
    case BudgetQuantity::Type:
      break;
  }
  return 0;
}

}  // namespace

BudgetFigures budget_figures(const Btf& btf, const Footprint& fp) {
  BudgetFigures f;
  f.input = btf.name();
  f.total = fp.file.file_bytes;
  f.kernel_memory = fp.kernel.total();
  std::array<std::uint64_t, kMaxKind + 1> records{};
  std::array<double, kMaxKind + 1> strings{};
  for (unsigned k = 1; k <= kMaxKind; ++k) {
    records[k] = fp.file.kinds[k].record_bytes;
    strings[k] = fp.file.kinds[k].string_bytes;
  }
  f.kinds = kind_bytes(records, strings, fp.file.referenced_string_bytes);
  return f;
}

BudgetFigures baseline_figures(std::string_view json_text, const std::string& file) {
  using nlohmann::json;
  const json doc = json::parse(json_text.begin(), json_text.end(), nullptr, false);
  const char* const expect = "is not the JSON of `btfslim measure --format json`";
  if (doc.is_discarded()) fail(file, "{} (not JSON)", expect);
  if (!doc.is_object()) fail(file, "{}", expect);
  auto count = [&](const json& j, const char* key) -> std::uint64_t {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) fail(file, "{}: no whole number '{}'", expect, key);
    return it->get<std::uint64_t>();
  };
  BudgetFigures f;
  if (const auto it = doc.find("file"); it != doc.end() && it->is_string()) f.input = it->get<std::string>();
  f.total = count(doc, "file_bytes");
  const auto km = doc.find("kernel_memory");
  if (km == doc.end() || !km->is_object()) fail(file, "{}: no 'kernel_memory'", expect);
  f.kernel_memory = count(*km, "total_bytes");
  const std::uint64_t referenced = count(doc, "referenced_string_bytes");
  const auto kinds = doc.find("kinds");
  if (kinds == doc.end() || !kinds->is_array()) fail(file, "{}: no 'kinds' array", expect);
  std::array<std::uint64_t, kMaxKind + 1> records{};
  std::array<double, kMaxKind + 1> strings{};
  for (const json& k : *kinds) {
    if (!k.is_object()) fail(file, "{}: a 'kinds' entry is not an object", expect);
    const auto name = k.find("kind");
    const auto kind = name != k.end() && name->is_string() ? parse_kind(name->get<std::string>()) : std::nullopt;
    if (!kind || *kind == Kind::Unknown) fail(file, "{}: a 'kinds' entry names no known kind", expect);
    const auto s = k.find("string_bytes");
    if (s == k.end() || !s->is_number() || !(s->get<double>() >= 0)) fail(file, "{}: bad 'string_bytes'", expect);
    records[static_cast<unsigned>(*kind)] = count(k, "record_bytes");
    strings[static_cast<unsigned>(*kind)] = s->get<double>();
  }
  f.kinds = kind_bytes(records, strings, referenced);
  return f;
}

void check_budget(const Budget& budget, const std::string& config_file, const Btf& btf, const Footprint& fp,
                  const BudgetFigures& figures, const BudgetFigures* baseline, std::vector<LimitResult>& results) {
  for (const BudgetLimit& l : budget.limits) {
    LimitResult r;
    r.budget = &budget;
    r.limit = &l;
    r.input = figures.input;
    r.what = quantity_name(l);
    if (l.quantity == BudgetQuantity::Type) {
      const TypePattern pattern = TypePattern::parse(l.type, TypePattern::Globs::No);
      const auto ids = pattern.find(btf);
      if (ids.empty())
        fail(fmt::format("{}:{}", config_file, l.line),
             "budget '{}': no type named '{}' in {} (remove the limit or fix the name: NAME, 'struct NAME' or an id)",
             esc(budget.name), esc(l.type), esc(btf.name()));
      // Which of two types of one name a limit means (a STRUCT and a FUNC vmpressure) is not guessed.
      if (const std::string clash = pattern.kind_clash(btf, ids); !clash.empty())
        fail(fmt::format("{}:{}", config_file, l.line), "budget '{}': type '{}' in {} {}", esc(budget.name),
             esc(l.type), esc(btf.name()), clash);
      for (const TypeId id : ids)
        r.measured = std::max<std::uint64_t>(r.measured, whole_bytes(fp.retained[id - btf.first_id()]));
    } else {
      r.measured = figure(figures, l);
    }
    if (l.growth) {
      const std::uint64_t base = figure(*baseline, l);
      r.baseline = base;
      // floor(base * p / 100) bytes of growth: for whole bytes, exceeding it is exceeding p% exactly.
      const std::uint64_t may_grow =
          l.percent ? static_cast<std::uint64_t>(static_cast<unsigned __int128>(base) * *l.percent / 100'000'000)
                    : l.bytes;
      r.allowed = base + may_grow;
    } else {
      r.allowed = l.bytes;
    }
    results.push_back(std::move(r));
  }
}

}  // namespace btfslim
