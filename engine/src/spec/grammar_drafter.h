#pragma once
// Grammar-forced drafts: where the active grammar allows only one continuation (the rest of a
// key, `": "`, a closing bracket), propose that text's tokens; the model then confirms many
// tokens in one pass instead of one per pass.
#include <cstdint>
#include <vector>

#include "strata/grammar.h"
#include "strata/tokenizer.h"

namespace strata::spec {

// `state`: the grammar after the newest token. At most maxDraft tokens, each allowed in turn.
std::vector<int32_t> grammarDraft(const GrammarMatcher& state, const Tokenizer& tokenizer,
                                  int maxDraft);

}  // namespace strata::spec
