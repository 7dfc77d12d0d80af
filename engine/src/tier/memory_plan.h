#pragma once
// The memory plan (strata/tiers.h MemoryPlan): what a model needs in memory under a budget,
// computed from its config and container headers without loading a weight. The engine refuses
// to start when the minimum does not fit, with the numbers.
#include <span>
#include <vector>

#include "io/container.h"
#include "model/config.h"
#include "model/weight_source.h"
#include "strata/kv_precision.h"
#include "strata/tiers.h"

namespace strata::io {
class TensorStore;
}  // namespace strata::io

namespace strata::tier {

// Bytes the engine allocates for the tensors of `container` other than the routed experts,
// as model/weights.cpp holds them under `precision` (f32 widening, tied embeddings).
int64_t residentTensorBytes(const model::ModelConfig& config, const io::Container& container,
                            model::WeightPrecision precision);
// The same for a container's planned files, before any is written (synth --dry-run).
int64_t residentTensorBytes(const model::ModelConfig& config,
                            std::span<const io::ContainerFile> files,
                            model::WeightPrecision precision);

// `container` may be null (a Hugging Face checkpoint: everything resident, no streaming).
// The KV cache takes 4 bytes a value in f32, 2 in bf16/f16 (kv/kv_rows.h). Throws strata::Error
// when the budget cannot hold the minimum, giving every number.
MemoryPlan planMemory(const model::ModelConfig& config, const io::Container* container,
                      model::WeightPrecision precision, KvPrecision kvPrecision,
                      const MemorySettings& settings);

// A Hugging Face checkpoint, which cannot stream: everything resident, counted from its headers
// as model/weights.cpp holds it. Throws strata::Error, giving every number, when a budget is
// set and the whole model does not fit it.
MemoryPlan planCheckpointMemory(const model::ModelConfig& config, const io::TensorStore& store,
                                model::WeightPrecision precision, KvPrecision kvPrecision,
                                const MemorySettings& settings);

}  // namespace strata::tier
