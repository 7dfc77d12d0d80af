#include "grammar/stack_forest.h"

#include <algorithm>

namespace strata::grammar {
namespace {

size_t slotOf(uint32_t position, uint32_t below, size_t mask) {
  const uint64_t key = (uint64_t{position} << 32) | below;
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

}  // namespace

uint32_t StackForest::push(uint32_t position, uint32_t below) {
  if (2 * (frames_.size() + 1) > slots_.size()) rehash(std::max<size_t>(64, 2 * slots_.size()));
  const size_t mask = slots_.size() - 1;
  for (size_t s = slotOf(position, below, mask);; s = (s + 1) & mask) {
    const uint32_t id = slots_[s];
    if (id == 0) {
      frames_.push_back({position, below});
      slots_[s] = static_cast<uint32_t>(frames_.size());
      return static_cast<uint32_t>(frames_.size() - 1);
    }
    const Frame& f = frames_[id - 1];
    if (f.position == position && f.below == below) return id - 1;
  }
}

void StackForest::rehash(size_t slotCount) {
  slots_.assign(slotCount, 0);
  const size_t mask = slotCount - 1;
  for (size_t id = 0; id < frames_.size(); ++id) {
    size_t s = slotOf(frames_[id].position, frames_[id].below, mask);
    while (slots_[s] != 0) s = (s + 1) & mask;
    slots_[s] = static_cast<uint32_t>(id + 1);
  }
}

void compact(const StackForest& from, StackSet& set, StackForest& to) {
  constexpr uint32_t kUnmapped = 0xFFFFFFFE;
  std::vector<uint32_t> mapped(from.size(), kUnmapped);
  std::vector<uint32_t> chain;
  for (uint32_t& top : set.tops) {
    // Walk down to a frame already copied (or the bottom), then copy upwards.
    chain.clear();
    uint32_t id = top;
    while (id != kEmptyStack && mapped[id] == kUnmapped) {
      chain.push_back(id);
      id = from.frame(id).below;
    }
    uint32_t below = id == kEmptyStack ? kEmptyStack : mapped[id];
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      below = to.push(from.frame(*it).position, below);
      mapped[*it] = below;
    }
    top = below;
  }
  std::sort(set.tops.begin(), set.tops.end());
}

}  // namespace strata::grammar
