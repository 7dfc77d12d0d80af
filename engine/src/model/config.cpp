#include "model/config.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "strata/error.h"

namespace strata::model {

namespace {

using nlohmann::json;

// Typed, validated access to the top-level config object. Every failure names the source file
// and the field. A JSON null counts as "absent" only for optional objects and lists; for a
// number or flag it is a type error (HF uses e.g. q_lora_rank: null to mean "no q LoRA", which
// is a different model, not a default).
class ConfigReader {
 public:
  ConfigReader(const json& root, std::string_view source) : root_(root), source_(source) {}

  [[noreturn]] void fail(std::string_view field, const std::string& problem) const {
    throw Error(source_ + ": " + std::string(field) + ": " + problem);
  }

  // Nullptr when the key is absent (or null, if nullMeansAbsent).
  const json* find(std::string_view key, bool nullMeansAbsent = false) const {
    const auto it = root_.find(key);
    if (it == root_.end() || (nullMeansAbsent && it->is_null())) return nullptr;
    return &*it;
  }

  // `fallback` is the Hugging Face default (spec §1); without one the field is required.
  int integer(std::string_view key, std::optional<int> fallback, bool allowZero) const {
    const json* value = find(key);
    if (value == nullptr) return fallback ? *fallback : missing(key);
    return integerValue(*value, key, allowZero);
  }
  int positive(std::string_view key, std::optional<int> fallback) const {
    return integer(key, fallback, false);
  }
  int nonNegative(std::string_view key, std::optional<int> fallback) const {
    return integer(key, fallback, true);
  }

  int integerValue(const json& value, std::string_view field, bool allowZero) const {
    const char* expected =
        allowZero ? "expected a non-negative integer" : "expected a positive integer";
    // nlohmann parses non-negative integer literals as unsigned and negative ones as signed.
    if (!value.is_number_integer() || !value.is_number_unsigned()) {
      fail(field, std::string(expected) + ", got " + value.dump());
    }
    if (value.get<uint64_t>() > INT_MAX) {
      fail(field, std::string(expected) + " below 2^31, got " + value.dump());
    }
    const int result = value.get<int>();
    if (result == 0 && !allowZero) fail(field, std::string(expected) + ", got 0");
    return result;
  }

  double positiveNumberValue(const json& value, std::string_view field) const {
    if (!value.is_number() || !(value.get<double>() > 0)) {
      fail(field, "expected a positive number, got " + value.dump());
    }
    return value.get<double>();
  }
  double positiveNumber(std::string_view key, std::optional<double> fallback) const {
    const json* value = find(key);
    if (value == nullptr) return fallback ? *fallback : missing(key);
    return positiveNumberValue(*value, key);
  }

  bool boolean(std::string_view key, bool fallback) const {
    const json* value = find(key);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) fail(key, "expected true or false, got " + value->dump());
    return value->get<bool>();
  }

  // An optional string that, when present, must be exactly `only` (what the engine implements).
  void onlyValue(std::string_view key, std::string_view only, std::string_view why) const {
    const json* value = find(key, true);
    if (value == nullptr) return;
    if (!value->is_string() || value->get_ref<const std::string&>() != only) {
      fail(key, value->dump() + " is not supported; expected \"" + std::string(only) + "\" (" +
                    std::string(why) + ")");
    }
  }

  [[noreturn]] int missing(std::string_view key) const { fail(key, "required field is missing"); }

 private:
  const json& root_;
  std::string source_;
};

void parseAttention(const ConfigReader& in, ModelConfig& c) {
  c.numAttentionHeads = in.positive("num_attention_heads", 64);
  c.qLoraRank = in.positive("q_lora_rank", 2048);
  c.kvLoraRank = in.positive("kv_lora_rank", 512);
  c.qkNopeHeadDim = in.positive("qk_nope_head_dim", 192);
  c.qkRopeHeadDim = in.positive("qk_rope_head_dim", 64);
  c.vHeadDim = in.positive("v_head_dim", 256);
  c.maxPositionEmbeddings = in.positive("max_position_embeddings", 202752);
  // `head_dim` is deliberately not read: it is 64 or 192 in real configs and means nothing
  // (spec §7 pitfall 7); the q/k/v dims above are the truth.
  if (c.qkRopeHeadDim % 2 != 0) {
    in.fail("qk_rope_head_dim", "must be even (RoPE rotates interleaved pairs), got " +
                                    std::to_string(c.qkRopeHeadDim));
  }
  if (const json* bias = in.find("attention_bias"); bias && *bias != json(false)) {
    in.fail("attention_bias", bias->dump() + " is not supported; expected false");
  }
}

void parseRope(const ConfigReader& in, ModelConfig& c) {
  // Only unscaled RoPE exists in the GLM-5 family; YaRN etc. would change the attention scale
  // and frequencies, so refusing is better than silently computing something else.
  auto checkType = [&](const json& object, const std::string& field) {
    for (const char* key : {"rope_type", "type"}) {
      if (object.contains(key) && object[key] != json("default")) {
        in.fail(field + "." + key, "rope type " + object[key].dump() +
                                       " is not supported; only \"default\" (unscaled) RoPE");
      }
    }
  };
  if (const json* params = in.find("rope_parameters", true)) {
    if (!params->is_object()) {
      in.fail("rope_parameters", "expected an object, got " + params->dump());
    }
    checkType(*params, "rope_parameters");
    if (!params->contains("rope_theta")) {
      in.fail("rope_parameters.rope_theta", "required field is missing");
    }
    c.ropeTheta = in.positiveNumberValue((*params)["rope_theta"], "rope_parameters.rope_theta");
  } else if (const json* theta = in.find("rope_theta")) {
    c.ropeTheta = in.positiveNumberValue(*theta, "rope_theta");
  } else {
    in.fail("rope_parameters",
            "required field is missing (expected {\"rope_theta\": ..., \"rope_type\": "
            "\"default\"} or a top-level rope_theta)");
  }
  if (const json* scaling = in.find("rope_scaling", true)) {
    if (!scaling->is_object()) {
      in.fail("rope_scaling", "expected an object or null, got " + scaling->dump());
    }
    checkType(*scaling, "rope_scaling");
  }
}

// Which layers own a lightning indexer (spec §3.8). An explicit list or F/S pattern wins;
// otherwise HF's rule: layer i is full iff max(i - offset + 1, 0) mod freq == 0.
void parseIndexer(const ConfigReader& in, ModelConfig& c) {
  c.indexNHeads = in.positive("index_n_heads", 32);
  c.indexHeadDim = in.positive("index_head_dim", 128);
  c.indexTopk = in.positive("index_topk", 2048);
  if (c.indexHeadDim <= c.qkRopeHeadDim) {
    in.fail("index_head_dim",
            "must be greater than qk_rope_head_dim (" + std::to_string(c.qkRopeHeadDim) +
                ", the RoPE part of each indexer head), got " + std::to_string(c.indexHeadDim));
  }
  const int layers = c.numHiddenLayers;
  c.layerHasIndexer.assign(layers, true);
  std::string field;
  if (const json* types = in.find("indexer_types", true)) {
    field = "indexer_types";
    if (!types->is_array() || static_cast<int>(types->size()) != layers) {
      in.fail(field, "expected a list of " + std::to_string(layers) +
                         " entries (num_hidden_layers), got " + types->dump());
    }
    for (int i = 0; i < layers; ++i) {
      const json& t = (*types)[i];
      if (t != json("full") && t != json("shared")) {
        in.fail(field, "entry " + std::to_string(i) + " is " + t.dump() +
                           "; expected \"full\" or \"shared\"");
      }
      c.layerHasIndexer[i] = t == json("full");
    }
  } else if (const json* pattern = in.find("index_topk_pattern", true)) {
    field = "index_topk_pattern";
    if (!pattern->is_string() ||
        static_cast<int>(pattern->get_ref<const std::string&>().size()) != layers) {
      in.fail(field, "expected a string of " + std::to_string(layers) +
                         " 'F'/'S' characters (num_hidden_layers), got " + pattern->dump());
    }
    const auto& text = pattern->get_ref<const std::string&>();
    for (int i = 0; i < layers; ++i) {
      if (text[i] != 'F' && text[i] != 'S') {
        in.fail(field,
                "character " + std::to_string(i) + " is '" + text[i] + "'; expected 'F' or 'S'");
      }
      c.layerHasIndexer[i] = text[i] == 'F';
    }
  } else {
    field = "index_skip_topk_offset";
    const int freq = in.positive("index_topk_freq", 1);
    const int offset = in.nonNegative("index_skip_topk_offset", 2);
    for (int i = 0; i < layers; ++i) c.layerHasIndexer[i] = std::max(i - offset + 1, 0) % freq == 0;
  }
  if (layers > 0 && !c.layerHasIndexer[0]) {
    in.fail(field,
            "layer 0 must be \"full\": a shared layer reuses the top-k of an earlier full layer");
  }
}

void parseMlp(const ConfigReader& in, ModelConfig& c) {
  const int layers = c.numHiddenLayers;
  c.layerIsMoe.assign(layers, false);
  if (const json* types = in.find("mlp_layer_types", true)) {
    if (!types->is_array() || static_cast<int>(types->size()) != layers) {
      in.fail("mlp_layer_types", "expected a list of " + std::to_string(layers) +
                                     " entries (num_hidden_layers), got " + types->dump());
    }
    for (int i = 0; i < layers; ++i) {
      const json& t = (*types)[i];
      if (t != json("dense") && t != json("sparse")) {
        in.fail("mlp_layer_types", "entry " + std::to_string(i) + " is " + t.dump() +
                                       "; expected \"dense\" or \"sparse\"");
      }
      c.layerIsMoe[i] = t == json("sparse");
    }
  } else {
    // DeepSeek-V3 rule, which HF uses to derive mlp_layer_types.
    const int firstMoe = in.nonNegative("first_k_dense_replace", 3);
    const int freq = in.positive("moe_layer_freq", 1);
    for (int i = 0; i < layers; ++i) c.layerIsMoe[i] = i >= firstMoe && i % freq == 0;
  }

  c.intermediateSize = in.nonNegative("intermediate_size", 12288);
  c.moeIntermediateSize = in.nonNegative("moe_intermediate_size", 2048);
  c.nRoutedExperts = in.nonNegative("n_routed_experts", 256);
  c.numExpertsPerTok = in.nonNegative("num_experts_per_tok", 8);
  c.nSharedExperts = in.nonNegative("n_shared_experts", 1);
  c.nGroup = in.positive("n_group", 1);
  c.topkGroup = in.positive("topk_group", 1);
  c.normTopkProb = in.boolean("norm_topk_prob", true);
  c.routedScalingFactor = static_cast<float>(in.positiveNumber("routed_scaling_factor", 2.5));
  in.onlyValue("scoring_func", "sigmoid", "the GLM-5 router uses sigmoid scores");
  in.onlyValue("topk_method", "noaux_tc", "bias-corrected top-k is the only router implemented");
  in.onlyValue("hidden_act", "silu", "SwiGLU experts");

  bool anyDense = false, anyMoe = c.hasMtp();  // the MTP layer is always an MoE layer
  for (bool moe : c.layerIsMoe) {
    anyMoe = anyMoe || moe;
    anyDense = anyDense || !moe;
  }
  if (anyDense && c.intermediateSize == 0) {
    in.fail("intermediate_size", "expected a positive integer for the dense MLP layers, got 0");
  }
  if (!anyMoe) return;
  auto requirePositive = [&](const char* field, int value) {
    if (value == 0) {
      in.fail(field, "expected a positive integer because the model has MoE layers, got 0");
    }
  };
  requirePositive("n_routed_experts", c.nRoutedExperts);
  requirePositive("num_experts_per_tok", c.numExpertsPerTok);
  requirePositive("moe_intermediate_size", c.moeIntermediateSize);
  const auto str = [](int v) { return std::to_string(v); };
  if (c.numExpertsPerTok > c.nRoutedExperts) {
    in.fail("num_experts_per_tok",
            str(c.numExpertsPerTok) + " exceeds n_routed_experts (" + str(c.nRoutedExperts) + ")");
  }
  if (c.nRoutedExperts % c.nGroup != 0) {
    in.fail("n_group", "n_routed_experts (" + str(c.nRoutedExperts) +
                           ") is not divisible by n_group (" + str(c.nGroup) + ")");
  }
  if (c.topkGroup > c.nGroup) {
    in.fail("topk_group", str(c.topkGroup) + " exceeds n_group (" + str(c.nGroup) + ")");
  }
  const int perGroup = c.nRoutedExperts / c.nGroup;
  if (c.nGroup > 1 && perGroup < 2) {
    // A group's score is the sum of its two best experts.
    in.fail("n_group", "each of the " + str(c.nGroup) + " groups needs at least 2 experts, has " +
                           str(perGroup));
  }
  if (c.numExpertsPerTok > c.topkGroup * perGroup) {
    in.fail("num_experts_per_tok", str(c.numExpertsPerTok) + " exceeds the " +
                                       str(c.topkGroup * perGroup) +
                                       " experts in the topk_group selected groups");
  }
}

void parseEos(const ConfigReader& in, ModelConfig& c) {
  const json* eos = in.find("eos_token_id");
  if (eos == nullptr) {
    c.eosTokenIds = {1};  // HF default (spec §1)
  } else if (eos->is_array()) {
    if (eos->empty()) {
      in.fail("eos_token_id", "expected a token id or a non-empty list of them, got []");
    }
    for (const json& id : *eos) c.eosTokenIds.push_back(in.integerValue(id, "eos_token_id", true));
  } else {
    c.eosTokenIds = {in.integerValue(*eos, "eos_token_id", true)};
  }
  for (int id : c.eosTokenIds) {
    if (id >= c.vocabSize) {
      in.fail("eos_token_id", std::to_string(id) + " is outside the vocabulary (vocab_size " +
                                  std::to_string(c.vocabSize) + ")");
    }
  }
}

void parseQuantization(const ConfigReader& in, ModelConfig& c) {
  const json* q = in.find("quantization_config", true);
  if (q == nullptr) return;
  if (!q->is_object()) in.fail("quantization_config", "expected an object, got " + q->dump());
  if (!q->contains("quant_method")) {
    in.fail("quantization_config.quant_method", "required field is missing");
  }
  const json& method = (*q)["quant_method"];
  if (method != json("fp8")) {
    in.fail("quantization_config.quant_method",
            method.dump() + " is not supported; expected \"fp8\" (block-scaled FP8 checkpoints)");
  }
  if (q->contains("fmt") && (*q)["fmt"] != json("e4m3")) {
    in.fail("quantization_config.fmt", (*q)["fmt"].dump() + " is not supported; expected \"e4m3\"");
  }
  c.fp8Weights = true;
  if (!q->contains("weight_block_size")) return;  // HF default [128, 128], as ModelConfig
  const json& block = (*q)["weight_block_size"];
  const char* field = "quantization_config.weight_block_size";
  if (!block.is_array() || block.size() != 2) {
    // null would mean per-tensor scales, which GLM-5 checkpoints never use.
    in.fail(field, "expected [rows, cols] block sizes, got " + block.dump());
  }
  c.fp8BlockRows = in.integerValue(block[0], field, false);
  c.fp8BlockCols = in.integerValue(block[1], field, false);
}

}  // namespace

ModelConfig parseModelConfig(std::string_view jsonText, std::string_view source) {
  json root;
  try {
    root = json::parse(jsonText);
  } catch (const json::exception& e) {
    throw Error(std::string(source) + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) {
    throw Error(std::string(source) + ": expected a JSON object at the top level");
  }
  const ConfigReader in(root, source);

  ModelConfig c;
  const json* type = in.find("model_type");
  if (type == nullptr) in.missing("model_type");
  if (*type != json("glm_moe_dsa")) {
    in.fail("model_type", type->dump() +
                              " is not supported; only \"glm_moe_dsa\" (GLM-5 family) "
                              "checkpoints can be loaded");
  }
  c.modelType = type->get<std::string>();
  c.vocabSize = in.positive("vocab_size", 154880);
  c.hiddenSize = in.positive("hidden_size", 6144);
  c.numHiddenLayers = in.positive("num_hidden_layers", 78);
  const json* eps = in.find("rms_norm_eps");
  const double epsValue = eps ? in.positiveNumberValue(*eps, "rms_norm_eps") : 1e-5;
  if (epsValue > 1e-2) {
    in.fail("rms_norm_eps", "expected a small positive number in (0, 0.01], got " + eps->dump());
  }
  c.rmsNormEps = static_cast<float>(epsValue);
  c.tieWordEmbeddings = in.boolean("tie_word_embeddings", false);
  c.numNextnPredictLayers = in.nonNegative("num_nextn_predict_layers", 0);
  if (c.numNextnPredictLayers > 1) {
    in.fail("num_nextn_predict_layers", std::to_string(c.numNextnPredictLayers) +
                                            " MTP layers are not supported; expected 0 or 1");
  }

  parseAttention(in, c);
  parseRope(in, c);
  parseIndexer(in, c);
  parseMlp(in, c);
  parseEos(in, c);
  parseQuantization(in, c);
  return c;
}

ModelConfig loadModelConfig(const std::filesystem::path& configJson) {
  std::ifstream file(configJson, std::ios::binary);
  if (!file) throw Error(configJson.string() + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw Error(configJson.string() + ": read error");
  return parseModelConfig(text.str(), configJson.string());
}

}  // namespace strata::model
