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

// out[count x H] = MLP(x); MoE layers look routed experts up in `experts`.
void runMlp(const ModelContext& ctx, const LayerWeights& layer, ExpertSource& experts,
            const float* x, int64_t count, float* out);

}  // namespace strata::model
