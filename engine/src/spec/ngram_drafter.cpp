#include "spec/ngram_drafter.h"

#include <algorithm>

namespace strata::spec {

std::vector<int32_t> ngramDraft(std::span<const int32_t> sequence, int minMatch, int maxMatch,
                                int maxDraft, int64_t window) {
  const auto n = static_cast<int64_t>(sequence.size());
  if (n <= minMatch || maxDraft <= 0) return {};
  const int64_t first = std::max<int64_t>(0, n - window);
  // One backward scan: at each earlier end position, how long the match with the suffix runs.
  int64_t bestEnd = -1;  // the occurrence's last token
  int bestLength = 0;
  for (int64_t end = n - 2; end >= first + minMatch - 1; --end) {
    int length = 0;
    while (length < maxMatch && end - length >= first &&
           sequence[end - length] == sequence[n - 1 - length])
      ++length;
    if (length >= minMatch && length > bestLength) {  // later occurrences win ties
      bestLength = length;
      bestEnd = end;
      if (length == maxMatch) break;
    }
  }
  if (bestEnd < 0) return {};
  const int64_t from = bestEnd + 1;
  const int64_t count = std::min<int64_t>(maxDraft, n - from);
  return {sequence.begin() + from, sequence.begin() + from + count};
}

Draft NgramDrafter::draft(const DraftRequest& request) {
  constexpr int kLongestMatch = 8;
  Draft out;
  out.tokens = ngramDraft(request.sequence, request.settings.ngramMinMatch, kLongestMatch,
                          std::min(request.maxTokens, request.settings.ngramMaxDraft));
  if (request.grammar) {  // only what the grammar allows is worth a verify row
    GrammarMatcher probe(*request.grammar);
    size_t allowed = 0;
    while (allowed < out.tokens.size() && probe.accept(out.tokens[allowed])) ++allowed;
    out.tokens.resize(allowed);
  }
  return out;
}

}  // namespace strata::spec
