// `btfslim check` at many kernels ([check-kernels]): a btfhub-like tree of real kernels, as btfhub-archive
// packs them (debian/12/x86_64/RELEASE.btf.tar.xz), against the corpus of real projects' objects. Its
// matrix names each kernel by its release where that tells it apart (the shortest unique path suffix
// with the release as file name where two share one) with a legend of the files; a failure alike on
// several kernels is listed once under "OBJ fails on N of M kernels: ..."; the verdict counts failing
// objects and failing object/kernel pairs; JSON and GitHub's annotations say the same.
//
// The kernels: Debian's 6.1 and 6.12 (scripts/fetch-test-kernel.sh) and the running one, each packed
// from its real BTF; the 6.1 one also extracted beside the tree (the same release twice). The JSON of
// the same run is the reference for what fails where: each relocation's and kernel reference's result
// per kernel.
#include "archives.h"
#include "check_cli.h"
#include "elf_image.h"
#include "process.h"
#include "text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using nlohmann::json;
namespace fs = std::filesystem;

// The raw BTF in an ELF file's .BTF section.
std::string btf_section(const std::string& elf_path) {
  const std::string image = read_file(elf_path);
  const ElfLayout layout = elf_layout(image);
  REQUIRE(layout.sections.count(".BTF") == 1);
  const SectionPlace& s = layout.sections.at(".BTF");
  return image.substr(s.offset, s.size);
}

struct Kernel {
  std::string release;
  std::string target;  // its name as check gives it: ARCHIVE:MEMBER, or the file
};

// A btfhub-like tree of the real kernels here, and the 6.1 one extracted beside it; "" in `why_not`
// when a kernel is missing.
struct Tree {
  TempDir dir;
  std::string hub, extracted;
  std::vector<Kernel> kernels;  // in the order check takes them: the tree sorted, then the extracted file
};

const Tree* tree(std::string& why_not) {
  static std::optional<Tree> made;
  static std::string missing;
  if (made || !missing.empty()) {
    why_not = missing;
    return made ? &*made : nullptr;
  }
  const auto k61 = test_kernel("6.1", missing);
  const auto k612 = k61 ? test_kernel("6.12", missing) : std::nullopt;
  if (!k612) return nullptr;
  if (running_vmlinux().empty()) {
    missing = "no /sys/kernel/btf/vmlinux";
    return nullptr;
  }
  Tree& t = made.emplace();
  t.hub = t.dir.file("btfhub-archive");
  // Sorted as check walks the tree: debian/12 (6.1 before 6.12), then the running kernel's.
  const std::vector<std::tuple<std::string, std::string, std::string>> packed = {
      {"debian/12/x86_64", k61->release, btf_section(k61->vmlinux)},
      {"debian/12/x86_64", k612->release, btf_section(k612->vmlinux)},
      {"running/1/x86_64", running_release(), read_file(running_vmlinux())},
  };
  for (const auto& [dir, release, btf] : packed) {
    fs::create_directories(t.hub + "/" + dir);
    const std::string archive = t.hub + "/" + dir + "/" + release + ".btf.tar.xz";
    write_archive(archive, {{release + ".btf", btf}}, true);
    t.kernels.push_back({release, archive + ":" + release + ".btf"});
  }
  fs::create_directories(t.dir.file("extracted"));
  t.extracted = t.dir.file("extracted/" + k61->release + ".btf");
  write_file(t.extracted, std::get<2>(packed[0]));
  t.kernels.push_back({k61->release, t.extracted});
  return &*made;
}

// The corpus's little-endian objects (MANIFEST.tsv; a big-endian one is refused on these kernels).
std::vector<std::string> real_corpus_objects() {
  std::vector<std::string> out;
  for (const CorpusEntry& e : corpus_manifest())
    if (e.little_endian) out.push_back(e.path);
  return out;
}

// `check OBJECTS --btf HUB --btf EXTRACTED [more]`.
std::vector<std::string> check_args(const Tree& t, const std::vector<std::string>& objects,
                                    const std::vector<std::string>& more = {}) {
  std::vector<std::string> args{"check"};
  args.insert(args.end(), objects.begin(), objects.end());
  args.insert(args.end(), {"--btf", t.hub, "--btf", t.extracted});
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

json run_json(std::vector<std::string> args) {
  args.insert(args.end(), {"--format", "json"});
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\nexit " << r.status << "\nstderr: " << r.err);
  REQUIRE((r.status == 0 || r.status == 1));
  return json::parse(r.out);
}

// How the report names each kernel: the release where only one kernel has it, else the shortest path
// suffix that tells the two apart, with the release as file name.
std::vector<std::string> expected_names(const Tree& t) {
  return {"x86_64/" + t.kernels[0].release, t.kernels[1].release, t.kernels[2].release,
          "extracted/" + t.kernels[3].release};
}

// The failures of a matrix table: per object, its groups, each with the kernels it names and its rows
// (a row with its reason after a line break).
struct Group {
  std::string heading;
  std::vector<std::string> kernels;
  std::vector<std::string> rows;
};

// "OBJ fails on 3 of 6 kernels: a, b, c", "OBJ fails on all 6 kernels", "OBJ fails on both kernels",
// "OBJ fails on 5 of 6 kernels: all but x": the kernels named, of `all`.
std::vector<std::string> kernels_of(const std::string& heading, const std::string& object,
                                    const std::vector<std::string>& all) {
  const std::string lead = object + " fails on ";
  REQUIRE_THAT(heading, StartsWith(lead));
  // Failures only in optional programs or unused alternatives say so after the kernels.
  std::string rest = heading.substr(lead.size());
  if (const auto note = rest.find(" (not counted: "); note != std::string::npos) rest.resize(note);
  if (rest == "both kernels" || rest == "all " + std::to_string(all.size()) + " kernels") return all;
  const auto colon = rest.find(" kernels: ") != std::string::npos ? rest.find(" kernels: ") + 10 : rest.find(" kernel: ") + 9;
  REQUIRE(colon < rest.size());
  const std::size_t count = std::stoul(rest.substr(0, rest.find(' ')));
  CHECK_THAT(rest.substr(0, colon), EndsWith(" of " + std::to_string(all.size()) + " kernels: "));
  std::string list = rest.substr(colon);
  std::vector<std::string> named;
  const bool but = list.starts_with("all but ");
  if (but) list = list.substr(8);
  for (std::size_t at = 0;;) {
    const std::size_t comma = list.find(", ", at);
    named.push_back(list.substr(at, comma - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  if (!but) {
    CHECK(named.size() == count);
    return named;
  }
  std::vector<std::string> kept;
  for (const std::string& k : all)
    if (std::find(named.begin(), named.end(), k) == named.end()) kept.push_back(k);
  CHECK(kept.size() == count);
  return kept;
}

// What a multi-kernel table lists after its matrix and legend, by object (the names the matrix shows).
std::map<std::string, std::vector<Group>> failure_groups(const std::string& out, const std::vector<std::string>& objects,
                                                         const std::vector<std::string>& kernels) {
  std::map<std::string, std::vector<Group>> groups;
  const std::vector<std::string> lines = lines_of(out);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with(" ") || line.find(" fails on ") == std::string::npos) continue;
    const std::string object = line.substr(0, line.find(" fails on "));
    INFO("heading: " << line);
    REQUIRE(std::find(objects.begin(), objects.end(), object) != objects.end());
    Group g{line, kernels_of(line, object, kernels), {}};
    for (++i; i < lines.size() && lines[i].starts_with("  "); ++i) {
      if (lines[i][2] != ' ')
        g.rows.push_back(lines[i]);
      else
        g.rows.back() += "\n" + lines[i];
    }
    --i;
    groups[object].push_back(g);
  }
  return groups;
}

}  // namespace

TEST_CASE("check at many kernels: columns named by release, and a legend of their files", "[check-kernels]") {
  std::string why;
  const Tree* t = tree(why);
  if (!t) return skip("no btfhub-like tree of real kernels: " + why);
  const std::vector<std::string> objects = real_corpus_objects();
  if (objects.empty()) return skip("no corpus of real objects");
  const std::vector<std::string> names = expected_names(*t);

  const RunResult r = btfslim(check_args(*t, objects));
  INFO(r.out << r.err);
  REQUIRE((r.status == 0 || r.status == 1));
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(!lines.empty());
  // In a pipe, one block: the header names every kernel, in the order of the JSON's kernels.
  const std::vector<std::string> header = words_of(lines[0]);
  REQUIRE(!header.empty());
  CHECK(header[0] == "OBJECT");
  CHECK(std::vector<std::string>(header.begin() + 1, header.end()) == names);
  // The legend, after the matrix: each kernel named otherwise than by its path, with its file.
  const auto legend = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("KERNEL "); });
  REQUIRE(legend != lines.end());
  CHECK(words_of(*legend) == std::vector<std::string>{"KERNEL", "FILE"});
  for (std::size_t k = 0; k < t->kernels.size(); ++k) {
    const auto row = legend + 1 + static_cast<std::ptrdiff_t>(k);
    REQUIRE(row < lines.end());
    CHECK(words_of(*row) == std::vector<std::string>{names[k], t->kernels[k].target});
  }
  CHECK(*(legend + 1 + static_cast<std::ptrdiff_t>(t->kernels.size())) == "");

  // JSON names them the same, beside their files and releases.
  const json doc = run_json(check_args(*t, objects));
  REQUIRE(doc.at("kernels").size() == t->kernels.size());
  for (std::size_t k = 0; k < t->kernels.size(); ++k) {
    CHECK(doc["kernels"][k].at("file") == t->kernels[k].target);
    CHECK(doc["kernels"][k].at("short_name") == names[k]);
    CHECK(doc["kernels"][k].at("release") == t->kernels[k].release);
  }

  // At 160 columns, beside the corpus's longest object name (83 characters), the four kernels fit in
  // two blocks (each block repeats the OBJECT column); by their archive members' names, one a block.
  std::vector<std::string> argv{"env", "COLUMNS=160", btfslim_path()};
  const std::vector<std::string> args = check_args(*t, objects);
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult narrow = run(argv);
  INFO(narrow.out);
  CHECK(count_of(narrow.out, "\nOBJECT ") + narrow.out.starts_with("OBJECT ") == 2);

  // One kernel: its table is as before, named by its path, with no legend.
  const RunResult one = btfslim({"check", objects[1], "--btf", t->extracted});
  CHECK_THAT(one.out, StartsWith(file_name(objects[1]) + " on " + file_name(t->extracted) + "\n"));
  CHECK_THAT(one.out, !Contains("\nKERNEL "));
}

TEST_CASE("check at many kernels: a failure alike on several kernels is listed once, with its kernels",
          "[check-kernels]") {
  std::string why;
  const Tree* t = tree(why);
  if (!t) return skip("no btfhub-like tree of real kernels: " + why);
  const std::vector<std::string> objects = real_corpus_objects();
  if (objects.empty()) return skip("no corpus of real objects");
  const std::vector<std::string> names = expected_names(*t);

  const RunResult r = btfslim(check_args(*t, objects));
  INFO(r.out.substr(0, 20000));
  REQUIRE(r.status == 1);
  const json doc = run_json(check_args(*t, objects));
  std::vector<std::string> shown;  // the objects as the matrix names them
  for (const std::string& line : lines_of(r.out)) {
    if (line.empty()) break;
    if (!line.starts_with("OBJECT ")) shown.push_back(words_of(line)[0]);
  }
  REQUIRE(shown.size() == objects.size());
  const auto groups = failure_groups(r.out, shown, names);

  // Each failure the JSON has, keyed by what the table shows of it, with the kernels it fails on.
  std::size_t shared = 0;
  for (std::size_t o = 0; o < objects.size(); ++o) {
    const json& object = doc["objects"][o];
    INFO(objects[o]);
    struct Failure {
      std::vector<std::string> pieces;
      std::vector<std::string> kernels;
    };
    std::map<std::string, Failure> failures;
    for (const json& rec : object["relocations"])
      for (std::size_t k = 0; k < names.size(); ++k) {
        const json& res = rec["results"][k];
        if (!res["fails"].get<bool>()) continue;
        const std::string reason = res["reason"].is_null() ? "" : res["reason"].get<std::string>();
        std::vector<std::string> pieces{"  " + rec["program"].get<std::string>() + " ",
                                        "insn #" + std::to_string(rec["insn_idx"].get<std::size_t>()) + " ",
                                        rec["relocation_kind"].get<std::string>() + " ", verdict_of(res) + " ",
                                        rec["accessor"].get<std::string>() + (reason.empty() ? "" : "\n"), reason};
        std::string key;
        for (const std::string& p : pieces) key += p + '\t';
        Failure& f = failures[key];
        f.pieces = pieces;
        f.kernels.push_back(names[k]);
      }
    for (const json& ref : object["kernel_references"])
      for (std::size_t k = 0; k < names.size(); ++k) {
        const json& res = ref["results"][k];
        if (!res["fails"].get<bool>()) continue;
        const std::string reason = res["reason"].is_null() ? "" : res["reason"].get<std::string>();
        const std::string owner = !ref["program"].is_null() ? ref["program"].get<std::string>()
                                  : !ref["map"].is_null()   ? ref["map"].get<std::string>()
                                                            : "-";
        std::vector<std::string> pieces{"  " + owner + " ", ref["reference_kind"].get<std::string>() + " ",
                                        ref["name"].get<std::string>(), reason};
        std::string key;
        for (const std::string& p : pieces) key += p + '\t';
        Failure& f = failures[key];
        f.pieces = pieces;
        f.kernels.push_back(names[k]);
      }
    const auto it = groups.find(shown[o]);
    if (failures.empty()) {
      CHECK(it == groups.end());
      continue;
    }
    REQUIRE(it != groups.end());
    // Every failure in exactly one group, the one of its kernels; every row a failure.
    std::size_t rows = 0;
    std::set<std::vector<std::string>> kernel_sets;
    for (const Group& g : it->second) {
      rows += g.rows.size();
      INFO(g.heading);
      CHECK(kernel_sets.insert(g.kernels).second);  // one group per set of kernels
    }
    CHECK(rows == failures.size());
    for (const auto& [key, f] : failures) {
      INFO("failure " << key);
      std::size_t found = 0;
      for (const Group& g : it->second)
        for (const std::string& row : g.rows)
          if (holds_in_order(row, f.pieces)) {
            ++found;
            CHECK(g.kernels == f.kernels);
          }
      CHECK(found == 1);
      shared += f.kernels.size() > 1;
    }
  }
  // Real objects fail alike on several kernels: some failures are listed once for several. The tree
  // holds the same 6.1 kernel twice, whose failures are the same: every group names both or neither.
  CHECK(shared > 0);
  for (const auto& [object, gs] : groups)
    for (const Group& g : gs) {
      INFO(g.heading);
      CHECK((std::count(g.kernels.begin(), g.kernels.end(), names[0]) ==
             std::count(g.kernels.begin(), g.kernels.end(), names[3])));
    }
}

TEST_CASE("check at many kernels: the verdict counts failing objects and failing object/kernel pairs",
          "[check-kernels]") {
  std::string why;
  const Tree* t = tree(why);
  if (!t) return skip("no btfhub-like tree of real kernels: " + why);
  const std::vector<std::string> objects = real_corpus_objects();
  if (objects.empty()) return skip("no corpus of real objects");

  const json doc = run_json(check_args(*t, objects));
  std::size_t failing_objects = 0, failing_pairs = 0;
  for (const json& o : doc["objects"]) {
    std::size_t kernels = 0;
    for (const json& cell : o["results"]) kernels += cell["failed"].get<bool>();
    CHECK(o["failure_count"] == kernels);
    failing_objects += kernels != 0;
    failing_pairs += kernels;
  }
  REQUIRE(failing_objects > 0);
  REQUIRE(failing_pairs > failing_objects);  // some object fails on more than one kernel
  const std::size_t not_counted = doc["optional_failure_count"].get<std::size_t>();
  const std::string verdict =
      std::to_string(objects.size()) + " objects x 4 kernels: " + std::to_string(failing_objects) +
      (failing_objects == 1 ? " object fails (" : " objects fail (") + std::to_string(failing_pairs) + " of " +
      std::to_string(objects.size() * 4) + " object/kernel pairs)" +
      (not_counted == 0 ? ""
                        : " (and " + std::to_string(not_counted) +
                              " failures in optional programs or unused alternatives, not counted)");
  CHECK(doc["summary"] == verdict);
  CHECK(doc["failing_object_count"] == failing_objects);
  CHECK(doc["failure_count"] == failing_pairs);

  const RunResult table = btfslim(check_args(*t, objects));
  CHECK_THAT(table.out, EndsWith("\n\n" + verdict + "\n"));
  const RunResult github = btfslim(check_args(*t, objects, {"--format", "github"}));
  CHECK_THAT(github.out, EndsWith("\nbtfslim check: " + verdict + "\n"));
  // --failures-only shows fewer objects, and counts them all.
  const RunResult failing = btfslim(check_args(*t, objects, {"--failures-only"}));
  CHECK_THAT(failing.out, EndsWith("\n\n" + verdict + "\n"));
}

TEST_CASE("check at many kernels: GitHub annotations, one per object and set of kernels a failure shares",
          "[check-kernels]") {
  std::string why;
  const Tree* t = tree(why);
  if (!t) return skip("no btfhub-like tree of real kernels: " + why);
  const std::vector<std::string> objects = real_corpus_objects();
  if (objects.empty()) return skip("no corpus of real objects");
  const std::vector<std::string> names = expected_names(*t);

  const RunResult table = btfslim(check_args(*t, objects));
  std::vector<std::string> shown;
  for (const std::string& line : lines_of(table.out)) {
    if (line.empty()) break;
    if (!line.starts_with("OBJECT ")) shown.push_back(words_of(line)[0]);
  }
  REQUIRE(shown.size() == objects.size());
  std::size_t groups = 0;
  // Failures only in optional programs or unused alternatives are not annotated.
  for (const auto& [object, gs] : failure_groups(table.out, shown, names))
    for (const Group& g : gs) groups += g.heading.find(" (not counted: ") == std::string::npos;
  REQUIRE(groups > 0);

  const RunResult r = btfslim(check_args(*t, objects, {"--format", "github"}));
  INFO(r.out.substr(0, 20000));
  std::size_t annotations = 0;
  for (const std::string& line : lines_of(r.out)) {
    if (!line.starts_with("::error ")) continue;
    ++annotations;
    // The title and the message name the kernels as the table's headings do.
    CHECK_THAT(line, Contains(",title=btfslim check%3A "));
    CHECK(line.find(" fails on ") != std::string::npos);
  }
  CHECK(annotations == groups);
}

}  // namespace btfslim::test
