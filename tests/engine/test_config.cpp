// config.json parsing: the real GLM-5 / GLM-5.2 configs, HF defaults, and one row per malformed
// input asserting that the error names the file, the field and the problem.
#include <QTemporaryDir>
#include <QTest>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/config.h"
#include "strata/error.h"

using nlohmann::json;
using strata::model::ModelConfig;
using strata::model::parseModelConfig;

namespace {

// zai-org/GLM-5 config.json (spec §1), including fields the engine ignores.
const char* kGlm5Config = R"({
  "architectures": ["GlmMoeDsaForCausalLM"],
  "model_type": "glm_moe_dsa",
  "attention_bias": false,
  "attention_dropout": 0.0,
  "dtype": "bfloat16",
  "eos_token_id": [154820, 154827, 154829],
  "pad_token_id": 154820,
  "first_k_dense_replace": 3,
  "head_dim": 64,
  "hidden_act": "silu",
  "hidden_size": 6144,
  "index_head_dim": 128,
  "index_n_heads": 32,
  "index_topk": 2048,
  "indexer_rope_interleave": true,
  "intermediate_size": 12288,
  "kv_lora_rank": 512,
  "max_position_embeddings": 202752,
  "moe_intermediate_size": 2048,
  "moe_layer_freq": 1,
  "n_group": 1,
  "n_routed_experts": 256,
  "n_shared_experts": 1,
  "norm_topk_prob": true,
  "num_attention_heads": 64,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 78,
  "num_key_value_heads": 64,
  "num_nextn_predict_layers": 1,
  "q_lora_rank": 2048,
  "qk_nope_head_dim": 192,
  "qk_rope_head_dim": 64,
  "rms_norm_eps": 1e-05,
  "rope_interleave": true,
  "rope_parameters": {"rope_theta": 1000000, "rope_type": "default"},
  "routed_scaling_factor": 2.5,
  "scoring_func": "sigmoid",
  "tie_word_embeddings": false,
  "topk_group": 1,
  "topk_method": "noaux_tc",
  "use_cache": true,
  "v_head_dim": 256,
  "vocab_size": 154880
})";

// GLM-5.2-FP8 differs by IndexShare, 1M context, theta 8e6, explicit mlp_layer_types and FP8.
json glm52Config() {
  json config = json::parse(kGlm5Config);
  std::vector<std::string> mlp(78, "sparse");
  for (int i = 0; i < 3; ++i) mlp[i] = "dense";
  config.merge_patch({{"head_dim", 192},
                      {"max_position_embeddings", 1048576},
                      {"rope_parameters", {{"rope_theta", 8000000}}},
                      {"index_topk_freq", 4},
                      {"index_skip_topk_offset", 3},
                      {"index_topk_pattern", nullptr},
                      {"index_share_for_mtp_iteration", true},
                      {"moe_router_dtype", "float32"},
                      {"mlp_layer_types", mlp},
                      {"quantization_config",
                       {{"quant_method", "fp8"},
                        {"fmt", "e4m3"},
                        {"activation_scheme", "dynamic"},
                        {"weight_block_size", {128, 128}},
                        {"modules_to_not_convert", {"lm_head", "self_attn.indexers_proj"}}}}});
  return config;
}

// The IndexShare full layers of GLM-5.2 as the spec lists them (§2.2, §3.8): 21 layers.
const std::vector<int> kGlm52FullLayers{0,  1,  2,  6,  10, 14, 18, 22, 26, 30, 34,
                                        38, 42, 46, 50, 54, 58, 62, 66, 70, 74};

std::vector<int> trueIndices(const std::vector<bool>& flags) {
  std::vector<int> result;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i]) result.push_back(static_cast<int>(i));
  }
  return result;
}

// A small valid config that the malformed rows patch one field at a time.
const char* kTinyConfig = R"({
  "model_type": "glm_moe_dsa", "vocab_size": 512, "hidden_size": 64, "num_hidden_layers": 4,
  "rms_norm_eps": 1e-5, "tie_word_embeddings": false, "num_attention_heads": 4,
  "q_lora_rank": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
  "v_head_dim": 16, "rope_parameters": {"rope_theta": 10000, "rope_type": "default"},
  "max_position_embeddings": 4096, "index_n_heads": 2, "index_head_dim": 16, "index_topk": 4,
  "intermediate_size": 96, "moe_intermediate_size": 32, "n_routed_experts": 8,
  "num_experts_per_tok": 2, "n_shared_experts": 1, "n_group": 1, "topk_group": 1,
  "norm_topk_prob": true, "routed_scaling_factor": 2.5, "first_k_dense_replace": 1,
  "moe_layer_freq": 1, "num_nextn_predict_layers": 1, "eos_token_id": [2, 3],
  "scoring_func": "sigmoid", "topk_method": "noaux_tc", "hidden_act": "silu",
  "attention_bias": false
})";
constexpr const char* kSource = "tiny/config.json";

ModelConfig parseJson(const json& config) { return parseModelConfig(config.dump(), kSource); }

}  // namespace

class TestConfig : public QObject {
  Q_OBJECT

 private slots:
  void glm5() {
    const ModelConfig c = parseModelConfig(kGlm5Config, "GLM-5/config.json");
    QCOMPARE(c.modelType, std::string("glm_moe_dsa"));
    QCOMPARE(c.vocabSize, 154880);
    QCOMPARE(c.hiddenSize, 6144);
    QCOMPARE(c.numHiddenLayers, 78);
    QCOMPARE(c.rmsNormEps, 1e-5f);
    QCOMPARE(c.tieWordEmbeddings, false);
    QCOMPARE(c.numAttentionHeads, 64);
    QCOMPARE(c.qLoraRank, 2048);
    QCOMPARE(c.kvLoraRank, 512);
    QCOMPARE(c.qkNopeHeadDim, 192);
    QCOMPARE(c.qkRopeHeadDim, 64);
    QCOMPARE(c.qkHeadDim(), 256);  // head_dim: 64 in the file is ignored (spec §7.7)
    QCOMPARE(c.vHeadDim, 256);
    QCOMPARE(c.ropeTheta, 1e6);
    QCOMPARE(c.maxPositionEmbeddings, 202752);
    QCOMPARE(c.indexNHeads, 32);
    QCOMPARE(c.indexHeadDim, 128);
    QCOMPARE(c.indexTopk, 2048);
    QCOMPARE(c.layerHasIndexer, std::vector<bool>(78, true));  // no IndexShare before 5.2
    QCOMPARE(c.intermediateSize, 12288);
    QCOMPARE(c.moeIntermediateSize, 2048);
    QCOMPARE(c.nRoutedExperts, 256);
    QCOMPARE(c.numExpertsPerTok, 8);
    QCOMPARE(c.nSharedExperts, 1);
    QCOMPARE(c.sharedIntermediateSize(), 2048);
    QCOMPARE(c.nGroup, 1);
    QCOMPARE(c.topkGroup, 1);
    QCOMPARE(c.normTopkProb, true);
    QCOMPARE(c.routedScalingFactor, 2.5f);
    std::vector<bool> moe(78, true);
    moe[0] = moe[1] = moe[2] = false;  // first_k_dense_replace = 3
    QCOMPARE(c.layerIsMoe, moe);
    QCOMPARE(c.numNextnPredictLayers, 1);
    QVERIFY(c.hasMtp());
    QCOMPARE(c.eosTokenIds, (std::vector<int>{154820, 154827, 154829}));
    QCOMPARE(c.fp8Weights, false);
  }

  void glm52IndexShare() {
    const ModelConfig c = parseJson(glm52Config());
    QCOMPARE(trueIndices(c.layerHasIndexer), kGlm52FullLayers);
    QCOMPARE(c.ropeTheta, 8e6);
    QCOMPARE(c.maxPositionEmbeddings, 1048576);
    QCOMPARE(c.qkHeadDim(), 256);  // head_dim: 192 is ignored too
    QCOMPARE(trueIndices(c.layerIsMoe).size(), size_t{75});
    QCOMPARE(trueIndices(c.layerIsMoe).front(), 3);
    QCOMPARE(c.fp8Weights, true);
    QCOMPARE(c.fp8BlockRows, 128);
    QCOMPARE(c.fp8BlockCols, 128);
  }

  void explicitIndexerTypesOverrideTheRule() {
    json config = glm52Config();
    std::vector<std::string> types(78, "shared");
    for (int i : kGlm52FullLayers) types[i] = "full";
    types[5] = "full";  // differs from the freq/offset rule, so the list must win
    config["indexer_types"] = types;
    std::vector<int> expected = kGlm52FullLayers;
    expected.insert(expected.begin() + 3, 5);
    QCOMPARE(trueIndices(parseJson(config).layerHasIndexer), expected);
  }

  void indexTopkPattern() {
    json config = json::parse(kTinyConfig);
    config["index_topk_pattern"] = "FSFS";
    QCOMPARE(parseJson(config).layerHasIndexer, (std::vector<bool>{true, false, true, false}));
  }

  void tinyConfigAndMoeLayerFreq() {
    json config = json::parse(kTinyConfig);
    config["moe_layer_freq"] = 2;  // DeepSeek rule: i >= first_k_dense_replace && i % freq == 0
    const ModelConfig c = parseJson(config);
    QCOMPARE(c.layerIsMoe, (std::vector<bool>{false, false, true, false}));
    QCOMPARE(c.eosTokenIds, (std::vector<int>{2, 3}));
    QCOMPARE(c.layerHasIndexer, std::vector<bool>(4, true));  // freq 1: all full
  }

  void legacyRopeThetaAndScalarEos() {
    json config = json::parse(kTinyConfig);
    config.erase("rope_parameters");
    config["rope_theta"] = 50000.5;
    config["rope_scaling"] = nullptr;
    config["eos_token_id"] = 7;
    const ModelConfig c = parseJson(config);
    QCOMPARE(c.ropeTheta, 50000.5);
    QCOMPARE(c.eosTokenIds, std::vector<int>{7});
  }

  void customFp8BlockSize() {
    json config = json::parse(kTinyConfig);
    config["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {64, 32}}};
    const ModelConfig c = parseJson(config);
    QVERIFY(c.fp8Weights);
    QCOMPARE(c.fp8BlockRows, 64);
    QCOMPARE(c.fp8BlockCols, 32);
  }

  void denseOnlyModelNeedsNoExperts() {
    json config = json::parse(kTinyConfig);
    config.merge_patch({{"first_k_dense_replace", 4},
                        {"n_routed_experts", 0},
                        {"num_experts_per_tok", 0},
                        {"num_nextn_predict_layers", 0}});
    const ModelConfig c = parseJson(config);
    QCOMPARE(c.layerIsMoe, std::vector<bool>(4, false));
    QVERIFY(!c.hasMtp());
  }

  void huggingFaceDefaults() {
    // Fields HF gives a default (spec §1 "HF default" column) may be absent.
    const ModelConfig c = parseModelConfig(
        R"({"model_type": "glm_moe_dsa", "rope_parameters": {"rope_theta": 1000000}})", kSource);
    QCOMPARE(c.hiddenSize, 6144);
    QCOMPARE(c.numHiddenLayers, 78);
    QCOMPARE(c.vocabSize, 154880);
    QCOMPARE(c.rmsNormEps, 1e-5f);
    QCOMPARE(c.qkNopeHeadDim, 192);
    QCOMPARE(c.indexTopk, 2048);
    QCOMPARE(c.maxPositionEmbeddings, 202752);
    QCOMPARE(c.routedScalingFactor, 2.5f);
    QCOMPARE(c.numNextnPredictLayers, 0);
    QCOMPARE(c.eosTokenIds, std::vector<int>{1});
    QCOMPARE(trueIndices(c.layerIsMoe).front(), 3);
    QCOMPARE(c.layerHasIndexer, std::vector<bool>(78, true));  // freq 1, offset 2
  }

  void loadFromFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("config.json").toStdString();
    std::ofstream(path) << kTinyConfig;
    QCOMPARE(strata::model::loadModelConfig(path).hiddenSize, 64);
    const std::string missing = dir.filePath("nope/config.json").toStdString();
    try {
      strata::model::loadModelConfig(missing);
      QFAIL("expected an error for a missing file");
    } catch (const strata::Error& e) {
      QVERIFY2(std::string(e.what()).starts_with(missing + ": cannot open"), e.what());
    }
  }

  void malformed_data() {
    QTest::addColumn<QByteArray>("patch");        // JSON merge patch on the tiny config
    QTest::addColumn<QByteArray>("nullPointer");  // then set this JSON pointer to null
    QTest::addColumn<QString>("expected");
    auto row = [](const char* name, const char* patch, const char* expected,
                  const char* nullPointer = "") {
      QTest::newRow(name) << QByteArray(patch) << QByteArray(nullPointer) << QString(expected);
    };
    row("int as string", R"({"hidden_size": "64"})",
        R"(hidden_size: expected a positive integer, got "64")");
    row("int as float", R"({"hidden_size": 64.5})",
        "hidden_size: expected a positive integer, got 64.5");
    row("zero size", R"({"num_attention_heads": 0})",
        "num_attention_heads: expected a positive integer, got 0");
    row("negative", R"({"num_hidden_layers": -2})",
        "num_hidden_layers: expected a positive integer, got -2");
    row("too large", R"({"vocab_size": 3000000000})",
        "vocab_size: expected a positive integer below 2^31");
    row("null int", "{}", "q_lora_rank: expected a positive integer, got null", "/q_lora_rank");
    row("bool as string", R"({"tie_word_embeddings": "false"})",
        R"(tie_word_embeddings: expected true or false, got "false")");
    row("bool as int", R"({"norm_topk_prob": 1})", "norm_topk_prob: expected true or false, got 1");
    row("number as string", R"({"routed_scaling_factor": "2.5"})",
        R"(routed_scaling_factor: expected a positive number, got "2.5")");
    row("missing model_type", R"({"model_type": null})", "model_type: required field is missing");
    row("wrong model_type", R"({"model_type": "deepseek_v32"})",
        R"(model_type: "deepseek_v32" is not supported; only "glm_moe_dsa")");
    row("missing rope", R"({"rope_parameters": null})",
        "rope_parameters: required field is missing");
    row("missing rope_theta", R"({"rope_parameters": {"rope_theta": null}})",
        "rope_parameters.rope_theta: required field is missing");
    row("negative rope_theta", R"({"rope_parameters": {"rope_theta": -1}})",
        "rope_parameters.rope_theta: expected a positive number, got -1");
    row("yarn", R"({"rope_parameters": {"rope_type": "yarn", "factor": 4}})",
        R"(rope_parameters.rope_type: rope type "yarn" is not supported)");
    row("legacy yarn",
        R"({"rope_parameters": null, "rope_theta": 1e4, "rope_scaling": {"type": "yarn"}})",
        R"(rope_scaling.type: rope type "yarn" is not supported)");
    row("eps too large", R"({"rms_norm_eps": 0.1})",
        "rms_norm_eps: expected a small positive number in (0, 0.01], got 0.1");
    row("eps zero", R"({"rms_norm_eps": 0})", "rms_norm_eps: expected a positive number, got 0");
    row("odd rope dim", R"({"qk_rope_head_dim": 7})", "qk_rope_head_dim: must be even");
    row("indexer dim too small", R"({"index_head_dim": 8})",
        "index_head_dim: must be greater than qk_rope_head_dim (8");
    row("index_topk zero", R"({"index_topk": 0})",
        "index_topk: expected a positive integer, got 0");
    row("experts not divisible", R"({"n_group": 3})",
        "n_group: n_routed_experts (8) is not divisible by n_group (3)");
    row("topk_group > n_group", R"({"n_group": 2, "topk_group": 3})",
        "topk_group: 3 exceeds n_group (2)");
    row("groups of one", R"({"n_group": 8, "topk_group": 2})",
        "n_group: each of the 8 groups needs at least 2 experts, has 1");
    row("topk > experts", R"({"num_experts_per_tok": 9})",
        "num_experts_per_tok: 9 exceeds n_routed_experts (8)");
    row("topk > selected groups", R"({"n_group": 4, "topk_group": 1, "num_experts_per_tok": 3})",
        "num_experts_per_tok: 3 exceeds the 2 experts in the topk_group selected groups");
    row("moe without experts", R"({"n_routed_experts": 0})",
        "n_routed_experts: expected a positive integer because the model has MoE layers, got 0");
    row("dense without width", R"({"intermediate_size": 0})",
        "intermediate_size: expected a positive integer for the dense MLP layers, got 0");
    row("indexer_types length", R"({"indexer_types": ["full", "shared", "full"]})",
        "indexer_types: expected a list of 4 entries (num_hidden_layers)");
    row("indexer_types value", R"({"indexer_types": ["full", "sparse", "full", "full"]})",
        R"(indexer_types: entry 1 is "sparse"; expected "full" or "shared")");
    row("indexer_types layer 0", R"({"indexer_types": ["shared", "full", "full", "full"]})",
        R"(indexer_types: layer 0 must be "full")");
    row("pattern value", R"({"index_topk_pattern": "FXFF"})",
        "index_topk_pattern: character 1 is 'X'; expected 'F' or 'S'");
    row("pattern length", R"({"index_topk_pattern": "FF"})",
        "index_topk_pattern: expected a string of 4 'F'/'S' characters");
    row("rule makes layer 0 shared", R"({"index_topk_freq": 2, "index_skip_topk_offset": 0})",
        R"(index_skip_topk_offset: layer 0 must be "full")");
    row("index_topk_freq zero", R"({"index_topk_freq": 0})",
        "index_topk_freq: expected a positive integer, got 0");
    row("mlp_layer_types length", R"({"mlp_layer_types": ["dense", "sparse"]})",
        "mlp_layer_types: expected a list of 4 entries (num_hidden_layers)");
    row("mlp_layer_types value", R"({"mlp_layer_types": ["dense", "moe", "sparse", "sparse"]})",
        R"(mlp_layer_types: entry 1 is "moe"; expected "dense" or "sparse")");
    row("quant method", R"({"quantization_config": {"quant_method": "awq"}})",
        R"(quantization_config.quant_method: "awq" is not supported; expected "fp8")");
    row("quant method missing", R"({"quantization_config": {"fmt": "e4m3"}})",
        "quantization_config.quant_method: required field is missing");
    row("quant fmt", R"({"quantization_config": {"quant_method": "fp8", "fmt": "e5m2"}})",
        R"(quantization_config.fmt: "e5m2" is not supported; expected "e4m3")");
    row("quant block shape",
        R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128]}})",
        "quantization_config.weight_block_size: expected [rows, cols] block sizes, got [128]");
    row("quant block zero",
        R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 0]}})",
        "quantization_config.weight_block_size: expected a positive integer, got 0");
    row("quant block null", R"({"quantization_config": {"quant_method": "fp8"}})",
        "quantization_config.weight_block_size: expected [rows, cols] block sizes, got null",
        "/quantization_config/weight_block_size");
    row("quant not object", R"({"quantization_config": "fp8"})",
        R"(quantization_config: expected an object, got "fp8")");
    row("scoring_func", R"({"scoring_func": "softmax"})",
        R"(scoring_func: "softmax" is not supported; expected "sigmoid")");
    row("topk_method", R"({"topk_method": "greedy"})",
        R"(topk_method: "greedy" is not supported; expected "noaux_tc")");
    row("hidden_act", R"({"hidden_act": "gelu"})",
        R"(hidden_act: "gelu" is not supported; expected "silu")");
    row("attention_bias", R"({"attention_bias": true})",
        "attention_bias: true is not supported; expected false");
    row("two MTP layers", R"({"num_nextn_predict_layers": 2})",
        "num_nextn_predict_layers: 2 MTP layers are not supported; expected 0 or 1");
    row("eos as string", R"({"eos_token_id": "2"})",
        R"(eos_token_id: expected a non-negative integer, got "2")");
    row("eos outside vocab", R"({"eos_token_id": [2, 600]})",
        "eos_token_id: 600 is outside the vocabulary (vocab_size 512)");
    row("eos empty list", R"({"eos_token_id": []})",
        "eos_token_id: expected a token id or a non-empty list");
  }

  void malformed() {
    QFETCH(QByteArray, patch);
    QFETCH(QByteArray, nullPointer);
    QFETCH(QString, expected);
    json config = json::parse(kTinyConfig);
    config.merge_patch(json::parse(patch.toStdString()));
    if (!nullPointer.isEmpty()) config[json::json_pointer(nullPointer.toStdString())] = nullptr;
    try {
      parseJson(config);
      QFAIL("parsed without an error");
    } catch (const strata::Error& e) {
      const QString message = QString::fromUtf8(e.what());
      QVERIFY2(message.startsWith(QString(kSource) + ": "), qPrintable(message));
      QVERIFY2(message.contains(expected), qPrintable(message));
    }
  }

  void notAConfig_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("truncated") << QByteArray(R"({"model_type": "glm_moe_dsa",)")
                               << "not valid JSON";
    QTest::newRow("empty") << QByteArray("") << "not valid JSON";
    QTest::newRow("trailing garbage") << QByteArray(kTinyConfig).append("x") << "not valid JSON";
    QTest::newRow("array") << QByteArray("[1, 2]") << "expected a JSON object at the top level";
  }

  void notAConfig() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    try {
      parseModelConfig(text.toStdString(), kSource);
      QFAIL("parsed without an error");
    } catch (const strata::Error& e) {
      const QString message = QString::fromUtf8(e.what());
      QVERIFY2(message.startsWith(QString(kSource) + ": " + expected), qPrintable(message));
    }
  }
};

QTEST_APPLESS_MAIN(TestConfig)
#include "test_config.moc"
