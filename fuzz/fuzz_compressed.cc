// Compressed inputs: any bytes as a compressed file (.ko.xz, .btf.zst, .gz), as distributions ship
// modules and BTF.
//
// The bytes are inflated as their magic says (decompress: every stream of a concatenation, at most
// kMaxInflatedBytes), what comes out is compressed again in the same format and must inflate back to
// the same bytes, and the file is then loaded as BTF the way every command opens one (load_btf_file:
// raw BTF or an ELF's .BTF, inflated first), once named for its format and once under a name that
// says nothing. Named for another format than its contents, it must be refused.
#include "common.h"

#include "btfslim/compression.h"
#include "btfslim/error.h"
#include "btfslim/input.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using namespace btfslim;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_compressed: %s\n", what.c_str());
  std::abort();
}

// `file` under another name: a symbolic link to its /proc/self/fd path.
struct Named {
  std::string path;
  Named(const fuzz::MemFile& file, std::string_view suffix) {
    static const std::string dir = [] {
      char d[] = "/tmp/fuzz_compressed.XXXXXX";
      if (!::mkdtemp(d)) std::abort();
      return std::string(d);
    }();
    path = dir + "/input" + std::string(suffix);
    ::unlink(path.c_str());
    if (::symlink(file.path().c_str(), path.c_str()) != 0) std::abort();
  }
  ~Named() { ::unlink(path.c_str()); }
};

// Whether the file loads as BTF; InputError is the expected no.
bool load(const std::string& path) {
  try {
    (void)load_btf_file(path, nullptr);
    return true;
  } catch (const InputError& e) {
    fuzz::expect_error_line(e);
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  const Compression c = compression_of(bytes);
  if (c != Compression::None) {
    try {
      const Inflated inflated = decompress("fuzz" + std::string(compression_suffix(c)), bytes, c);
      const std::string plain(reinterpret_cast<const char*>(inflated.data), inflated.size);
      std::free(inflated.data);
      if (plain.size() > kMaxInflatedBytes) finding("inflated past kMaxInflatedBytes");
      // Recompressed only when small: xz at the kernel's settings takes seconds per MiB under ASan.
      if (plain.size() <= (std::size_t{64} << 10)) {
        const std::string again = compress(plain, c);
        const auto back = std::span(reinterpret_cast<const std::uint8_t*>(again.data()), again.size());
        if (compression_of(back) != c) finding("compress() writes what compression_of() does not recognize");
        const Inflated round = decompress("again", back, c);
        const bool same = round.size == plain.size() && std::memcmp(round.data, plain.data(), plain.size()) == 0;
        std::free(round.data);
        if (!same) finding("compress() then decompress() does not give back the bytes");
      }
    } catch (const InputError& e) {
      fuzz::expect_error_line(e);
    }
  }
  const fuzz::MemFile file(bytes);
  const bool loads = load(file.path());
  for (const Compression named : {Compression::Gzip, Compression::Xz, Compression::Zstd}) {
    const Named link(file, std::string(".btf") + std::string(compression_suffix(named)));
    const bool loads_named = load(link.path);
    if (named == c && loads_named != loads) finding("the name of its own format changes whether it loads");
    if (named != c && loads_named) finding("loaded under the name of another format than its own");
  }
  return 0;
}
