#pragma once
// Every text token's bytes in one byte trie, laid out in depth-first order: a node's subtree
// is the nodes up to subtreeEnd, so a mask walks the arrays front to back and skips a whole
// subtree (every token sharing a rejected prefix) with one jump.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::grammar {

struct TokenTrie {
  // Node 0 is the root (the empty prefix); node i > 0 adds byte[i] at depth[i] (1-based).
  std::vector<uint8_t> byte;
  std::vector<uint32_t> depth;
  std::vector<uint32_t> subtreeEnd;
  // The tokens whose bytes end at node i: tokenIds[tokenBegin[i] .. tokenBegin[i + 1]).
  std::vector<uint32_t> tokenBegin;
  std::vector<int32_t> tokenIds;
  uint32_t maxDepth = 0;

  // `tokens`: (bytes, id), bytes non-empty, in any order.
  static TokenTrie build(std::vector<std::pair<std::string, int32_t>> tokens);
  size_t nodeCount() const { return byte.size(); }
};

}  // namespace strata::grammar
