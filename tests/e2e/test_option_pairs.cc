// Every option either works with every other or is refused ([option-pairs]).
//
// A command's options are run alone and two by two on one input. A run that ends with status 0 (or 1, a
// check that failed) must show both options: its output (stdout and the files it writes) differs from
// that of each option alone, where that one ran. A run that does not must be a refusal: status 2, one
// line on stderr, nothing on stdout and no file written, so that a script never gets a result that
// quietly left an option out. The table of options is held to `btfslim __options`, so that a new option
// is walked too.
//
// Commands walked: measure, on a module of the second kernel, and diff, on one module across the two
// kernels, and check, on the test build's objects at both kernels (each skips visibly where
// scripts/fetch-test-kernel.sh did not fetch them); dump, dedup and budget on the test build's inputs.
// minimize is still to be added: it needs its table.
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;

struct Option {
  std::string name;               // as __options lists it: the long name
  std::vector<std::string> args;  // the option with a value that shows
  bool neutral = false;           // changes nothing on this input (--strict-input on a file): not compared
};

struct Walk {
  std::vector<std::string> command;    // the command and what every run gives (inputs, their base)
  std::vector<Option> options;
  std::map<std::string, std::string> not_walked;  // option -> why it is part of every run instead
  std::vector<std::string> written;    // files or directories a run writes (removed before each run)
  // Pairs where the second option names what the first already implies (CSV's table is the kind table
  // unless --by says otherwise): their output is the first's alone, as it should be.
  std::set<std::pair<std::string, std::string>> same_as_implied;
  // Pairs where the first option leaves the second nothing to act on in this input, each with why: their
  // output is the first's alone.
  std::map<std::pair<std::string, std::string>, std::string> masked;
};

struct Outcome {
  RunResult r;
  std::string shown;  // stdout and a digest of what was written
  bool ran() const { return r.status == 0 || r.status == 1; }
};

std::string joined(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

// What `path` holds, in a line per file (a directory's in order of their paths): its size and a hash of
// its bytes, so that outputs as large as a kernel image are compared without being kept.
std::string digest_of(const std::string& path) {
  if (!fs::exists(path)) return "(none)\n";
  std::vector<std::string> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file()) files.push_back(e.path().string());
  } else {
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  std::ostringstream out;
  for (const std::string& f : files) {
    const std::string bytes = read_file(f);
    out << fs::relative(f, path).string() << " " << bytes.size() << " " << std::hash<std::string>{}(bytes) << "\n";
  }
  return out.str();
}

Outcome run_with(const Walk& w, const std::vector<const Option*>& options) {
  std::vector<std::string> args = w.command;
  for (const Option* o : options) args.insert(args.end(), o->args.begin(), o->args.end());
  for (const std::string& path : w.written) fs::remove_all(path);
  Outcome out{btfslim(args), {}};
  out.shown = out.r.out;
  for (const std::string& path : w.written) out.shown += "\n--- " + path + "\n" + digest_of(path);
  INFO(command_line(args) << "\nexit " << out.r.status << "\nstderr: " << out.r.err);
  if (!out.ran()) {
    // A refusal: one line (after any notes), exit 2, nothing written.
    CHECK(out.r.status == 2);
    std::size_t errors = 0;
    for (const std::string& line : lines_of(out.r.err)) errors += line.rfind("btfslim: note: ", 0) != 0;
    CHECK(errors == 1);
    CHECK(out.r.out.empty());
    for (const std::string& path : w.written) CHECK(!fs::exists(path));
  }
  return out;
}

// The long options `btfslim __options` lists for `command`.
std::set<std::string> listed_options(const std::string& command) {
  const RunResult r = btfslim({"__options"});
  REQUIRE(r.status == 0);
  std::set<std::string> out;
  for (const std::string& line : lines_of(r.out)) {
    const auto words = words_of(line);
    if (words.size() < 2 || words[0] != command) continue;
    for (std::size_t i = 1; i < words.size(); ++i)
      if (words[i].rfind("--", 0) == 0) {
        std::string name = words[i];
        if (const auto comma = name.find(','); comma != std::string::npos) name.resize(comma);
        out.insert(name);
        break;
      }
  }
  return out;
}

void walk(const Walk& w) {
  const std::string command = w.command.front();
  // Every option the command has is walked or said to be part of every run.
  std::set<std::string> covered;
  for (const Option& o : w.options) covered.insert(o.name);
  for (const auto& [name, why] : w.not_walked) covered.insert(name);
  for (const std::string& name : listed_options(command)) {
    INFO(command << " " << name << " is in neither the walk's options nor not_walked");
    CHECK((covered.count(name) || name == "--help"));
  }

  std::vector<Outcome> alone;
  for (const Option& o : w.options) alone.push_back(run_with(w, {&o}));
  std::size_t pairs = 0, refused = 0;
  for (std::size_t a = 0; a < w.options.size(); ++a) {
    for (std::size_t b = a + 1; b < w.options.size(); ++b) {
      const Option& x = w.options[a];
      const Option& y = w.options[b];
      if (x.name == y.name) continue;  // two values of one option: the last wins, as CLI11 has it
      const Outcome both = run_with(w, {&x, &y});
      ++pairs;
      if (!both.ran()) {
        ++refused;
        continue;
      }
      INFO(joined(w.command) << " " << joined(x.args) << " " << joined(y.args));
      const bool implied = w.same_as_implied.count({joined(x.args), joined(y.args)}) > 0;
      if (alone[a].ran() && !y.neutral && !implied) {
        INFO("output as with " << joined(x.args) << " alone: " << joined(y.args) << " was ignored");
        CHECK(both.shown != alone[a].shown);
      }
      if (const auto m = w.masked.find({joined(y.args), joined(x.args)}); m != w.masked.end()) {
        INFO(joined(y.args) << " leaves " << joined(x.args) << " nothing to do here (" << m->second << ")");
        CHECK(both.shown == alone[b].shown);
      } else if (alone[b].ran() && !x.neutral) {
        INFO("output as with " << joined(y.args) << " alone: " << joined(x.args) << " was ignored");
        CHECK(both.shown != alone[b].shown);
      }
    }
  }
  // A walk that refused everything (a bad input, say) would prove nothing.
  INFO(pairs << " pairs, " << refused << " refused");
  CHECK(pairs > 0);
  CHECK(refused < pairs);
}

}  // namespace

TEST_CASE("option pairs: measure honours or refuses every combination", "[option-pairs]") {
  std::string why;
  const auto k = other_kernel(why);
  if (!k) return skip(why);
  TempDir dir;
  Walk w;
  // A module on its kernel: big enough that -n 1, --all and the filters each change the rows.
  w.command = {"measure", "--base", k->vmlinux, k->module("net/netfilter/nf_conntrack.ko")};
  w.not_walked = {{"--base", "the input is a module: every run names its base"}};
  w.same_as_implied = {{"-f csv", "--by kind"}};
  w.written = {dir.file("m.svg")};
  w.options = {
      {"--format", {"-f", "json"}},
      {"--format", {"-f", "csv"}},
      {"--by", {"--by", "kind"}},
      {"--by", {"--by", "type"}},
      {"--by", {"--by", "prefix"}},
      {"--sort", {"--sort", "own"}},
      {"--top", {"-n", "1"}},
      {"--all", {"--all"}},
      {"--closure", {"--closure"}},
      {"--kind", {"--kind", "struct"}},
      {"--name", {"--name", "nf_*"}},
      {"--type", {"--type", "nf_conntrack_l4proto"}},
      {"--without", {"--without", "func"}},
      {"--kernel-model", {"--kernel-model", "module"}},
      {"--resident-base", {"--resident-base", k->vmlinux}},
      {"--modules", {"--modules", k->modules + "/kernel/net/netfilter"}},  // more than -n's 20
      {"--svg", {"--svg", w.written[0]}},
      {"--strict-input", {"--strict-input"}, true},
      {"--quiet", {"--quiet"}, true},
  };
  walk(w);
}

TEST_CASE("option pairs: diff honours or refuses every combination", "[option-pairs]") {
  std::string why;
  const auto k = other_kernel(why);
  if (!k) return skip(why);
  std::string why_not;
  const auto newer = test_kernel("6.12", why_not);
  if (!newer) return skip(why_not);
  Walk w;
  // One module across two kernels, each on its own kernel's vmlinux.
  w.command = {"diff", "--old-base", k->vmlinux, "--new-base", newer->vmlinux,
               k->module("net/netfilter/nf_conntrack.ko"), newer->module("net/netfilter/nf_conntrack.ko.xz")};
  w.options = {
      {"--base", {"--base", k->vmlinux}},
      {"--format", {"-f", "json"}},
      {"--format", {"-f", "csv"}},
      {"--by", {"--by", "kind"}},
      {"--by", {"--by", "member"}},
      {"--top", {"-n", "1"}},
      {"--verbose", {"-v"}},
      {"--strict-input", {"--strict-input"}, true},
      {"--quiet", {"--quiet"}, true},
  };
  w.not_walked = {{"--old-base", "every run reads each module on its own kernel"},
                  {"--new-base", "the same"},
                  {"--by-kind", "the hidden old spelling of --by kind"}};
  walk(w);
}

TEST_CASE("option pairs: check honours or refuses every combination", "[option-pairs]") {
  std::string why;
  const auto k = other_kernel(why);
  if (!k) return skip(why);
  const std::vector<std::string> traces = trace_objects();
  if (std::find(traces.begin(), traces.end(), test_object("trace_bio")) == traces.end())
    return skip("trace_bio.bpf.o was not built (no kernel BTF at configure time)");
  std::string why_not;
  const auto newer = test_kernel("6.12", why_not);
  if (!newer) return skip(why_not);
  Walk w;
  // On the second kernel: module_nat's fentry target is in a module (--modules, --attach-target and
  // --no-attach change it), check_optional has a counted and an optional failure (--optional),
  // trace_bio a poisoned read in dead code (--strict) and passes (--failures-only).
  w.command = {"check", test_object("module_nat"), test_object("check_optional"), test_object("trace_bio"),
               "--btf", k->vmlinux};
  w.options = {
      // A second kernel, whole; a module's split BTF, which needs the base.
      {"--btf", {"--btf", newer->vmlinux}},
      {"--btf", {"--btf", k->module("net/netfilter/nf_nat.ko")}},
      {"--base", {"-B", k->vmlinux}},
      {"--format", {"-f", "json"}},
      {"--format", {"-f", "github"}},
      {"--format", {"-f", "junit"}},
      {"--failures-only", {"--failures-only"}},
      {"--strict", {"--strict"}},
      {"--allow-missing", {"--allow-missing"}, true},  // deprecated: does nothing, and says so
      {"--attach-target", {"--attach-target", "on_nat_packet=nf_nat_setup_info"}},  // nf_nat's too
      {"--modules", {"--modules", k->modules + "/kernel/net/netfilter"}},
      {"--optional", {"--optional", "trace_unlink"}},
      {"--no-attach", {"--no-attach"}},
      {"--strict-input", {"--strict-input"}, true},
      {"--quiet", {"--quiet"}, true},
  };
  w.same_as_implied = {{"-f github", "--failures-only"}};  // annotations are failures only
  w.masked = {{{"--no-attach", "--modules " + k->modules + "/kernel/net/netfilter"},
               "these objects need the modules only for attach targets"}};
  walk(w);
}

TEST_CASE("option pairs: minimize honours or refuses every combination", "[option-pairs]") {
  if (running_vmlinux().empty()) return skip("no /sys/kernel/btf/vmlinux: every run minimizes the running kernel");
  std::string why;
  const auto k = other_kernel(why);
  if (!k) return skip(why);
  const std::string image = other_kernel_with_symbols(why);
  if (image.empty()) return skip(why);
  const auto newer = test_kernel("6.12", why);
  if (!newer) return skip(why);
  TempDir dir;
  // module_nat's fentry target is in a module (--modules, --attach-target), check_optional has a
  // relocation that fails to load (--skip-poisoned), trace_creds reads task_struct (--explain).
  const std::vector<std::string> objects{test_object("module_nat"), test_object("trace_creds"),
                                         test_object("check_optional")};
  const std::string out = dir.file("out"), base = dir.file("base.btf");
  std::vector<std::string> make_base{"minimize", "-o", base, test_object("trace_creds")};
  REQUIRE(btfslim(make_base).status == 0);
  const std::string netfilter = k->modules + "/kernel/net/netfilter";
  {
    // Sources and what is written, on the running kernel's BTF; --kernel against each of them.
    Walk w;
    w.command = {"minimize", "-o", out};
    w.command.insert(w.command.end(), objects.begin(), objects.end());
    w.written = {out};
    w.options = {
        {"--btf", {"--btf", k->vmlinux}},
        {"--btf", {"--btf", k->vmlinux, "--btf", newer->vmlinux}},  // a batch: -o is a directory
        {"--btf", {"--btf", k->module("net/netfilter/nf_nat.ko")}},  // split: it needs -B
        {"--base", {"-B", k->vmlinux}},
        {"--split-base", {"--split-base", base}},
        {"--keep", {"--keep", "sock"}},
        {"--explain", {"--explain", "task_struct"}},
        {"--no-verify", {"--no-verify"}, true},  // skips work; the output is the same
        {"--elf", {"--elf"}},
        {"--skip-poisoned", {"--skip-poisoned"}},
        {"--jobs", {"-j", "1"}, true},  // a batch's outputs do not depend on it
        {"--shard", {"--shard", "1/2"}},
        {"--kernel", {"--kernel", image}},
        {"--strict-input", {"--strict-input"}, true},
        {"--quiet", {"--quiet"}, true},
    };
    for (const std::string& o : {"--split-base " + base, std::string("--keep sock"), std::string("--explain task_struct"),
                                 std::string("--elf")})
      w.masked[{"--skip-poisoned", o}] = "check_optional fails to load on the running kernel: nothing is written";
    w.not_walked = {{"--output", "every run writes -o"},
                    {"--btf-base", "the hidden old spelling of -B"},
                    {"--btf-out", "goes with --kernel: the walk below"},
                    {"--family", "the same"},
                    {"--modules", "the same"},
                    {"--keep-for-modules", "the same"},
                    {"--attach-target", "the same"}};
    walk(w);
  }
  {
    // What goes only with --kernel, with one another and with what goes with both.
    Walk w;
    // The slim BTF alone: writing the image (80 MB) is the walk above's.
    const std::string btf_out = dir.file("slim.btf");
    w.command = {"minimize", "--kernel", image, "--btf-out", btf_out};
    w.command.insert(w.command.end(), objects.begin(), objects.end());
    w.written = {out, btf_out};
    w.options = {
        {"--output", {"-o", out}},  // a directory with --modules, which needs it
        {"--family", {"--family", "tracepoints"}},
        {"--modules", {"--modules", netfilter}},
        {"--keep-for-modules", {"--keep-for-modules", netfilter}},
        {"--attach-target", {"--attach-target", "on_nat_packet=tcp_v4_connect"}},
        {"--keep", {"--keep", "sock"}},
        {"--explain", {"--explain", "task_struct"}},
        {"--quiet", {"--quiet"}, true},
    };
    w.not_walked = {{"--kernel", "every run"}, {"--btf-out", "every run"}};
    for (const char* o : {"--btf", "--base", "--btf-base", "--split-base", "--no-verify", "--elf", "--skip-poisoned",
                          "--jobs", "--shard", "--strict-input"})
      w.not_walked[o] = "walked with --kernel in the walk above";
    walk(w);
  }
}

TEST_CASE("option pairs: dump, dedup and budget honour or refuse every combination", "[option-pairs]") {
  TempDir dir;
  {
    Walk w;
    w.command = {"dump", core_target("moved")};
    w.options = {
        {"--format", {"-f", "json"}},
        {"--format", {"-f", "c"}},
        // Three filters, each of which leaves out some of what either other one picks.
        {"--id", {"--id", "1-40"}},
        {"--name", {"--name", "*s*"}},
        {"--kind", {"--kind", "struct"}},
        {"--strict-input", {"--strict-input"}, true},
        {"--quiet", {"--quiet"}, true},
    };
    w.not_walked = {{"--base", "the input is no split BTF: the base's own tests walk it"}};
    walk(w);
  }
  {
    Walk w;
    // Two objects that share their base types: something to deduplicate, and more than one row. Every
    // run is --check (dedup needs it or -o): -o with it is refused.
    w.command = {"dedup", "--check", test_object("core_fields"), test_object("core_types")};
    w.written = {dir.file("out.btf")};
    w.options = {
        {"--output", {"-o", w.written[0]}},
        {"--format", {"-f", "json"}},
        {"--top", {"-n", "1"}},
        {"--strict-input", {"--strict-input"}, true},
        {"--quiet", {"--quiet"}, true},
    };
    w.not_walked = {{"--base", "the inputs are no split BTF: dedup's own tests walk it"},
                    {"--check", "every run checks (dedup needs --check or -o)"}};
    walk(w);
  }
  {
    Walk w;
    const std::string config = dir.file("btfslim.toml");
    write_file(config, "[[budget]]\nname = \"moved\"\ninput = \"" + core_target("moved") +
                           "\"\ntotal = \"1 MiB\"\nkind.STRUCT = \"1 KiB\"\n");
    w.command = {"budget"};
    w.options = {
        {"--config", {"-c", config}},
        {"--format", {"-f", "json"}},
        {"--format", {"-f", "junit"}},
        {"--format", {"-f", "github"}},
        {"--strict-input", {"--strict-input"}, true},
        {"--quiet", {"--quiet"}, true},
    };
    walk(w);
  }
}

}  // namespace btfslim::test
