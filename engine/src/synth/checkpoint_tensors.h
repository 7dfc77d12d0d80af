#pragma once
// The tensors of a Hugging Face glm_moe_dsa checkpoint of a given config (names, [out, in]
// shapes and dtypes of a BF16 release: glm5-architecture.md §2), as the converter's source
// table, so the converter's planner lays the synthetic container out exactly as it would lay
// out a real checkpoint.
#include <string>
#include <vector>

#include "convert/source.h"
#include "model/config.h"

namespace strata::synth {

// Every tensor: BF16, except e_score_correction_bias (F32, as in the releases). The MTP layer
// (index num_hidden_layers) is included when the config has one; lm_head is absent when the
// embeddings are tied.
std::vector<convert::SourceTensor> checkpointTensors(const model::ModelConfig& config);

// A source table with no shards behind it: the planner needs only the tensors, and the
// fingerprint covers the config text (which records the seed and skew).
convert::SourceTable syntheticSourceTable(const std::string& configText,
                                          const model::ModelConfig& config);

}  // namespace strata::synth
