#pragma once
// A buffer aligned for O_DIRECT reads (the file offset, length and memory address of a direct
// read must all be multiples of the device's logical block size; 4096 covers every disk).
// Mapped straight from the OS (mmap), so freeing one gives its memory back at once: expert
// buffers are megabytes each and are freed from other threads than the ones that allocated
// them, which left malloc's arenas fragmented and the process ~1 GB over its memory budget.
#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <utility>

namespace strata::tier {

inline constexpr size_t kDirectAlignment = 4096;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : size_(roundUp(bytes)) {
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<std::byte*>(p);
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { release(); }

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

  static size_t roundUp(size_t bytes) {
    return (bytes + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment;
  }

 private:
  void release() {
    if (data_) ::munmap(data_, size_);
    data_ = nullptr;
  }

  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace strata::tier
