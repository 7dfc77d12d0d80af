#include "grammar/token_mask.h"

namespace strata::grammar {

size_t TokenMaskWalk::SetHash::operator()(const StackSet& s) const {
  uint64_t h = (uint64_t{s.utf8.value} << 24) ^ (uint64_t{s.utf8.remaining} << 16) ^
               (uint64_t{s.utf8.low} << 8) ^ s.utf8.high;
  for (uint32_t id : s.tops) h = (h ^ id) * 0x100000001B3ull + 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

TokenMaskWalk::TokenMaskWalk(const GrammarRules& rules, StackForest forest, const StackSet& start)
    : forest_(std::move(forest)), stepper_(rules, forest_) {
  intern(start);
}

int32_t TokenMaskWalk::intern(const StackSet& set) {
  const auto [it, fresh] = ids_.emplace(set, static_cast<int32_t>(sets_.size()));
  if (fresh) {
    sets_.push_back(set);
    if (sets_.size() <= kCachedSets) steps_.resize(sets_.size() * 256, kUnknown);
  }
  return it->second;
}

int32_t TokenMaskWalk::next(int32_t set, uint8_t byte) {
  const bool cached = static_cast<size_t>(set) < kCachedSets;
  if (cached) {
    const int32_t known = steps_[static_cast<size_t>(set) * 256 + byte];
    if (known != kUnknown) return known;
  }
  const int32_t result = stepper_.step(sets_[set], byte, scratch_) ? intern(scratch_) : kDead;
  if (cached) steps_[static_cast<size_t>(set) * 256 + byte] = result;
  return result;
}

void TokenMaskWalk::run(const TokenTrie& trie, std::vector<uint8_t>& allowed) {
  std::vector<int32_t> setAtDepth(trie.maxDepth + 1, 0);  // depth 0: the start, set 0
  const uint32_t nodes = static_cast<uint32_t>(trie.nodeCount());
  for (uint32_t i = 1; i < nodes;) {
    const uint32_t d = trie.depth[i];
    const int32_t s = next(setAtDepth[d - 1], trie.byte[i]);
    if (s == kDead) {
      i = trie.subtreeEnd[i];
      continue;
    }
    setAtDepth[d] = s;
    for (uint32_t k = trie.tokenBegin[i]; k < trie.tokenBegin[i + 1]; ++k)
      if (trie.tokenIds[k] >= 0) allowed[static_cast<size_t>(trie.tokenIds[k])] = 1;
    ++i;
  }
}

}  // namespace strata::grammar
