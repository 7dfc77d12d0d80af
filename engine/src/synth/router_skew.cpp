#include "synth/router_skew.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "synth/random_weights.h"

namespace strata::synth {
namespace {

// Simulated tokens for the rates, and the fixed seeds of their samples: the fit reuses one
// sample each round (common random numbers), so it converges smoothly and is deterministic.
constexpr int kDrawTokens = 32768;
constexpr int kRouterTokens = 16384;
constexpr int kFitRounds = 12;  // converges in about 6
constexpr uint64_t kDrawSeed = 0x5EED0001, kRouterSeed = 0x5EED0002;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Uniform on (0, 1), both ends excluded.
double openUnit(Rng& rng) { return (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1p-53; }

// z with P(N(0, 1) > z) = tail, by bisection on erfc.
double upperQuantile(double tail) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(mid / std::numbers::sqrt2) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// Counts one token: adds `weight` to the rate of each expert among the k largest of `row`.
void countTopk(const std::vector<double>& row, int k, std::vector<int>& index,
               std::vector<double>& rates, double weight) {
  std::iota(index.begin(), index.end(), 0);
  std::nth_element(index.begin(), index.begin() + (k - 1), index.end(),
                   [&](int a, int b) { return row[a] > row[b]; });
  for (int j = 0; j < k; ++j) rates[index[j]] += weight;
}

// Fraction of the rows of `scores` ([tokens x experts]) whose top k includes each expert once
// `offset` is added.
std::vector<double> topkRates(const std::vector<double>& scores, const std::vector<double>& offset,
                              int k) {
  const size_t experts = offset.size();
  const size_t tokens = scores.size() / experts;
  std::vector<double> rates(experts, 0.0), row(experts);
  std::vector<int> index(experts);
  for (size_t t = 0; t < tokens; ++t) {
    for (size_t e = 0; e < experts; ++e) row[e] = scores[t * experts + e] + offset[e];
    countTopk(row, k, index, rates, 1.0 / double(tokens));
  }
  return rates;
}

// sigmoid(N(0, kRouterLogitStd^2)) for each expert of each simulated token.
std::vector<double> routerScores(size_t experts) {
  Rng rng(kRouterSeed);
  std::vector<double> scores(experts * kRouterTokens);
  for (size_t i = 0; i < scores.size(); i += 2) {  // Box-Muller, two normals per pair
    const double radius = std::sqrt(-2 * std::log(1 - rng.uniform()));
    const double angle = 2 * std::numbers::pi * rng.uniform();
    scores[i] = sigmoid(kRouterLogitStd * radius * std::cos(angle));
    if (i + 1 < scores.size()) scores[i + 1] = sigmoid(kRouterLogitStd * radius * std::sin(angle));
  }
  return scores;
}

}  // namespace

std::vector<double> zipfPopularity(int experts, double s) {
  std::vector<double> p(static_cast<size_t>(experts));
  for (int r = 0; r < experts; ++r) p[r] = std::pow(double(r + 1), -s);
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& v : p) v /= total;
  return p;
}

std::vector<double> drawRates(const std::vector<double>& popularity, int k) {
  Rng rng(kDrawSeed);
  const size_t experts = popularity.size();
  std::vector<double> rates(experts, 0.0), row(experts), logP(experts);
  std::vector<int> index(experts);
  for (size_t r = 0; r < experts; ++r) logP[r] = std::log(popularity[r]);
  for (int t = 0; t < kDrawTokens; ++t) {
    for (size_t r = 0; r < experts; ++r)  // log p + Gumbel noise
      row[r] = logP[r] - std::log(-std::log(openUnit(rng)));
    countTopk(row, k, index, rates, 1.0 / kDrawTokens);
  }
  return rates;
}

std::vector<double> biasByRank(int experts, int k, double zipf) {
  std::vector<double> bias(static_cast<size_t>(experts), 0.0);
  if (zipf == 0) return bias;  // uniform by symmetry
  const std::vector<double> target = drawRates(zipfPopularity(experts, zipf), k);
  const std::vector<double> scores = routerScores(bias.size());
  // Expert e is picked when its score beats a threshold T - bias_e that varies little from
  // token to token, so rate_e ~ P(sigmoid(z) > T - bias_e): a Newton-like step moves bias_e by
  // the difference of the score quantiles of the measured and the target rates.
  const double floor = 0.5 / kRouterTokens;
  auto scoreQuantile = [&](double rate) {
    return sigmoid(kRouterLogitStd * upperQuantile(std::clamp(rate, floor, 1 - floor)));
  };
  for (int round = 0; round < kFitRounds; ++round) {
    const std::vector<double> rates = topkRates(scores, bias, k);
    for (size_t e = 0; e < bias.size(); ++e)
      bias[e] += 0.8 * (scoreQuantile(rates[e]) - scoreQuantile(target[e]));
    const double mean = std::accumulate(bias.begin(), bias.end(), 0.0) / double(bias.size());
    for (double& b : bias) b -= mean;
  }
  return bias;
}

std::vector<float> layerCorrectionBias(const std::vector<double>& byRank, uint64_t layerSeed) {
  const int experts = static_cast<int>(byRank.size());
  std::vector<int> order(byRank.size());
  std::iota(order.begin(), order.end(), 0);
  Rng rng(layerSeed);
  for (int i = experts - 1; i > 0; --i) {  // Fisher-Yates
    const auto j = static_cast<int>((static_cast<unsigned __int128>(rng.next()) * (i + 1)) >> 64);
    std::swap(order[i], order[j]);
  }
  std::vector<float> bias(byRank.size());
  for (int r = 0; r < experts; ++r) bias[order[r]] = static_cast<float>(byRank[r]);
  return bias;
}

}  // namespace strata::synth
