#include "spec/grammar_drafter.h"

namespace strata::spec {

std::vector<int32_t> grammarDraft(const GrammarMatcher& state, const Tokenizer& tokenizer,
                                  int maxDraft) {
  std::vector<int32_t> out;
  const std::string forced = state.forcedBytes(256);
  if (forced.empty() || maxDraft <= 0) return out;
  // The forced text tokenized on its own is a guess at how the model will spell it (a merge
  // with what follows may differ); verification keeps only what the model agrees with.
  GrammarMatcher probe(state);
  for (const int32_t id : tokenizer.encode(forced)) {
    if (static_cast<int>(out.size()) == maxDraft || !probe.accept(id)) break;
    out.push_back(id);
  }
  return out;
}

}  // namespace strata::spec
