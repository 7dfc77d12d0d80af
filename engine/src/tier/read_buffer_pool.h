#pragma once
// Expert read buffers, recycled. A streamed expert's matrices are views into the buffer it was
// read into (no copy into matrices of their own); when the expert has left the cache and its
// last user lets go, the buffer comes back here and takes the next read, whose pages are then
// already mapped. At most `maxSpare` idle buffers are kept: the read buffers the memory plan
// counts as scratch. Thread-safe; buffers may outlive the store that made the pool.
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "tier/aligned_buffer.h"

namespace strata::tier {

class ReadBufferPool : public std::enable_shared_from_this<ReadBufferPool> {
 public:
  static std::shared_ptr<ReadBufferPool> create(size_t bufferBytes, size_t maxSpare) {
    return std::shared_ptr<ReadBufferPool>(new ReadBufferPool(bufferBytes, maxSpare));
  }

  // A buffer of bufferBytes() bytes (a spare one when there is one); it returns to the pool
  // when the last reference to it drops.
  std::shared_ptr<AlignedBuffer> take() {
    AlignedBuffer buffer;
    {
      std::lock_guard lock(mutex_);
      if (!spare_.empty()) {
        buffer = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    if (!buffer.data()) buffer = AlignedBuffer(bufferBytes_);
    return std::shared_ptr<AlignedBuffer>(new AlignedBuffer(std::move(buffer)),
                                          [pool = shared_from_this()](AlignedBuffer* b) {
                                            pool->give(std::move(*b));
                                            delete b;
                                          });
  }

  size_t bufferBytes() const { return bufferBytes_; }
  size_t spareCount() const {
    std::lock_guard lock(mutex_);
    return spare_.size();
  }

 private:
  ReadBufferPool(size_t bufferBytes, size_t maxSpare)
      : bufferBytes_(AlignedBuffer::roundUp(bufferBytes)), maxSpare_(maxSpare) {}

  void give(AlignedBuffer buffer) {
    std::lock_guard lock(mutex_);
    if (spare_.size() < maxSpare_) spare_.push_back(std::move(buffer));
  }

  const size_t bufferBytes_;
  const size_t maxSpare_;
  mutable std::mutex mutex_;
  std::vector<AlignedBuffer> spare_;
};

}  // namespace strata::tier
