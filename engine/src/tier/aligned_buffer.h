#pragma once
// A heap buffer aligned for O_DIRECT reads (the file offset, length and memory address of a
// direct read must all be multiples of the device's logical block size; 4096 covers every disk).
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace strata::tier {

inline constexpr size_t kDirectAlignment = 4096;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : size_(roundUp(bytes)) {
    if (size_ == 0) return;
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(kDirectAlignment, size_)));
    if (!data_) throw std::bad_alloc();
  }
  std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }

  static size_t roundUp(size_t bytes) {
    return (bytes + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment;
  }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  size_t size_ = 0;
};

}  // namespace strata::tier
