#pragma once
// The one interface every drafter implements: given the conversation so far, propose the next
// tokens (possibly none). Verification (model/session_generate.cpp) decides what stands.
#include <cstdint>
#include <span>
#include <vector>

#include "spec/speculation_tuner.h"
#include "strata/grammar.h"
#include "strata/sampling.h"
#include "strata/speculation.h"

namespace strata::spec {

struct DraftRequest {
  std::span<const int32_t> sequence;  // every token so far; the newest is not yet evaluated
  int maxTokens = 0;                  // the most worth proposing (the reply's remaining budget)
  const SpeculationSettings& settings;
  const GrammarMatcher* grammar = nullptr;  // the active grammar after the newest token
  Sampler& sampler;                         // draws sampled drafts (greedy: the argmax)
};

struct Draft {
  std::vector<int32_t> tokens;
  // Filled only by drafters that sample: the distribution each token was drawn from, for
  // rejection sampling. Empty: deterministic drafts, verified by sampling and comparing.
  std::vector<std::vector<TokenProbability>> q;
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual DrafterKind kind() const = 0;
  virtual Draft draft(const DraftRequest& request) = 0;
};

}  // namespace strata::spec
