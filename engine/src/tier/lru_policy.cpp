// LRU: one recency list; the victim is the key unused for longest. On a loop over more
// experts than fit (every layer in turn, every token) it misses every time: the baseline.
#include "tier/key_lists.h"
#include "tier/policies.h"

namespace strata::tier {
namespace {

class LruPolicy final : public CachePolicy {
 public:
  void insert(ExpertKey key) override { lists_.pushFront(0, key); }
  void touch(ExpertKey key) override {
    if (lists_.listOf(key) != KeyLists::kNone) lists_.moveToFront(0, key);
  }
  std::optional<ExpertKey> evict() override {
    const std::optional<ExpertKey> victim = lists_.back(0);
    if (victim) lists_.remove(*victim);
    return victim;
  }
  void erase(ExpertKey key) override { lists_.remove(key); }
  bool contains(ExpertKey key) const override { return lists_.listOf(key) != KeyLists::kNone; }
  size_t size() const override { return lists_.size(0); }
  void setCapacity(size_t) override {}  // recency alone needs no sizing

 private:
  KeyLists lists_{1};
};

}  // namespace

std::unique_ptr<CachePolicy> makeLruPolicy() { return std::make_unique<LruPolicy>(); }

}  // namespace strata::tier
