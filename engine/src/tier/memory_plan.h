#pragma once
// The memory plan (strata/tiers.h MemoryPlan): what a model needs in memory under a budget,
// computed from its config and container headers without loading a weight. The engine refuses
// to start when the minimum does not fit, with the numbers.
#include <string>

#include "io/container.h"
#include "model/config.h"
#include "model/weight_source.h"
#include "strata/kv_precision.h"
#include "strata/tiers.h"

namespace strata::tier {

// Bytes the engine allocates for the tensors of `container` other than the routed experts,
// as model/weights.cpp holds them under `precision` (f32 widening, tied embeddings).
int64_t residentTensorBytes(const model::ModelConfig& config, const io::Container& container,
                            model::WeightPrecision precision);

// Tensors model/weights.cpp holds in f32 whatever their stored type (norms, router, indexer
// weights_proj, kv_b).
bool heldAsF32(const std::string& tensorName);

// For a model held whole in memory (a Hugging Face checkpoint): throws strata::Error, giving
// every number, when its weights, KV cache and scratch exceed the budget (none set: passes).
void requireWholeModelFits(const MemoryPlan& plan, const MemorySettings& settings);

// `container` may be null (a Hugging Face checkpoint: everything resident, no streaming).
// The KV cache takes 4 bytes a value in f32, 2 in bf16/f16 (kv/kv_rows.h). Throws strata::Error
// when the budget cannot hold the minimum, giving every number.
MemoryPlan planMemory(const model::ModelConfig& config, const io::Container* container,
                      model::WeightPrecision precision, KvPrecision kvPrecision,
                      const MemorySettings& settings);

}  // namespace strata::tier
