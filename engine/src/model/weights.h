#pragma once
// The model's weights bound by name from a checkpoint, grouped as the spec groups them
// (glm5-architecture.md §2). Routed experts are not here: the forward pass asks an
// ExpertSource (model/expert_source.h) for them, so they can be streamed instead of held.
#include <memory>
#include <optional>
#include <vector>

#include "kernels/matrix.h"
#include "model/config.h"
#include "model/expert_source.h"
#include "model/weight_source.h"

namespace strata::model {

using kernels::Matrix;
using Vector = std::vector<float>;

struct AttentionWeights {
  Matrix qA;        // [q_lora, H]
  Vector qANorm;    // [q_lora]
  Matrix qB;        // [nh * dqk, q_lora]
  Matrix kvA;       // [kv_lora + dr, H]
  Vector kvANorm;   // [kv_lora]
  Matrix kvB;       // [nh * (dn + dv), kv_lora]; F32, or quantized as stored
  Matrix o;         // [H, nh * dv]
};

struct IndexerWeights {
  Matrix wqB;          // [Ih * Id, q_lora]
  Matrix wk;           // [Id, H]
  Vector kNormWeight;  // [Id] LayerNorm
  Vector kNormBias;    // [Id]
  Matrix weightsProj;  // [Ih, H], always F32 (spec pitfall 4)
};

struct FeedForwardWeights {  // SwiGLU: down(silu(gate x) * up x)
  Matrix gate;
  Matrix up;
  Matrix down;
};

struct RouterWeights {
  Matrix gate;  // [E, H] as stored (bf16 widened in registers): the router runs in f32 (pitfall 5)
  Vector correctionBias; // [E], selection only
};

struct LayerWeights {
  int index = 0;
  Vector inputNorm;
  Vector postAttentionNorm;
  AttentionWeights attention;
  std::optional<IndexerWeights> indexer;  // absent on IndexShare "shared" layers
  bool isMoe = false;
  FeedForwardWeights dense;               // dense layers only
  RouterWeights router;                   // MoE layers only
  std::optional<FeedForwardWeights> sharedExperts;
};

struct MtpWeights {
  Vector enorm;
  Vector hnorm;
  Matrix ehProj;  // [H, 2H]: columns [0, H) act on enorm(embedding), [H, 2H) on hnorm(hidden)
  Vector sharedHeadNorm;
  LayerWeights layer;
};

struct ModelWeights {
  EmbeddingTable embedTokens;  // [V, H]: on disk for a container
  Vector finalNorm;
  Matrix lmHead;       // [V, H]
  std::vector<LayerWeights> layers;
  std::optional<MtpWeights> mtp;
};

// Bytes of every tensor in `weights` as held in memory.
int64_t residentBytes(const ModelWeights& weights);

// Loads resident weights; throws strata::Error naming the tensor on any mismatch.
ModelWeights loadModelWeights(const ModelConfig& config, const WeightSource& source,
                              WeightPrecision precision);

// Holds every routed expert in memory (small models and Hugging Face checkpoints; containers
// under a memory budget stream them through tier::ExpertStore instead).
std::unique_ptr<ExpertSource> loadResidentExperts(const ModelConfig& config,
                                                  const WeightSource& source,
                                                  WeightPrecision precision);

}  // namespace strata::model
