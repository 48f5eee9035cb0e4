// The pool behind ZeroedArray (memory.h): how it faults in each step it grows by.
#include "btfslim/memory.h"
#include "process.h"

#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

using namespace btfslim;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// What /proc/self/smaps says of the mapping that holds `p`: its VmFlags line and its resident KiB.
struct Mapping {
  std::string flags;
  long rss_kib = -1;
  bool has(const char* flag) const { return (flags + " ").find(std::string(" ") + flag + " ") != std::string::npos; }
};
Mapping mapping_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  Mapping m;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {
      if (inside) break;
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      m.rss_kib = std::stol(line.substr(4));
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      m.flags = line.substr(8);
    }
  }
  return m;
}

// Address space as the pool reserves it: 2 MiB aligned, inaccessible until a step makes it writable,
// advised for huge pages.
class Reserved {
 public:
  explicit Reserved(std::size_t bytes) : bytes_(bytes + 2 * kMiB) {
    raw_ = ::mmap(nullptr, bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw_ == MAP_FAILED) throw std::runtime_error("cannot reserve address space");
    base_ = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(raw_) + 2 * kMiB - 1) & ~(2 * kMiB - 1));
    huge_pages_ = ::madvise(base_, bytes, MADV_HUGEPAGE) == 0;
  }
  // False on a kernel without transparent huge pages, where the pool's advice is refused (and ignored).
  bool huge_pages() const { return huge_pages_; }
  ~Reserved() { ::munmap(raw_, bytes_); }
  Reserved(const Reserved&) = delete;
  Reserved& operator=(const Reserved&) = delete;
  // Makes [offset, offset + bytes) writable and has `steps` fault it in, as the pool grows.
  std::uint8_t* step(detail::PageSteps& steps, std::size_t offset, std::size_t bytes) {
    std::uint8_t* p = base_ + offset;
    if (::mprotect(p, bytes, PROT_READ | PROT_WRITE) != 0) throw std::runtime_error("mprotect failed");
    steps.populate(p, bytes);
    return p;
  }

 private:
  void* raw_;
  std::size_t bytes_;
  std::uint8_t* base_;
  bool huge_pages_ = false;
};

bool zeroed(const std::uint8_t* p, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 4096)
    if (p[i] != 0 || p[i + 4095] != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("the pool grows in huge pages while they come quickly", "[memory]") {
  Reserved range(4 * kMiB);
  if (!range.huge_pages()) return test::skip("this kernel has no transparent huge pages");
  detail::PageSteps steps(std::chrono::hours(1));
  range.step(steps, 0, 2 * kMiB);
  std::uint8_t* second = range.step(steps, 2 * kMiB, 2 * kMiB);
  CHECK(steps.huge_pages());
  const Mapping m = mapping_of(second);
  INFO("VmFlags:" << m.flags);
  CHECK(m.has("hg"));
  CHECK_FALSE(m.has("nh"));
  CHECK(m.rss_kib >= 2048);  // faulted in by the step, not by the first write
}

TEST_CASE("after one slow huge page the pool grows in 4 KiB pages, faulted in, zeroed", "[memory]") {
  Reserved range(6 * kMiB);
  if (!range.huge_pages()) return test::skip("this kernel has no transparent huge pages");
  // Any huge page is slower than no time at all: the first step is taken as one that came slowly.
  detail::PageSteps steps(std::chrono::nanoseconds(0));
  std::uint8_t* first = range.step(steps, 0, 2 * kMiB);
  CHECK_FALSE(steps.huge_pages());
  CHECK(mapping_of(first).has("hg"));  // the slow step itself stays as it came

  std::uint8_t* second = range.step(steps, 2 * kMiB, 4 * kMiB);
  const Mapping m = mapping_of(second);
  INFO("VmFlags:" << m.flags);
  CHECK(m.has("nh"));
  CHECK(m.rss_kib == 4096);
  CHECK(zeroed(second, 4 * kMiB));
  second[0] = second[4 * kMiB - 1] = 0xff;
  CHECK(second[4 * kMiB - 1] == 0xff);
  CHECK(mapping_of(second + 3 * kMiB).has("nh"));
}
