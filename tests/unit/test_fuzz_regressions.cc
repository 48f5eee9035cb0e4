// What the libFuzzer targets (fuzz/) found, one case per finding, each input built here with libbpf's
// btf__add_* as the smallest shape of what the fuzzer wrote ([robust]).
//
// A finding is a crash, so each case runs the code that crashed in a child process: a crash or hang
// is then a failed check naming the signal, not the end of the test program.
//
// 1. fuzz_raw and fuzz_split, `dump -f c`: SIGFPE in libbpf's btf_dump on a struct whose member ends,
//    through typedefs, modifiers or arrays, at a type without size: void (`volatile void m;`, what
//    fuzz_split found), a FWD (`struct later m;`, what fuzz_raw found) or a FUNC_PROTO (a typedef of a
//    function type). libbpf's btf__align_of() is 0 for such a member, so the struct's alignment is 0,
//    and btf_dump_emit_bit_padding() computes roundup(off, align * 8) for the padding at the struct's
//    end: a division by zero. check_c_printable() only refused a member whose own type is void, FUNC,
//    VAR, DATASEC, DECL_TAG or FUNC_PROTO, not one that reaches those through a typedef or modifier, and
//    never a FWD.
// 2. fuzz_budget: a table header whose first key begins with neither a key character nor a quote
//    ("[[;udget]]", "[]", "[[[1]]]", "[&") broke an assumption toml++ 3.3 makes (its assertion in a debug
//    build, undefined behaviour in a release one): the budget file's own scan refuses it first.
// 3. fuzz_diff: a DECL_TAG whose component index is INT32_MAX made diff's key `index + 1` overflow an
//    int (UBSan).
// 4. fuzz_libbpf: a FWD whose type field is not 0 parses (the field means nothing to our reader), but
//    libbpf walks it as a type id: btf__dedup indexed an array with it and crashed (`btfslim dedup`,
//    and any other hand-over to libbpf). Refused before libbpf sees it, as the kernel refuses it.
// 5. fuzz_libbpf: a type section at an offset that is not a multiple of 4 was read; libbpf and the
//    kernel refuse it, and now so does Btf::parse.
// 6. fuzz_compressed: 36 bytes of gzip whose trailer (ISIZE) says 914 MB made decompress allocate that
//    much up front (its buffer's first size is the trailer's, a hint); zstd's declared frame size
//    likewise. The hint is now at most what the format can inflate the input to (1032:1, 32768:1).
// 10. fuzz_budget: an array closed by a brace ("e=[}") made toml++ 3.3 call parse_value() on a value
//    terminator, which it asserts cannot happen: the process aborted in a build without NDEBUG (meson's
//    plain build type, what distributions use). toml++'s own assertions are now off in every build, as
//    in the release one, where the parser goes on to report a syntax error (the fuzzer, under ASan,
//    checks that path); the input is kept in fuzz/corpus/budget/array-closed-by-brace.
// 12. fuzz_budget: 'e= [0:["x...' then U+FE7F: toml++ takes an unquoted value up to white space, a
//    closing bracket, a comma or a comment, quotes included, and asks of each of its characters whether
//    it ends the value; for U+FE7F that question reaches __builtin_unreachable() (UBSan; a shift by 64
//    before it). The reader's own scan took the quote for a string's and let the character through;
//    it now reads an unquoted value as toml++ does and refuses any non-ASCII character in it
//    (fuzz/corpus/budget/non-ascii-in-bare-value). (Finding 11 is fuzz_core_libbpf's, in [check].)
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"
#include "text.h"

#include "btfslim/btf.h"
#include "btfslim/budget.h"
#include "btfslim/compression.h"
#include "btfslim/dedup.h"
#include "btfslim/diff.h"
#include "btfslim/dump.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/output.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <functional>
#include <memory>

// gcc says __SANITIZE_ADDRESS__; clang 14 says __has_feature(address_sanitizer).
#if defined(__has_feature)
#define BTFSLIM_HAS_FEATURE(x) __has_feature(x)
#else
#define BTFSLIM_HAS_FEATURE(x) 0
#endif

namespace btfslim::test {
namespace {

using Catch::Matchers::StartsWith;

// How `dump -f c` of one BTF ended, run in a child process: printed, refused with an InputError (its
// line), or killed (the signal; SIGALRM after 5 s is a hang). Under ASan a crash is a report and exit 1.
struct CDump {
  enum { Printed, Refused, Other } outcome = Other;
  std::string error;  // Refused: the InputError's line
  int status = 0;     // Other: exit status, or 128 + signal
};

CDump c_dump_in_child(const std::function<std::shared_ptr<const Btf>()>& load) {
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Catch's handlers would report the crash as the parent's test and print its summary: the parent
    // judges the child by its status instead.
    for (const int sig : {SIGSEGV, SIGFPE, SIGILL, SIGBUS, SIGABRT}) std::signal(sig, SIG_DFL);
    ::close(pipe_fds[0]);
    ::alarm(5);
    int status = 0;
    try {
      const auto btf = load();
      const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
      OutputBuffer out(devnull, "/dev/null");
      dump_c(*btf, {}, out);
      out.flush();
    } catch (const InputError& e) {
      const std::string line = e.what();
      (void)!::write(pipe_fds[1], line.data(), line.size());
      status = 2;
    } catch (...) {
      status = 3;
    }
    ::_exit(status);
  }
  ::close(pipe_fds[1]);
  CDump r;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0) r.error.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.outcome = r.status == 0 ? CDump::Printed : r.status == 2 ? CDump::Refused : CDump::Other;
  return r;
}

std::string describe(const CDump& d) {
  if (d.outcome == CDump::Printed) return "printed C";
  if (d.outcome == CDump::Refused) return "refused: " + d.error;
  return "status " + std::to_string(d.status) + " (" + std::to_string(128 + SIGFPE) + ": SIGFPE, " +
         std::to_string(128 + SIGALRM) + ": hang, 1: a sanitizer report)";
}

std::shared_ptr<const Btf> parse_bytes(const std::string& bytes, const std::string& name,
                                       std::shared_ptr<const Btf> base = nullptr) {
  auto owner = std::make_shared<std::string>(bytes);
  const std::span<const std::uint8_t> span(reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size());
  return Btf::parse(name, owner, span, std::move(base));
}

// [1] int, [2] the member's type chain (built by `member_type`, which returns the id to use), then
// struct 'holder' { int a; <that> m; int c; } of 16 bytes: the int at byte 8 ends at 12, so libbpf pads
// 12..16 at the struct's end, where it divides by the struct's alignment.
std::string holder_btf(const std::function<int(struct btf*)>& member_type) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 1);
  const int m = member_type(t);
  const int holder = btf__add_struct(t, "holder", 16);
  REQUIRE(holder > 0);
  REQUIRE(btf__add_field(t, "a", 1, 0, 0) == 0);
  REQUIRE(btf__add_field(t, "m", m, 32, 0) == 0);
  REQUIRE(btf__add_field(t, "c", 1, 64, 0) == 0);
  return raw_bytes(t);
}

TEST_CASE("fuzz finding 1: dump -f c on a member ending at a type without size refuses, never SIGFPE",
          "[robust]") {
  struct Shape {
    const char* what;
    std::function<int(struct btf*)> member_type;
  };
  const Shape shapes[] = {
      // fuzz_raw's crash: struct node { <anonymous FWD> next; int val; } (footprint_btf, its pointer
      // turned into a FWD).
      {"a FWD", [](struct btf* t) { return btf__add_fwd(t, "later", BTF_FWD_STRUCT); }},
      {"volatile void", [](struct btf* t) { return btf__add_volatile(t, 0); }},
      {"a typedef of const void",
       [](struct btf* t) {
         const int c = btf__add_const(t, 0);
         return btf__add_typedef(t, "void_t", c);
       }},
      {"a typedef of a function type",
       [](struct btf* t) {
         const int proto = btf__add_func_proto(t, 1);
         return btf__add_typedef(t, "handler_t", proto);
       }},
      {"an array of a FWD",
       [](struct btf* t) {
         const int fwd = btf__add_fwd(t, "later", BTF_FWD_STRUCT);
         return btf__add_array(t, 1, fwd, 1);  // index type int, elements the FWD
       }},
  };
  TempDir dir;
  for (const Shape& s : shapes) {
    const std::string path = dir.file("holder.btf");
    const std::string bytes = holder_btf(s.member_type);
    write_file(path, bytes);
    const CDump d = c_dump_in_child([&] { return parse_bytes(bytes, path); });
    INFO("a member of " << s.what << ": " << describe(d));
    CHECK(d.outcome == CDump::Refused);
    CHECK_THAT(d.error, StartsWith(path + ": cannot print as C: type [") &&
                            Catch::Matchers::Contains("] STRUCT 'holder' "));
    CHECK(d.error.find('\n') == std::string::npos);

    // The binary: the same line, exit 2, nothing printed.
    const RunResult r = run({"timeout", "5", btfslim_path(), "dump", "-f", "c", path});
    INFO("btfslim dump -f c: status " << r.status << ", stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "btfslim: " + d.error + "\n");
  }
}

// fuzz_split's crash as it was found: a module struct with a `volatile void` member, on a base.
// libbpf reads split BTF from its path, so the module is a file.
TEST_CASE("fuzz finding 1, split: dump -f c on a module member of type volatile void refuses", "[robust]") {
  const SplitPair pair = split_btf();
  BtfPtr lib_base(btf__new(pair.base.data(), static_cast<__u32>(pair.base.size())));
  REQUIRE(lib_base != nullptr);
  BtfPtr split(btf__new_empty_split(lib_base.get()));
  struct btf* s = split.get();
  REQUIRE(btf__add_volatile(s, 0) == 4);  // the base has [1] int, [2] sk_buff *, [3] struct sk_buff
  REQUIRE(btf__add_struct(s, "nf_conn", 24) == 5);
  REQUIRE(btf__add_field(s, "len", 1, 0, 0) == 0);
  REQUIRE(btf__add_field(s, "skb", 4, 64, 0) == 0);
  REQUIRE(btf__add_field(s, "mark", 1, 128, 0) == 0);
  TempDir dir;
  const std::string base_path = dir.file("base.btf");
  const std::string path = dir.file("module.btf");
  write_file(base_path, pair.base);
  write_file(path, raw_bytes(s));

  const CDump d = c_dump_in_child([&] { return load_btf_file(path, load_btf_file(base_path, nullptr)); });
  INFO(describe(d));
  CHECK(d.outcome == CDump::Refused);
  CHECK_THAT(d.error, StartsWith(path + ": cannot print as C: type [5] STRUCT 'nf_conn' "));
  CHECK(d.error.find('\n') == std::string::npos);

  const RunResult r = run({"timeout", "5", btfslim_path(), "dump", "-f", "c", "--base", base_path, path});
  INFO("btfslim dump -f c --base: status " << r.status << ", stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "btfslim: " + d.error + "\n");
}

std::shared_ptr<const Btf> parsed(const std::string& raw) {
  auto owner = std::make_shared<std::string>(raw);
  return Btf::parse("fuzz.btf", owner, {reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size()});
}

TEST_CASE("fuzz finding 2: a table header that does not begin with a key is a syntax error", "[robust]") {
  for (const char* header : {"[[;udget]]", "[]", "[[[1]]]", "[&", "[[ \x7f]]", "[["}) {
    INFO(header);
    const std::string text = std::string("[[budget]]\nname = \"a\"\ntotal = 100\n") + header + "\n";
    CHECK_THROWS_WITH(parse_budget_config(text, "b.toml"),
                      Catch::Matchers::Contains("b.toml:4") && Catch::Matchers::Contains("table header must begin with a key"));
  }
  // Still fine: blanks, quotes, dotted keys.
  CHECK(parse_budget_config("[[ budget ]]\nname = \"a\"\ntotal = 100\n", "b.toml").budgets.size() == 1);
  CHECK(parse_budget_config("[[\"budget\"]]\nname = \"a\"\ntotal = 100\n", "b.toml").budgets.size() == 1);
}

TEST_CASE("fuzz finding 12: a non-ASCII character in an unquoted value is a syntax error", "[robust]") {
  for (const char* value : {"[0:[\"xx\xef\xb9\xbfx", "0\"\xc2\xa0\"", "1979-05-27T07:32:00\xd0\x96", "tru\xe2\x80\x83" "e"}) {
    INFO(value);
    const std::string text = std::string("[[budget]]\nname = \"a\"\ntotal = ") + value + "\n";
    CHECK_THROWS_WITH(parse_budget_config(text, "b.toml"),
                      Catch::Matchers::Contains("b.toml:3") && Catch::Matchers::Contains("non-ASCII character outside a string"));
  }
  // Non-ASCII text stays fine where TOML allows it: strings and comments, after values of every kind.
  const auto config = parse_budget_config("[[budget]]  # \xd0\x96\nname = \"\xd0\x96\xef\xb9\xbf\"\ntotal = 1_000 # \xef\xb9\xbf\n"
                                          "kernel_memory = \"2 MiB\"#\xef\xb9\xbf\n",
                                          "b.toml");
  CHECK(config.budgets.size() == 1);
}

TEST_CASE("fuzz finding 10: an array closed by a brace is a syntax error", "[robust]") {
  for (const char* value : {"[}", "[1, }", "[[}]]", "{a = [}}"}) {
    INFO(value);
    const std::string text = std::string("[[budget]]\nname = \"a\"\ntotal = ") + value + "\n";
    CHECK_THROWS_WITH(parse_budget_config(text, "b.toml"),
                      Catch::Matchers::Contains("b.toml:3") && Catch::Matchers::Contains("TOML syntax error"));
  }
}

TEST_CASE("fuzz finding 3: diff of a decl tag with component index INT32_MAX", "[robust]") {
  BtfPtr b(btf__new_empty());
  const int i32 = btf__add_int(b.get(), "int", 4, BTF_INT_SIGNED);
  const int s = btf__add_struct(b.get(), "s", 4);
  REQUIRE(btf__add_field(b.get(), "x", i32, 0, 0) == 0);
  REQUIRE(btf__add_decl_tag(b.get(), "tag", s, 0x7fffffff) > 0);
  const auto btf = parsed(raw_bytes(b.get()));
  const BtfDiff d = diff_btf(*btf, *btf);
  CHECK(d.layout.empty());
}

TEST_CASE("fuzz finding 7: a diff line cut to the terminal's width ends on a whole character", "[robust]") {
  // A struct whose name is two-byte characters, resized: its line is longer than the width, and a cut
  // by bytes left the first byte of a character alone (ill-formed UTF-8 on a terminal).
  const std::string name = "s\u00df\u00df\u00df\u00df\u00df\u00df\u00df\u00df\u00df\u00df\u00df\u00df";
  auto made = [&](std::uint32_t size) {
    BtfPtr b(btf__new_empty());
    const int i32 = btf__add_int(b.get(), "int", 4, BTF_INT_SIGNED);
    REQUIRE(btf__add_struct(b.get(), name.c_str(), size) > 0);
    REQUIRE(btf__add_field(b.get(), "x", i32, 0, 0) == 0);
    return parsed(raw_bytes(b.get()));
  };
  const auto old_btf = made(4), new_btf = made(8);
  const BtfDiff d = diff_btf(*old_btf, *new_btf);
  bool cut_in_name = false;  // some width cuts the line inside the name
  for (std::size_t columns = 4; columns < 60; ++columns) {
    DiffPrintOptions o;
    o.details = true;
    o.columns = columns;
    const std::string text = captured([&](OutputBuffer& out) { print_diff(d, o, out); });
    INFO("COLUMNS=" << columns << "\n" << text);
    CHECK(not_text(text).empty());
    cut_in_name = cut_in_name || (text.find(name.substr(0, 3)) != std::string::npos && text.find(name) == std::string::npos);
  }
  CHECK(cut_in_name);
}

// A small BTF with a FWD ([2]) whose type field holds `type` (btf__add_fwd writes 0).
std::string with_fwd_type(std::uint32_t type) {
  BtfPtr b(btf__new_empty());
  const int i32 = btf__add_int(b.get(), "int", 4, BTF_INT_SIGNED);
  REQUIRE(btf__add_fwd(b.get(), "later", BTF_FWD_STRUCT) == 2);
  REQUIRE(btf__add_ptr(b.get(), 2) == 3);
  REQUIRE(btf__add_typedef(b.get(), "t", i32) == 4);
  std::string raw = raw_bytes(b.get());
  // The FWD is the second record: after the int's 12 + 4 bytes, its type field at +8.
  std::memcpy(raw.data() + 24 + 16 + 8, &type, 4);
  return raw;
}

TEST_CASE("fuzz finding 4: a FWD with a type is refused before libbpf reads it", "[robust]") {
  CHECK_NOTHROW(dedup({parsed(with_fwd_type(0))}));
  for (const std::uint32_t type : {1u, 0x5d000000u}) {
    const auto btf = parsed(with_fwd_type(type));  // our reader takes it
    CHECK_THROWS_WITH(dedup({btf}), Catch::Matchers::Contains("type [2] FWD holds") &&
                                        Catch::Matchers::Contains("in its type field, which must be 0"));
    static const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    OutputBuffer out(null_fd, "/dev/null");
    CHECK_THROWS_WITH(dump_c(*btf, {}, out), Catch::Matchers::Contains("in its type field, which must be 0"));
  }
}

TEST_CASE("fuzz finding 5: a type section that does not start on a multiple of 4 is refused", "[robust]") {
  std::string raw = small_btf();
  std::uint32_t one = 1, zero = 0;
  std::memcpy(raw.data() + 8, &one, 4);    // type_off
  std::memcpy(raw.data() + 12, &zero, 4);  // type_len
  CHECK_THROWS_WITH(parsed(raw), Catch::Matchers::Contains("type section offset 1 is not a multiple of 4"));
}

TEST_CASE("fuzz finding 6: a gzip trailer's size is a hint, not an allocation", "[robust]") {
#if defined(__SANITIZE_ADDRESS__) || BTFSLIM_HAS_FEATURE(address_sanitizer)
  skip("AddressSanitizer reserves more address space than the limit this test sets");
#else
  const std::uint8_t gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x55, 0x51,
                             0x3d, 0x4f, 0x1b, 0x41, 0x10, 0x7d, 0x3e, 0x3e, 0xfd, 0x37, 0x7a, 0x4c,
                             0x12, 0x58, 0x5a, 0x00, 0x00, 0x01, 0x69, 0x22, 0xc0, 0xde, 0x80, 0x36};
  // In a child whose address space is 256 MiB: the 914 MB the trailer says cannot be allocated there, so
  // only a hint within what 36 bytes can inflate to gets to the corrupt stream.
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const rlimit limit{256u << 20, 256u << 20};
    ::setrlimit(RLIMIT_AS, &limit);
    std::string said = "inflated";
    try {
      std::free(decompress("t.gz", gz, Compression::Gzip).data);
    } catch (const InputError& e) {
      said = e.what();
    }
    (void)!::write(pipe_fds[1], said.data(), said.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string said;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO(said);
  CHECK(said.find("out of memory") == std::string::npos);
  CHECK(said.find("t.gz") != std::string::npos);
#endif
}

}  // namespace
}  // namespace btfslim::test
