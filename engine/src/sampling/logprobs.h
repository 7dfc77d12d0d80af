#pragma once
// A generated token's log probability under the model: the log-softmax of the logits row it
// was chosen from, before temperature, penalties or a grammar, and the most likely tokens of
// that row.
#include <cstdint>
#include <span>

#include "strata/engine.h"

namespace strata {

// `top` alternatives (0..kMaxTopLogprobs), most likely first, ties to the lower id.
TokenLogprob tokenLogprob(std::span<const float> logits, int32_t token, int top);

}  // namespace strata
