// Zeroed arrays: anonymous mappings, huge pages where they pay (see memory.h).
#include "btfslim/memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace btfslim::detail {
namespace {

constexpr std::size_t kMapAt = std::size_t{64} << 10;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
#ifdef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;  // the value in Linux's uapi since 5.14
#endif

}  // namespace

void* map_zeroed(std::size_t bytes) {
  if (bytes < kMapAt) {
    void* p = std::calloc(1, bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // Hints: huge pages where the kernel has them, then every page faulted in by one call rather than one
  // fault each (MADV_POPULATE_WRITE, Linux 5.14; older kernels fault lazily as usual).
  if (bytes >= kHugePage) ::madvise(p, bytes, MADV_HUGEPAGE);
  ::madvise(p, bytes, kPopulateWrite);
  return p;
}

void unmap_zeroed(void* p, std::size_t bytes) {
  if (bytes < kMapAt)
    std::free(p);
  else
    ::munmap(p, bytes);
}

}  // namespace btfslim::detail
