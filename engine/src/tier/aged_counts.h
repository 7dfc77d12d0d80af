#pragma once
// How often each expert was used lately, resident or not: one small counter per
// (layer, expert), all halved every `period` increments so that old popularity fades. This is
// TinyLFU's frequency estimate, kept exact instead of in a count-min sketch: a model has few
// experts (GLM-5: ~20k), so a table costs less than a sketch and never collides. Halving
// walks the whole table, amortised O(keys / period) per increment.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tier/cache_policy.h"

namespace strata::tier {

class AgedCounts {
 public:
  // A full byte rather than TinyLFU's 4-bit sketch counters: at 15 the popular experts all
  // saturated and tied (tools/traces/README.md: up to 4 points of hit rate at 10% capacity).
  static constexpr uint8_t kMax = 255;

  void setPeriod(size_t increments) { period_ = increments ? increments : 1; }

  uint8_t count(ExpertKey key) const {
    const size_t layer = size_t(keyLayer(key)), expert = size_t(keyExpert(key));
    return layer < counts_.size() && expert < counts_[layer].size() ? counts_[layer][expert] : 0;
  }

  // Changes each time counts change other than by increment() (halving, priming): orderings
  // by count made before are stale.
  uint64_t generation() const { return generation_; }

  // Starts `key` at `uses` (at most kMax) unless it is counted higher already. Not an access:
  // the aging period does not advance.
  void prime(ExpertKey key, unsigned uses) {
    uint8_t& c = slot(key);
    c = std::max<uint8_t>(c, uint8_t(std::min<unsigned>(uses, kMax)));
    ++generation_;
  }

  void increment(ExpertKey key) {
    uint8_t& c = slot(key);
    if (c < kMax) ++c;
    if (++sinceHalving_ >= period_) halve();
  }

 private:
  uint8_t& slot(ExpertKey key) {
    const size_t layer = size_t(keyLayer(key)), expert = size_t(keyExpert(key));
    if (layer >= counts_.size()) counts_.resize(layer + 1);
    if (expert >= counts_[layer].size()) counts_[layer].resize(expert + 1);
    return counts_[layer][expert];
  }

  void halve() {
    for (std::vector<uint8_t>& row : counts_)
      for (uint8_t& c : row) c /= 2;
    sinceHalving_ = 0;
    ++generation_;
  }

  std::vector<std::vector<uint8_t>> counts_;  // [layer][expert]
  size_t period_ = 1, sinceHalving_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace strata::tier
