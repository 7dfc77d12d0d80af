#include "grammar/byte_step.h"

#include <algorithm>

namespace strata::grammar {
namespace {

void sortUnique(std::vector<uint32_t>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

}  // namespace

// Terminates because no rule can reach itself before reading a character (checkRules).
void ByteStepper::expand(uint32_t position, uint32_t below, std::vector<uint32_t>& out) {
  const Symbol& s = g_.at(position);
  switch (s.kind) {
    case Symbol::Kind::Chars:
      out.push_back(forest_.push(position, below));
      return;
    case Symbol::Kind::End:
      if (below == kEmptyStack) {
        out.push_back(kEmptyStack);
      } else {
        const Frame f = forest_.frame(below);
        expand(f.position, f.below, out);
      }
      return;
    case Symbol::Kind::Rule: {
      // A reference in last place returns straight to `below` (a tail call), so repetitions,
      // written as right recursion, do not grow the stack.
      const uint32_t next = position + 1;
      const uint32_t returnTo =
          g_.at(next).kind == Symbol::Kind::End ? below : forest_.push(next, below);
      for (uint32_t start : g_.alternatives[s.index]) expand(start, returnTo, out);
      return;
    }
  }
}

StackSet ByteStepper::start() {
  StackSet set;
  for (uint32_t start : g_.alternatives[g_.root]) expand(start, kEmptyStack, set.tops);
  sortUnique(set.tops);
  return set;
}

bool ByteStepper::step(const StackSet& in, uint8_t byte, StackSet& out) {
  out.utf8 = in.utf8;
  out.tops.clear();
  uint32_t codePoint = 0;
  switch (feedUtf8(out.utf8, byte, codePoint)) {
    case Utf8Result::Malformed:
      return false;
    case Utf8Result::Partial: {
      // Keep the stacks some completion of the character could still satisfy.
      const auto [first, last] = pendingRange(out.utf8);
      for (uint32_t top : in.tops)
        if (top != kEmptyStack && g_.charsAt(forest_.frame(top).position).intersects(first, last))
          out.tops.push_back(top);
      return !out.tops.empty();
    }
    case Utf8Result::Complete:
      for (uint32_t top : in.tops) {
        if (top == kEmptyStack) continue;
        const Frame f = forest_.frame(top);
        if (g_.charsAt(f.position).contains(codePoint)) expand(f.position + 1, f.below, out.tops);
      }
      sortUnique(out.tops);
      return !out.tops.empty();
  }
  return false;
}

}  // namespace strata::grammar
