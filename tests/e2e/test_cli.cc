// The command line as people meet it: help and version, suggestions for typos, colour and widths, and
// a consistency check that keeps the CLI, the man pages and the bash, zsh and fish completions in step.
//
// The list of commands and options comes from the binary itself (`btfslim __options`, straight from its
// CLI11 app), so adding an option to a command without documenting it in man/ and offering it in every
// script under completions/ fails here. The completions are asked as each shell would be asked at a
// <TAB>: bash through its completion function, fish with `complete -C`, zsh in a pseudo-terminal (zpty)
// driving the real completion system. Finally `meson install --destdir` must lay out the binary, the
// pages and the scripts where each belongs, and groff must render every page without a warning.
#include "fixtures.h"
#include "process.h"
#include "text.h"

#include <bpf/libbpf.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using Words = std::set<std::string>;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, sep);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string show(const Words& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return "{" + s + "}";
}

// ---- what the binary defines ----

struct Option {
  std::vector<std::string> names;  // "--format", "-f"
  bool flag = false;
  std::vector<std::string> choices;
};

struct Cli {
  std::vector<std::string> commands;                  // in registration order
  std::map<std::string, std::vector<Option>> options;  // by command; "btfslim" for the top level
};

const Cli& cli() {
  static const Cli parsed = [] {
    const RunResult r = btfslim({"__options"});
    INFO("btfslim __options: " << r.err);
    REQUIRE(r.status == 0);
    Cli c;
    for (const auto& line : lines_of(r.out)) {
      std::vector<std::string> fields;
      std::istringstream in(line);
      for (std::string f; std::getline(in, f, '\t');) fields.push_back(f);
      REQUIRE(fields.size() >= 3);
      Option o{split(fields[1], ' '), fields[2] == "flag", {}};
      if (fields.size() > 3) o.choices = split(fields[3], ' ');
      if (fields[0] != "btfslim" && std::find(c.commands.begin(), c.commands.end(), fields[0]) == c.commands.end())
        c.commands.push_back(fields[0]);
      c.options[fields[0]].push_back(o);
    }
    REQUIRE(c.commands.size() >= 3);
    return c;
  }();
  return parsed;
}

Words option_names(const std::string& command) {
  Words names;
  for (const Option& o : cli().options.at(command)) names.insert(o.names.begin(), o.names.end());
  return names;
}

Words command_names() { return Words(cli().commands.begin(), cli().commands.end()); }

std::string project_dir() { return fs::path(source_data_dir()).parent_path().string(); }
std::string completions_dir() { return project_dir() + "/completions"; }
// The top of the build tree: where meson puts the btfslim binary.
std::string build_root() { return fs::path(btfslim_path()).parent_path().string(); }

// The man page source that documents `command`'s options: help and the top level live in btfslim(1).
std::string man_source(const std::string& command) {
  const bool own_page = command != "btfslim" && command != "help";
  return project_dir() + "/man/" + (own_page ? "btfslim-" + command : std::string("btfslim")) + ".1.scd";
}

// ---- asking each shell what <TAB> offers ----
//
// Each shell is started once for a batch of command lines and prints what <TAB> offers after each,
// then "<<NEXT>>".

using Offers = std::map<std::string, Words>;  // command line -> what <TAB> offers after it

Offers parse_offers(const std::vector<std::string>& lines, const RunResult& r,
                    std::string (*clean)(const std::string& line, const std::string& offer)) {
  Offers offers;
  std::size_t i = 0;
  for (const auto& l : lines_of(r.out)) {
    if (l == "<<NEXT>>") {
      offers[lines.at(i)];  // an empty set when nothing was offered
      ++i;
    } else if (i < lines.size()) {
      offers[lines[i]].insert(clean(lines[i], l));
    }
  }
  INFO(r.out);
  CHECK(i == lines.size());
  return offers;
}

std::string as_is(const std::string&, const std::string& offer) { return offer; }

Offers bash_complete(const std::vector<std::string>& lines) {
  // COMP_WORDS as bash splits the line (at blanks and at '='), the cursor at the end.
  const std::string script = "source " + completions_dir() + "/btfslim.bash || exit 1\n" + R"(
fn=$(complete -p btfslim) && fn=${fn#*-F } && fn=${fn%% *} || exit 1
for line in "$@"; do
  read -r -a COMP_WORDS <<< "${line//=/ = }"
  [[ $line == *' ' ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) COMP_LINE=$line COMP_POINT=${#line} COMPREPLY=()
  "$fn" btfslim "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  printf '%s\n' "${COMPREPLY[@]}" '<<NEXT>>'
done
)";
  std::vector<std::string> argv{"bash", "--norc", "--noprofile", "-c", script, "bash"};
  argv.insert(argv.end(), lines.begin(), lines.end());
  const RunResult r = run(argv);
  INFO("bash: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  return parse_offers(lines, r, as_is);
}

Offers fish_complete(const std::vector<std::string>& lines) {
  std::vector<std::string> argv{
      "fish", "--no-config", "-c",
      "source " + completions_dir() + "/btfslim.fish; or exit 1; for l in $argv; complete -C $l; echo '<<NEXT>>'; end"};
  argv.insert(argv.end(), lines.begin(), lines.end());
  const RunResult r = run(argv);
  INFO("fish: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  return parse_offers(lines, r, [](const std::string& line, const std::string& offer) {
    std::string w = offer.substr(0, offer.find('\t'));  // the description follows a tab
    // fish offers "--format=json" after "--format=": keep the value.
    if (const auto eq = w.find('='); line.back() == '=' && w.rfind("--", 0) == 0 && eq != std::string::npos)
      w = w.substr(eq + 1);
    return w;
  });
}

// Runs an interactive zsh in a pseudo-terminal with the completions on $fpath, and for each line types it
// and a TAB: the completion system runs as it does for people, and a wrapped compadd prints each match.
constexpr const char* kZshCapture = R"(
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "PS1=''; unsetopt zle_bracketed_paste 2>/dev/null; bindkey -e"
zpty -w z "fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'zstyle ":completion:*" insert-tab false; comppostfuncs=(__capture_end)'
# After each completion: insert and list nothing (the line is then killed), mark the end, stay armed.
zpty -w z '__capture_end() {
  comppostfuncs=(__capture_end); compstate[list]=; compstate[insert]=; print -r -- $'"'"'\n<<END>>'"'"'
}'
zpty -w z 'compadd() {
  local -a h; builtin compadd -O h "$@"; (( $#h )) && print -rl -- $'"'"'\n<<C>>'"'"'${^h}; builtin compadd "$@"
}'
zpty -w z 'bindkey "^I" complete-word; print -r -- "<<READY>>"'
local line
while zpty -r z line; do [[ $line == '<<READY>>'* ]] && break; done
shift
for query in "$@"; do
  zpty -w -n z "$query"$'\t'
  while zpty -r z line; do
    [[ $line == *'<<END>>'* ]] && break
    [[ $line == *'<<C>>'* ]] && print -r -- ${${${line##*<<C>>}%$'\n'}%$'\r'}
  done
  print -r -- '<<NEXT>>'
  zpty -w -n z $'\C-u'
done
zpty -d z
)";

Offers zsh_complete(const std::vector<std::string>& lines) {
  TempDir dir;
  write_file(dir.file("capture.zsh"), kZshCapture);
  std::vector<std::string> argv{"timeout", "120", "zsh", "-f", dir.file("capture.zsh"), completions_dir()};
  argv.insert(argv.end(), lines.begin(), lines.end());
  const RunResult r = run(argv);
  INFO("zsh: " << r.err);
  REQUIRE(r.status == 0);
  return parse_offers(lines, r, as_is);
}

struct Shell {
  std::string name;
  Offers (*complete)(const std::vector<std::string>& lines);
};

// The shells installed here; a missing one is a visible skip (scripts/setup.sh installs all three).
std::vector<Shell> shells() {
  std::vector<Shell> found;
  for (const Shell& s : {Shell{"bash", bash_complete}, Shell{"zsh", zsh_complete}, Shell{"fish", fish_complete}}) {
    if (have(s.name))
      found.push_back(s);
    else
      skip(s.name + " is not installed: its completion is not checked");
  }
  return found;
}

// ---- the consistency test ----

TEST_CASE("every command and option is in the man pages", "[cli]") {
  const std::string overview = read_file(man_source("btfslim"));
  for (const auto& [command, options] : cli().options) {
    if (command != "btfslim") {
      INFO("btfslim(1) lists the command " << command);
      CHECK_THAT(overview, Contains("*" + command + "*"));
      if (command != "help") CHECK_THAT(overview, Contains("*btfslim-" + command + "*(1)"));
    }
    const std::string page = man_source(command);
    INFO("man page " << page);
    REQUIRE(fs::exists(page));
    // Each option is defined by a term line of the OPTIONS list ("*-n*, *--top* _N_"), not just named in
    // passing in another option's text.
    std::string terms;
    for (const auto& line : lines_of(read_file(page)))
      if (line.rfind("*-", 0) == 0) terms += line + "\n";
    for (const Option& o : options)
      for (const auto& name : o.names) {
        INFO(command << " " << name);
        CHECK_THAT(terms, Contains("*" + name + "*"));
      }
  }
}

TEST_CASE("each shell's completion script loads", "[cli]") {
  const std::string dir = completions_dir();
  if (have("bash")) {
    const RunResult r =
        run({"bash", "--norc", "--noprofile", "-c", "source " + dir + "/btfslim.bash && complete -p btfslim"});
    INFO("bash: " << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, StartsWith("complete -F _btfslim") && Contains("btfslim"));
  }
  if (have("zsh")) {
    const RunResult syntax = run({"zsh", "-n", dir + "/_btfslim"});
    INFO("zsh -n: " << syntax.err);
    CHECK(syntax.status == 0);
    const RunResult r = run({"zsh", "-f", "-c",
                             "fpath=(" + dir + " $fpath); autoload -Uz compinit && compinit -u -D && "
                             "autoload -Uz _btfslim && print -r -- $_comps[btfslim] && whence -w _btfslim"});
    INFO("zsh: " << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == "_btfslim\n_btfslim: function\n");
  }
  if (have("fish")) {
    const RunResult syntax = run({"fish", "--no-execute", dir + "/btfslim.fish"});
    INFO("fish --no-execute: " << syntax.err);
    CHECK(syntax.status == 0);
    const RunResult r = run({"fish", "--no-config", "-c", "source " + dir + "/btfslim.fish; and complete -c btfslim"});
    INFO("fish: " << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Contains("complete --no-files btfslim"));
  }
}

TEST_CASE("the completions offer every command and option, and only those", "[cli]") {
  std::map<std::string, Words> expected{{"btfslim ", command_names()}, {"btfslim -", option_names("btfslim")}};
  for (const auto& command : cli().commands) expected["btfslim " + command + " -"] = option_names(command);
  std::vector<std::string> lines;
  for (const auto& [line, words] : expected) lines.push_back(line);
  for (const Shell& shell : shells()) {
    const Offers offers = shell.complete(lines);
    for (const auto& [line, words] : expected) {
      INFO(shell.name << ": " << line);
      CHECK(show(offers.at(line)) == show(words));
    }
  }
}

TEST_CASE("the completions offer each option's choices", "[cli]") {
  std::map<std::string, Words> expected{{"btfslim help ", command_names()}};
  for (const auto& [command, options] : cli().options)
    for (const Option& o : options)
      if (!o.choices.empty()) {
        const std::string line = "btfslim " + command + " " + o.names.front();
        expected[line + " "] = expected[line + "="] = Words(o.choices.begin(), o.choices.end());
      }
  std::vector<std::string> lines;
  for (const auto& [line, words] : expected) lines.push_back(line);
  for (const Shell& shell : shells()) {
    const Offers offers = shell.complete(lines);
    for (const auto& [line, words] : expected) {
      INFO(shell.name << ": " << line);
      CHECK(show(offers.at(line)) == show(words));
    }
  }
}

// bash and fish offer a file as the whole path typed; zsh's matches are the name in its directory.
bool has_file(const Words& offered, const std::string& path) {
  return offered.count(path) || offered.count(fs::path(path).filename().string());
}

TEST_CASE("the completions offer kinds, kernel BTF names and files", "[cli]") {
  TempDir dir;
  write_file(dir.file("prog.bpf.o"), "");
  write_file(dir.file("notes.txt"), "");
  std::string module;  // one is enough: every module is listed the same way
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/kernel/btf", ec))
    if (entry.path().filename() != "vmlinux") module = entry.path().filename().string();
  const std::string kinds_line = "btfslim dump --kind ", more_kinds_line = "btfslim measure --without struct,fu";
  const std::vector<std::string> btf_lines = {"btfslim dump vml", "btfslim measure --base vml",
                                              "btfslim check --btf vml"};
  const std::string module_line = "btfslim measure " + module.substr(0, 3);
  const std::string input_line = "btfslim dump " + dir.path() + "/pr";
  const std::string svg_line = "btfslim measure --svg " + dir.path() + "/no";
  const std::string objects_line = "btfslim check " + dir.path() + "/";
  std::vector<std::string> lines = {kinds_line, more_kinds_line, input_line, svg_line, objects_line};
  lines.insert(lines.end(), btf_lines.begin(), btf_lines.end());
  if (!module.empty()) lines.push_back(module_line);

  for (const Shell& shell : shells()) {
    INFO(shell.name);
    const Offers offers = shell.complete(lines);
    // Kinds for --kind and --without, item by item in a comma-separated list; btfslim takes each.
    const Words& kinds = offers.at(kinds_line);
    INFO("kinds: " << show(kinds));
    CHECK(kinds.count("struct"));
    CHECK(kinds.count("func_proto"));
    CHECK(kinds.size() >= 19);
    for (const auto& k : kinds) {
      const RunResult r = btfslim({"dump", "--kind", k, dir.file("missing")});
      INFO("--kind " << k << ": " << r.err);
      CHECK_THAT(r.err, Contains("missing") && !Contains("kind"));
    }
    CHECK(offers.at(more_kinds_line).count(shell.name == "zsh" ? "func_proto" : "struct,func_proto"));

    // The running kernel's BTF by name where a BTF input goes; modules come from /sys/kernel/btf.
    for (const auto& line : btf_lines) {
      INFO(line);
      CHECK(offers.at(line).count("vmlinux"));
    }
    if (!module.empty()) CHECK(offers.at(module_line).count(module));

    // Files where a path goes; check's objects are *.o files.
    CHECK(has_file(offers.at(input_line), dir.file("prog.bpf.o")));
    CHECK(has_file(offers.at(svg_line), dir.file("notes.txt")));
    CHECK(has_file(offers.at(objects_line), dir.file("prog.bpf.o")));
    if (shell.name != "fish") CHECK_FALSE(has_file(offers.at(objects_line), dir.file("notes.txt")));
  }
}

// ---- help, version, suggestions ----

TEST_CASE("--version names btfslim, libbpf and the features", "[cli]") {
  for (const char* flag : {"--version", "-V"}) {
    const RunResult r = btfslim({flag});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    const auto lines = lines_of(r.out);
    REQUIRE(lines.size() == 3);
    CHECK_THAT(lines[0], StartsWith("btfslim 0."));
    CHECK_THAT(lines[1], StartsWith("libbpf " + std::to_string(libbpf_major_version()) + "." +
                                    std::to_string(libbpf_minor_version()) + " "));
    CHECK_THAT(lines[2], StartsWith("features: "));
  }
}

TEST_CASE("help at every level", "[cli]") {
  const RunResult top = btfslim({"--help"});
  CHECK(top.status == 0);
  CHECK(top.err.empty());
  for (const auto& command : cli().commands) CHECK_THAT(top.out, Contains(command));
  CHECK(btfslim({"help"}).out == top.out);
  CHECK(btfslim({"-h"}).out == top.out);

  for (const auto& command : cli().commands) {
    const RunResult help = btfslim({"help", command});
    INFO(command << ": " << help.err);
    CHECK(help.status == 0);
    CHECK(help.err.empty());
    CHECK_THAT(help.out, Contains("Usage: btfslim " + command));
    for (const auto& name : option_names(command)) CHECK_THAT(help.out, Contains(name));
    CHECK(btfslim({command, "--help"}).out == help.out);
    CHECK(btfslim({command, "-h"}).out == help.out);
  }
}

TEST_CASE("a mistyped command or option suggests the closest one", "[cli]") {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"mesure"}, "btfslim: unknown command 'mesure'; did you mean 'measure'?"},
      {{"dmup", "x"}, "btfslim: unknown command 'dmup'; did you mean 'dump'?"},
      {{"chekc"}, "btfslim: unknown command 'chekc'; did you mean 'check'?"},
      {{"meas"}, "btfslim: unknown command 'meas'; did you mean 'measure'?"},
      {{"help", "mesure"}, "btfslim: help: unknown command 'mesure'; did you mean 'measure'?"},
      {{"frobnicate"}, "btfslim: unknown command 'frobnicate' (commands: dump, measure, check, minimize, "},
      {{"--verison"}, "btfslim: unknown option '--verison'; did you mean '--version'?"},
      {{"dump", "--fromat", "json", "x"}, "btfslim: dump: unknown option '--fromat'; did you mean '--format'?"},
      {{"measure", "--kinds", "struct"}, "btfslim: measure: unknown option '--kinds'; did you mean '--kind'?"},
      {{}, "btfslim: a subcommand is required (commands: dump, measure, check, minimize, "},
  };
  for (const Case& c : cases) {
    const RunResult r = btfslim(c.args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, StartsWith(c.expected));
  }
  // Nothing close: no guess.
  CHECK_THAT(btfslim({"dump", "--frobnicate"}).err, !Contains("did you mean"));
}

// ---- the terminal ----

// Runs a shell command line in a pseudo-terminal (util-linux script) with `env` set: what it shows.
RunResult on_terminal(const std::vector<std::string>& env, const std::string& args) {
  std::vector<std::string> argv{"env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), {"script", "-qec", args, "/dev/null"});
  return run(argv);
}

TEST_CASE("colour only on a terminal, never with NO_COLOR", "[cli]") {
  TempDir dir;
  const std::string missing = dir.file("missing.btf");
  const RunResult piped = btfslim({"dump", missing});
  CHECK(piped.err.find('\x1b') == std::string::npos);
  if (!have("script")) return skip("no script(1) to run btfslim on a terminal");
  const std::string command = btfslim_path() + " dump " + missing;
  const RunResult tty = on_terminal({"TERM=xterm", "NO_COLOR="}, command);
  INFO(tty.out);
  CHECK_THAT(tty.out, Contains("\x1b[1;31mbtfslim:\x1b[0m " + missing + ": cannot open"));
  const RunResult no_colour = on_terminal({"TERM=xterm", "NO_COLOR=1"}, command);
  CHECK_THAT(no_colour.out, Contains("btfslim: " + missing + ": cannot open"));
  CHECK(no_colour.out.find('\x1b') == std::string::npos);
  const RunResult dumb = on_terminal({"TERM=dumb", "NO_COLOR="}, command);
  CHECK(dumb.out.find('\x1b') == std::string::npos);
}

TEST_CASE("the measure table fits COLUMNS, and a pipe gets it whole", "[cli]") {
  TempDir dir;
  write_file(dir.file("all.btf"), all_kinds_btf());
  auto widest = [](const std::string& out) {
    std::size_t w = 0;
    for (const auto& l : lines_of(out))
      if (l.rfind("kernel memory", 0) != 0 && l.rfind("header ", 0) != 0 && l.find(": BTF") == std::string::npos) {
        std::size_t chars = 0;  // display columns: a cut's "…" is three bytes, one column
        for (const char c : l) chars += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
        w = std::max(w, chars);
      }
    return w;
  };
  const RunResult whole = btfslim({"measure", dir.file("all.btf"), "--by", "type"});
  REQUIRE(whole.status == 0);
  // In a pipe the name column is as wide as the longest name needs: nothing is cut.
  const std::size_t full = widest(whole.out);
  CHECK(whole.out.find("\xe2\x80\xa6") == std::string::npos);
  for (const std::size_t columns : {80, 60, 100, 250}) {
    const RunResult r = run({"env", "COLUMNS=" + std::to_string(columns), btfslim_path(), "measure",
                             dir.file("all.btf"), "--by", "type"});
    INFO("COLUMNS=" << columns << "\n" << r.out);
    REQUIRE(r.status == 0);
    // 76 columns is the narrowest the table gets: "[unreferenced strings]" must fit.
    CHECK(widest(r.out) == std::min(full, std::max<std::size_t>(columns, 76)));
  }
  if (!have("script")) return skip("no script(1) to run btfslim on a terminal");
  // On a terminal without COLUMNS: the terminal's width.
  const RunResult tty = on_terminal({"-u", "COLUMNS"}, "stty cols 85 && " + btfslim_path() + " measure " +
                                                         dir.file("all.btf") + " --by type");
  INFO(tty.out);
  CHECK(widest(tty.out) == std::min<std::size_t>(full, 85) + 1);  // each line ends in \r\n on a terminal
}

// ---- install ----

TEST_CASE("groff renders every man page without a warning", "[cli]") {
  if (!have("groff")) return skip("groff is not installed");
  std::vector<std::string> pages{"btfslim.1"};
  for (const auto& command : cli().commands)
    if (command != "help") pages.push_back("btfslim-" + command + ".1");
  for (const auto& page : pages) {
    const std::string path = build_root() + "/man/" + page;
    INFO(path);
    REQUIRE(fs::exists(path));
    const RunResult r = run({"groff", "-man", "-ww", "-z", path});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out.empty());
    CHECK(r.err.empty());
  }
}

TEST_CASE("meson install lays out the binary, the man pages and the completions", "[cli]") {
  if (!have("meson")) return skip("meson is not installed");
  TempDir dest;
  const RunResult r =
      run({"meson", "install", "-C", build_root(), "--no-rebuild", "--quiet", "--destdir", dest.path()});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);

  // Whatever the prefix, each file lands at the end of the path its shell (or man) searches.
  std::map<std::string, std::string> found;  // path relative to the prefix's parent -> what
  for (const auto& entry : fs::recursive_directory_iterator(dest.path()))
    if (entry.is_regular_file()) found[entry.path().string().substr(dest.path().size())] = entry.path().string();
  auto installed = [&](const std::string& suffix) {
    for (const auto& [rel, path] : found)
      if (rel.size() >= suffix.size() && rel.compare(rel.size() - suffix.size(), suffix.size(), suffix) == 0)
        return path;
    return std::string();
  };
  std::string listing;
  for (const auto& [rel, path] : found) listing += rel + "\n";
  INFO("installed:\n" << listing);

  const std::string binary = installed("/bin/btfslim");
  REQUIRE(!binary.empty());
  CHECK(run({binary, "--version"}).status == 0);
  CHECK(!installed("/share/man/man1/btfslim.1").empty());
  for (const auto& command : cli().commands)
    if (command != "help") CHECK(!installed("/share/man/man1/btfslim-" + command + ".1").empty());

  const std::string bash = installed("/share/bash-completion/completions/btfslim");
  const std::string fish = installed("/share/fish/vendor_completions.d/btfslim.fish");
  std::string zsh = installed("/share/zsh/vendor-completions/_btfslim");
  if (zsh.empty()) zsh = installed("/share/zsh/site-functions/_btfslim");
  REQUIRE(!bash.empty());
  REQUIRE(!zsh.empty());
  REQUIRE(!fish.empty());
  CHECK(read_file(bash) == read_file(completions_dir() + "/btfslim.bash"));
  CHECK(read_file(zsh) == read_file(completions_dir() + "/_btfslim"));
  CHECK(read_file(fish) == read_file(completions_dir() + "/btfslim.fish"));
}

}  // namespace
}  // namespace btfslim::test
