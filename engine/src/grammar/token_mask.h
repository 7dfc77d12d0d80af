#pragma once
// The set of text tokens a state allows, by walking the token trie from that state. The walk
// caches the step from each distinct set of stacks by each byte, so the many tokens sharing a
// state (inside a JSON string, every token without a quote or a backslash) cost one lookup
// per trie node instead of a grammar step.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "grammar/byte_step.h"
#include "grammar/token_trie.h"

namespace strata::grammar {

class TokenMaskWalk {
 public:
  // `forest` is the matcher's (copied: the walk adds frames to it).
  TokenMaskWalk(const GrammarRules& rules, StackForest forest, const StackSet& start);
  // Sets allowed[id] = 1 for every token of `trie` the state allows.
  void run(const TokenTrie& trie, std::vector<uint8_t>& allowed);

 private:
  struct SetHash {
    size_t operator()(const StackSet& s) const;
  };
  static constexpr int32_t kDead = -1;
  static constexpr int32_t kUnknown = -2;
  // Past this many sets, steps are computed without caching (bounds the table's memory).
  static constexpr size_t kCachedSets = 4096;

  int32_t intern(const StackSet& set);
  int32_t next(int32_t set, uint8_t byte);

  StackForest forest_;
  ByteStepper stepper_;
  std::vector<StackSet> sets_;
  std::unordered_map<StackSet, int32_t, SetHash> ids_;
  std::vector<int32_t> steps_;  // [set * 256 + byte]
  StackSet scratch_;
};

}  // namespace strata::grammar
