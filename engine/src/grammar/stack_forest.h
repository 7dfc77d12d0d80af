#pragma once
// The matcher's pushdown stacks, stored as a forest: a stack is the id of its top frame, each
// frame names the frame below it, and equal frames are stored once (interned). Stacks that
// share their lower part share its frames, so copying a set of stacks is copying ids, and two
// stacks are equal exactly when their ids are.
#include <cstdint>
#include <vector>

#include "grammar/utf8_step.h"

namespace strata::grammar {

// The stack with no frames: the grammar's root has been matched completely.
constexpr uint32_t kEmptyStack = 0xFFFFFFFF;

struct Frame {
  uint32_t position;  // a symbol in GrammarRules::symbols: what to match next
  uint32_t below;     // the frame to return to, or kEmptyStack
};

class StackForest {
 public:
  // The id of the frame (position, below), stored on first use.
  uint32_t push(uint32_t position, uint32_t below);
  Frame frame(uint32_t id) const { return frames_[id]; }
  size_t size() const { return frames_.size(); }

 private:
  void rehash(size_t slotCount);

  std::vector<Frame> frames_;
  std::vector<uint32_t> slots_;  // open addressing: frame id + 1, 0 for a free slot
};

// Where a match stands: the live stacks (sorted ids; every top frame is at a Chars symbol, or
// the stack is kEmptyStack) and the part of a character read so far.
struct StackSet {
  Utf8Partial utf8;
  std::vector<uint32_t> tops;

  bool operator==(const StackSet&) const = default;
  bool complete() const {
    return utf8.remaining == 0 && !tops.empty() && tops.back() == kEmptyStack;
  }
};

// Copies the frames `set` uses from `from` into `to` (a fresh forest) and renumbers `set`:
// what a matcher keeps between tokens, without the frames of stacks that died.
void compact(const StackForest& from, StackSet& set, StackForest& to);

}  // namespace strata::grammar
