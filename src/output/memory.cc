// The pool of huge pages behind ZeroedArray (see memory.h).
//
// One address range is reserved on first use (inaccessible, so it costs neither memory nor commit
// charge). Arrays are packed into it from the bottom: `end_` is the end of the highest one, pages below
// `top_` are accessible and populated, in 2 MiB steps, as huge pages. A freed array leaves a hole that is
// merged with its neighbours and reused first-fit; the range is never handed back before exit, since
// the peak is what counts. Memory below `dirty_` may have been written, so an array placed there is
// cleared first, unless it is to be overwritten anyway; above it the kernel's zeroes are intact. A
// request the range cannot take goes to mmap.
//
// Huge pages are the cheap kind only while the machine has them at hand. A VM that hands its free
// memory back to the host (virtio-balloon's free page reporting, as on Firecracker) gets a huge page
// from memory the host has to fault in again, 4 KiB at a time: 4.4 to 6 ms for 2 MiB there, against
// 0.35 ms for one it had just freed and 0.6 to 0.85 ms for 2 MiB of 4 KiB pages. Once one huge page
// comes that slowly, the next ones do too (the recently freed ones are used up), so from then on the
// pool grows in 4 KiB pages: a `measure` of vmlinux after a few idle seconds took 16 to 45 ms with
// every step in huge pages and 19 to 27 ms in 4 KiB pages on such a VM; back to back, 15 ms and 17.
//
// Under valgrind every array comes from malloc instead: memcheck then checks each one's bounds and
// counts it in the heap (bench/run's heap bytes), which it cannot do for memory the pool carves up.
#include "btfslim/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#ifdef BTFSLIM_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace btfslim::detail {
namespace {

constexpr std::size_t kSmall = std::size_t{64} << 10;  // calloc below this
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kAlign = 64;
constexpr std::size_t kReserve = sizeof(void*) >= 8 ? std::size_t{16} << 30 : std::size_t{256} << 20;
#ifdef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;  // the value in Linux's uapi since 5.14
#endif

// 2 MiB of 4 KiB pages took 0.6 to 0.85 ms to fault in on the VM above, and 3.85 ms on one whose huge
// pages took 0.2 ms (memory.h): a huge page slower than this is one the host faults in again.
constexpr std::chrono::microseconds kSlowHugePage{3000};

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Memory the pool could not take: its own mapping, every page faulted in by one call.
void* map_populated(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (bytes >= kHugePage) ::madvise(p, bytes, MADV_HUGEPAGE);
  ::madvise(p, bytes, kPopulateWrite);
  return p;
}

class Pool {
 public:
  // Null when the pool cannot take `bytes`.
  void* allocate(std::size_t bytes, bool zero) {
    const std::size_t size = round_up(bytes, kAlign);
    const std::lock_guard lock(mutex_);
    if (!reserve()) return nullptr;
    for (auto it = holes_.begin(); it != holes_.end(); ++it) {
      if (it->second < size) continue;
      const std::size_t at = it->first;
      if (it->second > size) holes_.emplace_hint(std::next(it), at + size, it->second - size);
      holes_.erase(it);
      return place(at, size, zero);
    }
    std::size_t at = end_;
    if (!holes_.empty() && std::prev(holes_.end())->first + std::prev(holes_.end())->second == end_) {
      at = std::prev(holes_.end())->first;
      holes_.erase(std::prev(holes_.end()));
    }
    if (size > kReserve - at) {
      if (at != end_) holes_.emplace(at, end_ - at);
      return nullptr;
    }
    if (at + size > top_) {
      const std::size_t top = std::min(round_up(at + size, kHugePage), kReserve);
      if (::mprotect(base_ + top_, top - top_, PROT_READ | PROT_WRITE) != 0) {
        if (at != end_) holes_.emplace(at, end_ - at);
        return nullptr;
      }
      steps_.populate(base_ + top_, top - top_);
      top_ = top;
    }
    end_ = at + size;
    return place(at, size, zero);
  }

  bool owns(const void* p) const {
    const auto* b = static_cast<const std::uint8_t*>(p);
    return base_ && b >= base_ && b < base_ + kReserve;
  }

  // Gives back [offset of p + from, offset of p + to), both rounded as allocations are.
  void release(void* p, std::size_t from, std::size_t to) {
    from = round_up(from, kAlign);
    to = round_up(to, kAlign);
    if (from >= to) return;
    const std::lock_guard lock(mutex_);
    std::size_t at = static_cast<std::size_t>(static_cast<std::uint8_t*>(p) - base_) + from;
    std::size_t size = to - from;
    auto next = holes_.lower_bound(at);
    if (next != holes_.end() && at + size == next->first) {
      size += next->second;
      next = holes_.erase(next);
    }
    if (next != holes_.begin()) {
      const auto prev = std::prev(next);
      if (prev->first + prev->second == at) {
        at = prev->first;
        size += prev->second;
        holes_.erase(prev);
      }
    }
    if (at + size == end_)
      end_ = at;
    else
      holes_.emplace(at, size);
  }

 private:
  bool reserve() {
    if (base_) return true;
    if (failed_) return false;
    // One huge page more than the range, to align it.
    void* p = ::mmap(nullptr, kReserve + kHugePage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      failed_ = true;
      return false;
    }
    const auto raw = reinterpret_cast<std::uintptr_t>(p);
    base_ = reinterpret_cast<std::uint8_t*>(round_up(raw, kHugePage));
    ::madvise(base_, kReserve, MADV_HUGEPAGE);
    return true;
  }

  void* place(std::size_t at, std::size_t size, bool zero) {
    if (zero && at < dirty_) std::memset(base_ + at, 0, std::min(size, dirty_ - at));
    dirty_ = std::max(dirty_, at + size);
    return base_ + at;
  }

  std::mutex mutex_;
  PageSteps steps_{kSlowHugePage};
  std::uint8_t* base_ = nullptr;
  bool failed_ = false;
  std::size_t end_ = 0;
  std::size_t top_ = 0;
  std::size_t dirty_ = 0;
  std::map<std::size_t, std::size_t> holes_;  // offset -> size, none touching another or end_
};

Pool& pool() {
  static Pool* const p = new Pool;  // never destroyed: arrays may outlive static destructors
  return *p;
}

bool under_valgrind() {
#ifdef BTFSLIM_HAVE_VALGRIND_H
  static const bool under = RUNNING_ON_VALGRIND != 0;
  return under;
#else
  return false;
#endif
}

}  // namespace

void PageSteps::populate(void* p, std::size_t bytes) {
  if (!huge_pages_) {
    ::madvise(p, bytes, MADV_NOHUGEPAGE);
    ::madvise(p, bytes, kPopulateWrite);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  ::madvise(p, bytes, kPopulateWrite);
  const auto per_huge_page = (std::chrono::steady_clock::now() - start) / std::max<std::size_t>(bytes / kHugePage, 1);
  if (per_huge_page > slow_) huge_pages_ = false;
}

void* allocate_zeroed(std::size_t bytes, bool zero) {
  if (bytes < kSmall || under_valgrind()) {
    void* p = zero ? std::calloc(1, bytes) : std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  if (void* p = pool().allocate(bytes, zero)) return p;
  return map_populated(bytes);
}

void* allocate_lazy(std::size_t bytes, std::size_t populated) {
  if (bytes < kSmall || under_valgrind()) {
    void* p = std::calloc(1, bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (populated >= kSmall) ::madvise(p, populated, kPopulateWrite);
  return p;
}

void release_zeroed(void* p, std::size_t bytes) {
  if (pool().owns(p))
    pool().release(p, 0, bytes);
  else if (bytes < kSmall || under_valgrind())
    std::free(p);
  else
    ::munmap(p, bytes);
}

std::size_t shrink_zeroed(void* p, std::size_t bytes, std::size_t kept) {
  if (!pool().owns(p)) return bytes;  // calloc'd or mapped: kept whole until released
  pool().release(p, kept, bytes);
  return kept;
}

}  // namespace btfslim::detail

namespace btfslim {

void populate_for_write(void* p, std::size_t bytes) {
  if (bytes < detail::kSmall) return;
  static const auto kPage = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kPage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, detail::kPopulateWrite);
}

}  // namespace btfslim
