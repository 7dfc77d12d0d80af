#pragma once
// Small elementwise steps of the forward pass, each exactly as glm5-architecture.md §3 states.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

namespace strata::model {

// y = w * x / sqrt(mean(x^2) + eps)   (§3.2)
inline void rmsNorm(const float* x, const float* weight, int64_t n, float eps, float* y) {
  // The sum of squares in eight independent lanes: one running sum made each add wait on the
  // last (~3 us for 2,048 values, ~9 for GLM-5's 6,144; a layer has several norms).
  constexpr int64_t kLanes = 8;
  double lanes[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += double{x[c + l]} * x[c + l];
  double sumSquares = 0.0;
  for (; c < n; ++c) sumSquares += double{x[c]} * x[c];
  for (const double lane : lanes) sumSquares += lane;
  const float inv = static_cast<float>(1.0 / std::sqrt(sumSquares / n + eps));
  for (int64_t i = 0; i < n; ++i) y[i] = weight[i] * (x[i] * inv);
}

// LayerNorm with affine weight and bias (the indexer's k_norm, §3.6).
inline void layerNorm(const float* x, const float* weight, const float* bias, int64_t n, float eps,
                      float* y) {
  double mean = 0.0;
  for (int64_t i = 0; i < n; ++i) mean += x[i];
  mean /= n;
  double var = 0.0;
  for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= n;
  const double inv = 1.0 / std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>((x[i] - mean) * inv) * weight[i] + bias[i];
}

inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Interleaved ("GPT-J", adjacent pairs) rotary embedding without scaling (§3.3):
// y[2i] = x[2i] cos a - x[2i+1] sin a; y[2i+1] = x[2i+1] cos a + x[2i] sin a; a = pos * theta^(-2i/d).
class Rope {
 public:
  Rope(int dim, double theta) : dim_(dim) {
    for (int i = 0; i < dim / 2; ++i) invFreq_.push_back(std::pow(theta, -2.0 * i / dim));
  }
  int dim() const { return dim_; }

  // The cosine and sine of each pair's angle at one position. A decode step rotates every
  // query head of a row at the same position: computed once a row, not once a head (a double
  // cos and sin per pair cost ~1 us a layer per head).
  struct Angles {
    std::vector<float> cos, sin;
  };
  Angles at(int64_t position) const {
    Angles a;
    for (int i = 0; i < dim_ / 2; ++i) {
      const double angle = static_cast<double>(position) * invFreq_[i];
      a.cos.push_back(static_cast<float>(std::cos(angle)));
      a.sin.push_back(static_cast<float>(std::sin(angle)));
    }
    return a;
  }
  void apply(float* x, const Angles& angles) const {
    for (int i = 0; i < dim_ / 2; ++i) {
      const float c = angles.cos[i], s = angles.sin[i];
      const float a = x[2 * i];
      const float b = x[2 * i + 1];
      x[2 * i] = a * c - b * s;
      x[2 * i + 1] = b * c + a * s;
    }
  }
  void apply(float* x, int64_t position) const { apply(x, at(position)); }

 private:
  int dim_;
  std::vector<double> invFreq_;
};

// Indices of the k largest values, larger first; exact ties go to the lower index, the rule
// the reference uses too, so selections are reproducible.
inline std::vector<int> topkIndices(const float* values, int n, int k) {
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  k = std::min(k, n);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [values](int a, int b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
  order.resize(static_cast<size_t>(k));
  return order;
}

// The same k indices as topkIndices, in index order, in linear time: the k-th largest value
// (nth_element on a copy), then one pass keeping what is larger and, of the values equal to it,
// the lowest indices. The indexer's selection over every cached key (a heap's partial_sort
// there cost log k indirect comparisons per key; GLM-5's k is 2048).
inline std::vector<int> topkIndicesInOrder(const float* values, int n, int k) {
  k = std::clamp(k, 0, n);
  std::vector<int> chosen;
  if (k == 0) return chosen;
  std::vector<float> copy(values, values + n);
  std::nth_element(copy.begin(), copy.begin() + (k - 1), copy.end(), std::greater<float>());
  const float kth = copy[static_cast<size_t>(k - 1)];
  int above = 0;
  for (int i = 0; i < n; ++i) above += values[i] > kth ? 1 : 0;
  int ties = k - above;  // values equal to the k-th that make the cut
  chosen.reserve(static_cast<size_t>(k));
  for (int i = 0; i < n && static_cast<int>(chosen.size()) < k; ++i)
    if (values[i] > kth || (values[i] == kth && ties-- > 0)) chosen.push_back(i);
  return chosen;
}

}  // namespace strata::model
