#include "grammar/token_trie.h"

#include <algorithm>

namespace strata::grammar {

// Sorted byte strings visit the trie in depth-first order: each token shares its first lcp
// bytes with the one before, so its nodes are the ones after them, appended in order.
TokenTrie TokenTrie::build(std::vector<std::pair<std::string, int32_t>> tokens) {
  std::sort(tokens.begin(), tokens.end());
  TokenTrie t;
  t.byte.push_back(0);
  t.depth.push_back(0);
  t.subtreeEnd.push_back(0);
  std::vector<uint32_t> path{0};  // the nodes of the previous token, root first
  std::vector<uint32_t> nodeOfToken;
  const std::string* previous = nullptr;
  for (const auto& [bytes, id] : tokens) {
    size_t common = 0;
    if (previous)
      while (common < previous->size() && common < bytes.size() &&
             (*previous)[common] == bytes[common])
        ++common;
    // Close the subtrees of the previous token's nodes past the shared prefix.
    while (path.size() > common + 1) {
      t.subtreeEnd[path.back()] = static_cast<uint32_t>(t.byte.size());
      path.pop_back();
    }
    for (size_t d = common; d < bytes.size(); ++d) {
      path.push_back(static_cast<uint32_t>(t.byte.size()));
      t.byte.push_back(static_cast<uint8_t>(bytes[d]));
      t.depth.push_back(static_cast<uint32_t>(d + 1));
      t.subtreeEnd.push_back(0);
    }
    nodeOfToken.push_back(path.back());
    t.maxDepth = std::max(t.maxDepth, static_cast<uint32_t>(bytes.size()));
    previous = &bytes;
  }
  while (!path.empty()) {
    t.subtreeEnd[path.back()] = static_cast<uint32_t>(t.byte.size());
    path.pop_back();
  }
  // Tokens are in node order already (sorted strings), so the lists are one pass.
  t.tokenBegin.assign(t.byte.size() + 1, 0);
  for (uint32_t node : nodeOfToken) ++t.tokenBegin[node + 1];
  for (size_t i = 1; i < t.tokenBegin.size(); ++i) t.tokenBegin[i] += t.tokenBegin[i - 1];
  t.tokenIds.reserve(tokens.size());
  for (const auto& entry : tokens) t.tokenIds.push_back(entry.second);
  return t;
}

}  // namespace strata::grammar
