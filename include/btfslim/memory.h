// Large zero-filled arrays, from memory that is cheap to touch.
//
// On the paravirtualized VMs this runs on, the first write to a fresh 4 KiB page costs microseconds,
// even after MADV_POPULATE_WRITE has faulted it in: writing 4 MiB for the first time took 7.7 ms in 4 KiB
// pages (populated beforehand) and 0.08 ms in 2 MiB transparent huge pages (0.4 ms to populate). For
// vmlinux-sized inputs that was most of `measure`'s time, and it is most of what libbpf's btf__parse
// costs too. So the big arrays of the analysis come from one pool of huge pages: a reserved address
// range whose pages are faulted in 2 MiB at a time as the pool grows, packed tightly (a huge page counts
// whole in the resident set whether or not it is used), and reused when an array is freed, so that the
// resident set is the most that is live at once, rounded up to 2 MiB. Small arrays use calloc.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <span>
#include <type_traits>

namespace btfslim {

namespace detail {
// With zero false the contents are unspecified.
void* allocate_zeroed(std::size_t bytes, bool zero = true);
// Zeroed memory outside the pool, in 4 KiB pages faulted in as they are touched: for an array sized
// by a loose bound whose untouched part should cost nothing resident. The first `populated` bytes,
// sure to be written, are mapped at once (one call rather than a fault per page).
void* allocate_lazy(std::size_t bytes, std::size_t populated = 0);
void release_zeroed(void* p, std::size_t bytes);
// Gives back all but the first `kept` bytes of an allocation of `bytes` where it can; returns the bytes
// the allocation now holds.
std::size_t shrink_zeroed(void* p, std::size_t bytes, std::size_t kept);

// How the pool faults in each 2 MiB step it grows by (memory.cc says why): as huge pages until one
// takes longer than `slow`, then as 4 KiB pages. `p` is 2 MiB aligned in a range advised for huge pages.
class PageSteps {
 public:
  explicit PageSteps(std::chrono::nanoseconds slow) : slow_(slow) {}
  void populate(void* p, std::size_t bytes);
  bool huge_pages() const { return huge_pages_; }

 private:
  std::chrono::nanoseconds slow_;
  bool huge_pages_ = true;
};
}  // namespace detail

// Maps the pages wholly inside [p, p + bytes) at once, for memory about to be written page after page
// (a vector's reserved capacity): one call instead of a fault per 4 KiB. Nothing for less than 64 KiB.
void populate_for_write(void* p, std::size_t bytes);

// An allocator from the same pool, for a std::vector of a run's size that is not plain data (an
// agent's relocation results, a megabyte and more): reserved once, it takes no page fault. Small
// vectors come from malloc, as with ZeroedArray.
template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT: rebinding, as allocators do
  T* allocate(std::size_t n) { return static_cast<T*>(detail::allocate_zeroed(n * sizeof(T), false)); }
  void deallocate(T* p, std::size_t n) noexcept { detail::release_zeroed(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(std::size_t n) : ZeroedArray(n, true) {}
  // An array whose every element is written before it is read: memory the pool hands out again is not
  // cleared for it (after std::make_unique_for_overwrite).
  static ZeroedArray for_overwrite(std::size_t n) { return ZeroedArray(n, false); }
  // Outside the pool (detail::allocate_lazy): slower to write the first time, but only what is
  // touched is resident, and nothing rounds the resident set up to a huge page. The first `sure`
  // elements, which the caller knows it will write, are mapped at once.
  static ZeroedArray lazy(std::size_t n, std::size_t sure = 0) {
    ZeroedArray a;
    a.n_ = n;
    a.bytes_ = n * sizeof(T);
    if (n) a.data_ = static_cast<T*>(detail::allocate_lazy(a.bytes_, std::min(sure, n) * sizeof(T)));
    return a;
  }
  ~ZeroedArray() { release(); }
  ZeroedArray(ZeroedArray&& o) noexcept : data_(o.data_), n_(o.n_), bytes_(o.bytes_) {
    o.data_ = nullptr, o.n_ = 0, o.bytes_ = 0;
  }
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_, n_ = o.n_, bytes_ = o.bytes_;
      o.data_ = nullptr, o.n_ = 0, o.bytes_ = 0;
    }
    return *this;
  }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;

  // Shortens the array to its first n elements (n <= size()) and gives the rest of its memory back: for
  // arrays sized by an upper bound.
  void truncate(std::size_t n) {
    if (data_) bytes_ = detail::shrink_zeroed(data_, bytes_, n * sizeof(T));
    n_ = n;
  }

  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + n_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + n_; }
  std::reverse_iterator<const T*> rbegin() const { return std::reverse_iterator<const T*>(end()); }
  std::reverse_iterator<const T*> rend() const { return std::reverse_iterator<const T*>(begin()); }
  operator std::span<const T>() const { return {data_, n_}; }

 private:
  ZeroedArray(std::size_t n, bool zero) : n_(n), bytes_(n * sizeof(T)) {
    if (n) data_ = static_cast<T*>(detail::allocate_zeroed(bytes_, zero));
  }
  void release() {
    if (data_) detail::release_zeroed(data_, bytes_);
    data_ = nullptr;
    n_ = 0;
    bytes_ = 0;
  }
  T* data_ = nullptr;
  std::size_t n_ = 0;
  std::size_t bytes_ = 0;  // as allocated
};

}  // namespace btfslim
