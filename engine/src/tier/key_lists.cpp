#include "tier/key_lists.h"

#include "strata/error.h"

namespace strata::tier {

KeyLists::KeyLists(int listCount) : lists_(size_t(listCount)) {}

KeyLists::Node& KeyLists::node(ExpertKey key) {
  if (key == kNil) throw Error("expert cache: key 65535:65535 is reserved");
  const size_t layer = size_t(keyLayer(key)), expert = size_t(keyExpert(key));
  if (layer >= table_.size()) table_.resize(layer + 1);
  std::vector<Node>& row = table_[layer];
  if (expert >= row.size()) row.resize(expert + 1);
  return row[expert];
}

const KeyLists::Node* KeyLists::find(ExpertKey key) const {
  const size_t layer = size_t(keyLayer(key)), expert = size_t(keyExpert(key));
  if (layer >= table_.size() || expert >= table_[layer].size()) return nullptr;
  return &table_[layer][expert];
}

int KeyLists::listOf(ExpertKey key) const {
  const Node* n = find(key);
  return n ? n->list : kNone;
}

std::optional<ExpertKey> KeyLists::front(int list) const {
  const uint32_t k = lists_[size_t(list)].head;
  return k == kNil ? std::nullopt : std::optional<ExpertKey>(k);
}

std::optional<ExpertKey> KeyLists::back(int list) const {
  const uint32_t k = lists_[size_t(list)].tail;
  return k == kNil ? std::nullopt : std::optional<ExpertKey>(k);
}

void KeyLists::pushFront(int list, ExpertKey key) {
  Node& n = node(key);
  if (n.list != kNone) throw Error("expert cache: " + expertKeyName(key) + " inserted twice");
  List& l = lists_[size_t(list)];
  n.list = int16_t(list);
  n.prev = kNil;
  n.next = l.head;
  if (l.head != kNil) node(l.head).prev = key;
  l.head = key;
  if (l.tail == kNil) l.tail = key;
  ++l.size;
}

void KeyLists::unlink(Node& n) {
  List& l = lists_[size_t(n.list)];
  if (n.prev != kNil)
    node(n.prev).next = n.next;
  else
    l.head = n.next;
  if (n.next != kNil)
    node(n.next).prev = n.prev;
  else
    l.tail = n.prev;
  --l.size;
  n = Node{};
}

void KeyLists::moveToFront(int list, ExpertKey key) {
  Node& n = node(key);
  if (n.list != kNone) unlink(n);
  pushFront(list, key);
}

void KeyLists::remove(ExpertKey key) {
  const Node* found = find(key);
  if (!found || found->list == kNone) return;
  unlink(node(key));
}

}  // namespace strata::tier
