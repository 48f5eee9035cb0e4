// Budget files: any bytes as a btfslim.toml (parse_budget_config, toml++ underneath), every budget
// checked on the footprint fixture with its decl tag against the untagged one as the baseline, and the
// report in every format and the step summary; the same bytes also as a baseline (measure's JSON).
#include "common.h"
#include "fixtures.h"

#include "btfslim/budget.h"
#include "btfslim/error.h"


#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

using namespace btfslim;

std::shared_ptr<const Btf> parsed(const std::string& raw) {
  auto bytes = std::make_shared<std::string>(raw);
  return Btf::parse("fixture.btf", bytes,
                    {reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()});
}

struct Measured {
  std::shared_ptr<const Btf> btf = parsed(btfslim::test::footprint_btf(true));
  Footprint fp{*btf};
  BudgetFigures figures = budget_figures(*btf, fp);
  BudgetFigures baseline;
  Measured() {
    const auto base = parsed(btfslim::test::footprint_btf(false));
    baseline = budget_figures(*base, Footprint(*base));
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Measured m;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)baseline_figures(text, "fuzz.json");
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  try {
    const BudgetConfig config = parse_budget_config(text, "fuzz.toml");
    std::vector<LimitResult> results;
    for (const Budget& b : config.budgets) {
      try {
        check_budget(b, config.file, *m.btf, m.fp, m.figures, &m.baseline, results);
      } catch (const InputError& e) {  // a type the fixture does not have
        fuzz::expect_error_line(e);
      }
    }
    static fuzz::TextSink sink;
    for (const auto f : {BudgetFormat::Table, BudgetFormat::Json, BudgetFormat::Junit, BudgetFormat::Github})
      print_budget_report(results, config.file, f, sink.out());
    sink.out().write(budget_markdown_summary(results, config.file));
    sink.check("budget's reports");
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
  }
  return 0;
}
