#pragma once
// One step of the matcher: the stacks after one more byte. A stack's top is always a set of
// characters; after a character matches, the stack is expanded again (rule references pushed,
// finished alternatives popped) until every top is a set of characters or the stack is empty.
#include <cstdint>
#include <vector>

#include "grammar/grammar_rules.h"
#include "grammar/stack_forest.h"

namespace strata::grammar {

class ByteStepper {
 public:
  ByteStepper(const GrammarRules& rules, StackForest& forest) : g_(rules), forest_(forest) {}

  // The stacks before any text.
  StackSet start();
  // `in` after `byte` into `out`; false (out unusable) when no stack can take the byte.
  bool step(const StackSet& in, uint8_t byte, StackSet& out);

 private:
  void expand(uint32_t position, uint32_t below, std::vector<uint32_t>& out);

  const GrammarRules& g_;
  StackForest& forest_;
};

}  // namespace strata::grammar
