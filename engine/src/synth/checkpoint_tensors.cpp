#include "synth/checkpoint_tensors.h"

#include <algorithm>
#include <cstdint>

namespace strata::synth {
namespace {

using Shape = std::vector<int64_t>;

class TensorList {
 public:
  void add(std::string name, Shape shape, io::DType dtype = io::DType::BF16) {
    uint64_t bytes = io::dtypeSize(dtype);
    for (int64_t d : shape) bytes *= static_cast<uint64_t>(d);
    tensors_.push_back({std::move(name), dtype, std::move(shape), 0, -1, bytes});
  }
  void swiglu(const std::string& prefix, int64_t width, int64_t hidden) {
    add(prefix + "gate_proj.weight", {width, hidden});
    add(prefix + "up_proj.weight", {width, hidden});
    add(prefix + "down_proj.weight", {hidden, width});
  }
  std::vector<convert::SourceTensor> take() { return std::move(tensors_); }

 private:
  std::vector<convert::SourceTensor> tensors_;
};

void addLayer(TensorList& t, const model::ModelConfig& c, int index, bool hasIndexer, bool isMoe) {
  const int64_t H = c.hiddenSize, heads = c.numAttentionHeads;
  const std::string p = "model.layers." + std::to_string(index) + ".";
  const std::string a = p + "self_attn.";
  t.add(p + "input_layernorm.weight", {H});
  t.add(a + "q_a_proj.weight", {c.qLoraRank, H});
  t.add(a + "q_a_layernorm.weight", {c.qLoraRank});
  t.add(a + "q_b_proj.weight", {heads * c.qkHeadDim(), c.qLoraRank});
  t.add(a + "kv_a_proj_with_mqa.weight", {c.kvLoraRank + c.qkRopeHeadDim, H});
  t.add(a + "kv_a_layernorm.weight", {c.kvLoraRank});
  t.add(a + "kv_b_proj.weight", {heads * (c.qkNopeHeadDim + c.vHeadDim), c.kvLoraRank});
  t.add(a + "o_proj.weight", {H, heads * c.vHeadDim});
  if (hasIndexer) {
    const std::string ix = a + "indexer.";
    t.add(ix + "wq_b.weight", {int64_t{c.indexNHeads} * c.indexHeadDim, c.qLoraRank});
    t.add(ix + "wk.weight", {c.indexHeadDim, H});
    t.add(ix + "k_norm.weight", {c.indexHeadDim});
    t.add(ix + "k_norm.bias", {c.indexHeadDim});
    t.add(ix + "weights_proj.weight", {c.indexNHeads, H});
  }
  t.add(p + "post_attention_layernorm.weight", {H});
  if (!isMoe) {
    t.swiglu(p + "mlp.", c.intermediateSize, H);
    return;
  }
  t.add(p + "mlp.gate.weight", {c.nRoutedExperts, H});
  t.add(p + "mlp.gate.e_score_correction_bias", {c.nRoutedExperts}, io::DType::F32);
  for (int e = 0; e < c.nRoutedExperts; ++e)
    t.swiglu(p + "mlp.experts." + std::to_string(e) + ".", c.moeIntermediateSize, H);
  if (c.nSharedExperts > 0) t.swiglu(p + "mlp.shared_experts.", c.sharedIntermediateSize(), H);
}

}  // namespace

std::vector<convert::SourceTensor> checkpointTensors(const model::ModelConfig& c) {
  TensorList t;
  const int64_t H = c.hiddenSize;
  t.add("model.embed_tokens.weight", {c.vocabSize, H});
  t.add("model.norm.weight", {H});
  if (!c.tieWordEmbeddings) t.add("lm_head.weight", {c.vocabSize, H});
  for (int i = 0; i < c.numHiddenLayers; ++i)
    addLayer(t, c, i, c.layerHasIndexer[static_cast<size_t>(i)],
             c.layerIsMoe[static_cast<size_t>(i)]);
  if (c.hasMtp()) {
    // Spec §2.3: a full MoE layer with its own indexer, plus the MTP projections; embed_tokens
    // and the head are shared with the main model.
    const int index = c.numHiddenLayers;
    const std::string p = "model.layers." + std::to_string(index) + ".";
    t.add(p + "enorm.weight", {H});
    t.add(p + "hnorm.weight", {H});
    t.add(p + "eh_proj.weight", {H, 2 * H});
    t.add(p + "shared_head.norm.weight", {H});
    addLayer(t, c, index, /*hasIndexer=*/true, /*isMoe=*/true);
  }
  std::vector<convert::SourceTensor> tensors = t.take();
  // A checkpoint's table is sorted by name (convert/source.h).
  std::sort(tensors.begin(), tensors.end(),
            [](const convert::SourceTensor& a, const convert::SourceTensor& b) {
              return a.name < b.name;
            });
  return tensors;
}

convert::SourceTable syntheticSourceTable(const std::string& configText,
                                          const model::ModelConfig& config) {
  convert::SourceTable table;
  table.configText = configText;
  table.tensors = checkpointTensors(config);
  return table;
}

}  // namespace strata::synth
