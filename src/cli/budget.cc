// `btfslim budget`: checks the limits of a budget file (btfslim.toml) and says which hold, in a form
// CI systems read; exit 1 when any is exceeded.
#include "btfslim/budget.h"
#include "btfslim/ci_text.h"
#include "btfslim/cli.h"
#include "btfslim/error.h"
#include "btfslim/input.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

namespace btfslim::cli {
namespace {

namespace fs = std::filesystem;

struct BudgetArgs {
  std::string config = "btfslim.toml";
  std::string format = "table";
  std::vector<std::string> inputs;
};

BudgetFormat parse_format(const std::string& f) {
  return f == "json" ? BudgetFormat::Json : f == "junit" ? BudgetFormat::Junit : f == "github" ? BudgetFormat::Github
                                                                                               : BudgetFormat::Table;
}

// A path written in the config is relative to the config's directory. For inputs and bases a bare
// name that is no file there keeps its meaning on the command line ('vmlinux', a module name).
std::string config_relative(const std::string& config, const std::string& value, bool shorthand) {
  const fs::path dir = fs::path(config).parent_path();
  if (value.empty() || fs::path(value).is_absolute() || dir.empty()) return value;
  const std::string joined = (dir / value).string();
  if (shorthand && value.find('/') == std::string::npos && !fs::exists(joined)) return value;
  return joined;
}

// One budget on one input.
struct Job {
  const Budget* budget;
  std::string input;
  std::string base;
  std::string baseline;
  std::string key() const { return input + '\0' + base; }
};

struct Measured {
  std::shared_ptr<const Btf> btf;
  std::unique_ptr<Footprint> fp;
  BudgetFigures figures;
  bool full = false;
};

void run_budget(const BudgetArgs& args, bool config_given) {
  if (!config_given && !fs::exists(args.config))
    fail(args.config, "no budget file here: write one (man btfslim-budget) or name it with --config");
  const auto file = FileBytes::open(args.config);
  const auto bytes = file->bytes();
  const BudgetConfig config =
      parse_budget_config(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), args.config);

  // INPUT arguments replace every budget's `input`; without them each budget needs its own.
  std::vector<Job> jobs;
  for (const Budget& b : config.budgets) {
    const std::string base = config_relative(args.config, b.base, true);
    const std::string baseline = config_relative(args.config, b.baseline, false);
    if (!args.inputs.empty()) {
      for (const auto& in : args.inputs) jobs.push_back({&b, in, base, baseline});
    } else if (!b.input.empty()) {
      jobs.push_back({&b, config_relative(args.config, b.input, true), base, baseline});
    } else {
      fail(fmt::format("{}:{}", args.config, b.line),
           "budget '{}' names no input: add input = \"FILE\" or give INPUT on the command line", esc(b.name));
    }
  }

  // Each input is read and measured once, with the reference graph only when a type limit needs it.
  std::map<std::string, Measured> measured;
  std::vector<std::string> order;
  for (const Job& j : jobs) {
    auto [it, fresh] = measured.try_emplace(j.key());
    if (fresh) order.push_back(j.key());
    it->second.full = it->second.full || j.budget->needs_types();
  }
  for (const Job& j : jobs) {
    Measured& m = measured[j.key()];
    if (m.btf) continue;
    RecordNames names;
    m.btf = load_btf(j.input, {j.base, &names});
    m.fp = std::make_unique<Footprint>(*m.btf, m.full ? Footprint::Depth::Full : Footprint::Depth::Kinds,
                                       std::move(names));
    m.figures = budget_figures(*m.btf, *m.fp);
  }
  // A baseline that cannot be read is reported at the line that names it, with what is wrong with it.
  std::map<std::string, BudgetFigures> baselines;
  for (const Job& j : jobs) {
    if (j.baseline.empty() || baselines.count(j.baseline)) continue;
    try {
      const auto f = FileBytes::open(j.baseline);
      const auto b = f->bytes();
      baselines[j.baseline] =
          baseline_figures(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()), j.baseline);
    } catch (const InputError& e) {
      fail(fmt::format("{}:{}", args.config, j.budget->baseline_line), "budget '{}': baseline {}", esc(j.budget->name),
           e.what());
    }
  }

  std::vector<LimitResult> results;
  for (const Job& j : jobs) {
    const Measured& m = measured[j.key()];
    check_budget(*j.budget, args.config, *m.btf, *m.fp, m.figures,
                 j.baseline.empty() ? nullptr : &baselines[j.baseline], results);
  }

  const BudgetFormat format = parse_format(args.format);
  OutputBuffer out;
  print_budget_report(results, args.config, format, out);
  out.flush();
  if (format == BudgetFormat::Github)
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary)
      append_step_summary(summary, budget_markdown_summary(results, args.config));
  for (const LimitResult& r : results)
    if (r.exceeded()) report_check_failed();
}

}  // namespace

void register_budget(CLI::App& app) {
  auto args = std::make_shared<BudgetArgs>();
  CLI::App* cmd = app.add_subcommand(
      "budget", "check the size limits of a budget file (btfslim.toml): exit 1 when any is exceeded");
  cmd->add_option("inputs", args->inputs,
                  "BTF to check every budget against, instead of each budget's own input");
  cmd->add_option("--config,-c", args->config, "the budget file (default: btfslim.toml)");
  cmd->add_option("--format,-f", args->format, "table, json, junit (JUnit XML) or github (Actions annotations)")
      ->check(CLI::IsMember({"table", "json", "junit", "github"}))
      // "text", its name before every command called it table, is still read (and offered nowhere).
      ->transform(CLI::Validator(
          [](std::string& v) {
            if (v == "text") v = "table";
            return std::string();
          },
          ""));
  cmd->callback([args, cmd] { run_budget(*args, cmd->count("--config") > 0); });
}

}  // namespace btfslim::cli
