// Sampler: logit bias and penalties -> temperature -> top-k -> top-p -> min-p -> draw (see
// strata/sampling.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "strata/engine.h"
#include "strata/sampling.h"

namespace strata {
namespace {

std::string number(double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

void require(bool ok, const char* name, const std::string& allowed, double value) {
  if (!ok) throw Error(std::string(name) + ": must be " + allowed + ", got " + number(value));
}

}  // namespace

void validateSamplingParams(const SamplingParams& p) {
  require(std::isfinite(p.temperature) && p.temperature >= 0.0f, "temperature",
          ">= 0 (0 means greedy)", p.temperature);
  require(p.topK >= 0, "top_k", ">= 0 (0 means off)", p.topK);
  require(p.topP > 0.0f && p.topP <= 1.0f, "top_p", "in (0, 1] (1 means off)", p.topP);
  require(p.minP >= 0.0f && p.minP <= 1.0f, "min_p", "in [0, 1] (0 means off)", p.minP);
  require(std::isfinite(p.repetitionPenalty) && p.repetitionPenalty > 0.0f, "repetition_penalty",
          "> 0 (1 means off)", p.repetitionPenalty);
  require(p.presencePenalty >= -2.0f && p.presencePenalty <= 2.0f, "presence_penalty",
          "in [-2, 2] (0 means off)", p.presencePenalty);
  require(p.frequencyPenalty >= -2.0f && p.frequencyPenalty <= 2.0f, "frequency_penalty",
          "in [-2, 2] (0 means off)", p.frequencyPenalty);
  for (const auto& [id, bias] : p.logitBias) {
    require(id >= 0, "logit_bias", "token ids >= 0", id);
    require(std::isfinite(bias) && bias >= -100.0f && bias <= 100.0f, "logit_bias",
            "biases in [-100, 100]", bias);
  }
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {
  validateSamplingParams(params);
}

void Sampler::applyPenalties(std::span<float> logits, std::span<const int32_t> history) {
  for (const auto& [id, bias] : params_.logitBias) {
    if (static_cast<size_t>(id) >= logits.size())
      throw Error("sampling: logit_bias names token " + std::to_string(id) +
                  ", outside the vocabulary of " + std::to_string(logits.size()));
    logits[static_cast<size_t>(id)] += bias;
  }
  const bool repetition = params_.repetitionPenalty != 1.0f;
  if (!repetition && params_.presencePenalty == 0.0f && params_.frequencyPenalty == 0.0f) return;
  if (counts_.size() < logits.size()) counts_.resize(logits.size(), 0);
  for (size_t i = 0; i < history.size(); ++i) {
    const int32_t id = history[i];
    if (id < 0 || static_cast<size_t>(id) >= logits.size()) {
      for (size_t j = 0; j < i; ++j) counts_[history[j]] = 0;  // keep the scratch all-zero
      throw Error("sampling history[" + std::to_string(i) + "]: token id " + std::to_string(id) +
                  " is outside the vocabulary of " + std::to_string(logits.size()));
    }
    ++counts_[id];
  }
  // Each distinct token once; its count goes back to zero as it is used.
  for (const int32_t id : history) {
    const int32_t count = counts_[id];
    if (count == 0) continue;
    counts_[id] = 0;
    float& logit = logits[id];
    if (repetition)
      logit = logit > 0.0f ? logit / params_.repetitionPenalty : logit * params_.repetitionPenalty;
    logit -= static_cast<float>(count) * params_.frequencyPenalty + params_.presencePenalty;
  }
}

namespace {
// A strict total order (higher logit first, then lower id), so sorts and selections give the
// same result with every standard library.
struct Better {
  template <class C>
  bool operator()(const C& a, const C& b) const {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  }
};

template <class C>
double maxLogit(const std::vector<C>& c, size_t count) {
  float best = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < count; ++i) best = std::max(best, c[i].logit);
  if (best == -std::numeric_limits<float>::infinity())
    throw Error("sampling: every token's logit is -inf (nothing left to sample)");
  return best;
}
}  // namespace

// Steps 1-6: penalized logits in logits_; with temperature > 0, the surviving candidates in
// candidates_[0, result). Greedy returns 0.
size_t Sampler::prepare(std::span<const float> logits, std::span<const int32_t> history) {
  if (logits.empty()) throw Error("sampling: the logit row is empty");
  logits_.assign(logits.begin(), logits.end());
  for (size_t i = 0; i < logits_.size(); ++i)
    if (std::isnan(logits_[i]) || logits_[i] == std::numeric_limits<float>::infinity())
      throw Error("sampling: logits[" + std::to_string(i) + "] is " + number(logits_[i]) +
                  " (expected a finite value or -inf)");
  applyPenalties(logits_, history);
  if (params_.temperature == 0.0f) return 0;

  const size_t n = logits_.size();
  candidates_.resize(n);
  for (size_t i = 0; i < n; ++i)
    candidates_[i] = {logits_[i] / params_.temperature, static_cast<int32_t>(i)};
  size_t count = n;
  if (params_.topK > 0 && static_cast<size_t>(params_.topK) < count) count = truncateTopK(count);
  if (params_.topP < 1.0f) count = truncateTopP(count);
  if (params_.minP > 0.0f) count = truncateMinP(count);
  return count;
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  const size_t count = prepare(logits, history);
  if (params_.temperature == 0.0f) return argmax(logits_);
  return draw(count);
}

std::vector<TokenProbability> Sampler::distribution(std::span<const float> logits,
                                                    std::span<const int32_t> history) {
  const size_t count = prepare(logits, history);
  if (params_.temperature == 0.0f) return {{argmax(logits_), 1.0}};
  const double top = maxLogit(candidates_, count);
  std::vector<TokenProbability> p(count);
  double total = 0.0;
  for (size_t i = 0; i < count; ++i) {
    p[i] = {candidates_[i].id, std::exp(candidates_[i].logit - top)};
    total += p[i].p;
  }
  for (TokenProbability& t : p) t.p /= total;
  return p;
}

int32_t Sampler::verifyDraft(std::span<const float> logits, std::span<const int32_t> history,
                             int32_t draft, std::span<const TokenProbability> q, bool& accepted) {
  const std::vector<TokenProbability> p = distribution(logits, history);
  if (params_.temperature == 0.0f) {
    accepted = p.front().id == draft;
    return p.front().id;
  }
  // q by token id (O(vocab), like sampling itself; q may hold the whole vocabulary).
  qById_.assign(logits.size(), 0.0);
  for (const TokenProbability& t : q)
    if (t.id >= 0 && static_cast<size_t>(t.id) < qById_.size()) qById_[t.id] = t.p;
  double pDraft = 0.0;
  for (const TokenProbability& t : p)
    if (t.id == draft) pDraft = t.p;
  const double qDraft = draft >= 0 && static_cast<size_t>(draft) < qById_.size() ? qById_[draft] : 0.0;
  // u < p/q, written without dividing (q is > 0 for a token actually drawn from q).
  accepted = uniform() * qDraft < pDraft;
  if (accepted) return draft;
  // The residual max(p - q, 0); it has mass whenever the draft was rejected.
  weights_.resize(p.size());
  double total = 0.0;
  for (size_t i = 0; i < p.size(); ++i)
    total += weights_[i] = std::max(0.0, p[i].p - qById_[p[i].id]);
  const double u = uniform() * total;
  double cumulative = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    cumulative += weights_[i];
    if (u < cumulative) return p[i].id;
  }
  for (size_t i = p.size(); i-- > 0;)
    if (weights_[i] > 0.0) return p[i].id;
  return p.front().id;  // p == q exactly: any rejection is a rounding artefact
}


// The k best candidates in [0, k), best first (sorted so that the order, and so the draw, is
// the same with every standard library; nth_element leaves it unspecified).
size_t Sampler::truncateTopK(size_t count) {
  const auto k = static_cast<ptrdiff_t>(params_.topK);
  std::nth_element(candidates_.begin(), candidates_.begin() + k,
                   candidates_.begin() + static_cast<ptrdiff_t>(count), Better{});
  std::sort(candidates_.begin(), candidates_.begin() + k, Better{});
  return static_cast<size_t>(k);
}

// The smallest set of best candidates whose probability reaches top_p, without sorting the
// vocabulary: candidates are spread over 128 equal-width logit buckets; buckets wholly inside
// the nucleus are kept as they are, and only the bucket where the cumulative probability
// crosses top_p is examined further (bucketed again while large, then sorted). O(vocab) per
// token even for flat distributions, where the nucleus holds most of the vocabulary. The kept
// candidates end up in [0, result), grouped by bucket, in a deterministic order.
size_t Sampler::truncateTopP(size_t count) {
  constexpr int kBuckets = 128;
  constexpr size_t kSortBelow = 1024;
  const double top = maxLogit(candidates_, count);
  double total = 0.0;
  for (size_t i = 0; i < count; ++i) total += std::exp(candidates_[i].logit - top);
  const double target = params_.topP * total;

  size_t kept = 0;        // [0, kept): in the nucleus
  size_t active = count;  // [kept, active): undecided; beyond: out
  double mass = 0.0;      // probability mass (unnormalized) of [0, kept)
  for (int round = 0; round < 8 && active - kept > kSortBelow; ++round) {
    float lo = std::numeric_limits<float>::infinity();
    float hi = -lo;
    for (size_t i = kept; i < active; ++i) {
      const float l = candidates_[i].logit;
      if (l != -std::numeric_limits<float>::infinity()) lo = std::min(lo, l);
      hi = std::max(hi, l);
    }
    if (!(hi > lo)) break;  // all equal: only sorting (by id) can split them
    const double scale = kBuckets / (static_cast<double>(hi) - lo);
    double bucketMass[kBuckets] = {};
    buckets_.resize(active - kept);
    for (size_t i = kept; i < active; ++i) {
      const double l = candidates_[i].logit;
      const double b = std::min<double>(kBuckets - 1, (hi - l) * scale);  // -inf -> last
      buckets_[i - kept] = static_cast<uint8_t>(b);
      bucketMass[buckets_[i - kept]] += std::exp(l - top);
    }
    int crossing = 0;
    double before = mass;  // mass of everything better than bucket `crossing`
    while (crossing < kBuckets - 1 && before + bucketMass[crossing] < target)
      before += bucketMass[crossing++];
    // Regroup stably: buckets before the crossing one (kept), then the crossing one.
    regrouped_.clear();
    for (size_t i = kept; i < active; ++i)
      if (buckets_[i - kept] < crossing) regrouped_.push_back(candidates_[i]);
    const size_t whole = regrouped_.size();
    for (size_t i = kept; i < active; ++i)
      if (buckets_[i - kept] == crossing) regrouped_.push_back(candidates_[i]);
    std::copy(regrouped_.begin(), regrouped_.end(),
              candidates_.begin() + static_cast<ptrdiff_t>(kept));
    active = kept + regrouped_.size();
    kept += whole;
    mass = before;
  }
  const auto begin = candidates_.begin();
  std::sort(begin + static_cast<ptrdiff_t>(kept), begin + static_cast<ptrdiff_t>(active), Better{});
  for (size_t i = kept; i < active; ++i) {
    mass += std::exp(candidates_[i].logit - top);
    if (mass >= target) return i + 1;
  }
  return active;
}

// Keeps p >= min_p * p_max, i.e. logit >= max + log(min_p); order preserved.
size_t Sampler::truncateMinP(size_t count) {
  const double threshold =
      maxLogit(candidates_, count) + std::log(static_cast<double>(params_.minP));
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i)
    if (candidates_[i].logit >= threshold) candidates_[kept++] = candidates_[i];
  return kept;
}

int32_t Sampler::draw(size_t count) {
  const double top = maxLogit(candidates_, count);
  weights_.resize(count);
  double total = 0.0;
  for (size_t i = 0; i < count; ++i) total += weights_[i] = std::exp(candidates_[i].logit - top);
  const double u = uniform() * total;
  double cumulative = 0.0;
  for (size_t i = 0; i < count; ++i) {
    cumulative += weights_[i];
    if (u < cumulative) return candidates_[i].id;
  }
  // Unreachable in exact arithmetic (u < total); rounding can only land here at the very end.
  for (size_t i = count; i-- > 0;)
    if (weights_[i] > 0.0) return candidates_[i].id;
  return candidates_[0].id;
}

// 53 random bits -> [0, 1): the same value from every standard library, unlike
// std::uniform_real_distribution.
double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

}  // namespace strata
