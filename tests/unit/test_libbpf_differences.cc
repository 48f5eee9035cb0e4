// Where btfslim's BTF reader and libbpf 1.1.2's disagree on purpose ([libbpf-differences]): one input
// for each difference fuzz/differential.h lists, so that each stays true (a libbpf or btfslim change that
// closes one fails here, and the list is then shortened) and is the one the fuzz target recognizes.
//
// Each input is a fixture with a few bytes changed. The header is 24 bytes, little-endian on these hosts:
// magic, version, flags, hdr_len, type_off, type_len, str_off, str_len.
#include "../../fuzz/differential.h"
#include "fixtures.h"

#include "btfslim/btf.h"
#include "btfslim/error.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>

namespace btfslim::test {
namespace {

std::uint32_t u32_at(const std::string& b, std::size_t off) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + off, 4);
  return v;
}
void set_u32(std::string& b, std::size_t off, std::uint32_t v) { std::memcpy(b.data() + off, &v, 4); }

std::string g_libbpf_said;
int capture(enum libbpf_print_level, const char* format, va_list args) {
  char line[512];
  std::vsnprintf(line, sizeof line, format, args);
  g_libbpf_said = line;
  return 0;
}

struct Free {
  void operator()(struct btf* b) const { btf__free(b); }
};

// What each side makes of `bytes`: btfslim's error ("" when it reads them) and whether libbpf reads
// them (btf__new, or btf__parse_raw_split of a file of them on `base`), with libbpf's last message.
struct Readings {
  std::string btfslim_error;
  bool libbpf_reads = false;
  std::string libbpf_said;
};

Readings read_both(const std::string& bytes, const std::string& base = "") {
  Readings r;
  std::shared_ptr<const Btf> base_btf;
  if (!base.empty()) {
    auto owner = std::make_shared<std::string>(base);
    base_btf = Btf::parse("base.btf", owner, {reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size()});
  }
  auto owner = std::make_shared<std::string>(bytes);
  try {
    (void)Btf::parse("input.btf", owner, {reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size()}, base_btf);
  } catch (const InputError& e) {
    r.btfslim_error = e.what();
  }
  libbpf_print_fn_t old = libbpf_set_print(capture);
  g_libbpf_said.clear();
  std::unique_ptr<struct btf, Free> theirs;
  if (base.empty()) {
    theirs.reset(btf__new(bytes.data(), static_cast<__u32>(bytes.size())));
  } else {
    std::unique_ptr<struct btf, Free> libbpf_base(btf__new(base.data(), static_cast<__u32>(base.size())));
    REQUIRE(libbpf_base);
    char path[] = "/tmp/btfslim-libbpf-difference.XXXXXX";
    const int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    ::close(fd);
    theirs.reset(btf__parse_raw_split(path, libbpf_base.get()));
    ::unlink(path);
  }
  libbpf_set_print(old);
  r.libbpf_reads = theirs != nullptr;
  r.libbpf_said = g_libbpf_said;
  return r;
}

// btfslim refuses, libbpf reads, and the fuzz target takes it for the difference whose message is `entry`.
void stricter(const std::string& bytes, std::string_view entry, const std::string& base = "") {
  const Readings r = read_both(bytes, base);
  INFO("btfslim: " << r.btfslim_error);
  CHECK(r.libbpf_reads);
  REQUIRE(!r.btfslim_error.empty());
  const fuzz::KnownDifference* d = fuzz::known_difference(fuzz::kStricter, r.btfslim_error);
  REQUIRE(d != nullptr);
  CHECK(d->message == entry);
}

// btfslim reads, libbpf refuses, and the fuzz target takes it for the difference whose message is `entry`.
void laxer(const std::string& bytes, std::string_view entry) {
  const Readings r = read_both(bytes);
  INFO("btfslim: " << r.btfslim_error << "\nlibbpf: " << r.libbpf_said);
  CHECK(r.btfslim_error.empty());
  REQUIRE(!r.libbpf_reads);
  const fuzz::KnownDifference* d = fuzz::known_difference(fuzz::kLaxer, r.libbpf_said);
  REQUIRE(d != nullptr);
  CHECK(d->message == entry);
}

// Offsets of the first record's fields in a raw BTF with a 24-byte header.
constexpr std::size_t kFirstName = 24 + 0, kFirstType = 24 + 8;

TEST_CASE("libbpf reads a BTF version other than 1; btfslim refuses it", "[libbpf-differences]") {
  std::string b = small_btf();
  b[2] = 2;
  stricter(b, "unsupported BTF version");
}

TEST_CASE("libbpf reads a header length under 24 bytes; btfslim refuses it", "[libbpf-differences]") {
  // hdr_len 16 with every offset 8 further: libbpf finds the same sections from where its short header
  // says they start.
  std::string b = small_btf();
  set_u32(b, 4, 16);
  set_u32(b, 8, u32_at(b, 8) + 8);
  set_u32(b, 16, u32_at(b, 16) + 8);
  stricter(b, "smaller than the 24 bytes of a BTF header");
}

TEST_CASE("libbpf 1.1.2 reads a name offset past the strings; btfslim refuses it", "[libbpf-differences]") {
  std::string b = small_btf();
  set_u32(b, kFirstName, u32_at(b, 20) + 100);  // past str_len
  stricter(b, "is past the end of the strings");
}

TEST_CASE("libbpf 1.1.2 reads a reference to a type that does not exist; btfslim refuses it", "[libbpf-differences]") {
  // The first record of all_kinds_btf is a pointer (or another kind whose third word is a type id).
  std::string b = footprint_btf();
  set_u32(b, 24 + 12 + 4 + 8, 1000);  // [2] node *: after [1] int (12 + 4 bytes), its type
  stricter(b, "but the last type is");
}

TEST_CASE("libbpf reads a split BTF whose ids run past the base it is given; btfslim refuses it", "[libbpf-differences]") {
  stricter(split_btf().split, "past the last type", split_btf_misfits().fewer_types);
}

TEST_CASE("libbpf reads a split BTF whose names start inside base strings; btfslim refuses it", "[libbpf-differences]") {
  stricter(split_btf().split, "points into the middle of a string of the base", split_btf_misfits().shifted_strings);
}

TEST_CASE("btfslim reads strings before types, as the kernel does; libbpf refuses it", "[libbpf-differences]") {
  const std::string b = small_btf();
  const std::uint32_t type_off = u32_at(b, 8), type_len = u32_at(b, 12), str_off = u32_at(b, 16),
                      str_len = u32_at(b, 20);
  REQUIRE(type_off == 0);
  REQUIRE(str_off == type_len);
  // Strings first, then the types, each at a 4-byte boundary.
  const std::string strings = b.substr(24 + str_off, str_len) + std::string((4 - str_len % 4) % 4, '\0');
  std::string moved = b.substr(0, 24) + strings + b.substr(24 + type_off, type_len);
  set_u32(moved, 8, static_cast<std::uint32_t>(strings.size()));
  set_u32(moved, 16, 0);
  laxer(moved, "Invalid BTF data sections layout");
}

TEST_CASE("btfslim reads a longer header in the other byte order; libbpf refuses it", "[libbpf-differences]") {
  // Big-endian all_kinds with hdr_len 32: eight zero bytes after the 24 the fields take.
  const std::string b = all_kinds_btf(true);
  std::string longer = b.substr(0, 24) + std::string(8, '\0') + b.substr(24);
  longer[4] = 0, longer[5] = 0, longer[6] = 0, longer[7] = 32;
  laxer(longer, "non-native endianness due to unsupported header length");
}

TEST_CASE("every difference the fuzz target accepts has a reason", "[libbpf-differences]") {
  using List = std::span<const fuzz::KnownDifference>;
  for (const List list : {List(fuzz::kStricter), List(fuzz::kLaxer), List(fuzz::kDedupRefused)})
    for (const fuzz::KnownDifference& d : list) {
      CHECK(!d.message.empty());
      CHECK(d.reason.size() > 20);
    }
}

}  // namespace
}  // namespace btfslim::test
