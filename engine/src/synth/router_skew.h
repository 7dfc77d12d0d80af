#pragma once
// Expert popularity for synthetic models. Per MoE layer the experts get popularities
// p_r proportional to 1 / r^s (Zipf; r the rank in a random per-layer order), and each token's
// k experts are meant to look like k draws without replacement from p (Plackett-Luce: the
// top k of log p + Gumbel noise). The router's e_score_correction_bias alone produces that:
// the gate still varies the choice from token to token.
//
// The router picks the top k of sigmoid(logit_e) + bias_e, and the synthetic gate (std
// 1/sqrt(H)) gives independent N(0, 1) logits for unit-RMS inputs. bias = c * log(p) would be
// exact were sigmoid(logit) Gumbel-distributed, but it is bounded and light-tailed: with zipf 1
// and 128 experts the rarer half would be picked several times less often than the law says
// and the rarest quarter almost never. So the biases are fitted instead: each expert's pick
// rate, simulated on random logits, is matched to its Plackett-Luce rate.
#include <cstdint>
#include <vector>

namespace strata::synth {

// Standard deviation of the router logits for unit-RMS inputs: the gate is drawn with std
// kRouterLogitStd / sqrt(hidden_size).
inline constexpr double kRouterLogitStd = 1.0;

// p_r proportional to r^-s for ranks r = 1..experts, summing to 1; s = 0 is uniform.
std::vector<double> zipfPopularity(int experts, double s);

// Fraction of tokens whose top k includes the expert of each rank: Plackett-Luce, estimated
// on a fixed simulated sample (deterministic).
std::vector<double> drawRates(const std::vector<double>& popularity, int k);

// Biases by rank (mean 0) whose router pick rates match drawRates(zipfPopularity(...)).
// zipf 0 gives all zeros. Computed once per model: every layer uses them in its own order.
std::vector<double> biasByRank(int experts, int k, double zipf);

// One layer's e_score_correction_bias: a random order of the experts (from layerSeed), the
// expert of rank r getting byRank[r].
std::vector<float> layerCorrectionBias(const std::vector<double>& byRank, uint64_t layerSeed);

}  // namespace strata::synth
