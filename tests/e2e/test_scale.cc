// Many objects at once, as a loader that checks or minimizes for a whole fleet's tools meets them:
// check and minimize hold one object at a time, so that a hundred cost what the largest of them does,
// and what a report must hold until the end (JSON's records, behind the counts that precede them) goes
// to a temporary file past a megabyte, and comes back whole.
#include "process.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace btfslim::test;
using nlohmann::json;

namespace {

// The corpus's objects bpftool reads (little-endian, MANIFEST.tsv's bpftool_min_core_btf "ok"), copied
// `rounds` times under `dir` (each copy its own file, as distinct tools' objects are), the largest
// first; none where the corpus is not here.
std::vector<std::string> copied_corpus(const TempDir& dir, int rounds, std::string& largest) {
  std::vector<std::string> originals;
  for (const CorpusEntry& e : corpus_manifest())
    if (e.little_endian && e.bpftool_ok) originals.push_back(e.path);
  if (originals.empty()) return {};
  std::sort(originals.begin(), originals.end(),
            [](const std::string& a, const std::string& b) { return fs::file_size(a) > fs::file_size(b); });
  std::vector<std::string> out;
  for (int r = 0; r < rounds; ++r) {
    const std::string sub = dir.file("c" + std::to_string(r));
    fs::create_directories(sub);
    for (std::size_t i = 0; i < originals.size(); ++i) {
      const std::string to = sub + "/" + std::to_string(i) + "-" + fs::path(originals[i]).filename().string();
      fs::copy_file(originals[i], to);
      out.push_back(to);
    }
  }
  if (!out.empty()) largest = out.front();
  return out;
}

long peak_kib(std::vector<std::string> argv) {
  argv.insert(argv.begin(), btfslim_path());
  const MeasuredRun r = run_measured(argv, 120);
  INFO(r.err.substr(0, 400));
  REQUIRE((r.status == 0 || r.status == 1));
  return r.peak_rss_kib;
}

}  // namespace

TEST_CASE("a hundred objects cost check and minimize what the largest of them costs alone", "[scale]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no kernel BTF on this machine");
  if (!have("time") && !fs::exists("/usr/bin/time")) return skip("no GNU time (package time) to measure peak RSS");
  // AddressSanitizer keeps freed memory in its quarantine (scripts/test.sh runs these tests against a
  // sanitized build too): its RSS measures the sanitizer, not what btfslim holds.
  if (sanitized_binary()) return skip("a sanitized btfslim: its quarantine keeps what is freed resident");
  const TempDir dir;
  std::string largest;
  const std::vector<std::string> objects = copied_corpus(dir, 4, largest);
  if (objects.empty()) return skip("no corpus of real objects here");

  for (const std::string command : {"check", "minimize"}) {
    std::vector<std::string> args{command, "--btf", vmlinux};
    if (command == std::string("minimize")) args.insert(args.end(), {"-o", dir.file("out.btf")});
    std::vector<std::string> all = args, one = args;
    all.insert(all.end(), objects.begin(), objects.end());
    one.push_back(largest);
    // The lower of two runs each: a run's peak moves by a hundred KiB or so.
    const long one_kib = std::min(peak_kib(one), peak_kib(one)), all_kib = std::min(peak_kib(all), peak_kib(all));
    INFO(command << ": " << objects.size() << " objects " << all_kib << " KiB, the largest alone " << one_kib << " KiB");
    // Each object held beside the others would add 40-50 KiB apiece here (5 MiB for the hundred).
    CHECK(all_kib <= one_kib + 2048);
  }
}

TEST_CASE("check's JSON of a hundred objects waits in a temporary file and comes back whole", "[scale]") {
  const std::string vmlinux = running_vmlinux();
  if (vmlinux.empty()) return skip("no kernel BTF on this machine");
  const TempDir dir;
  std::string largest;
  const std::vector<std::string> objects = copied_corpus(dir, 4, largest);
  if (objects.empty()) return skip("no corpus of real objects here");
  std::vector<std::string> args{"check", "--format", "json", "--btf", vmlinux};
  args.insert(args.end(), objects.begin(), objects.end());

  const RunResult r = btfslim::test::btfslim(args);
  INFO(r.err.substr(0, 400));
  REQUIRE((r.status == 0 || r.status == 1));
  REQUIRE(r.out.size() > (std::size_t{1} << 20));  // past what is kept in memory
  const json doc = json::parse(r.out);
  REQUIRE(doc["objects"].size() == objects.size());
  CHECK(doc["object_count"] == objects.size());
  std::size_t failing = 0;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    CHECK(doc["objects"][i]["file"] == objects[i]);
    failing += doc["objects"][i]["failure_count"].get<std::size_t>() != 0;
  }
  CHECK(doc["failure_count"] == failing);
  CHECK(doc["kernels"][0]["failure_count"] == failing);
  CHECK(doc["failed"] == (failing != 0));
  CHECK(r.status == (failing != 0 ? 1 : 0));

  // Where no temporary file can be made: one line naming where, exit 2, nothing on stdout.
  std::vector<std::string> no_tmp{"env", "TMPDIR=" + dir.file("missing"), btfslim_path()};
  no_tmp.insert(no_tmp.end(), args.begin(), args.end());
  const RunResult n = run(no_tmp);
  CHECK(n.status == 2);
  CHECK(n.out.empty());
  CHECK(n.err == "btfslim: " + dir.file("missing") + ": cannot create a temporary file: No such file or directory\n");
}
