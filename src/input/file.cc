// Mapping input files.
//
// A small regular file (up to 256 KiB: most BPF objects) that is kept briefly is read whole, into a
// buffer the next one reuses. Any other is mapped private and copy-on-write (libelf may fix up headers in place; nothing of ours
// writes). sysfs refuses writable mappings, so a read-only mapping is tried next, and files that cannot be
// mapped at all (pipes, older kernels' /sys/kernel/btf) are read once into memory, with a cap so that an
// endless stream cannot exhaust memory. A compressed file (xz, zstd, gzip: how distributions ship
// modules) is inflated once into memory; its path and its format are kept, so that what is written
// back for it can be compressed the same way.
#include "btfslim/compression.h"
#include "btfslim/error.h"
#include "btfslim/input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace btfslim {
namespace {

constexpr std::size_t kMaxReadBytes = std::size_t{1} << 30;
// Files up to this size are read whole rather than mapped (FileBytes::open).
constexpr std::size_t kReadWhole = std::size_t{256} << 10;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The memory small files are read into: one buffer of kReadWhole bytes, taken by one file at a time
// and kept for the next, so that a run over hundreds of objects reads them all into the same pages
// (no fault, no allocation per file); a file read while it is taken gets its own.
class ReadBuffer {
 public:
  static std::uint8_t* take() {
    const std::scoped_lock lock(mutex_);
    if (taken_) return static_cast<std::uint8_t*>(std::malloc(kReadWhole));
    if (!buffer_) buffer_ = static_cast<std::uint8_t*>(std::malloc(kReadWhole));
    taken_ = buffer_ != nullptr;
    return buffer_;
  }
  static void give_back(std::uint8_t* p) {
    const std::scoped_lock lock(mutex_);
    if (p && p == buffer_)
      taken_ = false;
    else
      std::free(p);
  }

 private:
  static inline std::mutex mutex_;
  static inline std::uint8_t* buffer_ = nullptr;
  static inline bool taken_ = false;
};

std::string errno_text(int err) {
  switch (err) {
    case ENOENT: return "no such file";
    case EACCES: return "permission denied";
    case EISDIR: return "is a directory";
    default: return std::strerror(err);
  }
}

}  // namespace

void FileBytes::prefetch(std::span<const std::uint8_t> range) const {
  if (!mapped_ || range.empty()) return;
  // One populate call is far cheaper than a page fault per 4 KiB (on paravirtualized VMs, several
  // microseconds each). MADV_POPULATE_READ is Linux 5.14; older kernels get the read-ahead hint.
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(range.data()) & ~(page - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(range.data() + range.size());
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
  if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ) != 0)
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);
}

void FileBytes::release(std::span<const std::uint8_t> range) const {
  // Only the file's own pages: a section inflated from a compressed one is memory of its own.
  if (!mapped_ || range.empty() || range.data() < data_ || range.data() + range.size() > data_ + size_) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(range.data()) + page - 1) & ~(page - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(range.data() + range.size()) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

std::shared_ptr<const FileBytes> FileBytes::open(const std::string& path, Keep keep) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) fail(path, "cannot open: {}", errno_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail(path, "cannot stat: {}", errno_text(errno));
  if (S_ISDIR(st.st_mode)) fail(path, "is a directory, not a BTF or ELF file");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) fail(path, "is not a regular file");

  std::shared_ptr<FileBytes> file(new FileBytes());
  file->path_ = path;
  if (keep == Keep::Briefly && S_ISREG(st.st_mode) && st.st_size > 0 && static_cast<std::size_t>(st.st_size) <= kReadWhole) {
    // A small file is read: a mapping would cost a page fault for each page touched and a TLB
    // shootdown when unmapped, most of the time of a run over hundreds of small objects.
    const auto size = static_cast<std::size_t>(st.st_size);
    auto* buf = ReadBuffer::take();
    if (!buf) fail(path, "out of memory reading {} bytes", size);
    std::size_t used = 0;
    while (used < size) {
      const ssize_t n = ::pread(fd.get(), buf + used, size - used, static_cast<off_t>(used));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : 0;
        ReadBuffer::give_back(buf);
        if (n == 0) fail(path, "read error: the file shrank while it was read");
        fail(path, "read error: {}", errno_text(err));
      }
      used += static_cast<std::size_t>(n);
    }
    file->data_ = buf;
    file->size_ = size;
    file->read_whole_ = true;
    file->inflate_if_compressed();
    return file;
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    // Mapped lazily: an ELF file is mostly what we never read (DWARF, code); callers prefetch() the part
    // they will read whole.
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED) p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p != MAP_FAILED) {
      file->data_ = static_cast<const std::uint8_t*>(p);
      file->size_ = size;
      file->mapped_ = true;
      file->inflate_if_compressed();
      return file;
    }
  }

  // Read it once. st_size is only a hint here (0 for pipes and some pseudo files).
  std::size_t capacity = st.st_size > 0 ? static_cast<std::size_t>(st.st_size) + 1 : 1 << 16;
  auto* buf = static_cast<std::uint8_t*>(std::malloc(capacity));
  if (!buf) fail(path, "out of memory reading {} bytes", capacity);
  std::size_t used = 0;
  for (;;) {
    if (used == capacity) {
      if (capacity >= kMaxReadBytes) {
        std::free(buf);
        fail(path, "larger than {} bytes when read as a stream", kMaxReadBytes);
      }
      capacity *= 2;
      auto* grown = static_cast<std::uint8_t*>(std::realloc(buf, capacity));
      if (!grown) {
        std::free(buf);
        fail(path, "out of memory reading {} bytes", capacity);
      }
      buf = grown;
    }
    const ssize_t n = ::read(fd.get(), buf + used, capacity - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      std::free(buf);
      fail(path, "read error: {}", errno_text(err));
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  file->data_ = buf;
  file->size_ = used;
  if (used == 0) fail(path, "empty file");
  file->inflate_if_compressed();
  return file;
}

void FileBytes::inflate_if_compressed() {
  const Compression c = compression_of(bytes());
  if (const Compression named = compression_of_name(path_); named != Compression::None && c != named)
    fail(path_, "is named {} but is not {}-compressed{}", compression_suffix(named), compression_name(named),
         c == Compression::None ? "" : fmt::format(" (it is {})", compression_name(c)));
  if (c == Compression::None) return;
  const Inflated inflated = decompress(path_, bytes(), c);
  free_bytes();
  data_ = inflated.data;
  size_ = inflated.size;
  mapped_ = read_whole_ = false;
  compression_ = c;
}

void FileBytes::free_bytes() {
  if (mapped_)
    ::munmap(const_cast<std::uint8_t*>(data_), size_);
  else if (read_whole_)
    ReadBuffer::give_back(const_cast<std::uint8_t*>(data_));
  else
    std::free(const_cast<std::uint8_t*>(data_));
}

FileBytes::~FileBytes() { free_bytes(); }

}  // namespace btfslim
