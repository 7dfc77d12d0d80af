#include "sampling/logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace strata {

TokenLogprob tokenLogprob(std::span<const float> logits, int32_t token, int top) {
  if (token < 0 || static_cast<size_t>(token) >= logits.size())
    throw Error("logprobs: token " + std::to_string(token) + " is outside the logits row");
  if (top < 0 || top > kMaxTopLogprobs)
    throw Error("logprobs: top must be in [0, " + std::to_string(kMaxTopLogprobs) + "]");
  // log p_i = l_i - (max + log sum exp(l - max)), summed in double.
  const float most = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (const float l : logits) sum += std::exp(static_cast<double>(l) - most);
  const double logNormalizer = most + std::log(sum);
  auto logprob = [&](int32_t id) {
    return static_cast<float>(static_cast<double>(logits[static_cast<size_t>(id)]) - logNormalizer);
  };
  TokenLogprob out;
  out.token = token;
  out.logprob = logprob(token);
  const auto count = std::min<size_t>(static_cast<size_t>(top), logits.size());
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  auto moreLikely = [&](int32_t a, int32_t b) {
    const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(count), ids.end(), moreLikely);
  for (size_t i = 0; i < count; ++i) out.top.push_back({ids[i], logprob(ids[i])});
  return out;
}

}  // namespace strata
