#include "spec/grammar_drafter.h"

#include <algorithm>

namespace strata::spec {
namespace {
constexpr int kMaxGrammarDraft = 16;
}  // namespace

Draft GrammarDrafter::draft(const DraftRequest& request) {
  Draft out;
  const int limit = std::min(request.maxTokens, kMaxGrammarDraft);
  if (!request.grammar || limit <= 0) return out;
  const std::string forced = request.grammar->forcedBytes(256);
  if (forced.empty()) return out;
  // The forced text tokenized on its own is a guess at how the model will spell it (a merge
  // with what follows may differ); verification keeps only what the model agrees with.
  GrammarMatcher probe(*request.grammar);
  for (const int32_t id : tokenizer_.encode(forced)) {
    if (static_cast<int>(out.tokens.size()) == limit || !probe.accept(id)) break;
    out.tokens.push_back(id);
  }
  return out;
}

}  // namespace strata::spec
