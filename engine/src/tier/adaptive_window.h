#pragma once
// The recency window W-TinyLFU and Window-LFU keep in front of their main cache, sized by ghost
// hits (tinylfu_policy.cpp says why): the keys each side evicted are remembered without their
// bytes; a miss on one the window evicted grows the window by one, a miss on one main evicted
// shrinks it. The policy owns the window's list and moves its overflow to main; this keeps
// the target size and the two ghost lists.
#include <algorithm>
#include <cstddef>

#include "tier/key_lists.h"

namespace strata::tier {

class AdaptiveWindow {
 public:
  static constexpr double kInitialShare = 0.2;  // of capacity; the ghosts move it from there
  // Ghosts kept: capacity / 4. Measured on zipf traces, larger histories react to old
  // mistakes and settle on a worse size, smaller ones are too noisy.
  static constexpr size_t kGhostDivisor = 4;

  // `windowGhosts` and `mainGhosts` are list ids in the policy's `lists`.
  AdaptiveWindow(KeyLists& lists, int windowGhosts, int mainGhosts)
      : lists_(lists), windowGhosts_(windowGhosts), mainGhosts_(mainGhosts) {}
  AdaptiveWindow(const AdaptiveWindow&) = delete;  // it refers to its policy's lists
  AdaptiveWindow& operator=(const AdaptiveWindow&) = delete;

  size_t target() const { return window_; }
  bool isGhost(int list) const { return list == windowGhosts_ || list == mainGhosts_; }

  // The first call sizes the window at kInitialShare; later ones keep its share.
  void setCapacity(size_t capacity) {
    window_ = capacity_ ? window_ * capacity / std::max<size_t>(1, capacity_)
                        : size_t(kInitialShare * double(capacity));
    capacity_ = capacity;
    window_ = std::clamp<size_t>(window_, 1, std::max<size_t>(1, capacity_ - 1));
    trimGhosts();
  }

  // Before a missed key is inserted: a ghost means that side was one key too small.
  void onMiss(ExpertKey key) {
    const int list = lists_.listOf(key);
    if (!isGhost(list)) return;
    if (list == windowGhosts_) {
      ++window_;
    } else if (window_ > 1) {
      --window_;
    }
    window_ = std::clamp<size_t>(window_, 1, std::max<size_t>(1, capacity_ - 1));
    lists_.remove(key);
  }

  // A victim left the cache from the window or from main.
  void remember(ExpertKey key, bool fromWindow) {
    lists_.moveToFront(fromWindow ? windowGhosts_ : mainGhosts_, key);
    trimGhosts();
  }

 private:
  void trimGhosts() {
    while (lists_.size(windowGhosts_) + lists_.size(mainGhosts_) > capacity_ / kGhostDivisor) {
      const int longer = lists_.size(windowGhosts_) > lists_.size(mainGhosts_) ? windowGhosts_ : mainGhosts_;
      lists_.remove(*lists_.back(longer));
    }
  }

  KeyLists& lists_;
  const int windowGhosts_, mainGhosts_;
  size_t capacity_ = 0;
  size_t window_ = 1;  // target size, in experts
};

}  // namespace strata::tier
