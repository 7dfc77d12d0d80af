#pragma once
// GBNF (llama.cpp's grammar notation) -> GrammarRules. Groups and repetitions become rules of
// their own: x* is r ::= x r | (empty), x{m,n} is m copies of x then n-m nested optional x.
#include <string_view>

#include "grammar/grammar_rules.h"

namespace strata::grammar {

// Throws strata::Error "line L, column C: <problem>" for malformed text, an undefined rule,
// a rule defined twice, no rule named `root`, left recursion or a rule that never ends.
GrammarRules parseGbnf(std::string_view text, std::string_view root);

}  // namespace strata::grammar
