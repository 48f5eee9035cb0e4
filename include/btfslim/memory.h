// Large zero-filled arrays without the cost of zeroing them.
//
// Fresh anonymous mappings are already zero, so a big array is mapped rather than allocated and
// memset; past 2 MiB it asks for transparent huge pages, one page fault per 2 MiB instead of one per
// 4 KiB. On a paravirtualized VM a page fault costs microseconds: for vmlinux-sized inputs these faults
// were a third of `measure`'s time. Small arrays use calloc.
#pragma once

#include <cstddef>
#include <iterator>
#include <span>
#include <type_traits>

namespace btfslim {

namespace detail {
void* map_zeroed(std::size_t bytes);
void unmap_zeroed(void* p, std::size_t bytes);
}  // namespace detail

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(std::size_t n) : n_(n) {
    if (n) data_ = static_cast<T*>(detail::map_zeroed(n * sizeof(T)));
  }
  ~ZeroedArray() { release(); }
  ZeroedArray(ZeroedArray&& o) noexcept : data_(o.data_), n_(o.n_) { o.data_ = nullptr, o.n_ = 0; }
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_, n_ = o.n_;
      o.data_ = nullptr, o.n_ = 0;
    }
    return *this;
  }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;

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
  void release() {
    if (data_) detail::unmap_zeroed(data_, n_ * sizeof(T));
    data_ = nullptr;
    n_ = 0;
  }
  T* data_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace btfslim
