#pragma once
// The MLP half of a decoder layer: a dense SwiGLU, or the MoE block (noaux_tc sigmoid router,
// routed experts, shared experts) of glm5-architecture.md §3.9-3.10.
#include <cstdint>
#include <vector>

#include "model/layer_context.h"
#include "model/weights.h"

namespace strata::model {

struct RoutingDecision {
  std::vector<int> experts;     // num_experts_per_tok indices
  std::vector<float> weights;   // their gates, normalized and scaled
};

// Routes one token from its router logits ([n_routed_experts], x . gate^T in f32).
RoutingDecision route(const ModelConfig& config, const RouterWeights& router, const float* logits);

// out[rows x H] = SwiGLU(x) for each row.
void feedForward(const FeedForwardWeights& w, const float* x, int64_t rows, float* out,
                 const kernels::KernelConfig& kernels);

// Routes every row of x [count x H] (the router runs in f32).
std::vector<RoutingDecision> routeRows(const ModelConfig& config, const RouterWeights& router,
                                       const float* x, int64_t count);

// The experts a later MoE layer will probably pick, for prefetching: its router applied to this
// layer's residual stream (normalized with the later layer's norm). Unique, most likely first
// (the rows' first choices, then their second, ...).
std::vector<int> predictExperts(const ModelConfig& config, const LayerWeights& later,
                                const float* residual, int64_t count);

// out[count x H] = MLP(x); MoE layers look routed experts up in `experts`. `next`, when given,
// is the next MoE layer: while this layer's experts compute, its predicted experts are read.
// Returns each row's routing (empty for a dense layer).
std::vector<RoutingDecision> runMlp(const ModelContext& ctx, const LayerWeights& layer, ExpertSource& experts,
            const float* x, int64_t count, float* out, const LayerWeights* next = nullptr,
            const float* residual = nullptr);

}  // namespace strata::model
