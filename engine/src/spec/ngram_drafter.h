#pragma once
// Prompt lookup: when the last tokens occurred earlier in the conversation, propose what
// followed them then (chats quote, code repeats names, JSON repeats keys).
#include <cstdint>
#include <span>
#include <vector>

#include "spec/drafter.h"

namespace strata::spec {

// The continuation of the most recent earlier occurrence of the longest suffix of `sequence`
// (between minMatch and maxMatch tokens) that occurred before, at most maxDraft tokens; empty
// when no suffix of minMatch tokens recurs. Looks back at most `window` tokens.
std::vector<int32_t> ngramDraft(std::span<const int32_t> sequence, int minMatch, int maxMatch,
                                int maxDraft, int64_t window = 16384);

// ngramDraft with the settings' lengths, cut where the active grammar would refuse a token.
class NgramDrafter final : public Drafter {
 public:
  DrafterKind kind() const override { return DrafterKind::Ngram; }
  Draft draft(const DraftRequest& request) override;
};

}  // namespace strata::spec
