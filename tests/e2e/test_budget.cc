// `btfslim budget` ([budget]): limits in a TOML file checked against BTF whose figures are known by
// hand (the footprint fixture: 196 bytes, kinds INT 20, PTR 12, STRUCT 48 + 33, TYPEDEF 19,
// FUNC_PROTO 22, FUNC 17, 324 bytes of kernel memory as vmlinux: the blob and a 16-slot types array;
// with its decl tag 20 bytes more), each exit status, every breach listed at its line, the four
// formats (JSON parsed, JUnit XML parsed with libxml2, GitHub commands and the step summary), growth
// against a saved `measure --format json`, INPUT arguments, paths relative to the config, bad configs
// named by line, and the running kernel's BTF against its own size. The parser alone is in
// tests/unit/test_budget_config.cc.
#include "fixtures.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <sstream>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using nlohmann::json;

// Runs btfslim in `dir`, so that the default btfslim.toml and relative names resolve there.
RunResult btfslim_in(const std::string& dir, const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{"sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", dir, "env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(btfslim_path());
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// A directory with the fixture (hand.btf, tagged.btf) and a btfslim.toml.
struct Workspace {
  TempDir dir;
  explicit Workspace(const std::string& toml) {
    write_file(dir.file("hand.btf"), footprint_btf(false));
    write_file(dir.file("tagged.btf"), footprint_btf(true));
    write_file(dir.file("btfslim.toml"), toml);
  }
  RunResult budget(std::vector<std::string> args = {}, const std::vector<std::string>& env = {}) const {
    args.insert(args.begin(), "budget");
    return btfslim_in(dir.path(), args, env);
  }
};

const char* const kLimits = R"([[budget]]
name = "hand"
input = "hand.btf"
message = "ask the BTF owners"
total = 196
kernel_memory = "324 B"
kind.STRUCT = "81"
kind.FUNC_PROTO = "0.0215 KiB"
type."struct node" = "48 B"
type.lonely = "0.033KB"
)";

// Each limit one byte below its figure, but for TYPEDEF and INT, which hold; the FUNC one is bigger.
const char* const kTight = R"([[budget]]
name = "hand"
input = "hand.btf"
message = "ask the BTF owners"
total = "195"
kernel_memory = "323 B"
kind.STRUCT = "80"
kind.TYPEDEF = "19"
type."struct node" = "47 B"

[[budget]]
name = "second"
input = "hand.btf"
kind.INT = "1 KiB"
kind.FUNC = "16"
)";

TEST_CASE("budget: limits at their figures hold, exit 0, each listed ok at its line", "[budget]") {
  const Workspace w(kLimits);
  const RunResult r = w.budget();
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const std::vector<std::string> expected{
      "btfslim.toml:5: ok: hand: total of hand.btf is 196 B, within the limit 196 B: 0 B to spare",
      "btfslim.toml:6: ok: hand: kernel_memory of hand.btf is 324 B, within the limit 324 B (324 B): 0 B to spare",
      "btfslim.toml:7: ok: hand: kind STRUCT of hand.btf is 81 B, within the limit 81 B: 0 B to spare",
      "btfslim.toml:8: ok: hand: kind FUNC_PROTO of hand.btf is 22 B, within the limit 0.0215 KiB (22 B): 0 B to spare",
      "btfslim.toml:9: ok: hand: type struct node of hand.btf is 48 B, within the limit 48 B (48 B): 0 B to spare",
      "btfslim.toml:10: ok: hand: type lonely of hand.btf is 33 B, within the limit 0.033KB (33 B): 0 B to spare",
      "btfslim.toml: all 6 limits hold"};
  CHECK(lines_of(r.out) == expected);
  // The same run again writes the same bytes.
  CHECK(w.budget().out == r.out);
}

TEST_CASE("budget: every breach is listed with its excess and line, exit 1", "[budget]") {
  const Workspace w(kTight);
  const RunResult r = w.budget();
  INFO(r.out << r.err);
  REQUIRE(r.status == 1);
  CHECK(r.err.empty());
  const std::vector<std::string> expected{
      "btfslim.toml:5: EXCEEDED: hand: total of hand.btf is 196 B, over the limit 195 B by 1 B (0.51%)",
      "    ask the BTF owners",
      "btfslim.toml:6: EXCEEDED: hand: kernel_memory of hand.btf is 324 B, over the limit 323 B (323 B) by 1 B (0.31%)",
      "    ask the BTF owners",
      "btfslim.toml:7: EXCEEDED: hand: kind STRUCT of hand.btf is 81 B, over the limit 80 B by 1 B (1.25%)",
      "    ask the BTF owners",
      "btfslim.toml:8: ok: hand: kind TYPEDEF of hand.btf is 19 B, within the limit 19 B: 0 B to spare",
      "btfslim.toml:9: EXCEEDED: hand: type struct node of hand.btf is 48 B, over the limit 47 B (47 B) by 1 B (2.13%)",
      "    ask the BTF owners",
      "btfslim.toml:14: ok: second: kind INT of hand.btf is 20 B, within the limit 1 KiB (1,024 B): 1,004 B to spare",
      "btfslim.toml:15: EXCEEDED: second: kind FUNC of hand.btf is 17 B, over the limit 16 B by 1 B (6.25%)",
      "btfslim.toml: 5 of 7 limits exceeded"};
  CHECK(lines_of(r.out) == expected);
  // table is the default, as on every command; text, its earlier name, still reads the same.
  CHECK(w.budget({"--format", "table"}).out == r.out);
  CHECK(w.budget({"-f", "text"}).out == r.out);
}

TEST_CASE("budget --format json: one object per limit with the figures", "[budget]") {
  const Workspace w(kTight);
  const RunResult r = w.budget({"--format", "json"});
  REQUIRE(r.status == 1);
  const json doc = json::parse(r.out);
  CHECK(doc["config"] == "btfslim.toml");
  CHECK(doc["limit_count"] == 7);
  CHECK(doc["exceeded_count"] == 5);
  const json& limits = doc["limits"];
  REQUIRE(limits.size() == 7);
  CHECK(limits[0]["budget"] == "hand");
  CHECK(limits[0]["message"] == "ask the BTF owners");
  CHECK(limits[0]["file"] == "hand.btf");
  CHECK(!limits[0].contains("input"));
  CHECK(limits[0]["key"] == "total");
  CHECK(limits[0]["line"] == 5);
  CHECK(limits[0]["column"] == 9);
  CHECK(limits[0]["measured_bytes"] == 196);
  CHECK(limits[0]["limit_bytes"] == 195);
  CHECK(limits[0]["excess_bytes"] == 1);
  CHECK(limits[0]["status"] == "exceeded");
  CHECK(limits[3]["key"] == "kind.TYPEDEF");
  CHECK(limits[3]["status"] == "ok");
  CHECK(limits[3]["headroom_bytes"] == 0);
  CHECK(limits[4]["key"] == "type.\"struct node\"");
  CHECK(limits[4]["measured_bytes"] == 48);
  CHECK(limits[5]["budget"] == "second");
  CHECK(limits[5]["line"] == 14);
  CHECK(limits[5]["headroom_bytes"] == 1004);
  std::size_t exceeded = 0;
  for (const json& l : limits) exceeded += l["status"] == "exceeded";
  CHECK(exceeded == 5);
}

// The number of nodes an XPath expression selects, or its numeric value.
double xpath_number(xmlDocPtr doc, const char* expr) {
  xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
  xmlXPathObjectPtr obj = xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(expr), ctx);
  REQUIRE(obj);
  const double n = obj->type == XPATH_NODESET ? (obj->nodesetval ? obj->nodesetval->nodeNr : 0)
                                               : xmlXPathCastToNumber(obj);
  xmlXPathFreeObject(obj);
  xmlXPathFreeContext(ctx);
  return n;
}
std::string xpath_string(xmlDocPtr doc, const char* expr) {
  xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
  xmlXPathObjectPtr obj = xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(expr), ctx);
  REQUIRE(obj);
  xmlChar* s = xmlXPathCastToString(obj);
  std::string out(reinterpret_cast<const char*>(s));
  xmlFree(s);
  xmlXPathFreeObject(obj);
  xmlXPathFreeContext(ctx);
  return out;
}

TEST_CASE("budget --format junit: well-formed XML, one test case per limit, markup escaped", "[budget]") {
  // Names and messages full of what XML must escape.
  const Workspace w(R"([[budget]]
name = "<hand> & \"co\""
input = "hand.btf"
message = "line one\nline 'two' </failure>"
total = 195
kind.STRUCT = "81"

[[budget]]
name = "second"
input = "hand.btf"
kind.FUNC = "16"
kind.INT = "20"
)");
  const RunResult r = w.budget({"-f", "junit"});
  INFO(r.out);
  REQUIRE(r.status == 1);
  xmlDocPtr doc = xmlReadMemory(r.out.data(), static_cast<int>(r.out.size()), "junit.xml", nullptr,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  REQUIRE(doc != nullptr);
  CHECK(xpath_number(doc, "/testsuites/testsuite") == 2);
  CHECK(xpath_number(doc, "//testcase") == 4);
  CHECK(xpath_number(doc, "//testcase/failure") == 2);
  CHECK(xpath_number(doc, "number(/testsuites/@tests)") == 4);
  CHECK(xpath_number(doc, "number(/testsuites/@failures)") == 2);
  CHECK(xpath_number(doc, "number(/testsuites/testsuite[1]/@failures)") == 1);
  CHECK(xpath_number(doc, "number(/testsuites/testsuite[2]/@tests)") == 2);
  CHECK(xpath_string(doc, "/testsuites/testsuite[1]/@name") == "<hand> & \"co\" (hand.btf)");
  CHECK(xpath_string(doc, "//testcase[@name='total']/@line") == "5");
  CHECK(xpath_string(doc, "//testcase[@name='kind.FUNC']/@line") == "11");
  CHECK(xpath_number(doc, "//testcase[@name='kind.INT']/failure") == 0);
  const std::string failure = xpath_string(doc, "//testcase[@name='total']/failure");
  CHECK_THAT(failure, StartsWith("btfslim.toml:5: <hand> & \"co\": total of hand.btf is 196 B, over the limit 195 B by 1 B"));
  CHECK_THAT(failure, Contains("\nline one\nline 'two' </failure>"));
  xmlFreeDoc(doc);
}

TEST_CASE("budget --format github: annotations at the limit's line and the step summary appended", "[budget]") {
  const Workspace w(kTight);
  write_file(w.dir.file("summary.md"), "earlier step\n");
  const RunResult r = w.budget({"--format", "github"}, {"GITHUB_STEP_SUMMARY=" + w.dir.file("summary.md")});
  INFO(r.out << r.err);
  REQUIRE(r.status == 1);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 8);
  CHECK(lines[0] ==
        "::error file=btfslim.toml,line=5,col=9,title=btfslim budget%3A hand::hand: total of hand.btf is 196 B, "
        "over the limit 195 B by 1 B (0.51%25)%0Aask the BTF owners");
  CHECK_THAT(lines[3], StartsWith("btfslim.toml:8: ok: hand: kind TYPEDEF"));
  CHECK_THAT(lines[6], StartsWith("::error file=btfslim.toml,line=15,col=13,title=btfslim budget%3A second::second: kind FUNC"));
  CHECK(lines[7] == "btfslim.toml: 5 of 7 limits exceeded");
  const std::string summary = read_file(w.dir.file("summary.md"));
  CHECK_THAT(summary, StartsWith("earlier step\n### btfslim budget: 5 of 7 limits exceeded\n"));
  CHECK_THAT(summary, Contains("| :x: | hand | total = 195 | hand.btf | 196 B | 195 B | 1 B (0.51%) | btfslim.toml:5 |\n"));
  CHECK_THAT(summary, Contains("| :white_check_mark: | hand | kind.TYPEDEF = 19 | hand.btf | 19 B | 19 B |  | btfslim.toml:8 |\n"));
  CHECK_THAT(summary, Contains("- **hand**: ask the BTF owners\n"));
  // Without the variable nothing is written anywhere but stdout; with another format neither.
  CHECK(w.budget({"--format", "github"}).out == r.out);
  CHECK(w.budget({}, {"GITHUB_STEP_SUMMARY=" + w.dir.file("summary.md")}).status == 1);
  CHECK(read_file(w.dir.file("summary.md")) == summary);
}

TEST_CASE("budget: growth against a saved measure --format json", "[budget]") {
  const Workspace w(R"([[budget]]
name = "growth"
input = "tagged.btf"
baseline = "baseline.json"
max_growth = "10%"
kernel_memory_growth = "20 B"
kind_growth.STRUCT = "0%"
kind_growth.DECL_TAG = "0.5%"
kind_growth.INT = "1 B"
)");
  // The baseline is the untagged BTF as measure saw it; the tag adds a 16-byte record and "tag".
  const RunResult m = btfslim_in(w.dir.path(), {"measure", "--format", "json", "hand.btf"});
  REQUIRE(m.status == 0);
  write_file(w.dir.file("baseline.json"), m.out);
  const RunResult r = w.budget();
  INFO(r.out << r.err);
  REQUIRE(r.status == 1);
  const std::vector<std::string> expected{
      // 196 * 10% = 19.6: 19 bytes of growth allowed, 20 made.
      "btfslim.toml:5: EXCEEDED: growth: total of tagged.btf is 216 B, +20 B (+10.20%) from the baseline 196 B, "
      "over the limit +10% (215 B) by 1 B (0.47%)",
      "btfslim.toml:6: ok: growth: kernel_memory of tagged.btf is 344 B, +20 B (+6.17%) from the baseline 324 B, "
      "within the limit +20 B (344 B): 0 B to spare",
      "btfslim.toml:7: ok: growth: kind STRUCT of tagged.btf is 81 B, +0 B (+0.00%) from the baseline 81 B, "
      "within the limit +0% (81 B): 0 B to spare",
      "btfslim.toml:8: EXCEEDED: growth: kind DECL_TAG of tagged.btf is 20 B, +20 B from the baseline 0 B, "
      "over the limit +0.5% (0 B) by 20 B",
      "btfslim.toml:9: ok: growth: kind INT of tagged.btf is 20 B, +0 B (+0.00%) from the baseline 20 B, "
      "within the limit +1 B (21 B): 1 B to spare",
      "btfslim.toml: 2 of 5 limits exceeded"};
  CHECK(lines_of(r.out) == expected);

  // In the step summary a breach of a zero-byte allowance has no percentage.
  const RunResult gh = w.budget({"-f", "github"}, {"GITHUB_STEP_SUMMARY=" + w.dir.file("summary.md")});
  CHECK(gh.status == 1);
  CHECK_THAT(read_file(w.dir.file("summary.md")),
             Contains("| :x: | growth | kind\\_growth.DECL\\_TAG = 0.5% | tagged.btf | 20 B | 0 B | 20 B | btfslim.toml:8 |\n"));

  // The baseline's own input, given on the command line, grew by nothing: every limit holds.
  const RunResult same = w.budget({"hand.btf"});
  INFO(same.out);
  CHECK(same.status == 0);
  CHECK_THAT(same.out, Contains("btfslim.toml:5: ok: growth: total of hand.btf is 196 B, +0 B (+0.00%) from the baseline 196 B"));

  // A baseline that is not measure's JSON is an input error naming it, at the line of the budget file
  // that names it.
  write_file(w.dir.file("baseline.json"), "{\"file_bytes\": 1}");
  const RunResult bad = w.budget();
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK_THAT(bad.err, StartsWith("btfslim: btfslim.toml:4: budget 'growth': baseline baseline.json: is not the JSON of "
                                 "`btfslim measure --format json`"));
}

TEST_CASE("budget: INPUT arguments replace every budget's input; config paths are relative to it", "[budget]") {
  const Workspace w(R"([[budget]]
name = "one"
input = "missing.btf"
total = "200"
)");
  // Without INPUT: the budget's input does not exist.
  const RunResult none = w.budget();
  CHECK(none.status == 2);
  CHECK(none.out.empty());
  CHECK_THAT(none.err, Contains("missing.btf"));
  write_file(w.dir.file("btfslim.toml"), R"([[budget]]
name = "two"
kind.STRUCT = "81"
)");
  const RunResult no_input = w.budget();
  CHECK(no_input.status == 2);
  CHECK(no_input.err == "btfslim: btfslim.toml:1: budget 'two' names no input: add input = \"FILE\" or give INPUT on the command line\n");

  // Two inputs: each limit of each budget is checked on each, in that order.
  const RunResult both = w.budget({"hand.btf", "tagged.btf"});
  INFO(both.out << both.err);
  CHECK(both.status == 0);
  CHECK(lines_of(both.out) == std::vector<std::string>{
      "btfslim.toml:3: ok: two: kind STRUCT of hand.btf is 81 B, within the limit 81 B: 0 B to spare",
      "btfslim.toml:3: ok: two: kind STRUCT of tagged.btf is 81 B, within the limit 81 B: 0 B to spare",
      "btfslim.toml: all 2 limits hold"});

  // From elsewhere, --config sub/btfslim.toml reads sub/hand.btf and sub/baseline.json.
  std::filesystem::create_directory(w.dir.file("sub"));
  write_file(w.dir.file("sub/hand.btf"), footprint_btf(true));
  write_file(w.dir.file("sub/btfslim.toml"), R"([[budget]]
name = "sub"
input = "hand.btf"
total = 216
)");
  const RunResult sub = w.budget({"--config", "sub/btfslim.toml"});
  INFO(sub.out << sub.err);
  CHECK(sub.status == 0);
  CHECK(sub.out == "sub/btfslim.toml:4: ok: sub: total of sub/hand.btf is 216 B, within the limit 216 B: 0 B to spare\n"
                   "sub/btfslim.toml: all 1 limit hold\n");
}

TEST_CASE("budget: a bad config is one line naming the file and line, exit 2, nothing on stdout", "[budget]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"total = \"5 MiBs\"", "btfslim.toml:4: 'total': '5 MiBs' is not a size: unknown unit 'MiBs' (B, KB, KiB, MB, MiB, GB, GiB)"},
      {"totl = \"5 MiB\"", "btfslim.toml:4: unknown key 'totl' in [[budget]]"},
      {"total = ", "btfslim.toml:4: TOML syntax error: "},
      {"kind.FUNKY = \"1 MiB\"", "btfslim.toml:4: unknown kind 'FUNKY'"},
      {"total = -5", "btfslim.toml:4: 'total': a size cannot be negative"},
      {"total = 1.5", "btfslim.toml:4: 'total' must be a size"},
      {"kind = \"1 MiB\"", "btfslim.toml:4: 'kind' must be a table of limits"},
      {"max_growth = \"1%\"", "btfslim.toml:4: budget 'x' limits growth but names no baseline"},
      {"baseline = \"b.json\"\nmax_growth = \"1 %%\"", "btfslim.toml:5: 'max_growth': '1 %%' is not a percentage"},
      {"baseline = \"b.json\"", "btfslim.toml:4: budget 'x' names a baseline but limits no growth"},
      {"type.\"struct nope\" = \"1 KiB\"", "btfslim.toml:4: budget 'x': no type named 'struct nope' in hand.btf"},
      {"", "btfslim.toml:1: budget 'x' sets no limit"},
      // U+037D after a value: what toml++ 3.3.0 cannot be given (test_budget_config.cc says why).
      {"total = 1 \xCD\xBD", "btfslim.toml:4: TOML syntax error: a non-ASCII character outside a string or comment"},
      {"type.\"struct \xC3\xA9\" = 1", "btfslim.toml:4: non-ASCII character in a key"},
  };
  for (const auto& [line, message] : cases) {
    const Workspace w("[[budget]]\nname = \"x\"\ninput = \"hand.btf\"\n" + line + "\n");
    const RunResult r = w.budget();
    INFO(line << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, StartsWith("btfslim: " + message));
    CHECK(lines_of(r.err).size() == 1);
  }
  const Workspace w("[[budget]]\nname = \"x\"\n");
  const RunResult missing = w.budget({"--config", "nope.toml"});
  CHECK(missing.status == 2);
  CHECK_THAT(missing.err, StartsWith("btfslim: nope.toml: "));
  std::filesystem::remove(w.dir.file("btfslim.toml"));
  CHECK(w.budget().err == "btfslim: btfslim.toml: no budget file here: write one (man btfslim-budget) or name it with --config\n");
  write_file(w.dir.file("btfslim.toml"), "[other]\nkey = 1\n");
  CHECK_THAT(w.budget().err, StartsWith("btfslim: btfslim.toml:1: unknown key 'other'"));
  write_file(w.dir.file("btfslim.toml"), "# nothing\n");
  CHECK_THAT(w.budget().err, StartsWith("btfslim: btfslim.toml: no budgets"));
}

TEST_CASE("budget: a split BTF on its base, measured as a module", "[budget]") {
  const TempDir dir;
  const SplitPair pair = split_btf(false);
  write_file(dir.file("base.btf"), pair.base);
  write_file(dir.file("split.btf"), pair.split);
  const RunResult m = btfslim_in(dir.path(), {"measure", "--format", "json", "--base", "base.btf", "split.btf"});
  REQUIRE(m.status == 0);
  const json measured = json::parse(m.out);
  CHECK(measured["kernel_memory"]["model"] == "module");
  write_file(dir.file("btfslim.toml"), fmt::format(R"([[budget]]
name = "module"
input = "split.btf"
base = "base.btf"
total = {}
kernel_memory = {}
)", pair.split.size(), measured["kernel_memory"]["total_bytes"].get<std::uint64_t>()));
  const RunResult r = btfslim_in(dir.path(), {"budget", "-f", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["limits"][0]["measured_bytes"] == pair.split.size());
  CHECK(doc["limits"][1]["measured_bytes"] == measured["kernel_memory"]["total_bytes"]);
  CHECK(doc["limits"][1]["measured_bytes"] > pair.split.size());  // copied data and its types array
}

TEST_CASE("budget: the running kernel's BTF against its own size", "[budget]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux: the running-kernel budget is not checked");
  const RunResult m = btfslim({"measure", "--format", "json", vmlinux});
  REQUIRE(m.status == 0);
  const json measured = json::parse(m.out);
  const std::uint64_t size = measured["file_bytes"].get<std::uint64_t>();
  struct stat st {};
  REQUIRE(::stat(vmlinux.c_str(), &st) == 0);
  CHECK(size == static_cast<std::uint64_t>(st.st_size));
  const std::uint64_t kernel = measured["kernel_memory"]["total_bytes"].get<std::uint64_t>();
  const TempDir dir;
  write_file(dir.file("baseline.json"), m.out);
  write_file(dir.file("btfslim.toml"), fmt::format(R"([[budget]]
name = "vmlinux"
input = "{}"
total = {}
kernel_memory = {}
type."struct task_struct" = "1 GiB"

[[budget]]
name = "no growth"
input = "{}"
baseline = "baseline.json"
max_growth = "0%"
kernel_memory_growth = "0 B"
kind_growth.FUNC = "0%"
kind_growth.STRUCT = "0%"
)", vmlinux, size, kernel - 1, vmlinux));
  const RunResult r = btfslim_in(dir.path(), {"budget", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 1);
  const json doc = json::parse(r.out);
  CHECK(doc["limit_count"] == 7);
  CHECK(doc["exceeded_count"] == 1);
  CHECK(doc["limits"][1]["key"] == "kernel_memory");
  CHECK(doc["limits"][1]["excess_bytes"] == 1);
  CHECK(doc["limits"][0]["headroom_bytes"] == 0);
  for (std::size_t i = 3; i < 7; ++i) {
    CHECK(doc["limits"][i]["status"] == "ok");
    CHECK(doc["limits"][i]["measured_bytes"] == doc["limits"][i]["baseline_bytes"]);
  }
}

// A type's retained bytes are sums of string shares (a string two types name is half each's): a
// type limit measures the whole bytes `measure` prints for it, a half rounded to even as there, so
// that a limit copied from its output holds with nothing to spare.
TEST_CASE("budget: a type limit measures the retained bytes measure prints, a half byte rounded to even", "[budget]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no /sys/kernel/btf/vmlinux: no kernel types to limit");
  const RunResult m = btfslim({"measure", "--format", "json", "--by", "type", "-n", "500", vmlinux});
  REQUIRE(m.status == 0);
  std::vector<std::pair<std::uint64_t, double>> halves;  // id, retained bytes
  const json measured = json::parse(m.out);
  for (const json& t : measured["types"]) {
    const double retained = t["retained_bytes"].get<double>();
    if (retained - std::floor(retained) == 0.5) halves.emplace_back(t["id"].get<std::uint64_t>(), retained);
  }
  if (halves.size() < 2) return skip("fewer than two of the kernel's 500 largest types retain a half byte");
  const TempDir dir;
  std::string toml = fmt::format("[[budget]]\nname = \"halves\"\ninput = \"{}\"\n", vmlinux);
  std::vector<std::uint64_t> printed;
  for (const auto& [id, retained] : halves) {
    const RunResult csv = btfslim({"measure", "--format", "csv", "--by", "type", "--name", std::to_string(id), vmlinux});
    REQUIRE(csv.status == 0);
    const std::vector<std::string> rows = lines_of(csv.out);
    REQUIRE(rows.size() >= 2);
    std::vector<std::string> cells(1);  // kernel type names hold no comma: no cell is quoted
    for (const char c : rows[1]) {
      if (c == ',')
        cells.emplace_back();
      else
        cells.back().push_back(c);
    }
    REQUIRE(cells.size() == 7);
    REQUIRE(cells[0] == std::to_string(id));
    printed.push_back(std::stoull(cells[5]));
    const auto whole = static_cast<std::uint64_t>(std::floor(retained));
    CHECK(printed.back() == (whole % 2 == 0 ? whole : whole + 1));
    toml += fmt::format("type.\"{}\" = {}\n", id, printed.back());
  }
  write_file(dir.file("btfslim.toml"), toml);
  const RunResult r = btfslim_in(dir.path(), {"budget", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc["limits"].size() == halves.size());
  for (std::size_t i = 0; i < halves.size(); ++i) {
    CHECK(doc["limits"][i]["measured_bytes"] == printed[i]);
    CHECK(doc["limits"][i]["headroom_bytes"] == 0);
  }
}

}  // namespace
}  // namespace btfslim::test
