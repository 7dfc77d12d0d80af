#include "synth/synthetic_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/files.h"

namespace strata::synth {
namespace {

using ordered_json = nlohmann::ordered_json;

// GLM-5's architecture at benchmark scale: every ratio that matters for streaming (experts per
// token, expert width against hidden size, int4 experts dominating the bytes) kept, the
// widths cut so a model is a few GB. Fields as in GLM-5's own config.json (spec §1).
ordered_json presetConfig(int layers) {
  const int vocab = 32000;
  return {
      {"architectures", {"GlmMoeDsaForCausalLM"}},
      {"model_type", "glm_moe_dsa"},
      {"hidden_size", 2048},
      {"num_hidden_layers", layers},
      {"first_k_dense_replace", 1},
      {"moe_layer_freq", 1},
      {"num_attention_heads", 16},
      {"num_key_value_heads", 16},
      {"q_lora_rank", 512},
      {"kv_lora_rank", 256},
      {"qk_nope_head_dim", 64},
      {"qk_rope_head_dim", 32},
      {"v_head_dim", 64},
      {"index_n_heads", 8},
      {"index_head_dim", 64},
      {"index_topk", 512},
      {"rope_interleave", true},
      {"indexer_rope_interleave", true},
      {"rope_parameters", {{"rope_theta", 1000000.0}, {"rope_type", "default"}}},
      {"max_position_embeddings", 4096},
      {"n_routed_experts", 128},
      {"num_experts_per_tok", 8},
      {"n_shared_experts", 1},
      {"moe_intermediate_size", 768},
      {"intermediate_size", 4096},
      {"routed_scaling_factor", 2.5},
      {"scoring_func", "sigmoid"},
      {"topk_method", "noaux_tc"},
      {"n_group", 1},
      {"topk_group", 1},
      {"norm_topk_prob", true},
      {"rms_norm_eps", 1e-5},
      {"hidden_act", "silu"},
      {"attention_bias", false},
      {"vocab_size", vocab},
      {"tie_word_embeddings", false},
      {"num_nextn_predict_layers", 0},
      {"eos_token_id", {vocab - 1}},
      {"pad_token_id", vocab - 1},
      {"dtype", "bfloat16"},
  };
}

}  // namespace

const std::vector<std::string>& presetNames() {
  static const std::vector<std::string> names = {"medium", "large"};
  return names;
}

SyntheticConfig makeSyntheticConfig(const SynthOptions& options) {
  SyntheticConfig out;
  ordered_json root;
  if (!options.preset.empty() && !options.configFile.empty())
    throw Error("synth: give a preset or a config file, not both");
  if (!options.preset.empty()) {
    const std::vector<std::string>& names = presetNames();
    if (std::find(names.begin(), names.end(), options.preset) == names.end()) {
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      throw Error("synth: unknown preset '" + options.preset + "' (known: " + known + ")");
    }
    root = presetConfig(options.preset == "medium" ? 10 : 16);
    out.origin = "preset " + options.preset;
  } else if (!options.configFile.empty()) {
    const std::string where = options.configFile.string();
    try {
      root = ordered_json::parse(readTextFile(options.configFile));
    } catch (const nlohmann::json::exception& e) {
      throw Error(where + ": not valid JSON: " + e.what());
    }
    if (!root.is_object()) throw Error(where + ": expected a JSON object at the top level");
    // The synthetic checkpoint is BF16 (what convert would read from a BF16 release); an FP8
    // source's quantization_config would describe weights that do not exist.
    root.erase("quantization_config");
    // The file name only: the same config gives the same container wherever it lies.
    out.origin = "config " + options.configFile.filename().string();
  } else {
    throw Error("synth: give a preset (medium, large) or a config file");
  }
  root["strata_synthetic"] = {
      {"generator", kGeneratorName},
      {"origin", out.origin},
      {"seed", options.seed},
      {"zipf", options.zipf},
      {"policy", options.policy},
      {"note", "random weights: this model produces gibberish by design"},
  };
  out.text = root.dump(1) + "\n";
  out.config = model::parseModelConfig(
      out.text, options.configFile.empty() ? out.origin : options.configFile.string());
  return out;
}

}  // namespace strata::synth
