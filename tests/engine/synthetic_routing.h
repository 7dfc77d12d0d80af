#pragma once
// A small deterministic routing generator for the cache tests: each layer ranks its experts
// in its own random order and picks top-k distinct experts per step from a Zipf(skew)
// distribution over the ranks; with probability `locality` a pick repeats one of that layer's
// experts from the previous step. (tools/traces/synthetic_trace.py is the same model, for
// measurements; this one keeps the tests free of Python.)
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "tier/routing_trace.h"

struct SyntheticRouting {
  int layers = 6, experts = 64, topK = 8, steps = 200;
  double skew = 1.0, locality = 0.3;
  unsigned seed = 1;
};

inline strata::tier::RoutingTrace syntheticRoutingTrace(const SyntheticRouting& s) {
  std::mt19937 rng(s.seed);
  std::vector<double> weights(size_t(s.experts));
  for (int r = 0; r < s.experts; ++r) weights[size_t(r)] = 1.0 / std::pow(r + 1, s.skew);
  std::discrete_distribution<int> rank(weights.begin(), weights.end());
  std::uniform_real_distribution<double> coin(0, 1);
  std::vector<std::vector<int>> ranking(size_t(s.layers)), previous(size_t(s.layers));
  for (auto& order : ranking) {
    order.resize(size_t(s.experts));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
  }
  strata::tier::RoutingTrace trace;
  trace.header = {"synthetic", {}, s.experts, 1 << 20};
  for (int l = 0; l < s.layers; ++l) trace.header.layers.push_back(l);
  for (int step = 0; step < s.steps; ++step) {
    for (int l = 0; l < s.layers; ++l) {
      std::vector<int> chosen;
      auto taken = [&](int e) {
        return std::find(chosen.begin(), chosen.end(), e) != chosen.end();
      };
      while (int(chosen.size()) < s.topK) {
        std::vector<int> repeat;
        for (int e : previous[size_t(l)])
          if (!taken(e)) repeat.push_back(e);
        if (!repeat.empty() && coin(rng) < s.locality) {
          chosen.push_back(
              repeat[std::uniform_int_distribution<size_t>(0, repeat.size() - 1)(rng)]);
          continue;
        }
        const int e = ranking[size_t(l)][size_t(rank(rng))];
        if (!taken(e)) chosen.push_back(e);
      }
      std::sort(chosen.begin(), chosen.end());
      previous[size_t(l)] = chosen;
      trace.lines.push_back({step, l, chosen});
    }
  }
  return trace;
}
