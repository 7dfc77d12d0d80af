#include <optional>

#include "strata/chat.h"
#include "strata/engine.h"
#include "strata/tokenizer.h"

namespace strata {

bool thinkBeforeGrammar(const Tokenizer* tokenizer, bool enableThinking, GenerateOptions& generate) {
  if (!generate.grammar || !enableThinking || !tokenizer) return enableThinking;
  const std::optional<int32_t> close = tokenizer->tokenId("</think>");
  if (!close) return false;
  generate.grammarAfterToken = *close;
  return true;
}

}  // namespace strata
