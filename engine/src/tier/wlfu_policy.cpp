// Window-LFU: W-TinyLFU's adaptive recency window in front of a main cache ordered by aged
// frequency instead of by recency. W-TinyLFU's main is an SLRU: its victim is the least
// recent probation key, which may be popular, while a rarely used key sits safe in the
// protected segment. Here main's victim is the resident key used least lately (aged counts,
// ties: the least recent), which is what keeping the most probable experts needs when
// routing repeats little from one token to the next; the window still holds what the current
// step loaded, for routing that does.
//
// Main is kept as one recency list per count value (bucket), so every operation is O(1):
// a touch moves a key one bucket up, the victim is the back of the lowest non-empty bucket
// (at most kMax + 1 looked at). When the counts halve, main is re-bucketed once (O(capacity)
// every kAgingFactor x capacity accesses).
#include <algorithm>

#include "tier/adaptive_window.h"
#include "tier/aged_counts.h"
#include "tier/key_lists.h"
#include "tier/policies.h"

namespace strata::tier {
namespace {

constexpr int kWindow = 0, kWindowGhosts = 1, kMainGhosts = 2;
constexpr int kFirstBucket = 3;  // main: list kFirstBucket + count
constexpr int kListCount = kFirstBucket + AgedCounts::kMax + 1;
constexpr size_t kAgingFactor = 40;  // as W-TinyLFU's (tinylfu_policy.cpp)

class WindowLfuPolicy final : public CachePolicy {
 public:
  explicit WindowLfuPolicy(size_t capacity) { setCapacity(capacity); }

  void insert(ExpertKey key) override {
    syncBuckets();
    if (window_.isGhost(lists_.listOf(key))) window_.onMiss(key);
    lists_.pushFront(kWindow, key);  // throws if already resident
    counts_.increment(key);
    demoteWindowOverflow();
  }
  void touch(ExpertKey key) override {
    if (!contains(key)) return;
    syncBuckets();
    counts_.increment(key);
    if (lists_.listOf(key) == kWindow) {
      lists_.moveToFront(kWindow, key);
    } else {
      toMain(key);
    }
  }
  std::optional<ExpertKey> evict() override {
    syncBuckets();
    const std::optional<ExpertKey> candidate = lists_.back(kWindow);
    std::optional<ExpertKey> victim = mainVictim();
    bool fromWindow = !victim;
    if (candidate && victim && lists_.size(kWindow) >= window_.target()) {
      // Ties keep the incumbent, as in W-TinyLFU.
      fromWindow = counts_.count(*candidate) <= counts_.count(*victim);
      if (!fromWindow) toMain(*candidate);
    }
    if (fromWindow) victim = candidate;
    if (victim) {
      if (!fromWindow) --mainSize_;
      window_.remember(*victim, fromWindow);
    }
    return victim;
  }
  void erase(ExpertKey key) override {
    if (!contains(key)) return;
    if (lists_.listOf(key) >= kFirstBucket) --mainSize_;
    lists_.remove(key);
  }
  bool contains(ExpertKey key) const override {
    const int list = lists_.listOf(key);
    return list == kWindow || list >= kFirstBucket;
  }
  size_t size() const override { return lists_.size(kWindow) + mainSize_; }
  void prime(ExpertKey key, unsigned uses) override { counts_.prime(key, uses); }
  void setCapacity(size_t experts) override {
    counts_.setPeriod(kAgingFactor * experts);
    window_.setCapacity(experts);
    demoteWindowOverflow();
  }

 private:
  void toMain(ExpertKey key) {
    if (lists_.listOf(key) < kFirstBucket) ++mainSize_;
    lists_.moveToFront(kFirstBucket + counts_.count(key), key);
  }
  std::optional<ExpertKey> mainVictim() const {
    for (int b = kFirstBucket; b < kListCount; ++b)
      if (auto k = lists_.back(b)) return k;
    return std::nullopt;
  }
  // After the counts halved, every main key moves to its new bucket; within a bucket the
  // recency order is kept (oldest first, each pushed to the front).
  void syncBuckets() {
    if (counts_.generation() == bucketsGeneration_) return;
    bucketsGeneration_ = counts_.generation();
    std::vector<ExpertKey> main;
    for (int b = kFirstBucket; b < kListCount; ++b)
      for (auto k = lists_.back(b); k; k = lists_.back(b)) {
        main.push_back(*k);
        lists_.remove(*k);
      }
    for (ExpertKey k : main) lists_.pushFront(kFirstBucket + counts_.count(k), k);
  }
  // A window over its size (cache still filling, or the window shrank) hands its oldest keys
  // to main without a contest: there is room, or the next evictions make it.
  void demoteWindowOverflow() {
    while (lists_.size(kWindow) > window_.target()) toMain(*lists_.back(kWindow));
  }

  KeyLists lists_{kListCount};
  AdaptiveWindow window_{lists_, kWindowGhosts, kMainGhosts};
  AgedCounts counts_;
  uint64_t bucketsGeneration_ = 0;
  size_t mainSize_ = 0;  // keys in the buckets
};

}  // namespace

std::unique_ptr<CachePolicy> makeWindowLfuPolicy(size_t capacity) {
  return std::make_unique<WindowLfuPolicy>(capacity);
}

}  // namespace strata::tier
