// ARC (Megiddo & Modha, FAST 2003): T1 holds keys seen once recently, T2 keys seen at least
// twice; B1 and B2 remember the keys evicted from each (ghosts, no bytes). A miss that hits a
// ghost list says that list was too short, and moves the target size p of T1 towards it.
//
// The store calls evict() before insert(), so the victim is chosen before the incoming key's
// ghost hit adapts p, and the paper's tie-break "x in B2 and |T1| == p" is not available:
// both shift p's effect by one miss, which is immaterial on long traces.
#include <algorithm>

#include "strata/error.h"
#include "tier/key_lists.h"
#include "tier/policies.h"

namespace strata::tier {
namespace {

constexpr int kT1 = 0, kT2 = 1, kB1 = 2, kB2 = 3;

class ArcPolicy final : public CachePolicy {
 public:
  explicit ArcPolicy(size_t capacity) { setCapacity(capacity); }

  void insert(ExpertKey key) override {
    const int list = lists_.listOf(key);
    if (list == kT1 || list == kT2)
      throw Error("expert cache (arc): " + expertKeyName(key) + " inserted twice");
    const size_t b1 = lists_.size(kB1), b2 = lists_.size(kB2);
    if (list == kB1) {
      p_ = std::min(c_, p_ + std::max<size_t>(1, b2 / b1));
      lists_.moveToFront(kT2, key);
    } else if (list == kB2) {
      p_ -= std::min(p_, std::max<size_t>(1, b1 / b2));
      lists_.moveToFront(kT2, key);
    } else {
      lists_.pushFront(kT1, key);
    }
    trimGhosts();
  }
  void touch(ExpertKey key) override {
    if (contains(key)) lists_.moveToFront(kT2, key);
  }
  std::optional<ExpertKey> evict() override {
    const size_t t1 = lists_.size(kT1);
    const bool fromT1 = t1 > 0 && (t1 > p_ || lists_.size(kT2) == 0);
    const std::optional<ExpertKey> victim = lists_.back(fromT1 ? kT1 : kT2);
    if (victim) lists_.moveToFront(fromT1 ? kB1 : kB2, *victim);
    trimGhosts();
    return victim;
  }
  void erase(ExpertKey key) override { lists_.remove(key); }
  bool contains(ExpertKey key) const override {
    const int list = lists_.listOf(key);
    return list == kT1 || list == kT2;
  }
  size_t size() const override { return lists_.size(kT1) + lists_.size(kT2); }
  void setCapacity(size_t experts) override {
    c_ = experts;
    p_ = std::min(p_, c_);
    trimGhosts();
  }

 private:
  // The paper's bounds: |T1| + |B1| <= c and everything remembered <= 2c.
  void trimGhosts() {
    while (lists_.size(kT1) + lists_.size(kB1) > c_ && lists_.size(kB1) > 0)
      lists_.remove(*lists_.back(kB1));
    while (size() + lists_.size(kB1) + lists_.size(kB2) > 2 * c_) {
      const int ghost = lists_.size(kB2) > 0 ? kB2 : kB1;
      if (lists_.size(ghost) == 0) break;
      lists_.remove(*lists_.back(ghost));
    }
  }

  KeyLists lists_{4};
  size_t c_ = 0;  // capacity
  size_t p_ = 0;  // target size of T1
};

}  // namespace

std::unique_ptr<CachePolicy> makeArcPolicy(size_t capacity) {
  return std::make_unique<ArcPolicy>(capacity);
}

}  // namespace strata::tier
