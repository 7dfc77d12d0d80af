// W-TinyLFU (Einziger, Friedman & Manes, 2017) with an adaptive window. New keys enter an LRU
// window; when the cache is full, the window's oldest key competes with the main cache's
// victim (an SLRU, 80% protected) and the one used more often lately (AgedCounts) stays.
//
// The window must hold what one forward step brings in: the experts the next token reuses
// are mostly the ones this token just loaded, and a window shorter than that evicts them on
// frequency before their second use (measured: a 1% window loses a third of the hit rate at
// 10% capacity). The right size depends on the model and the capacity, so it adapts the way
// ARC sizes its lists (adaptive_window.h): the keys each side evicted are remembered (ghosts,
// no bytes); a miss on a key the window evicted grows the window by one, a miss on one the
// main cache evicted shrinks it. (Caffeine instead hill-climbs on sampled hit rates; with routing traces the hit rate falls
// off a cliff below the step's working set and the climber got stuck there.)
//
// Every miss is inserted (the store must hold the expert to use it), so "admission" here
// decides which resident key goes, not whether the new one comes in.
#include <algorithm>

#include "tier/adaptive_window.h"
#include "tier/aged_counts.h"
#include "tier/key_lists.h"
#include "tier/policies.h"

namespace strata::tier {
namespace {

constexpr int kWindow = 0, kProbation = 1, kProtected = 2;  // resident
constexpr int kWindowGhosts = 3, kMainGhosts = 4;           // evicted, remembered
constexpr size_t kAgingFactor = 40;     // counts halve every 40 x capacity accesses (10: -1
                                        // to -4 points; 100: no better; tools/traces/README.md)

class TinyLfuPolicy final : public CachePolicy {
 public:
  explicit TinyLfuPolicy(size_t capacity) { setCapacity(capacity); }

  void insert(ExpertKey key) override {
    if (window_.isGhost(lists_.listOf(key))) {
      window_.onMiss(key);
      applyWindow();
    }
    lists_.pushFront(kWindow, key);  // throws if already resident
    counts_.increment(key);
    demoteWindowOverflow();
  }
  void touch(ExpertKey key) override {
    if (!contains(key)) return;
    counts_.increment(key);
    lists_.moveToFront(lists_.listOf(key) == kWindow ? kWindow : kProtected, key);
    demoteProtectedOverflow();
  }
  std::optional<ExpertKey> evict() override {
    const std::optional<ExpertKey> candidate = lists_.back(kWindow);
    std::optional<ExpertKey> victim = lists_.back(kProbation);
    if (!victim) victim = lists_.back(kProtected);
    bool fromWindow = !victim;
    if (candidate && victim && lists_.size(kWindow) >= window_.target()) {
      // Ties keep the incumbent: a key must prove itself to displace one already in main.
      fromWindow = counts_.count(*candidate) <= counts_.count(*victim);
      if (!fromWindow) lists_.moveToFront(kProbation, *candidate);
    }
    if (fromWindow) victim = candidate;
    if (victim) window_.remember(*victim, fromWindow);
    return victim;
  }
  void erase(ExpertKey key) override { lists_.remove(key); }
  bool contains(ExpertKey key) const override {
    const int list = lists_.listOf(key);
    return list == kWindow || list == kProbation || list == kProtected;
  }
  size_t size() const override {
    return lists_.size(kWindow) + lists_.size(kProbation) + lists_.size(kProtected);
  }
  void prime(ExpertKey key, unsigned uses) override { counts_.prime(key, uses); }
  void setCapacity(size_t experts) override {
    capacity_ = experts;
    counts_.setPeriod(kAgingFactor * experts);
    window_.setCapacity(experts);
    applyWindow();
  }

 private:
  void applyWindow() {
    const size_t window = window_.target();
    protectedTarget_ = (capacity_ > window ? capacity_ - window : 0) * 4 / 5;
    demoteWindowOverflow();
    demoteProtectedOverflow();
  }
  // A window over its size (cache still filling, or the window shrank) hands its oldest keys
  // to main without a contest: there is room, or the next evictions make it.
  void demoteWindowOverflow() {
    while (lists_.size(kWindow) > window_.target())
      lists_.moveToFront(kProbation, *lists_.back(kWindow));
  }
  void demoteProtectedOverflow() {
    while (lists_.size(kProtected) > protectedTarget_)
      lists_.moveToFront(kProbation, *lists_.back(kProtected));
  }

  KeyLists lists_{5};
  AdaptiveWindow window_{lists_, kWindowGhosts, kMainGhosts};
  AgedCounts counts_;
  size_t capacity_ = 0;
  size_t protectedTarget_ = 0;
};

}  // namespace

std::unique_ptr<CachePolicy> makeTinyLfuPolicy(size_t capacity) {
  return std::make_unique<TinyLfuPolicy>(capacity);
}

}  // namespace strata::tier
