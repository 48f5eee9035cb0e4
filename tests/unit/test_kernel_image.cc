// A kernel image read by address (KernelImage: bytes_at, pointer_at, string_at, functions_at), its
// release as a version, and which of the kernel's lookups by name (kernel_lookups()) a release and an
// image's symbols make apply: each entry, on both sides of its releases and with and without its
// subsystem. The images are built here, a few bytes at chosen addresses; the real kernels' are read by the
// end-to-end tests (e2e/test_kernel_lookups.cc).
#include "btfslim/kernel_btf.h"

#include <catch2/catch.hpp>

#include <elf.h>

#include <cstring>
#include <string>
#include <vector>

namespace btfslim {
namespace {

// An image of two regions: 32 bytes at 0x1000 and 16 at 0x2000, and three functions (two of them aliases
// at 0x1010) and an object.
struct SmallImage {
  std::vector<std::uint8_t> low = std::vector<std::uint8_t>(32), high = std::vector<std::uint8_t>(16);
  KernelImage image;

  explicit SmallImage(bool big_endian = false, std::uint8_t pointer_size = 8) {
    image.big_endian = big_endian;
    image.pointer_size = pointer_size;
    image.memory = {{0x1000, low}, {0x2000, high}};
    image.symbols = {{0x1000, 16, "first", STT_FUNC},
                     {0x1010, 8, "alias_a", STT_FUNC},
                     {0x1010, 8, "alias_b", STT_FUNC},
                     {0x1018, 8, "an_object", STT_OBJECT},
                     {0x2000, 0, "__start_x", STT_NOTYPE}};
  }
};

}  // namespace

TEST_CASE("kernel image: bytes are read by address within one section, never past it", "[kernel-image]") {
  SmallImage s;
  for (std::size_t i = 0; i < s.low.size(); ++i) s.low[i] = static_cast<std::uint8_t>(i);
  CHECK(s.image.bytes_at(0x1000, 32).has_value());
  CHECK((*s.image.bytes_at(0x1004, 4))[0] == 4);
  CHECK(s.image.bytes_at(0x101f, 1).has_value());
  CHECK(!s.image.bytes_at(0x101f, 2));          // straddles the end
  CHECK(!s.image.bytes_at(0x1020, 1));          // between the regions
  CHECK(!s.image.bytes_at(0x0fff, 1));          // below the first
  CHECK(!s.image.bytes_at(0x2010, 1));          // past the last
  CHECK(!s.image.bytes_at(0x1000, ~0ull));      // a size that would wrap
  CHECK(!s.image.bytes_at(~0ull, 8));
  CHECK(s.image.bytes_at(0x2000, 0).has_value());
}

TEST_CASE("kernel image: pointers in the image's byte order and size", "[kernel-image]") {
  const std::uint8_t bytes[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  SmallImage little;
  std::memcpy(little.low.data() + 8, bytes, 8);
  CHECK(little.image.pointer_at(0x1008) == 0x0807060504030201ull);
  CHECK(!little.image.pointer_at(0x101c));  // 4 bytes left
  SmallImage big(true);
  std::memcpy(big.low.data() + 8, bytes, 8);
  CHECK(big.image.pointer_at(0x1008) == 0x0102030405060708ull);
  SmallImage narrow(false, 4);
  std::memcpy(narrow.low.data() + 8, bytes, 8);
  CHECK(narrow.image.pointer_at(0x1008) == 0x04030201ull);
  CHECK(narrow.image.pointer_at(0x101c).has_value());
}

TEST_CASE("kernel image: a string ends at its NUL within its section and 256 bytes", "[kernel-image]") {
  SmallImage s;
  std::memcpy(s.high.data(), "tcp\0rest", 8);
  CHECK(s.image.string_at(0x2000) == "tcp");
  CHECK(s.image.string_at(0x2003) == "");
  CHECK(s.image.string_at(0x2008) == "");  // NULs to the end
  std::memset(s.high.data(), 'x', s.high.size());
  CHECK(!s.image.string_at(0x2000));  // no NUL before the section ends
  CHECK(!s.image.string_at(0x3000));
  std::vector<std::uint8_t> long_text(600, 'y');
  s.image.memory.push_back({0x4000, long_text});
  CHECK(!s.image.string_at(0x4000));  // no NUL in 256 bytes
  long_text[255] = 0;
  CHECK(s.image.string_at(0x4000)->size() == 255);
}

TEST_CASE("kernel image: an address is named as kallsyms names it", "[kernel-image]") {
  SmallImage s;
  CHECK(s.image.functions_at(0x1000) == std::vector<std::string_view>{"first"});
  CHECK(s.image.functions_at(0x1008) == std::vector<std::string_view>{"first"});  // inside it
  CHECK(s.image.functions_at(0x1010) == std::vector<std::string_view>{"alias_a", "alias_b"});
  CHECK(s.image.functions_at(0x1018).empty());  // an object, past both functions' ends
  CHECK(s.image.functions_at(0x0500).empty());
  CHECK(s.image.functions_at(0x9000).empty());
  REQUIRE(s.image.symbol_named("__start_x"));
  CHECK(s.image.symbol_named("__start_x")->addr == 0x2000);
  CHECK(!s.image.symbol_named("nothing"));
  CHECK(!s.image.symbol_named("alias"));  // a prefix is not the name
  // A clang LTO build's promoted statics: kallsyms drops the ".llvm.N", and so does the lookup by name.
  s.image.symbols.insert(s.image.symbols.begin() + 3, {0x1018, 4, "stub.llvm.1234567", STT_FUNC});
  CHECK(s.image.functions_at(0x1018) == std::vector<std::string_view>{"stub"});
  REQUIRE(s.image.symbol_named("stub"));
  CHECK(s.image.symbol_named("stub")->addr == 0x1018);
}

TEST_CASE("kernel image: a release's version", "[kernel-image]") {
  CHECK(parse_kernel_version("6.12.118+deb12-cloud-amd64") == KernelVersion{6, 12, 118});
  CHECK(parse_kernel_version("6.1.0-57-cloud-amd64") == KernelVersion{6, 1, 0});
  CHECK(parse_kernel_version("6.15-rc1") == KernelVersion{6, 15, 0});
  CHECK(parse_kernel_version("5.15.0") == KernelVersion{5, 15, 0});
  CHECK(parse_kernel_version("6.9") == KernelVersion{6, 9, 0});
  CHECK(!parse_kernel_version("6"));
  CHECK(!parse_kernel_version("linux"));
  CHECK(!parse_kernel_version(""));
  CHECK(!parse_kernel_version("0.1"));
  CHECK(KernelVersion{6, 11, 11} < KernelVersion{6, 12, 0});
  CHECK(version_text({6, 11, 11}) == "6.11.11");
  CHECK(version_text({6, 9, 0}) == "6.9");
}

namespace {

// Whether kernel_lookups()'s entry for `name` applies to a kernel of `release` that has `symbols`.
bool applies(std::string_view name, std::string_view release, std::vector<std::string_view> symbols = {}) {
  KernelImage image;
  image.release = std::string(release);
  image.version = parse_kernel_version(release);
  for (const std::string_view s : symbols) image.symbols.push_back({0x1000, 8, s, STT_OBJECT});
  for (const KernelLookup& l : kernel_lookups())
    if (l.name == name) return lookup_applies(l, image);
  FAIL("no lookup of " << name);
  return false;
}

}  // namespace

TEST_CASE("kernel lookups: each applies to the releases that do it, where its subsystem is built in",
          "[kernel-image]") {
  const std::string_view tcp = "bpf_tcp_congestion_ops", dummy = "bpf_bpf_dummy_ops", nf = "netfilter_prog_ops",
                         hid = "bpf_hid_bpf_ops", scx = "bpf_sched_ext_ops";
  CHECK(applies("bpf_ctx_convert", "5.15.0"));
  CHECK(applies("bpf_ctx_convert", "6.12.118"));
  CHECK(!applies("bpf_ctx_convert", "5.4.0"));

  CHECK(applies("module", "6.1.0-57-cloud-amd64"));
  CHECK(applies("module", "6.8.12"));
  CHECK(!applies("module", "6.9.0"));  // a .BTF_ids slot since

  for (const std::string_view name : {"sock", "tcp_sock"}) {
    INFO(name);
    CHECK(applies(name, "5.15.0", {tcp}));
    CHECK(applies(name, "6.12.118", {tcp}));
    CHECK(!applies(name, "6.12.118"));  // no BPF congestion control built in
    CHECK(!applies(name, "5.5.0", {tcp}));
  }
  CHECK(!applies("tcp_congestion_ops", "6.8.0", {tcp}));
  CHECK(applies("tcp_congestion_ops", "6.9.0", {tcp}));
  CHECK(applies("tcp_congestion_ops", "6.12.118", {tcp}));
  CHECK(applies("tcp_congestion_ops", "6.15.2", {tcp}));
  CHECK(!applies("tcp_congestion_ops", "6.16.0", {tcp}));

  CHECK(!applies("bpf_dummy_ops_state", "5.13.0", {dummy}));
  CHECK(applies("bpf_dummy_ops_state", "5.14.0", {dummy}));
  CHECK(applies("bpf_dummy_ops_state", "6.12.118", {dummy}));
  CHECK(!applies("bpf_dummy_ops_state", "6.12.118"));

  for (const std::string_view name : {"sk_buff", "nf_hook_state"}) {
    INFO(name);
    CHECK(!applies(name, "6.3.0", {nf}));
    CHECK(applies(name, "6.4.0", {nf}));
    CHECK(applies(name, "6.12.118", {nf}));
    CHECK(!applies(name, "6.12.118"));  // no netfilter BPF links
    CHECK(!applies(name, "6.1.0-57-cloud-amd64", {nf}));
  }
  for (const std::string_view name : {"hid_bpf_ctx", "hid_device"}) {
    INFO(name);
    CHECK(!applies(name, "6.10.0", {hid}));
    CHECK(applies(name, "6.11.0", {hid}));
    CHECK(!applies(name, "6.12.118"));
  }
  CHECK(!applies("task_struct", "6.11.0", {scx}));
  CHECK(applies("task_struct", "6.12.0", {scx}));
  CHECK(!applies("task_struct", "6.12.118"));  // Debian's cloud kernel: no sched_ext
  CHECK(!applies("task_struct", "6.13.0", {scx}));  // a .BTF_ids slot since
  CHECK(applies("sock", "6.12.0", {"bpf_tcp_congestion_ops.llvm.8843"}));  // a clang LTO build

  // An image that does not say its release: every lookup its symbols allow.
  CHECK(applies("module", "", {}));
  CHECK(applies("task_struct", "", {scx}));
  CHECK(!applies("task_struct", "", {}));
}

TEST_CASE("kernel lookups: every entry names who looks and which releases", "[kernel-image]") {
  for (const KernelLookup& l : kernel_lookups()) {
    INFO(l.name);
    CHECK(!l.reader.empty());
    CHECK(l.since.major >= 5);
    if (l.until.major != 0) CHECK(l.since < l.until);
  }
  const auto lookups = kernel_lookups();
  auto releases = [&](std::string_view name) {
    for (const KernelLookup& l : lookups)
      if (l.name == name) return lookup_releases(l);
    return std::string();
  };
  CHECK(releases("module") == "5.6 to 6.8");
  CHECK(releases("tcp_congestion_ops") == "6.9 to 6.15");
  CHECK(releases("task_struct") == "6.12");
  CHECK(releases("sock") == "5.6+");
}

}  // namespace btfslim
