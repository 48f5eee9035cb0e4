// Compressed files (btfslim/compression.h): each format round-trips byte for byte, its own tool accepts
// what we write (xz -t with a CRC32 check, as the kernel's decompressor needs; zstd -t; gzip -t), what its
// tool writes we read (concatenated streams too), and a corrupt or truncated stream is one InputError
// naming the file, never a crash or a partial result.
#include "btfslim/compression.h"
#include "btfslim/error.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace btfslim {
namespace {

// Bytes shaped like a module: stretches of text that repeat, and noise that does not.
std::string sample(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out;
  while (out.size() < size) {
    if (rng() % 2)
      out += "struct nf_conn nf_conntrack_tuple_hash skb_ext ";
    else
      for (int i = 0; i < 64; ++i) out += static_cast<char>(rng());
  }
  out.resize(size);
  return out;
}

std::string inflate(const std::string& bytes, Compression c, const std::string& path = "x") {
  const Inflated in = decompress(path, std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), c);
  std::string out(reinterpret_cast<const char*>(in.data), in.size);
  std::free(in.data);
  return out;
}

// What a tool says of a file holding `bytes`: its exit status.
int tool_status(const std::string& command, const std::string& bytes) {
  char name[] = "/tmp/btfslim-compression-XXXXXX";
  const int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  const int status = std::system((command + " " + name + " 2>/dev/null").c_str());
  ::unlink(name);
  return status;
}

std::string tool_output(const std::string& command, const std::string& input) {
  char in[] = "/tmp/btfslim-compression-in-XXXXXX", out[] = "/tmp/btfslim-compression-out-XXXXXX";
  const int fd = ::mkstemp(in), ofd = ::mkstemp(out);
  REQUIRE((fd >= 0 && ofd >= 0));
  REQUIRE(::write(fd, input.data(), input.size()) == static_cast<ssize_t>(input.size()));
  ::close(fd);
  ::close(ofd);
  REQUIRE(std::system((command + " < " + in + " > " + out).c_str()) == 0);
  std::ifstream f(out, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  ::unlink(in);
  ::unlink(out);
  return s.str();
}

const Compression kFormats[] = {Compression::Xz, Compression::Zstd, Compression::Gzip};

}  // namespace

TEST_CASE("compression: each format round-trips byte for byte and says what it is", "[compression]") {
  for (const Compression c : kFormats) {
    INFO(compression_name(c));
    for (const std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{1} << 19}) {
      const std::string data = sample(size, static_cast<unsigned>(size));
      const std::string packed = compress(data, c);
      CHECK(compression_of(std::span(reinterpret_cast<const std::uint8_t*>(packed.data()), packed.size())) == c);
      CHECK(inflate(packed, c) == data);
      // The same bytes on every run.
      CHECK(compress(data, c) == packed);
    }
    CHECK(compression_of_name(std::string("nf_nat.ko") + std::string(compression_suffix(c))) == c);
  }
  CHECK(compression_of_name("nf_nat.ko") == Compression::None);
}

TEST_CASE("compression: each format's own tool accepts what is written, and the xz check is CRC32", "[compression]") {
  const std::string data = sample(200000, 7);
  if (std::system("command -v xz >/dev/null") == 0) {
    const std::string xz = compress(data, Compression::Xz);
    CHECK(tool_status("xz -t", xz) == 0);
    // The stream flags (bytes 6-7) name the check: 0x01 is CRC32, what CONFIG_MODULE_DECOMPRESS verifies.
    REQUIRE(xz.size() > 8);
    CHECK(xz[6] == 0);
    CHECK(xz[7] == 1);
    CHECK(tool_output("xz -dc", xz) == data);
  }
  if (std::system("command -v zstd >/dev/null") == 0) {
    const std::string zst = compress(data, Compression::Zstd);
    CHECK(tool_status("zstd -q -t", zst) == 0);
    CHECK(tool_output("zstd -q -dc", zst) == data);
  }
  if (std::system("command -v gzip >/dev/null") == 0) {
    const std::string gz = compress(data, Compression::Gzip);
    CHECK(tool_status("gzip -t", gz) == 0);
    CHECK(tool_output("gzip -dc", gz) == data);
  }
}

TEST_CASE("compression: streams the tools write are read, concatenations too", "[compression]") {
  const std::string a = sample(50000, 1), b = sample(30000, 2);
  struct Tool {
    Compression c;
    const char* command;
  };
  for (const Tool& t : {Tool{Compression::Xz, "xz -c --check=crc64"}, Tool{Compression::Zstd, "zstd -q -c"},
                        Tool{Compression::Gzip, "gzip -c"}}) {
    const std::string program = std::string(t.command).substr(0, std::string(t.command).find(' '));
    if (std::system(("command -v " + program + " >/dev/null").c_str()) != 0) continue;
    INFO(t.command);
    const std::string pa = tool_output(t.command, a), pb = tool_output(t.command, b);
    CHECK(inflate(pa, t.c) == a);
    CHECK(inflate(pa + pb, t.c) == a + b);
  }
}

TEST_CASE("compression: a corrupt or truncated stream is one error naming the file", "[compression]") {
  const std::string data = sample(100000, 3);
  for (const Compression c : kFormats) {
    INFO(compression_name(c));
    const std::string packed = compress(data, c);
    const std::string name(compression_name(c));
    // Cut short: at the header, in the middle, one byte before the end.
    for (const std::size_t keep : {std::size_t{6}, packed.size() / 2, packed.size() - 1}) {
      INFO("kept " << keep << " of " << packed.size());
      CHECK_THROWS_AS(inflate(packed.substr(0, keep), c, "mod.ko" + std::string(compression_suffix(c))), InputError);
      try {
        inflate(packed.substr(0, keep), c, "mod.ko");
      } catch (const InputError& e) {
        CHECK_THAT(e.what(), Catch::Matchers::StartsWith("mod.ko: "));
        CHECK_THAT(e.what(), Catch::Matchers::Contains(name + " stream"));
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
      }
    }
    // Bytes flipped in the middle: the data or its check no longer agree.
    std::string flipped = packed;
    for (std::size_t i = packed.size() / 3; i < packed.size() / 3 + 16; ++i) flipped[i] = static_cast<char>(~flipped[i]);
    CHECK_THROWS_WITH(inflate(flipped, c, "mod.ko"), Catch::Matchers::Contains("mod.ko: corrupt " + name + " stream"));
  }
}

}  // namespace btfslim
