#pragma once
// Which format each tensor of a glm_moe_dsa checkpoint is stored in: the tensor's role (from
// its name, glm5-architecture.md §2) and a named policy decide.
//
// Default policy: routed experts int4 with group 32; attention (incl. the indexer's wq_b and
// wk), dense MLPs and shared experts int8 per row; embed_tokens and lm_head int8 per row; every
// quantizable tensor of the MTP layer (index num_hidden_layers) int8 per row, routed experts
// included (4-bit MTP heads lose most draft acceptance). Kept exact, never quantized: the router
// (mlp.gate.weight), e_score_correction_bias, norms and their biases (incl. the indexer's
// k_norm), the indexer's weights_proj and the MTP eh_proj. "Exact" means at source precision:
// a BF16 source tensor stays bf16 (the loader widens it to f32 without loss; half the bytes),
// an F32, F16 or FP8 one is stored f32.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/container_format.h"
#include "io/safetensors.h"

namespace strata::convert {

enum class TensorRole {
  Embedding,           // model.embed_tokens.weight
  LmHead,              // lm_head.weight (and an MTP shared_head.head.weight, if present)
  Attention,           // self_attn.{q_a,q_b,kv_a_with_mqa,kv_b,o}_proj
  IndexerProjection,   // self_attn.indexer.{wq_b,wk}
  IndexerWeightsProj,  // self_attn.indexer.weights_proj
  DenseMlp,            // mlp.{gate,up,down}_proj of dense layers
  SharedExpert,        // mlp.shared_experts.*
  RoutedExpert,        // mlp.experts.E.*
  Router,              // mlp.gate.weight
  RouterBias,          // mlp.gate.e_score_correction_bias
  Norm,                // every *norm.weight / *norm.bias
  MtpProjection,       // eh_proj
  Other,               // anything else: kept exact
};
std::string_view roleName(TensorRole role);

struct TensorName {
  TensorRole role = TensorRole::Other;
  int layer = -1;       // model.layers.N.*
  int expert = -1;      // routed experts
  int projection = -1;  // routed experts: 0 gate_proj, 1 up_proj, 2 down_proj
};
TensorName classifyTensor(std::string_view name);

// How a class of tensors is stored; groupSize 0 means one scale per row (integer formats).
struct QuantChoice {
  io::QuantFormat format = io::QuantFormat::Int8;
  int64_t groupSize = 0;
};
std::string describe(const QuantChoice& choice);  // "int4-g32", "int8-row"

struct Policy {
  std::string name;
  QuantChoice routedExperts{io::QuantFormat::Int4, 32};
  QuantChoice dense{io::QuantFormat::Int8, 0};  // attention, indexer projections, dense, shared
  QuantChoice embeddings{io::QuantFormat::Int8, 0};
  QuantChoice mtp{io::QuantFormat::Int8, 0};

  // The settings as a JSON object (stored in every container file).
  std::string toJson() const;
};

// "default", "int8", "int4-g32", "int4-g64", "int4-g128", "int4-row": the int4 presets store
// attention, dense and shared experts like the routed experts; "int8" stores all of them int8.
const std::vector<std::string>& policyNames();
Policy policyByName(std::string_view name);  // throws strata::Error listing the names

// The stored format of one tensor, given its role, whether it is in the MTP layer, and the
// source dtype and shape. Routed experts are always integer (they are streamed).
QuantChoice chooseFormat(const Policy& policy, const TensorName& tensor, bool mtpLayer,
                         io::DType source, const std::vector<int64_t>& shape);

}  // namespace strata::convert
