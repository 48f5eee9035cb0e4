// What a BPF object's .BTF.ext names in its .BTF ([btf-ext]): `measure` gives those strings rows of
// their own instead of calling them unreferenced, and `dedup` keeps them and removes a type only where
// libbpf's linker, which rewrites .BTF.ext with the types (bpftool gen object), removes it too. Held to
// a reader of .BTF.ext written here (llvm-objcopy cuts the section out) and to the linker, on the test
// build's objects and on the real corpus (../shared/corpus, or $BTFSLIM_TEST_CORPUS; two of its objects
// are big-endian, which the linker does not take).
#include "libbpf_oracle.h"
#include "oracles.h"
#include "process.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The corpus's objects (MANIFEST.tsv's first column), or none when it is not here.
std::vector<std::string> corpus_objects(std::string& dir) {
  dir = corpus_dir();
  std::vector<std::string> out;
  for (const CorpusEntry& e : corpus_manifest()) out.push_back(e.path);
  return out;
}

// The test build's BPF objects.
std::vector<std::string> build_objects() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(build_data_dir()))
    if (e.path().string().ends_with(".bpf.o")) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A section's bytes, cut out by llvm-objcopy (binutils' does not take every BPF object), or "" when
// the object has none.
std::string section(const TempDir& dir, const std::string& object, const std::string& name) {
  const std::string out = dir.file("section.bin");
  fs::remove(out);
  const RunResult r = run({"llvm-objcopy-19", "--dump-section", name + "=" + out, object, dir.file("copy.o")});
  INFO("llvm-objcopy: " << r.err);
  if (r.status != 0 && r.err.find("section '" + name + "' not found") != std::string::npos) return "";
  REQUIRE(r.status == 0);
  return read_file(out);
}

// The string offsets .BTF.ext names: block section names, line_info file names and lines, core_relo
// access strings. A reader of the format as uapi/linux/bpf.h and libbpf describe it, nothing shared
// with btfslim's.
std::set<std::uint32_t> ext_string_offsets(const std::string& ext) {
  REQUIRE(ext.size() >= 24);
  const bool swapped = static_cast<unsigned char>(ext[0]) == 0xeb;
  auto u32 = [&](std::size_t at) {
    REQUIRE(at + 4 <= ext.size());
    std::uint32_t v;
    std::memcpy(&v, ext.data() + at, 4);
    return swapped ? __builtin_bswap32(v) : v;
  };
  const std::uint32_t hdr_len = u32(4);
  std::set<std::uint32_t> out;
  for (const std::uint32_t field : {8u, 16u, 24u}) {
    if (field + 8 > hdr_len) continue;
    const std::size_t start = hdr_len + u32(field), end = start + u32(field + 4);
    if (start == end) continue;
    const std::uint32_t record = u32(start);
    for (std::size_t at = start + 4; at < end;) {
      out.insert(u32(at));
      const std::uint32_t count = u32(at + 4);
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::size_t r = at + 8 + std::size_t{i} * record;
        if (field == 16) out.insert({u32(r + 4), u32(r + 8)});
        if (field == 24) out.insert(u32(r + 8));
      }
      at += 8 + std::size_t{count} * record;
    }
  }
  out.erase(0);
  return out;
}

// The string offsets the types of `btf` name: their own names and their members', enumerators' and
// parameters'.
std::set<std::uint32_t> type_string_offsets(const struct btf* btf) {
  std::set<std::uint32_t> out;
  for (__u32 id = 1; id < btf__type_cnt(btf); ++id) {
    const struct btf_type* t = btf__type_by_id(btf, id);
    out.insert(t->name_off);
    const unsigned n = btf_vlen(t);
    switch (btf_kind(t)) {
      case BTF_KIND_STRUCT:
      case BTF_KIND_UNION:
        for (unsigned i = 0; i < n; ++i) out.insert(btf_members(t)[i].name_off);
        break;
      case BTF_KIND_ENUM:
        for (unsigned i = 0; i < n; ++i) out.insert(btf_enum(t)[i].name_off);
        break;
      case BTF_KIND_ENUM64:
        for (unsigned i = 0; i < n; ++i) out.insert(btf_enum64(t)[i].name_off);
        break;
      case BTF_KIND_FUNC_PROTO:
        for (unsigned i = 0; i < n; ++i) out.insert(btf_params(t)[i].name_off);
        break;
      default:
        break;
    }
  }
  out.erase(0);
  return out;
}

// Every string of a raw BTF's string section.
std::set<std::string> strings_of(const std::string& raw_btf) {
  REQUIRE(raw_btf.size() >= 24);
  const bool swapped = static_cast<unsigned char>(raw_btf[0]) == 0xeb;
  auto u32 = [&](std::size_t at) {
    std::uint32_t v;
    std::memcpy(&v, raw_btf.data() + at, 4);
    return swapped ? __builtin_bswap32(v) : v;
  };
  const std::size_t start = u32(4) + u32(16), len = u32(20);
  std::set<std::string> out;
  std::istringstream in(raw_btf.substr(start, len));
  for (std::string s; std::getline(in, s, '\0');) out.insert(s);
  return out;
}

struct Objects {
  std::vector<std::string> paths;
  bool corpus = false;
};

Objects all_objects() {
  Objects o;
  std::string dir;
  o.paths = corpus_objects(dir);
  o.corpus = !o.paths.empty();
  if (!o.corpus) skip("no object corpus in " + dir + ": only the test build's objects are used");
  for (const std::string& p : build_objects()) o.paths.push_back(p);
  return o;
}

TEST_CASE("measure attributes the strings only .BTF.ext names to .BTF.ext, exactly", "[btf-ext]") {
  const TempDir dir;
  for (const std::string& object : all_objects().paths) {
    INFO(object);
    const std::string ext = section(dir, object, ".BTF.ext");
    const RunResult r = btfslim({"measure", "--format", "json", object});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const json m = json::parse(r.out);
    if (ext.empty()) {
      CHECK(!m.contains("btf_ext_string_bytes"));
      continue;
    }
    // The strings .BTF.ext names that no type names, each whole (clang shares no suffixes).
    BtfPtr btf(btf__parse_elf(object.c_str(), nullptr));
    REQUIRE(btf != nullptr);
    const std::set<std::uint32_t> typed = type_string_offsets(btf.get());
    std::uint64_t only_ext = 0;
    for (const std::uint32_t off : ext_string_offsets(ext))
      if (!typed.contains(off)) only_ext += std::strlen(btf__str_by_offset(btf.get(), off)) + 1;
    const json& e = m.at("btf_ext_string_bytes");
    const std::uint64_t attributed = e.at("section_names").get<std::uint64_t>() + e.at("line_info").get<std::uint64_t>() +
                                     e.at("core_access_strings").get<std::uint64_t>();
    CHECK(attributed == only_ext);
    CHECK(m.at("referenced_string_bytes").get<std::uint64_t>() + attributed +
              m.at("unreferenced_string_bytes").get<std::uint64_t>() ==
          m.at("string_bytes").get<std::uint64_t>());
    // The table says so in rows of their own, and its rows still add up to the file.
    const std::string table = ours({"measure", "--by", "kind", "--format", "csv", object});
    std::uint64_t rows = 0, total = 0;
    std::istringstream lines(table);
    std::string line;
    std::getline(lines, line);  // the column names
    while (std::getline(lines, line)) {
      const std::uint64_t bytes = std::stoull(line.substr(line.rfind(',') + 1));
      (line.starts_with("TOTAL,") ? total : rows) += bytes;
    }
    CHECK(rows == total);
    if (e.at("line_info").get<std::uint64_t>() > 0) CHECK(table.find("[.BTF.ext line info],") != std::string::npos);
  }
}

TEST_CASE("dedup keeps what .BTF.ext names and removes only what libbpf's linker removes", "[btf-ext]") {
  const TempDir dir;
  const Objects objects = all_objects();
  std::size_t passed = 0, compared = 0;
  for (const std::string& object : objects.paths) {
    INFO(object);
    const std::string ext = section(dir, object, ".BTF.ext");
    const std::string out = dir.file("out.btf");
    const RunResult r = btfslim({"dedup", "--format", "json", object, "-o", out});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const json d = json::parse(r.out);
    CHECK(d.at("btf_ext").is_null() == ext.empty());  // every key always there, null where it does not apply
    // Every string .BTF.ext names is in the output.
    if (!ext.empty()) {
      BtfPtr btf(btf__parse_elf(object.c_str(), nullptr));
      REQUIRE(btf != nullptr);
      const std::set<std::string> kept = strings_of(read_file(out));
      for (const std::uint32_t off : ext_string_offsets(ext)) {
        INFO("string at " << off);
        CHECK(kept.contains(btf__str_by_offset(btf.get(), off)));
      }
    }
    // What is removed, libbpf's linker removes as well; what it leaves passes --check.
    const std::string linked = dir.file("linked.o");
    fs::remove(linked);
    const RunResult link = run({bpftool_program(), "gen", "object", linked, object});
    const RunResult check = btfslim({"dedup", "--check", object});
    CHECK((check.status == 0) == (d.at("removed_count") == 0));
    passed += check.status == 0;
    if (link.status != 0) {
      // libbpf 1.1.2's linker takes objects of the host's byte order only.
      CHECK(link.err.find("unsupported byte order") != std::string::npos);
      continue;
    }
    ++compared;
    BtfPtr before(btf__parse_elf(object.c_str(), nullptr)), after(btf__parse_elf(linked.c_str(), nullptr));
    REQUIRE((before && after));
    CHECK(d.at("removed_count") == btf__type_cnt(before.get()) - btf__type_cnt(after.get()));
    const RunResult again = btfslim({"dedup", "--check", linked});
    INFO(again.out);
    CHECK(again.status == 0);
  }
  INFO(passed << " of " << objects.paths.size() << " objects pass dedup --check as they are");
  CHECK(compared + (objects.corpus ? 2 : 0) == objects.paths.size());
}

}  // namespace
}  // namespace btfslim::test
