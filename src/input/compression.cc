// Whole-file compression, read and written: xz (liblzma), zstd (libzstd), gzip (zlib).
//
// A module is a few hundred KiB, a vmlinux a few hundred MiB: each is inflated into one buffer that
// grows as the stream says, up to kMaxInflatedBytes. Where the format records the size (a zstd frame's
// content size, gzip's ISIZE) the buffer starts at it, so that most files inflate with no copy.
//
// Writing follows the kernel's `make modules_install` (scripts/Makefile.modinst): `xz --check=crc32
// --lzma2=dict=1MiB` (the kernel's in-kernel decompressor, CONFIG_MODULE_DECOMPRESS, checks CRC32 and
// nothing stronger, and older kmod the same), `zstd` at its default level with a checksum, `gzip -n`.
// The preset is lower than xz's default: on Debian 6.12's modules, preset 6 takes six times the CPU of
// preset 1 for 11% fewer bytes, and a tree of a thousand modules is rewritten in one run.
#include "btfslim/compression.h"
#include "btfslim/error.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace btfslim {
namespace {

constexpr std::uint32_t kXzPreset = 1;
constexpr int kZstdLevel = 3;
constexpr int kGzipLevel = 6;

bool starts_with(std::span<const std::uint8_t> bytes, std::initializer_list<std::uint8_t> magic) {
  return bytes.size() >= magic.size() && std::equal(magic.begin(), magic.end(), bytes.begin());
}

// The most a format can inflate each input byte to: deflate's limit (258 bytes from 2 bits, plus block
// overhead) is 1032; zstd's is an RLE block, 128 KiB from 4 bytes. A size a header declares is only a
// hint, and a file a few bytes long must not make us allocate what it says (fuzz_compressed: 36 bytes of
// gzip whose trailer said 577 MB).
constexpr std::size_t kGzipMaxRatio = 1032, kZstdMaxRatio = 32768;
std::size_t plausible(std::size_t declared, std::size_t input_bytes, std::size_t max_ratio) {
  return std::min(declared, input_bytes * max_ratio);
}

// A growing malloc'd buffer that frees itself unless released to the caller.
class Buffer {
 public:
  Buffer(const std::string& path, std::string_view format, std::size_t hint) : path_(path), format_(format) {
    grow(std::clamp<std::size_t>(hint, 4096, kMaxInflatedBytes));
  }
  ~Buffer() { std::free(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::uint8_t* free_space() { return data_ + used_; }
  std::size_t free_bytes() const { return capacity_ - used_; }
  void wrote(std::size_t n) { used_ += n; }
  // More room: twice as much, up to the cap.
  void grow() {
    if (capacity_ >= kMaxInflatedBytes) fail(path_, "{} stream inflates past {} bytes", format_, kMaxInflatedBytes);
    grow(std::min(capacity_ * 2, kMaxInflatedBytes));
  }
  Inflated release() {
    if (used_ == 0) fail(path_, "{} stream holds no data", format_);
    Inflated out{data_, used_};
    data_ = nullptr;
    return out;
  }

 private:
  void grow(std::size_t capacity) {
    auto* p = static_cast<std::uint8_t*>(std::realloc(data_, capacity));
    if (!p) fail(path_, "out of memory inflating {} bytes", capacity);
    data_ = p;
    capacity_ = capacity;
  }
  const std::string& path_;
  std::string_view format_;
  std::uint8_t* data_ = nullptr;
  std::size_t used_ = 0, capacity_ = 0;
};

std::string_view lzma_problem(lzma_ret r) {
  switch (r) {
    case LZMA_FORMAT_ERROR: return "not an xz stream";
    case LZMA_OPTIONS_ERROR: return "unsupported options";
    case LZMA_DATA_ERROR: return "corrupt data";
    case LZMA_BUF_ERROR: return "truncated";
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_UNSUPPORTED_CHECK: return "unsupported integrity check";
    default: return "decoder error";
  }
}

Inflated inflate_xz(const std::string& path, std::span<const std::uint8_t> bytes) {
  // The index at the end of the stream records the size; a plain growing buffer is simpler and as fast.
  Buffer out(path, "xz", bytes.size() * 4);
  lzma_stream s = LZMA_STREAM_INIT;
  if (const lzma_ret r = lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED); r != LZMA_OK)
    fail(path, "cannot read xz stream: {}", lzma_problem(r));
  const std::unique_ptr<lzma_stream, void (*)(lzma_stream*)> end(&s, lzma_end);
  s.next_in = bytes.data();
  s.avail_in = bytes.size();
  for (;;) {
    if (out.free_bytes() == 0) out.grow();
    s.next_out = out.free_space();
    s.avail_out = out.free_bytes();
    const lzma_ret r = lzma_code(&s, LZMA_FINISH);
    out.wrote(out.free_bytes() - s.avail_out);
    if (r == LZMA_STREAM_END) break;
    if (r != LZMA_OK) fail(path, "corrupt xz stream at byte {}: {}", s.total_in, lzma_problem(r));
    if (s.avail_in == 0 && s.avail_out != 0) fail(path, "truncated xz stream ({} bytes)", bytes.size());
  }
  return out.release();
}

Inflated inflate_zstd(const std::string& path, std::span<const std::uint8_t> bytes) {
  const unsigned long long declared = ZSTD_getFrameContentSize(bytes.data(), bytes.size());
  const bool known = declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR;
  Buffer out(path, "zstd",
             known ? plausible(static_cast<std::size_t>(std::min<unsigned long long>(declared, kMaxInflatedBytes)),
                               bytes.size(), kZstdMaxRatio)
                   : bytes.size() * 4);
  const std::unique_ptr<ZSTD_DStream, std::size_t (*)(ZSTD_DStream*)> d(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!d) fail(path, "out of memory reading zstd stream");
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  std::size_t pending = 1;  // ZSTD_decompressStream returns 0 exactly where a frame ends
  while (in.pos < in.size || pending != 0) {
    if (out.free_bytes() == 0) out.grow();
    ZSTD_outBuffer o{out.free_space(), out.free_bytes(), 0};
    const std::size_t before = in.pos;
    pending = ZSTD_decompressStream(d.get(), &o, &in);
    out.wrote(o.pos);
    if (ZSTD_isError(pending)) fail(path, "corrupt zstd stream at byte {}: {}", before, ZSTD_getErrorName(pending));
    if (in.pos == in.size && pending != 0 && o.pos < o.size) fail(path, "truncated zstd stream ({} bytes)", bytes.size());
  }
  return out.release();
}

Inflated inflate_gzip(const std::string& path, std::span<const std::uint8_t> bytes) {
  // ISIZE, the last four bytes, is the size modulo 4 GiB of the last member: a hint only.
  std::size_t hint = bytes.size() * 4;
  if (bytes.size() >= 18) {
    const auto* t = bytes.data() + bytes.size() - 4;
    hint = plausible(std::max<std::size_t>(t[0] | t[1] << 8 | t[2] << 16 | std::uint32_t{t[3]} << 24, 1), bytes.size(),
                     kGzipMaxRatio);
  }
  Buffer out(path, "gzip", hint);
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) fail(path, "cannot read gzip stream: out of memory");
  const std::unique_ptr<z_stream, int (*)(z_stream*)> end(&z, inflateEnd);
  std::size_t at = 0;
  for (;;) {
    // zlib counts in 32 bits: feed it at most 1 GiB at a time.
    z.next_in = const_cast<Bytef*>(bytes.data() + at);
    z.avail_in = static_cast<uInt>(std::min<std::size_t>(bytes.size() - at, std::size_t{1} << 30));
    if (out.free_bytes() == 0) out.grow();
    z.next_out = out.free_space();
    z.avail_out = static_cast<uInt>(std::min<std::size_t>(out.free_bytes(), std::size_t{1} << 30));
    const uInt avail_in = z.avail_in, avail_out = z.avail_out;
    const int r = inflate(&z, Z_NO_FLUSH);
    at += avail_in - z.avail_in;
    out.wrote(avail_out - z.avail_out);
    if (r == Z_STREAM_END) {
      if (at == bytes.size()) break;
      if (inflateReset(&z) != Z_OK) fail(path, "cannot read gzip stream: decoder error");
      continue;  // another member follows, as `cat a.gz b.gz` makes
    }
    if (r == Z_BUF_ERROR && at == bytes.size()) fail(path, "truncated gzip stream ({} bytes)", bytes.size());
    if (r != Z_OK && r != Z_BUF_ERROR) fail(path, "corrupt gzip stream at byte {}: {}", at, z.msg ? z.msg : "decoder error");
  }
  return out.release();
}

std::string deflate_xz(std::string_view data) {
  lzma_options_lzma options;
  if (lzma_lzma_preset(&options, kXzPreset)) throw std::runtime_error("liblzma has no such preset");
  options.dict_size = 1 << 20;
  const lzma_filter filters[] = {{LZMA_FILTER_LZMA2, &options}, {LZMA_VLI_UNKNOWN, nullptr}};
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_encoder(&s, filters, LZMA_CHECK_CRC32) != LZMA_OK) throw std::runtime_error("xz encoder failed to start");
  const std::unique_ptr<lzma_stream, void (*)(lzma_stream*)> end(&s, lzma_end);
  std::string out(lzma_stream_buffer_bound(data.size()), '\0');
  s.next_in = reinterpret_cast<const std::uint8_t*>(data.data());
  s.avail_in = data.size();
  s.next_out = reinterpret_cast<std::uint8_t*>(out.data());
  s.avail_out = out.size();
  if (lzma_code(&s, LZMA_FINISH) != LZMA_STREAM_END) throw std::runtime_error("xz encoder failed");
  out.resize(s.total_out);
  return out;
}

std::string deflate_zstd(std::string_view data) {
  const std::unique_ptr<ZSTD_CCtx, std::size_t (*)(ZSTD_CCtx*)> c(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!c) throw std::runtime_error("zstd encoder failed to start");
  ZSTD_CCtx_setParameter(c.get(), ZSTD_c_compressionLevel, kZstdLevel);
  ZSTD_CCtx_setParameter(c.get(), ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const std::size_t n = ZSTD_compress2(c.get(), out.data(), out.size(), data.data(), data.size());
  if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd encoder failed: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

std::string deflate_gzip(std::string_view data) {
  z_stream z{};
  // zlib's own gzip header: no name, time 0, OS "Unix", as `gzip -n` writes it.
  if (deflateInit2(&z, kGzipLevel, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip encoder failed to start");
  const std::unique_ptr<z_stream, int (*)(z_stream*)> end(&z, deflateEnd);
  std::string out;
  std::size_t at = 0;
  int r = Z_OK;
  while (r != Z_STREAM_END) {
    const std::size_t room = std::max<std::size_t>(deflateBound(&z, static_cast<uLong>(std::min(data.size(), std::size_t{1} << 30))), 1 << 16);
    const std::size_t used = out.size();
    out.resize(used + room);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + at));
    z.avail_in = static_cast<uInt>(std::min<std::size_t>(data.size() - at, std::size_t{1} << 30));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    z.avail_out = static_cast<uInt>(room);
    const uInt avail_in = z.avail_in;
    r = deflate(&z, data.size() - at == avail_in ? Z_FINISH : Z_NO_FLUSH);
    at += avail_in - z.avail_in;
    out.resize(used + room - z.avail_out);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) throw std::runtime_error("gzip encoder failed");
  }
  return out;
}

}  // namespace

Compression compression_of(std::span<const std::uint8_t> bytes) {
  if (starts_with(bytes, {0xfd, '7', 'z', 'X', 'Z', 0x00})) return Compression::Xz;
  if (starts_with(bytes, {0x28, 0xb5, 0x2f, 0xfd})) return Compression::Zstd;
  if (starts_with(bytes, {0x1f, 0x8b})) return Compression::Gzip;
  return Compression::None;
}

std::string_view compression_name(Compression c) {
  switch (c) {
    case Compression::None: return "none";
    case Compression::Gzip: return "gzip";
    case Compression::Xz: return "xz";
    case Compression::Zstd: return "zstd";
  }
  return "?";
}

std::string_view compression_suffix(Compression c) {
  switch (c) {
    case Compression::None: return "";
    case Compression::Gzip: return ".gz";
    case Compression::Xz: return ".xz";
    case Compression::Zstd: return ".zst";
  }
  return "";
}

Compression compression_of_name(std::string_view path) {
  for (const Compression c : {Compression::Gzip, Compression::Xz, Compression::Zstd})
    if (path.ends_with(compression_suffix(c))) return c;
  return Compression::None;
}

Inflated decompress(const std::string& path, std::span<const std::uint8_t> bytes, Compression c) {
  switch (c) {
    case Compression::Xz: return inflate_xz(path, bytes);
    case Compression::Zstd: return inflate_zstd(path, bytes);
    case Compression::Gzip: return inflate_gzip(path, bytes);
    case Compression::None: break;
  }
  fail(path, "is not compressed");
}

std::string compress(std::string_view data, Compression c) {
  switch (c) {
    case Compression::Xz: return deflate_xz(data);
    case Compression::Zstd: return deflate_zstd(data);
    case Compression::Gzip: return deflate_gzip(data);
    case Compression::None: break;
  }
  return std::string(data);
}

}  // namespace btfslim
