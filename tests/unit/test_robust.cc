// That no input, however broken, gets past Btf::parse as anything but an InputError or a model every
// reader can walk.
//
// The robustness cases parse copies sized exactly to the input, so that under ASan a read one byte past
// what the header promises is a report, not luck. They cut every fixture at every byte, mutate them
// (and the ELF headers of two real objects) thousands of times from a fixed seed (the same cases on
// every run, so a failure reproduces), check a message for each way a header or record can be wrong,
// and walk reference loops, which are legal to encode. Whatever parses is read the way the commands
// read it: both dumps, the footprint, the reference graph and its dominators. A handful of mutated files
// also go through the binary, which must say one line and exit 2.

#include "btf_bytes.h"
#include "elf_image.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include "btfslim/btf.h"
#include "btfslim/dump.h"
#include "btfslim/error.h"
#include "btfslim/footprint.h"
#include "btfslim/input.h"
#include "btfslim/output.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

// "test.btf: problem" on one line.
bool well_formed(const std::string& error, const std::string& name = kName) {
  const std::string prefix = name + ": ";
  return error.starts_with(prefix) && error.size() > prefix.size() && error.find('\n') == std::string::npos;
}

// One fixture to mutate: its bytes and, for split BTF, its parsed base.
struct Subject {
  std::string label;
  std::string bytes;
  std::shared_ptr<const Btf> base;
};

std::vector<Subject> subjects() {
  const SplitPair split = split_btf();
  const SplitPair split_be = split_btf(true);
  return {
      {"small_btf", small_btf(), nullptr},
      {"all_kinds_btf", all_kinds_btf(), nullptr},
      {"all_kinds_btf big-endian", all_kinds_btf(true), nullptr},
      {"split_btf", split.split, parse(split.base, nullptr, "base.btf")},
      {"split_btf big-endian", split_be.split, parse(split_be.base, nullptr, "base.btf")},
  };
}

int devnull() {
  static const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  return fd;
}

// Reads everything a command would in process: the raw and JSON dumps, the footprint, every name.
// (C is printed by libbpf, whose crashes are judged in a child process: see c_dump_status.) Returns what
// is inconsistent, or "".
std::string walk(const Btf& btf) {
  std::ostringstream bad;
  {
    OutputBuffer out(devnull(), "/dev/null");
    dump_raw(btf, {}, out);
    dump_json(btf, {}, out);
    out.flush();
  }
  // Every name a record holds reads as a string inside the blob (under ASan, byte by byte).
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id)
    for_each_name_ref(btf.type(id), [&](std::uint32_t off) { (void)btf.str(off).size(); });

  const FileFootprint f = measure_file(btf);
  std::uint64_t records = 0;
  for (const auto& k : f.kinds) records += k.record_bytes;
  if (f.header_bytes + f.type_bytes + f.string_bytes + f.gap_bytes != f.file_bytes)
    bad << "footprint parts do not add up to " << f.file_bytes << "; ";
  if (f.referenced_string_bytes + f.unreferenced_string_bytes != f.string_bytes)
    bad << "string bytes " << f.referenced_string_bytes << " + " << f.unreferenced_string_bytes
        << " != " << f.string_bytes << "; ";
  if (records != f.type_bytes) bad << "records " << records << " != type_len " << f.type_bytes << "; ";

  // What `measure` builds beyond the per-kind roll-up: the reference graph, its dominators, retained
  // bytes, and a closure from every node (each walks references, so a loop must not trap them).
  const Footprint fp(btf);
  if (fp.graph.node_count() != btf.own_count()) bad << "graph has " << fp.graph.node_count() << " nodes; ";
  if (fp.dominators.preorder.size() != btf.own_count()) bad << "dominator preorder misses nodes; ";
  std::vector<std::uint32_t> all(fp.graph.node_count());
  std::iota(all.begin(), all.end(), 0u);
  (void)closure_sizes(fp.graph, all, fp.own);
  return bad.str();
}

// Fails the test with the first few problems found by a loop, rather than one assertion per case.
class Problems {
 public:
  void add(const std::string& what) {
    if (list_.size() < 10) list_.push_back(what);
    ++count_;
  }
  std::size_t count() const { return count_; }
  void check() const {
    std::ostringstream all;
    for (const auto& p : list_) all << "\n  " << p;
    INFO(count_ << " problems:" << all.str());
    CHECK(count_ == 0);
  }

 private:
  std::vector<std::string> list_;
  std::size_t count_ = 0;
};

// Judges one outcome: an InputError with a proper line, or a model that can be walked.
void judge(const Outcome& o, const std::string& label, Problems& problems, std::size_t& parsed) {
  // A crash takes the whole test program down before Problems can name the case: this names it.
  if (std::getenv("BTFSLIM_TEST_TRACE")) std::fprintf(stderr, "judging %s\n", label.c_str());
  if (o.btf) {
    ++parsed;
    if (const std::string bad = walk(*o.btf); !bad.empty()) problems.add(label + ": " + bad);
  } else if (o.foreign || !well_formed(o.error)) {
    problems.add(label + ": bad error '" + o.error + "'");
  }
}

TEST_CASE("every truncation is an error, only the full length parses", "[robust]") {
  Problems problems;
  for (const Subject& s : subjects()) {
    for (std::size_t len = 0; len <= s.bytes.size(); ++len) {
      const Outcome o = try_parse(s.bytes.substr(0, len), s.base);
      const std::string label = s.label + " cut at " + std::to_string(len) + "/" + std::to_string(s.bytes.size());
      if (len < s.bytes.size() && o.btf) problems.add(label + ": parsed");
      if (len == s.bytes.size() && !o.btf) problems.add(label + ": " + o.error);
      std::size_t parsed = 0;
      judge(o, label, problems, parsed);
    }
  }
  problems.check();
}

// One to four edits of `bytes` from `rng`: bit flips, random bytes, random and edge-case u32s (in either
// byte order) at 4-aligned offsets. `how` records them, to name a failing case.
std::string mutate(std::string bytes, std::mt19937& rng, std::ostringstream& how) {
  static constexpr std::uint32_t kEdges[] = {0, 1, 2, 3, 4, 12, 24, 0x7f, 0x80, 0xff, 0xffff, 0x10000,
                                             0x13000000, 0x19000000, 0x7fffffff, 0x80000000, 0xfffffffe,
                                             0xffffffff};
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(below(4));
  for (int e = 0; e < edits; ++e) {
    // A quarter of the edits hit the 24-byte header, where one change moves whole sections.
    const std::size_t span = below(4) == 0 ? kHeaderSize : bytes.size();
    const std::size_t at = below(span);
    const std::size_t aligned = at & ~std::size_t{3};
    switch (below(4)) {
      case 0:
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << below(8)));
        how << " flip@" << at;
        break;
      case 1:
        bytes[at] = static_cast<char>(rng());
        how << " byte@" << at;
        break;
      case 2:
        put_u32(bytes, aligned, rng());
        how << " u32@" << aligned;
        break;
      default: {
        std::uint32_t v = kEdges[below(std::size(kEdges))];
        if (below(2)) v = __builtin_bswap32(v);
        put_u32(bytes, aligned, v);
        how << " edge@" << aligned;
        break;
      }
    }
  }
  return bytes;
}

TEST_CASE("random mutations: an InputError or a model every reader can walk", "[robust]") {
  constexpr int kRoundsPerSubject = 3000;
  std::mt19937 rng(1);
  Problems problems;
  std::size_t total = 0, parsed = 0;
  for (const Subject& s : subjects()) {
    for (int round = 0; round < kRoundsPerSubject; ++round) {
      std::ostringstream how;
      const std::string m = mutate(s.bytes, rng, how);
      ++total;
      judge(try_parse(m, s.base), s.label + " round " + std::to_string(round) + how.str(), problems, parsed);
    }
  }
  INFO(parsed << " of " << total << " mutations parsed");
  CHECK(total >= 10000);
  // The loop must exercise both ends: models to walk and errors to judge.
  CHECK(parsed > total / 20);
  CHECK(parsed < total);
  problems.check();
}

// `dump -f c` of a parsed BTF in a child process, so that a crash or hang in libbpf is a result rather
// than the end of the test program: 0 printed, 2 refused with a proper line, 3 refused with a bad line,
// 128 + n killed by signal n (SIGALRM after `seconds`: a hang; under ASan a crash exits 1 after its
// report instead). Standalone BTF only: libbpf reads split BTF again from its path, which an in-memory
// blob does not have.
int c_dump_status(const Btf& btf, unsigned seconds = 5) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(seconds);
    int status = 0;
    try {
      OutputBuffer out(devnull(), "/dev/null");
      dump_c(btf, {}, out);
      out.flush();
    } catch (const InputError& e) {
      status = well_formed(e.what(), btf.name()) ? 2 : 3;
    }
    ::_exit(status);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// libbpf's btf_dump trusts that its input passed the kernel's checks; src/btf/c_check.cc refuses what it
// cannot print. Mutants find what that check misses. Each case stops at a few problems, so that hangs
// (a few seconds each) cannot make it slow.
TEST_CASE("dump -f c on random mutations: C or one line, never a crash", "[robust]") {
  constexpr int kRoundsPerSubject = 400;
  std::mt19937 rng(2);
  Problems problems;
  std::size_t parsed = 0;
  const std::vector<Subject> all = subjects();
  for (const Subject& s : all) {
    if (s.base) continue;
    for (int round = 0; round < kRoundsPerSubject && problems.count() < 5; ++round) {
      std::ostringstream how;
      const std::string m = mutate(s.bytes, rng, how);
      const Outcome o = try_parse(m);
      if (!o.btf) continue;
      ++parsed;
      if (const int status = c_dump_status(*o.btf, 3); status != 0 && status != 2)
        problems.add(s.label + " round " + std::to_string(round) + how.str() + ": dump -f c status " +
                     std::to_string(status) + (status == 128 + SIGALRM ? " (hang)" : ""));
    }
  }
  INFO(parsed << " mutants parsed");
  CHECK(parsed > 100);
  problems.check();
}

TEST_CASE("ELF mutations: an InputError or a model every reader can walk", "[robust]") {
  constexpr int kRoundsPerFile = 300;
  std::mt19937 rng(1);
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  TempDir dir;
  const std::string path = dir.file("mutant.o");
  Problems problems;
  std::size_t total = 0, parsed = 0;
  for (const char* name : {"pahole_types.o", "minimal.bpf.o"}) {
    const std::string elf = read_file(build_data_dir() + "/" + name);
    REQUIRE(elf.size() > 64);
    REQUIRE(elf.substr(0, 6) == "\x7f" "ELF\x02\x01");  // ELF64 little-endian: the offsets below
    const std::uint64_t shoff = get_u32(elf, 0x28) | (std::uint64_t{get_u32(elf, 0x2c)} << 32);
    const std::size_t shnum = static_cast<std::uint8_t>(elf[0x3c]) | (static_cast<std::uint8_t>(elf[0x3d]) << 8);
    REQUIRE(shoff + shnum * 64 <= elf.size());
    for (int round = 0; round < kRoundsPerFile; ++round) {
      std::string m = elf;
      std::ostringstream how;
      const int edits = 1 + static_cast<int>(below(3));
      for (int e = 0; e < edits; ++e) {
        // The ELF header and section headers: what libelf and our bounds checks read.
        const std::size_t at = below(3) == 0 ? below(64) : shoff + below(shnum * 64);
        const std::size_t aligned = at & ~std::size_t{7};
        switch (below(3)) {
          case 0:
            m[at] = static_cast<char>(m[at] ^ (1 << below(8)));
            how << " flip@" << at;
            break;
          case 1:
            m[at] = static_cast<char>(rng());
            how << " byte@" << at;
            break;
          default: {
            const std::uint64_t edge[] = {0, 1, m.size() - 1, m.size(), m.size() + 1, ~std::uint64_t{0},
                                          std::uint64_t{1} << 63, std::uint64_t{rng()} << 32 | rng()};
            const std::uint64_t v = edge[below(std::size(edge))];
            put_u32(m, aligned, static_cast<std::uint32_t>(v));
            put_u32(m, aligned + 4, static_cast<std::uint32_t>(v >> 32));
            how << " u64@" << aligned;
            break;
          }
        }
      }
      if (below(10) == 0) {
        m.resize(below(m.size()));
        how << " cut@" << m.size();
      }
      write_file(path, m);
      ++total;
      const std::string label = std::string(name) + " round " + std::to_string(round) + how.str();
      try {
        const auto btf = load_btf(path);
        ++parsed;
        if (const std::string bad = walk(*btf); !bad.empty()) problems.add(label + ": " + bad);
      } catch (const InputError& e) {
        const std::string error = e.what();
        if (!error.starts_with(path + ": ") || error.find('\n') != std::string::npos)
          problems.add(label + ": bad error '" + error + "'");
      } catch (const std::exception& e) {
        problems.add(label + ": not an InputError: " + e.what());
      }
    }
  }
  INFO(parsed << " of " << total << " ELF mutations parsed");
  CHECK(parsed > total / 20);
  CHECK(parsed < total);
  problems.check();
}

// small_btf() with one u32 replaced, and where its records are.
struct Small {
  std::string bytes = small_btf();
  std::shared_ptr<const Btf> btf = parse(bytes);
  std::size_t record(TypeId id) const {
    return btf->header().hdr_len + btf->header().type_off + btf->type_offset(id);
  }
  std::size_t strings() const { return btf->header().hdr_len + btf->header().str_off; }
  std::string with_u32(std::size_t off, std::uint32_t v) const {
    std::string m = bytes;
    put_u32(m, off, v);
    return m;
  }
};

std::string error_of(const std::string& bytes, std::shared_ptr<const Btf> base = nullptr) {
  const Outcome o = try_parse(bytes, std::move(base));
  INFO("parsed: " << (o.btf ? "yes" : "no") << ", error: " << o.error);
  CHECK_FALSE(o.btf);
  CHECK_FALSE(o.foreign);
  CHECK(well_formed(o.error));
  return o.error;
}

TEST_CASE("specific corruptions name what is wrong", "[robust]") {
  const Small s;
  const Header h = s.btf->header();
  // small_btf(): [1] INT 'int', [2] STRUCT 'pair' (2 members), [3] PTR, [4] TYPEDEF, [5] ENUM.
  REQUIRE(s.btf->own_count() == 5);
  REQUIRE(s.btf->type(2).kind() == Kind::Struct);
  REQUIRE(s.btf->type(3).kind() == Kind::Ptr);

  SECTION("sizes below a header") {
    CHECK_THAT(error_of(""), Contains("empty file"));
    CHECK_THAT(error_of(s.bytes.substr(0, 3)), Contains("too short for a BTF header"));
    CHECK_THAT(error_of(s.bytes.substr(0, 7)), Contains("too short for a BTF header"));
  }
  SECTION("wrong magic") {
    std::string m = s.bytes;
    m[0] = 0x12;
    m[1] = 0x34;
    CHECK_THAT(error_of(m), Contains("bad magic 0x1234"));
  }
  SECTION("version 2") {
    std::string m = s.bytes;
    m[2] = 2;
    CHECK_THAT(error_of(m), Contains("unsupported BTF version 2"));
  }
  SECTION("hdr_len 8") {
    CHECK_THAT(error_of(s.with_u32(4, 8)), Contains("header length 8 is smaller than the 24 bytes"));
  }
  SECTION("hdr_len beyond the file") {
    const auto len = static_cast<std::uint32_t>(s.bytes.size() + 1);
    CHECK_THAT(error_of(s.with_u32(4, len)),
               Contains(fmt::format("header length {} exceeds the {} bytes", len, s.bytes.size())));
    CHECK_THAT(error_of(s.with_u32(4, 0xffffffff)), Contains("header length 4294967295 exceeds"));
  }
  SECTION("type section past the end") {
    CHECK_THAT(error_of(s.with_u32(12, 0xffffffff)), Contains("type section [24, 4294967319) ends past"));
    CHECK_THAT(error_of(s.with_u32(8, 0xfffffff0)), Contains("type section") && Contains("ends past"));
  }
  SECTION("string section past the end") {
    CHECK_THAT(error_of(s.with_u32(20, h.str_len + 1)),
               Contains(fmt::format("string section [{}, {}) ends past the {} bytes available", s.strings(),
                                    s.strings() + h.str_len + 1, s.bytes.size())));
    CHECK_THAT(error_of(s.with_u32(16, 0xffffffff)), Contains("string section") && Contains("ends past"));
  }
  SECTION("sections overlapping") {
    CHECK_THAT(error_of(s.with_u32(16, h.type_len - 4)), Contains("overlap"));
    CHECK_THAT(error_of(s.with_u32(16, 0)), Contains("type section [24, ") && Contains("overlap"));
  }
  SECTION("string section not ending in NUL") {
    std::string m = s.bytes;
    m.back() = 'x';
    CHECK_THAT(error_of(m), Contains("string section does not end in a NUL byte"));
  }
  SECTION("string section empty or not starting with the empty string") {
    CHECK_THAT(error_of(s.with_u32(20, 0)), Contains("string section is empty"));
    std::string m = s.bytes;
    m[s.strings()] = 'x';
    CHECK_THAT(error_of(m), Contains("pass --base"));
  }
  SECTION("unknown kind names the type id") {
    CHECK_THAT(error_of(s.with_u32(s.record(3) + 4, 25u << 24)), Contains("type [3] has unknown kind 25"));
    CHECK_THAT(error_of(s.with_u32(s.record(3) + 4, 0)), Contains("type [3] has unknown kind 0"));
    CHECK_THAT(error_of(s.with_u32(s.record(1) + 4, 31u << 24)), Contains("type [1] has unknown kind 31"));
  }
  SECTION("a member type id out of range") {
    CHECK_THAT(error_of(s.with_u32(s.record(2) + 12 + 12 + 4, 99)),
               Contains("type [2] STRUCT: a member refers to type 99, but the last type is [5]"));
    CHECK_THAT(error_of(s.with_u32(s.record(3) + 8, 6)), Contains("type [3] PTR: its type refers to type 6"));
  }
  SECTION("a name offset out of range") {
    CHECK_THAT(error_of(s.with_u32(s.record(1), h.str_len)),
               Contains(fmt::format("type [1] INT: name offset {} is past the end of the strings", h.str_len)));
    CHECK_THAT(error_of(s.with_u32(s.record(2) + 12, 0xffffffff)),
               Contains("type [2] STRUCT: member name offset 4294967295"));
  }
  SECTION("a vlen too large for the remaining bytes") {
    const std::uint32_t info = get_u32(s.bytes, s.record(2) + 4);
    CHECK_THAT(error_of(s.with_u32(s.record(2) + 4, (info & ~0xffffu) | 100)),
               Contains("type [2] STRUCT with vlen 100 needs 1212 bytes"));
    CHECK_THAT(error_of(s.with_u32(12, h.type_len - 4)), Contains("needs") && Contains("left"));
  }
  SECTION("split BTF: its own ids and strings start after the base's") {
    const SplitPair pair = split_btf();
    const auto base = parse(pair.base, nullptr, "base.btf");
    const auto split = parse(pair.split, base);
    const std::size_t conn = split->header().hdr_len + split->type_offset(5);
    std::string m = pair.split;
    put_u32(m, conn + 12 + 12 + 4, 7);  // member 'skb' -> [7], one past the last
    // On its base, an id past the last type means the base is not the one it was built on.
    CHECK_THAT(error_of(m, base), Contains("split BTF built on another base than base.btf (type [5] STRUCT: a member "
                                           "refers to type 7, past the last type [6]): pass the BTF it was built on "
                                           "with --base"));
    CHECK_THAT(error_of(pair.split), Contains("pass --base"));

    // A split BTF that only adds a pointer has no strings of its own: valid on its base, and without it
    // the empty string section is what gives it away.
    BtfPtr lib_base(btf__new(pair.base.data(), static_cast<__u32>(pair.base.size())));
    REQUIRE(lib_base != nullptr);
    BtfPtr lib_split(btf__new_empty_split(lib_base.get()));
    REQUIRE(btf__add_ptr(lib_split.get(), 3) == 4);
    const std::string pointer_only = raw_bytes(lib_split.get());
    const auto parsed = parse(pointer_only, base);
    CHECK(parsed->header().str_len == 0);
    CHECK(parsed->end_id() == 5);
    CHECK_THAT(error_of(pointer_only), Contains("string section is empty") && Contains("pass --base"));
  }
}

// Reference loops: legal to encode, and nothing that reads them may go round forever.
std::string loop_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_typedef(t, "loop_t", 2) == 1);      // [1] typedef -> [2]
  REQUIRE(btf__add_const(t, 1) == 2);                  // [2] const -> [1]
  REQUIRE(btf__add_ptr(t, 3) == 3);                    // [3] ptr -> itself
  REQUIRE(btf__add_struct(t, "self", 8) == 4);         // [4] struct self { struct self s; }
  REQUIRE(btf__add_field(t, "s", 4, 0, 0) == 0);
  REQUIRE(btf__add_array(t, 7, 5, 2) == 5);            // [5] array of itself
  REQUIRE(btf__add_volatile(t, 6) == 6);               // [6] volatile -> itself
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 7);
  return raw_bytes(t);
}

// all_kinds_btf() with `count` more INT records after its own: each of its records then has that many
// bytes after it, for a reader that treats the last records of a section otherwise than the rest.
std::string with_records_after(const std::string& bytes, bool big_endian, std::uint32_t count) {
  auto order = [&](std::uint32_t v) { return big_endian ? __builtin_bswap32(v) : v; };
  const std::uint32_t hdr_len = order(get_u32(bytes, 4)), type_off = order(get_u32(bytes, 8)),
                      type_len = order(get_u32(bytes, 12)), str_off = order(get_u32(bytes, 16));
  REQUIRE(type_off == 0);
  REQUIRE(str_off == type_len);
  std::string pad(std::size_t{count} * 16, '\0');
  for (std::uint32_t i = 0; i < count; ++i) {
    put_u32(pad, 16 * i + 4, order(1u << 24));  // INT, no name
    put_u32(pad, 16 * i + 8, order(4));
    put_u32(pad, 16 * i + 12, order(32));
  }
  std::string out = bytes;
  out.insert(hdr_len + type_len, pad);
  put_u32(out, 12, order(type_len + static_cast<std::uint32_t>(pad.size())));
  put_u32(out, 16, order(str_off + static_cast<std::uint32_t>(pad.size())));
  return out;
}

TEST_CASE("every name and type id of every kind is checked, near the section's end and far from it", "[robust]") {
  for (const bool big_endian : {false, true}) {
    for (const std::uint32_t after : {0u, 1u, 8u}) {
      const std::string bytes = with_records_after(all_kinds_btf(big_endian), big_endian, after);
      const auto btf = parse(bytes);
      std::uint32_t kinds = 0, fields = 0;
      for (TypeId id = 1; id < btf->end_id(); ++id) {
        const TypeView t = btf->type(id);
        kinds |= 1u << static_cast<unsigned>(t.kind());
        const std::size_t record = btf->header().hdr_len + btf->header().type_off + btf->type_offset(id);
        auto with = [&](std::uint32_t at, std::uint32_t v) {
          std::string m = bytes;
          put_u32(m, record + at, big_endian ? __builtin_bswap32(v) : v);
          return m;
        };
        INFO((big_endian ? "big" : "little") << "-endian, " << after << " records after, type [" << id << "] "
                                             << kind_name(t.kind()));
        for_each_field(
            t.info(),
            [&](std::uint32_t at, NameRole) {
              ++fields;
              INFO("name at " << at);
              CHECK_THAT(error_of(with(at, btf->string_end())), Contains(fmt::format("[{}]", id)) && Contains("name offset"));
            },
            [&](std::uint32_t at, RefRole) {
              ++fields;
              INFO("type id at " << at);
              CHECK_THAT(error_of(with(at, btf->end_id())), Contains(fmt::format("[{}]", id)) && Contains("refers to type"));
            });
      }
      CHECK(kinds == ((2u << kMaxKind) - 2));  // every kind, so every mask
      CHECK(fields > 50);
    }
  }
}

TEST_CASE("reference loops parse, dump and measure", "[robust]") {
  const std::string bytes = loop_btf();
  const auto btf = parse(bytes);
  REQUIRE(btf->own_count() == 7);
  CHECK(btf->type(1).ref() == 2);
  CHECK(btf->type(2).ref() == 1);
  CHECK(btf->type(3).ref() == 3);
  CHECK(walk(*btf).empty());
  const std::string dump = raw_dump(*btf);
  CHECK_THAT(dump, StartsWith("[1] TYPEDEF 'loop_t' type_id=2\n[2] CONST '(anon)' type_id=1\n"
                              "[3] PTR '(anon)' type_id=3\n"));

  // The binary too, in every format that reads types.
  TempDir dir;
  const std::string path = dir.file("loop.btf");
  write_file(path, bytes);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"dump", path}, {"dump", "-f", "json", path}, {"measure", path},
        {"measure", "-f", "json", path}, {"measure", "-f", "csv", path}, {"measure", "--by", "type", "--all", path},
        {"measure", "-f", "json", "--all", "--closure", path}, {"measure", "--by", "prefix", path},
        {"measure", "--type", "loop_t", path}, {"measure", "--type", "3", path},
        {"measure", "--without", "typedef", path}, {"measure", "--svg", dir.file("loop.svg"), path}}) {
    const RunResult r = btfslim(args);
    INFO(fmt::format("btfslim {}: status {}, stderr: {}", fmt::join(args, " "), r.status, r.err));
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK_FALSE(r.out.empty());
  }
}

// One shape libbpf cannot print after [1] int, so that each is judged apart.
std::string unprintable_btf(const std::string& which) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 1);
  if (which == "typedef-const") {
    REQUIRE(btf__add_typedef(t, "loop_t", 3) == 2);
    REQUIRE(btf__add_const(t, 2) == 3);
  } else if (which == "ptr") {
    REQUIRE(btf__add_ptr(t, 2) == 2);
  } else if (which == "struct") {
    REQUIRE(btf__add_struct(t, "self", 8) == 2);
    REQUIRE(btf__add_field(t, "s", 2, 0, 0) == 0);
  } else if (which == "array") {
    REQUIRE(btf__add_array(t, 1, 2, 2) == 2);
  } else if (which == "function-pointer") {  // int (*)(int (*)(int (*)(...
    REQUIRE(btf__add_func_proto(t, 1) == 2);
    REQUIRE(btf__add_func_param(t, "f", 3) == 0);
    REQUIRE(btf__add_ptr(t, 2) == 3);
  } else if (which == "member-var" || which == "member-func-proto") {  // no loop: a member C cannot have
    if (which == "member-var")
      REQUIRE(btf__add_var(t, "v", BTF_VAR_STATIC, 1) == 2);
    else
      REQUIRE(btf__add_func_proto(t, 1) == 2);
    REQUIRE(btf__add_struct(t, "s", 8) == 3);
    REQUIRE(btf__add_field(t, "m", 2, 0, 0) == 0);
  } else {
    REQUIRE(btf__add_volatile(t, 2) == 2);
  }
  return raw_bytes(t);
}

// libbpf's btf_dump (libbpf 1.1.2, and bpftool with it) trusts that its input passed the kernel's checks:
// it recurses without end on loops that do not pass through a struct or union, divides by a zero
// alignment for a member of a kind that has no size (VAR, FUNC_PROTO), and stops with ELOOP after
// printing the header on a struct that contains itself. Our model only checks ranges, so `dump -f c`
// refuses such BTF before handing it to libbpf (src/btf/c_check.cc); each run is bounded by timeout(1)
// so that a hang fails instead of stalling the suite.
TEST_CASE("dump -f c refuses what libbpf cannot print: one line, exit 2", "[robust]") {
  TempDir dir;
  for (const std::string which :
       {"typedef-const", "ptr", "struct", "array", "volatile", "function-pointer", "member-var", "member-func-proto"}) {
    const std::string path = dir.file(which + ".btf");
    write_file(path, unprintable_btf(which));
    const RunResult r = run({"timeout", "5", btfslim_path(), "dump", "-f", "c", path});
    INFO(which << ": dump -f c: status " << r.status << " (124: timed out, 136: SIGFPE, 139: SIGSEGV), stdout "
               << r.out.size() << " bytes, stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, StartsWith("btfslim: " + path + ": cannot print as C: "));
  }
}

// Shapes the mutants found that pass the C check but not libbpf's layout of a struct: an INT of size 0
// and a member of type void (alignment 0: SIGFPE), a member at bit 2^31 (padding printed for ever), a
// member ending past its struct (an array of 2^31 bytes there wraps libbpf's int offsets: 170 MB of
// padding, the hang of round 386 in the mutation test below).
TEST_CASE("dump -f c on members libbpf cannot lay out: one line, never a crash", "[robust]") {
  const Small s;
  const std::size_t pair = s.record(2);  // [2] STRUCT 'pair' { int a; int b; }
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {"INT of size 0", s.with_u32(s.record(1) + 8, 0)},
      {"member of type void", s.with_u32(pair + 12 + 12 + 4, 0)},
      {"member at bit 2^31 - 1", s.with_u32(pair + 12 + 8, 0x7fffffff)},
      {"member ending past its struct", s.with_u32(pair + 8, 4)},
  };
  for (const auto& [what, bytes] : shapes) {
    const auto btf = parse(bytes);
    const int status = c_dump_status(*btf, 3);
    INFO(what << ": dump -f c status " << status << " (2: refused; 136: SIGFPE, 1 under ASan; 142: hang)");
    CHECK(status == 2);
  }
}

TEST_CASE("the binary on mutated files: one line, exit 2, nothing on stdout", "[robust]") {
  TempDir dir;
  std::mt19937 rng(1);
  const std::vector<Subject> all = subjects();
  int rejected = 0, accepted = 0;
  for (int i = 0; i < 400 && (rejected < 12 || accepted < 4); ++i) {
    const Subject& s = all[i % 3];  // the standalone subjects: the binary reads them without --base
    std::string m = s.bytes;
    put_u32(m, (rng() % m.size()) & ~std::size_t{3}, rng());
    const bool parses = try_parse(m).btf != nullptr;
    if (parses ? accepted >= 4 : rejected >= 12) continue;
    (parses ? accepted : rejected)++;
    const std::string path = dir.file("mutant" + std::to_string(i) + ".btf");
    write_file(path, m);
    for (const char* command : {"dump", "measure"}) {
      const RunResult r = btfslim({command, path});
      INFO(command << " " << s.label << " mutant " << i << ": status " << r.status << ", stderr: " << r.err);
      if (parses) {
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        continue;
      }
      CHECK(r.status == 2);
      CHECK(r.out.empty());
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK_THAT(r.err, StartsWith("btfslim: " + path + ": "));
    }
  }
  CHECK(rejected == 12);
  CHECK(accepted == 4);
}

}  // namespace
}  // namespace btfslim::test
