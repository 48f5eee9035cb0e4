// How the command line explains itself: `btfslim help [COMMAND]`, `--version`, one-line usage errors
// that suggest the closest command or option, and the hidden `btfslim __options`.
//
// `__options` prints every option of every command, one per line, straight from the CLI11 app. The cli
// tests read it and check that each option is in the command's man page and in the bash, zsh and fish
// completions, so that a new command or option cannot ship undocumented: the app is the one list, the
// manual and the completions are checked against it rather than generated from it (they say more than
// the app knows: which values to offer, what an option means).
#include "btfslim/cli.h"
#include "btfslim/error.h"

#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#ifndef BTFSLIM_VERSION
#define BTFSLIM_VERSION "0.0.0"
#endif
// Space-separated optional libraries linked in (meson's btfslim_features), e.g. "libarchive toml++".
#ifndef BTFSLIM_FEATURES
#define BTFSLIM_FEATURES ""
#endif

namespace btfslim::cli {
namespace {

const CLI::App* find_command(const CLI::App& app, std::string_view name) {
  for (const CLI::App* c : commands(app))
    if (c->get_name() == name) return c;
  return nullptr;
}

std::string command_list(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* c : commands(app)) names.push_back(c->get_name());
  return fmt::format("{}", fmt::join(names, ", "));
}

// "(choices)" from CLI11's type name "TEXT:{raw,json,c}": what an IsMember check allows.
std::vector<std::string> choices(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  const auto open = type.find(":{");
  const auto close = type.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  std::vector<std::string> values;
  std::string_view list(type.data() + open + 2, close - open - 2);
  while (!list.empty()) {
    const auto comma = list.find(',');
    values.emplace_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return values;
}

// CLI11 shows an option that gathers values into a list as "--kind TEXT ...", which reads as
// "--kind struct union"; ours take one value per occurrence (allow_extra_args(false): a value after it
// is the next argument), so they are shown as "--kind KINDS", and their descriptions say to repeat the
// option or to separate values with commas. A positional list (OBJ...) keeps its "...".
class Formatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string opts = CLI::Formatter::make_option_opts(opt);
    if (opt->nonpositional() && !opt->get_allow_extra_args())
      if (const auto at = opts.find(" ..."); at != std::string::npos) opts.erase(at, 4);
    return opts;
  }
};

// One line per option: "COMMAND<TAB>NAMES<TAB>flag|value<TAB>CHOICES"; COMMAND is "btfslim" for the
// options before any command. Hidden options (group "": old spellings kept for scripts) are left out, so
// that neither the manual nor the completions have to offer them.
void print_options(const CLI::App& app) {
  auto print = [](std::string_view command, const CLI::App& owner) {
    for (const CLI::Option* opt : owner.get_options()) {
      if (!opt->nonpositional() || opt->get_group().empty()) continue;
      std::vector<std::string> names;
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
      for (const auto& s : opt->get_snames()) names.push_back("-" + s);
      fmt::print("{}\t{}\t{}\t{}\n", command, fmt::join(names, " "), opt->get_type_size() == 0 ? "flag" : "value",
                 fmt::join(choices(*opt), " "));
    }
  };
  print("btfslim", app);
  for (const CLI::App* c : commands(app)) print(c->get_name(), *c);
}

// The option `token` (a "-x" or "--name[=value]" argument) names, when `cmd` has none of that name.
std::string unknown_option(const CLI::App& cmd, std::string_view token) {
  if (token.size() < 2 || token[0] != '-' || token == "--") return {};
  std::string name(token.substr(0, token.find('=')));
  return cmd.get_option_no_throw(name) ? std::string() : name;
}

// "; did you mean '--format'?" for the option of `cmd` closest to `name`, or "".
std::string option_suggestion(const CLI::App& cmd, const std::string& name) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd.get_options())
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  const std::string best = closest(name, names);
  return best.empty() ? std::string() : fmt::format("; did you mean '{}'?", best);
}

}  // namespace

std::vector<const CLI::App*> commands(const CLI::App& app) {
  // Hidden commands (group "") are for tests, not for people.
  return app.get_subcommands([](const CLI::App* c) { return !c->get_group().empty(); });
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and swaps of neighbours cost 1, so
  // that "mesure", "measrue" and "dmup" are all one step from a command.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  // Close enough to be a typo: at most one edit in four letters, two at most; or the start of exactly
  // one candidate ("meas").
  const auto bare = [](std::string_view s) { return s.substr(std::min(s.find_first_not_of('-'), s.size())); };
  const std::string_view w = bare(word);
  if (w.empty()) return {};
  const std::size_t allowed = std::clamp<std::size_t>(w.size() / 3, 1, 2);
  std::string best;
  std::size_t best_distance = allowed + 1;
  std::vector<std::string> prefixed;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(w, bare(c));
    if (d < best_distance) best = c, best_distance = d;
    if (w.size() >= 2 && bare(c).substr(0, w.size()) == w) prefixed.push_back(c);
  }
  if (best.empty() && prefixed.size() == 1) best = prefixed.front();
  return best;
}

std::string unknown_command_problem(const CLI::App& app, std::string_view name) {
  std::vector<std::string> names;
  for (const CLI::App* c : commands(app)) names.push_back(c->get_name());
  const std::string best = closest(name, names);
  if (!best.empty()) return fmt::format("unknown command '{}'; did you mean '{}'? (see btfslim help)", esc(name), best);
  return fmt::format("unknown command '{}' (commands: {}; see btfslim help)", esc(name), command_list(app));
}

std::string usage_problem(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  // CLI11 reports a misspelt command, or an option it does not know before the command, as a missing
  // command ("A subcommand is required"): name the argument instead.
  if (dynamic_cast<const CLI::RequiredError*>(&e) && parsed.empty()) {
    if (argc < 2) return fmt::format("a subcommand is required (commands: {}; see btfslim help)", command_list(app));
    if (argv[1][0] != '-') return unknown_command_problem(app, argv[1]);
    const std::string name = unknown_option(app, argv[1]);
    if (!name.empty())
      return fmt::format("unknown option '{}'{} (see btfslim --help)", esc(name), option_suggestion(app, name));
  }
  // An option the command does not have: name it and suggest the closest one it has.
  if (dynamic_cast<const CLI::ExtrasError*>(&e) && !parsed.empty()) {
    const CLI::App& cmd = *parsed.back();
    for (int i = 2; i < argc; ++i) {
      const std::string name = unknown_option(cmd, argv[i]);
      if (name.empty() || std::string_view(e.what()).find(name) == std::string_view::npos) continue;
      return fmt::format("{}: unknown option '{}'{} (see btfslim help {})", cmd.get_name(), esc(name),
                         option_suggestion(cmd, name), cmd.get_name());
    }
  }
  return e.what();
}

std::string version_text() {
  const std::string features = BTFSLIM_FEATURES;
  return fmt::format("btfslim {}\nlibbpf {}.{} (built against {}.{})\nfeatures: {}", BTFSLIM_VERSION,
                     libbpf_major_version(), libbpf_minor_version(), LIBBPF_MAJOR_VERSION, LIBBPF_MINOR_VERSION,
                     features.empty() ? "none" : features);
}

void register_help(CLI::App& app) {
  const auto formatter = std::make_shared<Formatter>();
  app.formatter(formatter);
  for (CLI::App* c : app.get_subcommands([](CLI::App*) { return true; })) c->formatter(formatter);
  app.set_version_flag("--version,-V", version_text, "print btfslim's version, libbpf's and the features built in");
  app.footer("Run 'btfslim help COMMAND' for a command's options; the manual is btfslim(1) and btfslim-COMMAND(1).");

  auto topic = std::make_shared<std::string>();
  CLI::App* help = app.add_subcommand("help", "show this help, or a command's");
  help->add_option("command", *topic, "the command to explain");
  help->callback([&app, topic] {
    // Through the formatter: App::help() would describe the command being run, `help` itself.
    if (topic->empty()) {
      std::fputs(app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal).c_str(), stdout);
      return;
    }
    const CLI::App* cmd = find_command(app, *topic);
    if (!cmd) throw InputError("help", unknown_command_problem(app, *topic));
    std::fputs(cmd->help(app.get_name()).c_str(), stdout);
  });

  app.add_subcommand("__options", "")->group("")->callback([&app] { print_options(app); });
}

}  // namespace btfslim::cli
