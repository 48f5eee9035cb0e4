// Compressed files as distributions ship them: kernel modules (.ko.xz, .ko.zst, .ko.gz) and BTF
// (.btf.xz, ...). Read whole into memory and written back in the same format, with liblzma, libzstd
// and zlib.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace btfslim {

enum class Compression : std::uint8_t { None, Gzip, Xz, Zstd };

// The format a file's first bytes say (None for anything else).
Compression compression_of(std::span<const std::uint8_t> bytes);
// "gzip", "xz", "zstd" ("none").
std::string_view compression_name(Compression c);
// The file name suffix of the format: ".gz", ".xz", ".zst" ("" for None).
std::string_view compression_suffix(Compression c);
// The format a file name's suffix says (None for any other name).
Compression compression_of_name(std::string_view path);

// At most this many bytes come out of one compressed file: a small hostile file cannot make us inflate
// without bound.
inline constexpr std::size_t kMaxInflatedBytes = std::size_t{1} << 30;

// The bytes a compressed stream holds, in a buffer from malloc that the caller frees. Every stream of a
// concatenation is read, as xz, zstd and gzip do. Throws InputError naming `path` for a corrupt or
// truncated stream and for one that inflates past kMaxInflatedBytes.
struct Inflated {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
};
Inflated decompress(const std::string& path, std::span<const std::uint8_t> bytes, Compression c);

// `data` compressed as the kernel's build compresses modules (scripts/Makefile.modinst): xz with CRC32
// checks and a 1 MiB dictionary (what the kernel's own decompressor and kmod accept), zstd with its
// checksum, gzip without a name or time. The same bytes give the same output on every run.
std::string compress(std::string_view data, Compression c);

}  // namespace btfslim
