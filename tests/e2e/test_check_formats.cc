// `btfslim check` as a CI job meets it ([check-cli], with test_check_cli.cc): --failures-only keeps what
// fails and the whole verdict; the matrix names files by their shortest unique suffix and fits COLUMNS;
// --format github gives an annotation per failing object and set of kernels, escaped, and --format junit
// a test case per object and kernel.
#include "check_cli.h"
#include "check_json.h"
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using nlohmann::json;

// btfslim with COLUMNS set, as on a terminal that wide.
RunResult btfslim_columns(std::size_t columns, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env", "COLUMNS=" + std::to_string(columns), btfslim_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

}  // namespace

TEST_CASE("--failures-only: only the objects that fail, only what fails them, and the whole verdict", "[check-cli]") {
  std::vector<std::string> objects = corpus_objects();
  objects.push_back(no_ext_object());
  const std::vector<std::string> targets = core_corpus_targets();
  SECTION("the matrix") {
    std::vector<std::string> args{"check", "--failures-only"};
    args.insert(args.end(), objects.begin(), objects.end());
    for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
    const RunResult r = btfslim(args);
    INFO(command_line(args));
    expect_matrix(r, objects, targets, false, true);
    // Something fails and something does not: the option left rows out.
    CHECK(parse_matrix(r.out).rows.size() < objects.size());
    CHECK(!parse_matrix(r.out).rows.empty());
  }
  SECTION("one target: the failing objects, each with its failing rows only") {
    const std::string errors = core_target("errors");
    std::vector<std::string> args{"check", "--failures-only", "--btf", errors};
    args.insert(args.end(), objects.begin(), objects.end());
    const RunResult r = btfslim(args);
    const RunResult all = btfslim({"check", "--btf", errors, guarded_object()});
    INFO(r.out);
    CHECK(r.status == 1);
    std::size_t failing_objects = 0, failures = 0;
    for (const std::string& o : objects) {
      const std::size_t n = failing_count(single(o, errors, false));
      failures += n;
      CHECK((r.out.find(file_name(o) + " on " + file_name(errors) + "\n") != std::string::npos) == (n != 0));
      failing_objects += n != 0;
    }
    REQUIRE(failures > 0);
    // Every relocation row shown fails.
    std::size_t rows = 0;
    for (const std::string& line : lines_of(r.out)) {
      const std::vector<std::string> w = words_of(line);
      if (line.starts_with("  ") && w.size() >= 5 && std::isdigit(static_cast<unsigned char>(w[1][0]))) {
        ++rows;
        CHECK((holds_in_order(line, {"POISONED"}) || holds_in_order(line, {"AMBIGUOUS"}) || holds_in_order(line, {"ERROR"})));
      }
    }
    CHECK(rows == failures);
    CHECK_THAT(r.out, EndsWith("\n" + verdict_line(objects.size(), 1, failing_objects, failing_objects) + "\n"));
    // Without the option the same object shows its passing rows too.
    CHECK_THAT(all.out, Contains("poisoned (dead code)"));
    CHECK_THAT(r.out, !Contains("poisoned (dead code)"));
  }
  SECTION("JSON: the failing objects, every kernel") {
    std::vector<std::string> args = objects;
    for (const auto& t : targets) args.insert(args.end(), {"--btf", t});
    const json all = check_json(args);
    args.push_back("--failures-only");
    const json failing = check_json(args);
    CHECK(failing["kernels"] == all["kernels"]);
    CHECK(failing["failure_count"] == all["failure_count"]);
    json expected = json::array();
    for (const json& o : all["objects"])
      if (o["failure_count"].get<std::size_t>() > 0) expected.push_back(o);
    CHECK(failing["objects"] == expected);
  }
}

TEST_CASE("the matrix names files by their shortest unique suffix and fits COLUMNS", "[check-cli]") {
  TempDir dir;
  // The same kernel file name in two directories, and one long enough to need its own width.
  for (const char* d : {"a/boot", "b/boot"}) std::filesystem::create_directories(dir.file(d));
  write_file(dir.file("a/boot/vmlinux"), read_file(core_target("moved")));
  write_file(dir.file("b/boot/vmlinux"), read_file(core_target("errors")));
  const std::string long_name = dir.file("long-release-name-6.1.0-27-cloud.o");
  write_file(long_name, read_file(core_target("missing")));
  const std::vector<std::string> objects = corpus_objects();
  std::vector<std::string> args{"check"};
  args.insert(args.end(), objects.begin(), objects.end());
  for (const std::string& k : {dir.file("a/boot/vmlinux"), dir.file("b/boot/vmlinux"), long_name})
    args.insert(args.end(), {"--btf", k});

  const RunResult piped = btfslim(args);
  INFO(piped.out);
  const Matrix m = parse_matrix(piped.out);
  CHECK(m.kernels == std::vector<std::string>{"a/boot/vmlinux", "b/boot/vmlinux", file_name(long_name)});
  REQUIRE(m.rows.size() == objects.size());
  for (std::size_t o = 0; o < objects.size(); ++o) CHECK(m.rows[o].first == file_name(objects[o]));
  // In a pipe nothing is cut or folded: one header.
  CHECK(count_of(piped.out, "OBJECT ") == 1);

  // 60 columns: the kernels fold into blocks, each line of the matrix within the width, each kernel once.
  const RunResult narrow = btfslim_columns(60, args);
  INFO(narrow.out);
  CHECK(narrow.status == piped.status);
  std::vector<std::string> kernels_shown;
  std::size_t headers = 0;
  for (const std::string& line : lines_of(narrow.out)) {
    if (line.starts_with("OBJECT ")) {
      ++headers;
      const std::vector<std::string> w = words_of(line);
      kernels_shown.insert(kernels_shown.end(), w.begin() + 1, w.end());
    }
    if (line.find(" fails on ") != std::string::npos) break;  // the list of failures
    CHECK(line.size() <= 60);
  }
  CHECK(headers >= 2);
  CHECK(kernels_shown == m.kernels);
  // The list of failures and the verdict are the same however wide.
  CHECK(narrow.out.substr(narrow.out.find("\n\n", narrow.out.rfind("OBJECT "))) ==
        piped.out.substr(piped.out.find("\n\n")));
}

TEST_CASE("--format github: an annotation per failing object and kernel, escaped; --format junit", "[check-cli]") {
  TempDir dir;
  // An object whose path holds what workflow commands escape in a property: ',' and ':'.
  const std::string odd = dir.file("odd,name:x.bpf.o");
  write_file(odd, read_file(guarded_object()));
  const std::vector<std::string> objects{odd, test_object("core_fields"), test_object("core_errors")};
  const std::vector<std::string> targets{core_target("moved"), core_target("errors")};
  std::vector<std::string> base{"check"};
  base.insert(base.end(), objects.begin(), objects.end());
  for (const auto& t : targets) base.insert(base.end(), {"--btf", t});

  std::size_t failures = 0, failing_objects = 0;
  for (const std::string& o : objects) {
    std::size_t kernels = 0;
    for (const std::string& t : targets) kernels += failing_count(single(o, t, false)) != 0;
    failures += kernels;
    failing_objects += kernels != 0;
  }
  REQUIRE(failures > 0);
  const std::string verdict = verdict_line(objects.size(), targets.size(), failing_objects, failures);
  // An annotation for each object and set of kernels its failures share: a heading of the table's.
  const std::size_t groups = parse_matrix(btfslim(base).out).failing.size();
  REQUIRE(groups > 0);

  std::vector<std::string> args = base;
  args.insert(args.end(), {"--format", "github"});
  const RunResult r = btfslim(args);
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(!lines.empty());
  CHECK(lines.back() == "btfslim check: " + verdict);
  std::size_t annotations = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& line = lines[i];
    REQUIRE_THAT(line, StartsWith("::error file="));
    ++annotations;
    const std::size_t props = std::string("::error ").size(), end = line.find("::", props);
    REQUIRE(end != std::string::npos);
    const std::string properties = line.substr(props, end - props), message = line.substr(end + 2);
    // Properties are separated by ','; one inside a value would be escaped.
    CHECK(count_of(properties, ",") == 1);
    CHECK_THAT(properties, StartsWith("file="));
    const std::string file = properties.substr(5, properties.find(',') - 5);
    bool known = false;
    for (const std::string& o : objects) {
      std::string escaped;
      for (const char c : o) escaped += c == ',' ? "%2C" : c == ':' ? "%3A" : std::string(1, c);
      known = known || escaped == file;
    }
    INFO(file);
    CHECK(known);
    // The message: "OBJ fails on KERNELS: N failing", then one failure per line, line breaks as %0A.
    CHECK(message.find('\n') == std::string::npos);
    CHECK_THAT(message, Contains(" failing%0A"));
  }
  CHECK(annotations == groups);
  CHECK_THAT(r.out, Contains("file=" + dir.path() + "/odd%2Cname%3Ax.bpf.o,"));

  args = base;
  args.insert(args.end(), {"--format", "junit"});
  const RunResult x = btfslim(args);
  INFO(x.out);
  CHECK(x.status == 1);
  CHECK_THAT(x.out, StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"btfslim check\" tests=\"" +
                                   std::to_string(objects.size() * targets.size()) + "\" failures=\"" +
                                   std::to_string(failures) + "\""));
  CHECK(count_of(x.out, "<testsuite ") == targets.size());
  CHECK(count_of(x.out, "<testcase ") == objects.size() * targets.size());
  CHECK(count_of(x.out, "<failure ") == failures);
  args.push_back("--failures-only");
  CHECK(count_of(btfslim(args).out, "<testcase ") == failures);

  // $GITHUB_STEP_SUMMARY: with --format github the verdict and a row per failing object and kernel
  // are appended to what earlier steps wrote; with another format the file is left alone.
  const std::string summary = dir.file("summary.md");
  write_file(summary, "earlier step\n");
  auto with_summary = [&](const std::string& format) {
    std::vector<std::string> argv{"env", "GITHUB_STEP_SUMMARY=" + summary, btfslim_path()};
    argv.insert(argv.end(), base.begin(), base.end());
    argv.insert(argv.end(), {"--format", format});
    return run(argv);
  };
  CHECK(with_summary("github").out == r.out);
  const std::string md = read_file(summary);
  INFO(md);
  CHECK_THAT(md, StartsWith("earlier step\n### btfslim check: " + verdict +
                            "\n\n| | Object | Kernel | Failing | First failure |\n"));
  CHECK(count_of(md, "\n| :x: | ") == groups);
  CHECK_THAT(md, Contains("| :x: | odd,name:x.bpf.o | "));
  CHECK(with_summary("table").status == 1);
  CHECK(read_file(summary) == md);
}

}  // namespace btfslim::test
