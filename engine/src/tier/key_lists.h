#pragma once
// A few doubly-linked recency lists over expert keys, each key in at most one list. The
// links live in a table indexed by (layer, expert), so finding, moving and removing a key is
// O(1) with no hashing, and nothing is allocated once every key has been seen: the building
// block of the LRU-family policies.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "tier/cache_policy.h"

namespace strata::tier {

class KeyLists {
 public:
  static constexpr int kNone = -1;

  explicit KeyLists(int listCount);  // at most 32767

  int listOf(ExpertKey key) const;  // kNone when the key is in no list
  size_t size(int list) const { return lists_[size_t(list)].size; }
  std::optional<ExpertKey> front(int list) const;  // most recent
  std::optional<ExpertKey> back(int list) const;   // least recent

  void pushFront(int list, ExpertKey key);    // the key must be in no list
  void moveToFront(int list, ExpertKey key);  // from whichever list holds it
  void remove(ExpertKey key);                 // no-op when in no list

 private:
  static constexpr uint32_t kNil = UINT32_MAX;  // key 0xffff:0xffff is reserved for this
  struct Node {
    uint32_t prev = kNil, next = kNil;  // neighbours' keys
    int16_t list = kNone;
  };
  struct List {
    uint32_t head = kNil, tail = kNil;
    size_t size = 0;
  };

  Node& node(ExpertKey key);  // grows the table on first sight of a key
  const Node* find(ExpertKey key) const;
  void unlink(Node& n);

  std::vector<std::vector<Node>> table_;  // [layer][expert]
  std::vector<List> lists_;
};

}  // namespace strata::tier
