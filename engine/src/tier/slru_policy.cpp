// SLRU: new keys enter a probation list; a hit there promotes the key to a protected list
// (80% of capacity), whose overflow drops back to the front of probation. Victims come from
// probation first, so a burst of one-time keys cannot flush keys that were used twice.
#include "tier/key_lists.h"
#include "tier/policies.h"

namespace strata::tier {
namespace {

constexpr int kProbation = 0, kProtected = 1;

class SlruPolicy final : public CachePolicy {
 public:
  explicit SlruPolicy(size_t capacity) { setCapacity(capacity); }

  void insert(ExpertKey key) override { lists_.pushFront(kProbation, key); }
  void touch(ExpertKey key) override {
    if (lists_.listOf(key) == KeyLists::kNone) return;
    lists_.moveToFront(kProtected, key);
    demoteOverflow();
  }
  std::optional<ExpertKey> evict() override {
    std::optional<ExpertKey> victim = lists_.back(kProbation);
    if (!victim) victim = lists_.back(kProtected);
    if (victim) lists_.remove(*victim);
    return victim;
  }
  void erase(ExpertKey key) override { lists_.remove(key); }
  bool contains(ExpertKey key) const override { return lists_.listOf(key) != KeyLists::kNone; }
  size_t size() const override { return lists_.size(kProbation) + lists_.size(kProtected); }
  void setCapacity(size_t experts) override {
    protectedTarget_ = experts * 4 / 5;
    demoteOverflow();
  }

 private:
  void demoteOverflow() {
    while (lists_.size(kProtected) > protectedTarget_)
      lists_.moveToFront(kProbation, *lists_.back(kProtected));
  }

  KeyLists lists_{2};
  size_t protectedTarget_ = 0;
};

}  // namespace

std::unique_ptr<CachePolicy> makeSlruPolicy(size_t capacity) {
  return std::make_unique<SlruPolicy>(capacity);
}

}  // namespace strata::tier
