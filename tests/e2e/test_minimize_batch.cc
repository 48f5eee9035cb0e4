// `btfslim minimize` over many sources ([minimize-batch]): a tree of kernels like btfhub-archive's, made
// here from the CO-RE corpus's targets (pahole-built ELF files, their raw BTF, and a .btf.tar.xz made with
// tar -cJf), minimized into a directory that mirrors it. Each output must be the very file a single
// `minimize --btf SRC` writes (which tests/e2e/test_minimize.cc holds to libbpf, the kernel and bpftool)
// and resolve every relocation as its source (btfslim check on both); --jobs must not change a byte;
// --shard parts must partition the tree; --skip-poisoned must skip exactly the kernels `btfslim check`
// fails; a bad source must cost only itself. --elf outputs must be ELF objects that
// readelf, bpftool and btfslim dump read, in the source's byte order and class.
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "oracles.h"
#include "process.h"
#include "text.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <gelf.h>
#include <libelf.h>
#include <nlohmann/json.hpp>

#include "check_json.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using nlohmann::json;

// 100 * part / whole with two decimals, as the batch summary prints it.
std::string percent_text(std::uintmax_t part, std::uintmax_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

// The raw BTF libbpf reads from `path` (an ELF's .BTF), in `big_endian` order when asked.
std::string raw_btf(const std::string& path, bool big_endian = false) {
  return raw_bytes(parse_btf(path).get(), big_endian);
}

// Every regular file under `dir`, by path below it, with its bytes.
std::map<std::string, std::string> files_under(const std::string& dir) {
  std::map<std::string, std::string> files;
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[e.path().lexically_relative(dir).string()] = read_file(e.path().string());
  return files;
}

std::set<std::string> names_of(const std::map<std::string, std::string>& files) {
  std::set<std::string> names;
  for (const auto& [name, bytes] : files) names.insert(name);
  return names;
}

// ---- the tree ----

// core_types relocates cleanly on every target; core_bitfields on the moved targets only: on
// core_target_missing some of its relocations are poisoned with no existence check guarding them.
std::vector<std::string> batch_objects() { return {test_object("core_types"), test_object("core_bitfields")}; }

// The object tests/meson.build builds from the same source with clang -target bpfeb.
std::string big_endian_twin(const std::string& object) {
  const std::string suffix = ".bpf.o";
  REQUIRE(object.size() > suffix.size());
  return object.substr(0, object.size() - suffix.size()) + ".bpfeb.o";
}

struct Kernel {
  std::string in_tree;  // the source's path below the tree
  std::string output;   // its output's path below -o DIR
  std::string source;   // a file `minimize --btf` reads the same BTF from
  bool poisoned = false;  // core_bitfields fails on it
};

// A btfhub-like tree: ELF files as pahole writes them, raw BTF, and an xz-compressed tar holding raw BTF.
// Sorted by path (the order a batch goes in): centos, debian, fedora, ubuntu.
struct Tree {
  TempDir dir;
  std::string root;
  std::vector<Kernel> kernels;
};

const Tree& tree() {
  static Tree t;
  static const bool made = [] {
    t.root = t.dir.file("hub");
    auto place = [&](const std::string& in_tree, const std::string& bytes) {
      const fs::path p = fs::path(t.root) / in_tree;
      fs::create_directories(p.parent_path());
      write_file(p.string(), bytes);
      return p.string();
    };
    // An archive as btfhub ships them: raw BTF named like the archive, made with tar -cJf.
    const std::string member = t.dir.file("4.18.0-moved.btf");
    write_file(member, raw_btf(core_target("moved")));
    fs::create_directories(fs::path(t.root) / "centos/8/x86_64");
    const std::string archive = t.root + "/centos/8/x86_64/4.18.0-moved.btf.tar.xz";
    const RunResult tar = run({"tar", "-C", t.dir.path(), "-cJf", archive, "4.18.0-moved.btf"});
    INFO("tar -cJf: " << tar.err);
    REQUIRE(tar.status == 0);
    t.kernels.push_back({"centos/8/x86_64/4.18.0-moved.btf.tar.xz", "centos/8/x86_64/4.18.0-moved.btf", member});
    t.kernels.push_back({"debian/12/x86_64/6.1.0-clang.btf", "debian/12/x86_64/6.1.0-clang.btf",
                         place("debian/12/x86_64/6.1.0-clang.btf", raw_btf(core_target("moved.clang")))});
    t.kernels.push_back({"fedora/38/x86_64/6.2.9-missing.o", "fedora/38/x86_64/6.2.9-missing.o",
                         place("fedora/38/x86_64/6.2.9-missing.o", read_file(core_target("missing"))), true});
    t.kernels.push_back({"ubuntu/20.04/x86_64/5.4.0-moved.btf", "ubuntu/20.04/x86_64/5.4.0-moved.btf",
                         place("ubuntu/20.04/x86_64/5.4.0-moved.btf", read_file(core_target("moved")))});
    return true;
  }();
  REQUIRE(made);
  return t;
}

std::string tree_path(const Kernel& k) { return tree().root + "/" + k.in_tree; }
// The name a batch gives a kernel: its path, and for an archive member, archive:member.
std::string source_name(const Kernel& k) {
  return k.in_tree.ends_with(".tar.xz") ? tree_path(k) + ":" + fs::path(k.source).filename().string() : tree_path(k);
}

std::vector<std::string> batch_args(const std::string& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"minimize", "--btf", tree().root, "-o", out};
  args.insert(args.end(), extra.begin(), extra.end());
  for (const std::string& o : batch_objects()) args.push_back(o);
  return args;
}

RunResult run_batch(const std::vector<std::string>& args, int status = 0) {
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\nexit " << r.status << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
  REQUIRE(r.status == status);
  return r;
}

// What `minimize --btf SRC` writes for one source, made once per process.
const std::string& single_output(const std::string& source, bool elf = false) {
  static std::map<std::pair<std::string, bool>, std::string> made;
  static const TempDir dir;
  const auto key = std::make_pair(source, elf);
  if (const auto it = made.find(key); it != made.end()) return it->second;
  const std::string out = dir.file(std::to_string(made.size()) + ".out");
  std::vector<std::string> args{"minimize", "--btf", source, "-o", out};
  if (elf) args.push_back("--elf");
  for (const std::string& o : batch_objects()) args.push_back(o);
  run_batch(args);
  return made[key] = read_file(out);
}

// The batch over the whole tree with `jobs` jobs, made once per process per number.
struct BatchRun {
  std::string out;
  RunResult run;
  std::map<std::string, std::string> files;
};

const BatchRun& whole_batch(int jobs) {
  static std::map<int, BatchRun> made;
  static const TempDir dir;
  if (const auto it = made.find(jobs); it != made.end()) return it->second;
  BatchRun b;
  b.out = dir.file("out-j" + std::to_string(jobs));
  b.run = run_batch(batch_args(b.out, {"--jobs", std::to_string(jobs)}));
  b.files = files_under(b.out);
  return made[jobs] = std::move(b);
}

// ---- relocations, by btfslim check ----

// "[id] kind name" with the id masked, for a TYPE_ID_TARGET value.
std::string kind_and_name(const struct btf* b, std::uint64_t id) {
  if (id == 0) return "void";
  const btf_type* t = btf__type_by_id(b, static_cast<__u32>(id));
  if (!t) return "no type";
  return std::to_string(btf_kind(t)) + " " + btf__name_by_offset(b, t->name_off);
}

// Each relocation of the batch's objects on `btf`, as "status value size", by (object, section, relo #).
std::map<std::string, std::string> relocations_on(const std::string& btf) {
  std::vector<std::string> args{"check"};
  for (const std::string& o : batch_objects()) args.push_back(o);
  args.insert(args.end(), {"--btf", btf, "--format", "json"});
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\n" << r.err);
  REQUIRE((r.status == 0 || r.status == 1));
  const BtfPtr b = parse_btf(btf);
  std::map<std::string, std::string> out;
  const json doc = json::parse(r.out);
  for (const json& o : doc.at("objects"))
    for (const json& rec : relocations_on_kernel(o)) {
      std::string value = rec.contains("value") ? rec["value"].dump() : "-";
      if (rec.value("relocation_kind", "") == "target_type_id" && rec.value("status", "") == "ok")
        value = kind_and_name(b.get(), rec.value("value", std::uint64_t{0}));
      out[o.value("file", "") + " " + rec.value("section", "") + " #" + std::to_string(rec.value("relo_idx", -1))] =
          rec.value("status", "") + " " + value + " size " + rec.value("target_size_bytes", json()).dump();
    }
  return out;
}

void expect_same_relocations(const std::string& source, const std::string& output) {
  const auto a = relocations_on(source), b = relocations_on(output);
  CHECK(a.size() > 100);
  std::ostringstream diff;
  for (const auto& [key, value] : a)
    if (!b.count(key) || b.at(key) != value) diff << "  " << key << ": " << value << " / " << (b.count(key) ? b.at(key) : "-") << "\n";
  INFO(source << " -> " << output << ": relocations resolving differently:\n" << diff.str());
  CHECK(a == b);
}

// ---- the cases ----

TEST_CASE("minimize batch: the outputs mirror the tree, each as a single minimize writes it", "[minimize-batch]") {
  const BatchRun& b = whole_batch(2);
  std::set<std::string> expected;
  for (const Kernel& k : tree().kernels) expected.insert(k.output);
  CHECK(names_of(b.files) == expected);  // and nothing else: no temporary files left

  for (const Kernel& k : tree().kernels) {
    INFO(k.in_tree);
    const std::string out = b.out + "/" + k.output;
    CHECK(b.files.at(k.output) == single_output(k.source));
    CHECK(!ours({"dump", out}).empty());
    expect_same_relocations(k.source, out);
  }

  // One line per kernel, in the tree's order, then the summary; the poisoned kernel noted on stderr.
  const std::vector<std::string> lines = lines_of(b.run.out);
  REQUIRE(lines.size() == tree().kernels.size() + 1);
  std::uintmax_t bytes_in = 0, bytes_out = 0;
  for (std::size_t i = 0; i < tree().kernels.size(); ++i) {
    const Kernel& k = tree().kernels[i];
    CHECK_THAT(lines[i], StartsWith(b.out + "/" + k.output + ": "));
    CHECK_THAT(lines[i], Contains(" of " + source_name(k) + ": "));
    bytes_in += raw_btf(k.source).size();
    bytes_out += b.files.at(k.output).size();
  }
  CHECK(lines.back() == "4 kernels written, 0 skipped as poisoned, 0 failed: " + with_commas(bytes_in) +
                            " bytes of BTF in, " + with_commas(bytes_out) + " bytes out (" +
                            percent_text(bytes_out, bytes_in) + "%)");
  const std::vector<std::string> notes = lines_of(b.run.err);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], StartsWith("btfslim: note: " + tree().root + "/fedora/38/x86_64/6.2.9-missing.o: "));
  CHECK_THAT(notes[0], Contains(" relocations would fail to load on it (first: " + test_object("core_bitfields")));
  CHECK_THAT(notes[0], EndsWith("written all the same (--skip-poisoned skips such kernels)"));
}

TEST_CASE("minimize batch: --jobs changes no byte and no line", "[minimize-batch]") {
  const BatchRun& one = whole_batch(1);
  const BatchRun& four = whole_batch(4);
  CHECK(one.files == four.files);
  CHECK(one.files == whole_batch(2).files);
  auto relabel = [](const BatchRun& b) {
    std::string s = b.run.out;
    for (std::size_t at; (at = s.find(b.out)) != std::string::npos;) s.replace(at, b.out.size(), "OUT");
    return s;
  };
  CHECK(relabel(one) == relabel(four));
  CHECK(one.run.err == four.run.err);
}

TEST_CASE("minimize batch: --shard I/N parts partition the tree", "[minimize-batch]") {
  const BatchRun& whole = whole_batch(2);
  TempDir dir;
  for (const int n : {2, 3}) {
    std::map<std::string, std::string> together;
    for (int i = 1; i <= n; ++i) {
      const std::string shard = std::to_string(i) + "/" + std::to_string(n);
      const std::string out = dir.file("shard-" + std::to_string(i) + "-of-" + std::to_string(n));
      const RunResult r = run_batch(batch_args(out, {"--shard", shard}));
      const auto files = files_under(out);
      // Shard i takes the sources whose place in the sorted list, from 0, is i-1 modulo n.
      std::set<std::string> expected;
      for (std::size_t k = 0; k < tree().kernels.size(); ++k)
        if (static_cast<int>(k % static_cast<std::size_t>(n)) == i - 1) expected.insert(tree().kernels[k].output);
      INFO("--shard " << shard);
      CHECK(names_of(files) == expected);
      CHECK_THAT(lines_of(r.out).back(), Contains("(shard " + shard + ": " + std::to_string(expected.size()) + " of " +
                                                  std::to_string(tree().kernels.size()) + " source files)"));
      for (const auto& [name, bytes] : files) {
        CHECK(together.count(name) == 0);  // in no other shard
        together[name] = bytes;
      }
    }
    CHECK(together == whole.files);
  }
  // A shard past the sources takes none: nothing written, and that is no error.
  const RunResult empty = run_batch(batch_args(dir.file("empty"), {"--shard", "5/5"}));
  CHECK(files_under(dir.file("empty")).empty());
  CHECK_THAT(empty.out, StartsWith("0 kernels written, 0 skipped as poisoned, 0 failed"));

  for (const std::string bad : {"0/2", "3/2", "1/0", "2", "a/b", "1/2/3", "-1/2", "1/-2", "", "1/", "/2", " 1/2"}) {
    const RunResult r = btfslim(batch_args(dir.file("bad"), {"--shard", bad}));
    INFO("--shard '" << bad << "': " << r.err);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, StartsWith("btfslim: --shard"));
    CHECK(!fs::exists(dir.file("bad")));
  }

  // One source gives one file, and --shard takes part of a batch: with one source file, or the running
  // kernel, it is refused rather than turning -o FILE into a directory FILE/vmlinux. --jobs shares a
  // batch's sources, and one source has none to share: refused too, not ignored.
  const std::string object = test_object("core_fields");
  for (const std::vector<std::string>& source : {std::vector<std::string>{"--btf", core_target("moved")},
                                                 std::vector<std::string>{}})
    for (const std::vector<std::string>& option : {std::vector<std::string>{"--shard", "1/2"},
                                                   std::vector<std::string>{"-j", "2"}}) {
      std::vector<std::string> args{"minimize", "-o", dir.file("x.btf"), object};
      args.insert(args.end(), option.begin(), option.end());
      args.insert(args.end(), source.begin(), source.end());
      const RunResult r = btfslim(args);
      INFO(r.err);
      CHECK(r.status == 2);
      CHECK(r.out.empty());
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK_THAT(r.err, StartsWith("btfslim: " + std::string(option[0] == "-j" ? "--jobs" : "--shard") +
                                   ": goes with a batch"));
      CHECK(!fs::exists(dir.file("x.btf")));
    }
}

// How many relocations of the batch's objects `btfslim check` fails on `btf`.
std::size_t failing_on(const std::string& btf, const std::vector<std::string>& objects) {
  std::vector<std::string> args{"check", "--format", "json", "--btf", btf};
  args.insert(args.end(), objects.begin(), objects.end());
  const RunResult r = btfslim(args);
  REQUIRE((r.status == 0 || r.status == 1));
  std::size_t n = 0;
  const json doc = json::parse(r.out);
  for (const json& o : doc.at("objects"))
    for (const json& rec : relocations_on_kernel(o)) n += rec.value("fails", false) ? 1 : 0;
  CHECK((n > 0) == (r.status == 1));
  return n;
}

TEST_CASE("minimize batch: --skip-poisoned writes nothing for a kernel a relocation fails on", "[minimize-batch]") {
  TempDir dir;
  const std::string out = dir.file("out");
  const RunResult r = run_batch(batch_args(out, {"--skip-poisoned"}));
  std::set<std::string> expected;
  const Kernel* poisoned = nullptr;
  for (const Kernel& k : tree().kernels) {
    INFO(k.in_tree);
    CHECK(k.poisoned == (failing_on(k.source, batch_objects()) > 0));
    if (k.poisoned)
      poisoned = &k;
    else
      expected.insert(k.output);
  }
  REQUIRE(poisoned != nullptr);
  CHECK(names_of(files_under(out)) == expected);
  CHECK(files_under(out) == [&] {
    std::map<std::string, std::string> whole = whole_batch(2).files;
    whole.erase(poisoned->output);
    return whole;
  }());
  CHECK(r.err.empty());
  const std::vector<std::string> lines = lines_of(r.out);
  const std::string count = std::to_string(failing_on(poisoned->source, batch_objects()));
  CHECK(std::find(lines.begin(), lines.end(), "  skipped: " + source_name(*poisoned)) != lines.end());
  CHECK(std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
    return l.rfind(source_name(*poisoned) + ": skipped: " + count + " relocations would fail to load on it (first: " +
                       test_object("core_bitfields") + " ",
                   0) == 0;
  }));
  CHECK_THAT(r.out, Contains("3 kernels written, 1 skipped as poisoned, 0 failed: "));

  SECTION("a poisoned read in dead code (behind a failing existence check) does not count") {
    // core_guarded's reads of what core_target_missing lacks are all dead code; on core_target_errors one is reached.
    const std::string guarded = test_object("core_guarded");
    REQUIRE(failing_on(core_target("missing"), {guarded}) == 0);
    REQUIRE(failing_on(core_target("errors"), {guarded}) == 1);
    const std::string out2 = dir.file("guarded");
    const RunResult g = run_batch({"minimize", "--btf", core_target("missing"), "--btf", core_target("errors"), "-o", out2,
                                   "--skip-poisoned", guarded});
    CHECK(names_of(files_under(out2)) == std::set<std::string>{"core_target_missing.o"});
    CHECK_THAT(g.out, Contains(core_target("errors") + ": skipped: 1 relocation would fail to load on it (first: "));
    CHECK_THAT(g.out, Contains("1 kernel written, 1 skipped as poisoned, 0 failed"));
  }
  SECTION("one source: nothing written, exit 0") {
    const std::string one = dir.file("one.btf");
    const RunResult s = run_batch({"minimize", "--btf", core_target("missing"), "-o", one, "--skip-poisoned",
                                   test_object("core_bitfields")});
    CHECK(!fs::exists(one));
    CHECK_THAT(s.out, StartsWith(core_target("missing") + ": skipped: "));
  }
}

// ---- --elf ----

struct ElfLook {
  int elf_class = 0, data = 0, type = 0, machine = 0;
  std::vector<std::string> sections;
  std::string btf;  // the .BTF section's bytes
};

ElfLook look_at_elf(const std::string& image) {
  REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
  std::string copy = image;
  Elf* elf = elf_memory(copy.data(), copy.size());
  REQUIRE(elf != nullptr);
  ElfLook look;
  GElf_Ehdr ehdr;
  REQUIRE(gelf_getehdr(elf, &ehdr) != nullptr);
  look.elf_class = ehdr.e_ident[EI_CLASS];
  look.data = ehdr.e_ident[EI_DATA];
  look.type = ehdr.e_type;
  look.machine = ehdr.e_machine;
  std::size_t shstrndx = 0;
  REQUIRE(elf_getshdrstrndx(elf, &shstrndx) == 0);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    REQUIRE(gelf_getshdr(scn, &shdr) != nullptr);
    const std::string name = elf_strptr(elf, shstrndx, shdr.sh_name);
    look.sections.push_back(name);
    if (name == ".BTF") {
      Elf_Data* d = elf_rawdata(scn, nullptr);
      REQUIRE(d != nullptr);
      look.btf.assign(static_cast<const char*>(d->d_buf), d->d_size);
    }
  }
  elf_end(elf);
  return look;
}

TEST_CASE("minimize --elf writes an ELF object with the BTF in .BTF", "[minimize-batch]") {
  TempDir dir;
  const std::string bpftool_path = bpftool_program();
  REQUIRE(!bpftool_path.empty());
  // The raw output of the same run, for comparison.
  const std::string raw = single_output(core_target("moved"));

  SECTION("one source, twice: the same bytes; readelf, bpftool and btfslim dump read it") {
    std::string first;
    for (int i = 0; i < 2; ++i) {
      const std::string out = dir.file("out" + std::to_string(i) + ".o");
      std::vector<std::string> args{"minimize", "--btf", core_target("moved"), "-o", out, "--elf"};
      for (const std::string& o : batch_objects()) args.push_back(o);
      const RunResult r = run_batch(args);
      CHECK_THAT(r.out, Contains(" bytes of BTF in " + with_commas(fs::file_size(out)) + " bytes of ELF ("));
      if (i == 0)
        first = read_file(out);
      else
        CHECK(read_file(out) == first);
    }
    const std::string out = dir.file("out0.o");
    const ElfLook look = look_at_elf(first);
    CHECK(look.elf_class == ELFCLASS64);
    CHECK(look.data == ELFDATA2LSB);
    CHECK(look.type == ET_REL);
    CHECK(look.machine == EM_BPF);
    CHECK(look.sections == std::vector<std::string>{".BTF", ".shstrtab"});
    CHECK(look.btf == raw);  // the very raw output

    const RunResult readelf = run({"readelf", "-S", out});
    INFO(readelf.err);
    CHECK(readelf.status == 0);
    CHECK_THAT(readelf.out, Contains(".BTF") && Contains("PROGBITS"));
    CHECK(readelf.err.empty());
    write_file(dir.file("raw.btf"), raw);
    CHECK(bpftool({"btf", "dump", "file", out}) == bpftool({"btf", "dump", "file", dir.file("raw.btf")}));
    CHECK(ours({"dump", out}) == ours({"dump", dir.file("raw.btf")}));
    expect_same_relocations(core_target("moved"), out);
  }

  SECTION("a batch: every output is the single run's ELF") {
    const std::string out = dir.file("tree");
    run_batch(batch_args(out, {"--elf"}));
    const auto files = files_under(out);
    CHECK(names_of(files) == names_of(whole_batch(2).files));
    for (const Kernel& k : tree().kernels) {
      INFO(k.in_tree);
      CHECK(files.at(k.output) == single_output(k.source, true));
      CHECK(look_at_elf(files.at(k.output)).btf == single_output(k.source));
      const RunResult r = run({bpftool_path, "btf", "dump", "file", out + "/" + k.output});
      CHECK(r.status == 0);
    }
  }

  SECTION("a big-endian source gives a big-endian ELF") {
    const std::string be = dir.file("moved.be.btf");
    write_file(be, raw_btf(core_target("moved"), true));
    const std::string out = dir.file("be.o");
    std::vector<std::string> args{"minimize", "--btf", be, "-o", out, "--elf"};
    for (const std::string& o : batch_objects()) args.push_back(big_endian_twin(o));
    run_batch(args);
    const ElfLook look = look_at_elf(read_file(out));
    CHECK(look.data == ELFDATA2MSB);
    REQUIRE(look.btf.size() > 2);
    CHECK(static_cast<unsigned char>(look.btf[0]) == 0xeb);
    CHECK(btf__endianness(parse_btf(out).get()) == BTF_BIG_ENDIAN);
    write_file(dir.file("le.btf"), raw);
    // The little-endian output's types, which resolve every relocation as its source does (above): the
    // big-endian objects ask what the little-endian ones do. check refuses the little-endian objects on a
    // big-endian BTF, as libbpf opens no object of the other byte order.
    CHECK(ours({"dump", out}) == ours({"dump", dir.file("le.btf")}));
    const RunResult refused = btfslim({"check", batch_objects().front(), "--btf", out});
    CHECK(refused.status == 2);
    CHECK_THAT(refused.err, Contains("byte order: a little-endian BPF object"));
  }

  SECTION("a 32-bit source gives ELFCLASS32, which tells libbpf pointers are 4 bytes") {
    // core_target_moved.c built for i386 and given BTF by pahole, as a 32-bit kernel's is.
    const std::string obj = dir.file("moved32.o");
    const RunResult cc = run({"clang-19", "--target=i386-linux-gnu", "-g", "-O0", "-c",
                              source_data_dir() + "/data/core_target_moved.c", "-o", obj});
    if (cc.status != 0) return skip("clang-19 cannot build for i386 here: " + lines_of(cc.err + "\n").front());
    const RunResult pahole = run({"pahole", "-J", obj});
    REQUIRE(pahole.status == 0);
    const std::string out = dir.file("moved32.min.o");
    std::vector<std::string> args{"minimize", "--btf", obj, "-o", out, "--elf", test_object("core_fields")};
    for (const std::string& o : batch_objects()) args.push_back(o);
    run_batch(args);
    CHECK(look_at_elf(read_file(obj)).elf_class == ELFCLASS32);
    CHECK(look_at_elf(read_file(out)).elf_class == ELFCLASS32);
    CHECK(btf__pointer_size(parse_btf(out).get()) == 4);
    CHECK(btf__pointer_size(parse_btf(obj).get()) == 4);
    expect_same_relocations(obj, out);
  }
}

// ---- errors ----

TEST_CASE("minimize batch: a bad source costs only itself; the exit status says so at the end", "[minimize-batch]") {
  TempDir dir;
  const std::string root = dir.file("hub");
  fs::copy(tree().root, root, fs::copy_options::recursive);
  // A file that starts like BTF and is cut short, and an archive cut short, among the good ones.
  write_file(root + "/debian/12/x86_64/5.10.0-cut.btf", raw_btf(core_target("moved")).substr(0, 40));
  const std::string archive = read_file(tree().root + "/centos/8/x86_64/4.18.0-moved.btf.tar.xz");
  write_file(root + "/centos/8/x86_64/4.18.0-cut.btf.tar.xz", archive.substr(0, archive.size() / 2));
  const std::string out = dir.file("out");
  std::vector<std::string> args{"minimize", "--btf", root, "-o", out, "--jobs", "3"};
  for (const std::string& o : batch_objects()) args.push_back(o);
  const RunResult r = btfslim(args);
  INFO(r.out << r.err);
  CHECK(r.status == 2);
  std::set<std::string> expected;
  for (const Kernel& k : tree().kernels) expected.insert(k.output);
  CHECK(names_of(files_under(out)) == expected);
  const std::vector<std::string> errors = lines_of(r.err);
  REQUIRE(errors.size() == 4);  // the bad archive, the bad file, the note on the poisoned kernel, the count
  CHECK_THAT(errors[0], StartsWith("btfslim: " + root + "/centos/8/x86_64/4.18.0-cut.btf.tar.xz: "));
  CHECK_THAT(errors[1], StartsWith("btfslim: " + root + "/debian/12/x86_64/5.10.0-cut.btf: "));
  CHECK_THAT(errors[2], StartsWith("btfslim: note: " + root + "/fedora/"));
  CHECK(errors[3] == "btfslim: 2 of 6 sources not minimized (errors above)");
  CHECK_THAT(r.out, Contains("4 kernels written, 0 skipped as poisoned, 2 failed: "));
  CHECK_THAT(r.out, Contains("\n  failed: " + root + "/centos/8/x86_64/4.18.0-cut.btf.tar.xz\n  failed: " + root +
                             "/debian/12/x86_64/5.10.0-cut.btf\n"));
}

// A run refused before anything is written: exit 2, one line naming `subject`, `dir` as it was.
void expect_refused(const std::vector<std::string>& args, const std::string& subject, const std::string& fragment,
                    const std::string& dir) {
  const auto before = files_under(dir);
  const RunResult r = btfslim(args);
  INFO(command_line(args) << "\nexit " << r.status << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, StartsWith("btfslim: " + subject + ": "));
  CHECK_THAT(r.err, Contains(fragment));
  CHECK(files_under(dir) == before);
}

TEST_CASE("minimize batch: what -o DIR may not be", "[minimize-batch]") {
  TempDir dir;
  const std::string root = dir.file("hub");
  fs::copy(tree().root, root, fs::copy_options::recursive);
  auto args = [&](const std::string& out, std::vector<std::string> sources) {
    std::vector<std::string> a{"minimize", "-o", out};
    for (const std::string& s : sources) a.insert(a.end(), {"--btf", s});
    for (const std::string& o : batch_objects()) a.push_back(o);
    return a;
  };
  write_file(dir.file("a-file"), "not a directory\n");
  expect_refused(args(dir.file("a-file"), {root}), dir.file("a-file"), "is not a directory", dir.path());
  expect_refused(args("-", {root}), "-o -", "directory", dir.path());
  expect_refused(args(root, {root}), root, "a directory of sources", dir.path());
  expect_refused(args(root + "/min", {root}), root + "/min", "a directory of sources", dir.path());
  CHECK(!fs::exists(root + "/min"));
  // Two files given by name that would be written to the same output.
  fs::create_directories(dir.file("other"));
  fs::copy_file(core_target("moved"), dir.file("other/5.4.0-moved.btf"));
  const std::string moved = root + "/ubuntu/20.04/x86_64/5.4.0-moved.btf";
  expect_refused(args(dir.file("out"), {moved, dir.file("other/5.4.0-moved.btf")}), dir.file("out") + "/5.4.0-moved.btf",
                 "two sources would be written here", dir.path());
  CHECK(!fs::exists(dir.file("out")));
  // An object that cannot be read stops the batch before it starts.
  expect_refused({"minimize", "--btf", root, "-o", dir.file("out"), dir.file("no-such.bpf.o")}, dir.file("no-such.bpf.o"),
                 "", dir.path());
  CHECK(!fs::exists(dir.file("out")));

  SECTION("an output that would replace an input is refused before anything is written") {
    // --btf k1 --btf k2 -o . : each output would be its source.
    fs::create_directories(dir.file("flat"));
    fs::copy_file(core_target("moved"), dir.file("flat/k1.o"));
    fs::copy_file(core_target("missing"), dir.file("flat/k2.o"));
    expect_refused(args(dir.file("flat"), {dir.file("flat/k1.o"), dir.file("flat/k2.o")}), dir.file("flat") + "/k1.o",
                   "is an input (" + dir.file("flat/k1.o") + "): refusing to overwrite it", dir.path());
    // k2's output would replace k1, spelt another way (a hard link): refused before k1 is read.
    fs::create_directories(dir.file("other"));
    fs::create_hard_link(dir.file("flat/k1.o"), dir.file("other/k2.o"));
    expect_refused(args(dir.file("other"), {dir.file("flat/k1.o"), dir.file("flat/k2.o")}), dir.file("other") + "/k2.o",
                   "is an input (" + dir.file("flat/k1.o") + ")", dir.path());
    // An object.
    fs::create_directories(dir.file("objs"));
    fs::copy_file(test_object("core_types"), dir.file("objs/k1.o"));
    expect_refused({"minimize", "--btf", dir.file("flat/k1.o"), "--btf", dir.file("flat/k2.o"), "-o", dir.file("objs"),
                    dir.file("objs/k1.o")},
                   dir.file("objs") + "/k1.o", "is an input (" + dir.file("objs/k1.o") + ")", dir.path());
  }
  SECTION("an archive member named to climb out of DIR is refused") {
    const std::string evil = dir.file("evil");
    fs::create_directories(evil + "/sub");
    write_file(dir.file("escape.btf"), raw_btf(core_target("moved")));
    // -P: GNU tar keeps the leading ../ it would otherwise strip.
    const RunResult tar = run({"tar", "-P", "-C", evil + "/sub", "-cJf", evil + "/sub/x.btf.tar.xz", "../../escape.btf"});
    REQUIRE(tar.status == 0);
    const RunResult r = btfslim(args(dir.file("evil-out"), {evil}));
    INFO(r.out << r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("btfslim: " + evil + "/sub/x.btf.tar.xz: member ../../escape.btf would be written outside"));
    CHECK(files_under(dir.file("evil-out")).empty());
    CHECK(read_file(dir.file("escape.btf")) == raw_btf(core_target("moved")));  // where it would have gone
  }
}

// ---- the progress bar ----

TEST_CASE("minimize batch: a progress bar only on a terminal", "[minimize-batch]") {
  // Captured stderr is a pipe: no bar, no control characters.
  const BatchRun& b = whole_batch(2);
  CHECK(b.run.err.find('\r') == std::string::npos);
  CHECK(b.run.err.find('\x1b') == std::string::npos);
  CHECK(b.run.out.find('\r') == std::string::npos);

  // In a pseudo-terminal (script(1)), the bar is drawn and finishes full.
  if (!have("script")) return skip("no script(1): the progress bar on a terminal is not tested");
  TempDir dir;
  std::string cmd = btfslim_path();
  for (const std::string& a : batch_args(dir.file("out"), {"--jobs", "1"})) cmd += " '" + a + "'";
  const RunResult r = run({"script", "-qec", cmd, "/dev/null"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("\r[") && Contains("] 4/4 sources") && Contains("\r\x1b[K"));
  CHECK(files_under(dir.file("out")) == b.files);
}

}  // namespace
}  // namespace btfslim::test
