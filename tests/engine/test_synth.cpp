// strata-cli synth: a synthetic model from a tiny config is a valid container the engine runs,
// stored in the default policy's formats with weights of the intended scale; the bytes are a
// function of the seed alone; the router biases skew expert popularity as asked; bad input is
// refused without touching anything.
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "checkpoint_writer.h"
#include "cli_runner.h"
#include "io/container.h"
#include "model/config.h"
#include "model/moe.h"
#include "strata/engine.h"
#include "strata/synth.h"

namespace fs = std::filesystem;
using strata::io::Container;
using strata::io::QuantFormat;

namespace {

QString path(const fs::path& p) { return QString::fromStdString(p.string()); }

// Tiny but complete: a dense layer, two MoE layers and an MTP layer; index_topk 4 so a
// dozen tokens exercise the sparse attention.
nlohmann::json tinyConfig() {
  return {{"architectures", {"GlmMoeDsaForCausalLM"}},
          {"model_type", "glm_moe_dsa"},
          {"hidden_size", 64},
          {"num_hidden_layers", 3},
          {"first_k_dense_replace", 1},
          {"num_attention_heads", 4},
          {"q_lora_rank", 32},
          {"kv_lora_rank", 32},
          {"qk_nope_head_dim", 16},
          {"qk_rope_head_dim", 8},
          {"v_head_dim", 16},
          {"index_n_heads", 4},
          {"index_head_dim", 16},
          {"index_topk", 4},
          {"rope_parameters", {{"rope_theta", 1000000.0}, {"rope_type", "default"}}},
          {"max_position_embeddings", 256},
          {"n_routed_experts", 16},
          {"num_experts_per_tok", 4},
          {"n_shared_experts", 1},
          {"moe_intermediate_size", 32},
          {"intermediate_size", 96},
          {"routed_scaling_factor", 2.5},
          {"n_group", 1},
          {"topk_group", 1},
          {"norm_topk_prob", true},
          {"rms_norm_eps", 1e-5},
          {"vocab_size", 256},
          {"num_nextn_predict_layers", 1},
          {"eos_token_id", {255}}};
}

double stddev(const std::vector<float>& v) {
  double mean = 0, square = 0;
  for (float x : v) mean += x;
  mean /= double(v.size());
  for (float x : v) square += (x - mean) * (x - mean);
  return std::sqrt(square / double(v.size()));
}

// How often each expert of `layer` is picked by the engine's router (model::route) over
// `tokens` random unit-RMS hidden states, which is what the post-attention norm feeds it.
std::vector<int> selectionCounts(const fs::path& dir, int layer, int tokens, int* distinctSets) {
  const strata::model::ModelConfig config = strata::model::loadModelConfig(dir / "config.json");
  const Container c = Container::open(dir);
  const std::string p = "model.layers." + std::to_string(layer) + ".mlp.gate.";
  const int64_t experts = config.nRoutedExperts, hidden = config.hiddenSize;
  strata::model::RouterWeights router;
  const std::vector<float> gate = c.readF32(p + "weight");
  router.gate = strata::kernels::Matrix::fromF32(experts, hidden, gate);
  router.correctionBias = c.readF32(p + "e_score_correction_bias");

  std::mt19937_64 rng(12345);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<size_t>(hidden)), logits(static_cast<size_t>(experts));
  std::vector<int> counts(static_cast<size_t>(experts), 0);
  std::set<std::vector<int>> sets;
  for (int t = 0; t < tokens; ++t) {
    for (float& v : x) v = normal(rng);
    for (int64_t e = 0; e < experts; ++e) {
      double dot = 0;
      for (int64_t k = 0; k < hidden; ++k) dot += double(gate[e * hidden + k]) * x[k];
      logits[e] = static_cast<float>(dot);
    }
    std::vector<int> picked = strata::model::route(config, router, logits.data()).experts;
    for (int e : picked) ++counts[e];
    std::sort(picked.begin(), picked.end());
    sets.insert(picked);
  }
  *distinctSets = static_cast<int>(sets.size());
  return counts;
}

// Plackett-Luce: the share of tokens whose k draws without replacement from p (p_r
// proportional to r^-zipf) include rank r, by simulation (top k of log p + Gumbel noise).
std::vector<double> plackettLuceRates(int experts, int k, double zipf) {
  std::vector<double> logP(static_cast<size_t>(experts)), rates(logP.size(), 0.0);
  for (int r = 0; r < experts; ++r) logP[r] = -zipf * std::log(r + 1.0);
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int draws = 20000;
  std::vector<std::pair<double, int>> keys(logP.size());
  for (int t = 0; t < draws; ++t) {
    for (int r = 0; r < experts; ++r) {
      double u = uniform(rng);
      while (u <= 0.0) u = uniform(rng);
      keys[r] = {logP[r] - std::log(-std::log(u)), r};
    }
    std::partial_sort(keys.begin(), keys.begin() + k, keys.end(), std::greater<>());
    for (int j = 0; j < k; ++j) rates[keys[j].second] += 1.0 / draws;
  }
  return rates;
}

int median(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

class TestSynth : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  int counter_ = 0;
  fs::path root() const { return fs::path(tmp_.path().toStdString()); }
  fs::path fresh(const std::string& label) { return root() / (label + std::to_string(++counter_)); }

  fs::path writeConfig(const nlohmann::json& config) {
    const fs::path file = fresh("config") += ".json";
    testckpt::writeBytes(file, config.dump(1));
    return file;
  }

  // Runs synth on a config file; fails the test (returns an empty path) when it fails.
  fs::path synth(const fs::path& configFile, const QStringList& extra = {}) {
    const fs::path out = fresh("synth");
    const CliRun r =
        runCli(QStringList{"synth", "--from-config", path(configFile), "--out", path(out)} + extra);
    if (r.exitCode != 0) {
      qWarning() << "synth failed:" << r.exitCode << r.err;
      return {};
    }
    return out;
  }
  // Whether "864.8 KB" / "3.32 MB" / "19.69 GB" is `bytes` rounded to its last digit.
  static bool printedAs(const QString& text, uint64_t bytes) {
    const QStringList parts = text.split(' ');
    const double unit = parts[1] == "KB" ? 1e3 : parts[1] == "MB" ? 1e6 : 1e9;
    const double lastDigit = unit * (parts[1] == "KB" ? 0.1 : 0.01);
    return std::fabs(parts[0].toDouble() * unit - double(bytes)) <= 0.5 * lastDigit + 1e-6 * unit;
  }

  fs::path synth(const nlohmann::json& config, const QStringList& extra = {}) {
    return synth(writeConfig(config), extra);
  }

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  void synthesizedModelOpensAndRuns() {
    const fs::path out = fresh("run");
    const CliRun r = runCli({"synth", "--from-config", path(writeConfig(tinyConfig())), "--out",
                             path(out), "--seed", "3"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.text().contains("synthesized:") && r.text().contains(" MB/s"), qPrintable(r.text()));

    const Container c = Container::open(out);
    QCOMPARE(c.expertLayers(), (std::vector<int>{1, 2, 3}));  // 3: the MTP layer
    for (const strata::io::ContainerTensor& t : c.tensors())
      if (t.expert < 0) c.readF32(t.name());  // verifies every resident checksum
    for (int layer : c.expertLayers())
      for (int e = 0; e < c.expertCount(layer); ++e) c.readExpert(layer, e);

    const auto engine = strata::Engine::open(out);
    QCOMPARE(engine->info().layerCount, 3);
    QVERIFY(engine->info().hasMtp);
    QVERIFY(engine->tokenizer() == nullptr);
    const std::vector<int32_t> tokens = {1, 17, 200, 3, 3, 90, 45, 250, 8, 120, 66, 7};
    const auto step = engine->newSession()->append(tokens);
    QCOMPARE(step.logits.size(), tokens.size() * 256);
    for (float v : step.logits) QVERIFY(std::isfinite(v));
    for (size_t t = 0; t < tokens.size(); ++t) {
      const std::vector<float> row(step.logits.begin() + t * 256,
                                   step.logits.begin() + (t + 1) * 256);
      const double spread = stddev(row);
      QVERIFY2(spread > 0.2 && spread < 20,
               qPrintable(QString("position %1: logit std %2").arg(t).arg(spread)));
    }
    QVERIFY(!std::equal(step.logits.begin(), step.logits.begin() + 256, step.logits.begin() + 256));

    const auto config = nlohmann::json::parse(testckpt::readBytes(out / "config.json"));
    QCOMPARE(config["strata_synthetic"]["seed"].get<int>(), 3);
    QVERIFY(testckpt::readBytes(out / "README.txt").find("RANDOM") != std::string::npos);
    const CliRun inspect = runCli({"inspect", path(out)});
    QCOMPARE(inspect.exitCode, 0);
    QVERIFY2(inspect.text().contains("synthetic (random weights)"), qPrintable(inspect.text()));
  }

  // --dry-run writes nothing and reports what the written container holds under each policy:
  // its bytes, its experts, and the resident weights the engine's memory plan holds at native
  // precision.
  void dryRunReportsTheWrittenSizes_data() {
    QTest::addColumn<QString>("policy");
    QTest::newRow("default") << "default";
    QTest::newRow("int4-g32") << "int4-g32";
  }
  void dryRunReportsTheWrittenSizes() {
    QFETCH(QString, policy);
    const fs::path configFile = writeConfig(tinyConfig());
    strata::SynthOptions options;
    options.configFile = configFile;
    options.output = fresh("dry");
    options.dryRun = true;
    options.policy = policy.toStdString();
    const strata::SynthReport planned = strata::synthesizeModel(options, {});
    QVERIFY(!fs::exists(options.output));  // nothing written
    QVERIFY(planned.heldResidentBytes > planned.residentBytes / 2);

    const fs::path out = synth(configFile, {"--policy", policy});
    QVERIFY(!out.empty());
    uint64_t bytes = 0;
    for (const auto& entry : fs::directory_iterator(out))
      if (entry.path().extension() == ".safetensors") bytes += entry.file_size();
    QCOMPARE(planned.containerBytes, bytes);
    const Container c = Container::open(out);
    int64_t experts = 0;
    for (int layer : c.expertLayers()) experts += c.expertCount(layer);
    QCOMPARE(planned.experts, experts);
    QCOMPARE(planned.expertBytes, c.expert(c.expertLayers().front(), 0).span);
    QVERIFY(c.get("model.layers.0.self_attn.q_a_proj.weight").entry.format ==
            (policy == "default" ? QuantFormat::Int8 : QuantFormat::Int4));  // the policy's
    strata::EngineSettings native;
    native.precision = strata::Precision::Native;
    const strata::MemoryPlan plan = strata::Engine::plan(out, native);
    QCOMPARE(planned.heldResidentBytes, uint64_t(plan.residentBytes));
    QCOMPARE(planned.kvBytesPerToken, uint64_t(plan.kvBytesPerToken));  // f32, the default
  }

  // The dry run's table: one row per policy with the planned numbers (smaller resident weights
  // under the int4 policies) and a verdict; nothing written, no --out needed.
  void dryRunComparesThePolicies() {
    const fs::path configFile = writeConfig(tinyConfig());
    const CliRun dry =
        runCli({"synth", "--from-config", path(configFile), "--dry-run", "--context", "100"});
    QVERIFY2(dry.exitCode == 0, qPrintable(dry.text()));
    QVERIFY(!fs::exists(root() / "synth"));
    std::map<std::string, uint64_t> resident;
    for (const std::string& policy : strata::synthPolicyNames()) {
      const QString size = "([0-9.]+ [KMG]B)";
      const QRegularExpression row(
          QString("\\n%1 +%2 +%2 +%2 +%2  (fits|tight|does not fit)\\n")
              .arg(QRegularExpression::escape(QString::fromStdString(policy)), size));
      const QRegularExpressionMatch m = row.match(dry.text());
      QVERIFY2(m.hasMatch(), qPrintable(QString::fromStdString(policy) + "\n" + dry.text()));
      strata::SynthOptions options;
      options.configFile = configFile;
      options.dryRun = true;
      options.policy = policy;
      const strata::SynthReport r = strata::synthesizeModel(options, {});
      QVERIFY2(printedAs(m.captured(1), r.containerBytes), qPrintable(m.captured(0)));
      QVERIFY2(printedAs(m.captured(2), r.expertBytes), qPrintable(m.captured(0)));
      QVERIFY2(printedAs(m.captured(3), r.heldResidentBytes), qPrintable(m.captured(0)));
      QVERIFY2(printedAs(m.captured(4), r.heldResidentBytes + 100 * r.kvBytesPerToken),
               qPrintable(m.captured(0)));
      QCOMPARE(m.captured(5), QString("fits"));  // a few MB on any machine that runs the tests
      resident[policy] = r.heldResidentBytes;
    }
    QVERIFY(resident["int4-g32"] < resident["default"]);
    QCOMPARE(resident["int8"], resident["default"]);  // they differ in the routed experts only

    const CliRun one =
        runCli({"synth", "--from-config", path(configFile), "--dry-run", "--policy", "int4-row"});
    QVERIFY2(one.exitCode == 0 && one.text().contains("\nint4-row ") &&
                 !one.text().contains("\ndefault "),
             qPrintable(one.text()));
  }

  // The formats convert --policy default gives a BF16 checkpoint (strata/convert.h).
  void storedFormatsAreTheDefaultPolicys() {
    const fs::path out = synth(tinyConfig());
    QVERIFY(!out.empty());
    const Container c = Container::open(out);
    struct Expect {
      const char* name;
      QuantFormat format;
      int64_t group;  // 0: one scale per row
    };
    const Expect expected[] = {
        {"model.layers.1.mlp.experts.0.gate_proj.weight", QuantFormat::Int4, 32},
        {"model.layers.2.mlp.experts.15.down_proj.weight", QuantFormat::Int4, 32},
        {"model.layers.3.mlp.experts.0.up_proj.weight", QuantFormat::Int8, 0},  // MTP
        {"model.layers.1.mlp.shared_experts.up_proj.weight", QuantFormat::Int8, 0},
        {"model.layers.0.mlp.down_proj.weight", QuantFormat::Int8, 0},
        {"model.layers.0.self_attn.q_a_proj.weight", QuantFormat::Int8, 0},
        {"model.layers.0.self_attn.kv_b_proj.weight", QuantFormat::Int8, 0},
        {"model.layers.0.self_attn.indexer.wq_b.weight", QuantFormat::Int8, 0},
        {"model.embed_tokens.weight", QuantFormat::Int8, 0},
        {"lm_head.weight", QuantFormat::Int8, 0},
        {"model.layers.1.mlp.gate.weight", QuantFormat::BF16, 0},
        {"model.layers.1.mlp.gate.e_score_correction_bias", QuantFormat::F32, 0},
        {"model.layers.0.self_attn.indexer.weights_proj.weight", QuantFormat::BF16, 0},
        {"model.layers.0.self_attn.indexer.k_norm.bias", QuantFormat::BF16, 0},
        {"model.layers.2.post_attention_layernorm.weight", QuantFormat::BF16, 0},
        {"model.layers.3.eh_proj.weight", QuantFormat::BF16, 0},
    };
    for (const Expect& x : expected) {
      const strata::io::TensorEntry& e = c.get(x.name).entry;
      QVERIFY2(e.format == x.format, x.name);
      if (x.group > 0) QCOMPARE(e.groupSize, x.group);
      if (x.group == 0 && strata::io::isInteger(x.format)) QCOMPARE(e.groupSize, e.paddedCols);
    }
  }

  // Linears std 1/sqrt(fan_in), embeddings std 1, norm weights 1, biases 0, padding code 0.
  void weightsHaveTheIntendedScale() {
    const fs::path out = synth(tinyConfig());
    QVERIFY(!out.empty());
    const Container c = Container::open(out);
    const auto near = [](double got, double want) { return std::fabs(got / want - 1) < 0.06; };
    const double embed = stddev(c.readF32("model.embed_tokens.weight"));
    QVERIFY2(near(embed, 1.0), qPrintable(QString::number(embed)));
    const double qa = stddev(c.readF32("model.layers.0.self_attn.q_a_proj.weight"));
    QVERIFY2(near(qa, 1 / std::sqrt(64.0)), qPrintable(QString::number(qa)));
    const double dense = stddev(c.readF32("model.layers.0.mlp.down_proj.weight"));
    QVERIFY2(near(dense, 1 / std::sqrt(96.0)), qPrintable(QString::number(dense)));
    const double router = stddev(c.readF32("model.layers.1.mlp.gate.weight"));
    QVERIFY2(near(router, 1 / std::sqrt(64.0)), qPrintable(QString::number(router)));

    const strata::io::ExpertMatrices x = c.readExpert(2, 5);
    std::vector<float> down(static_cast<size_t>(64 * 32));
    for (int64_t r = 0; r < 64; ++r) strata::quant::dequantizeRow(x.down, r, down.data() + r * 32);
    QVERIFY2(near(stddev(down), 1 / std::sqrt(32.0)), qPrintable(QString::number(stddev(down))));
    // gate_proj [32, 64] is padded to 128 columns: codes 0 and scale 0 beyond column 64.
    for (int64_t r = 0; r < 32; ++r)
      for (int64_t col = 64; col < x.gate.paddedCols; ++col)
        QCOMPARE(strata::quant::quantCode(x.gate, r, col), 0);
    QCOMPARE(x.gate.scale(0, x.gate.groupsPerRow() - 1), 0.0f);
    QVERIFY(x.gate.scale(0, 0) > 0.0f);

    for (float v : c.readF32("model.layers.2.input_layernorm.weight")) QCOMPARE(v, 1.0f);
    for (float v : c.readF32("model.layers.0.self_attn.indexer.k_norm.bias")) QCOMPARE(v, 0.0f);
  }

  // Same seed: the same bytes, whatever the thread count. Another seed: other weights.
  void bytesDependOnTheSeedAlone() {
    const fs::path config = writeConfig(tinyConfig());
    const fs::path a = synth(config, {"--seed", "5", "--threads", "1"});
    const fs::path b = synth(config, {"--seed", "5", "--threads", "2"});
    const fs::path other = synth(config, {"--seed", "6"});
    QVERIFY(!a.empty() && !b.empty() && !other.empty());
    std::set<std::string> names, namesB;
    for (const auto& entry : fs::directory_iterator(a)) names.insert(entry.path().filename());
    for (const auto& entry : fs::directory_iterator(b)) namesB.insert(entry.path().filename());
    QCOMPARE(names, namesB);
    QVERIFY(names.count("experts-002.safetensors") && names.count("strata-container.json"));
    for (const std::string& name : names)
      QVERIFY2(testckpt::readBytes(a / name) == testckpt::readBytes(b / name), name.c_str());

    const Container ca = Container::open(a), co = Container::open(other);
    QVERIFY(ca.readF32("model.embed_tokens.weight") != co.readF32("model.embed_tokens.weight"));
    QVERIFY(ca.readExpert(1, 0).up.data != co.readExpert(1, 0).up.data);
    QVERIFY(ca.manifest().identity.sourceFingerprint != co.manifest().identity.sourceFingerprint);
  }

  // Each token's experts should look like k draws without replacement from the Zipf
  // popularity p (Plackett-Luce; strata/synth.h): per expert, the share of tokens picking it
  // through the engine's router matches that law, computed here independently (top k of
  // log p + Gumbel noise), within 0.025 + 10 %. zipf 1.2 makes the favourite expert far more
  // popular than the median one while the choice still varies from token to token; zipf 0
  // picks every expert about equally often.
  void routingFollowsTheZipfLaw_data() {
    QTest::addColumn<double>("zipf");
    QTest::newRow("zipf 1.2") << 1.2;
    QTest::newRow("zipf 0") << 0.0;
  }

  void routingFollowsTheZipfLaw() {
    QFETCH(double, zipf);
    const int experts = 64, k = 8, tokens = 4000;
    nlohmann::json config = tinyConfig();
    config["hidden_size"] = 256;  // router logits near the N(0, 1) the biases are fitted for
    config["n_routed_experts"] = experts;
    config["num_experts_per_tok"] = k;
    config["num_nextn_predict_layers"] = 0;
    const fs::path out = synth(config, {"--zipf", QString::number(zipf)});
    QVERIFY(!out.empty());
    const std::vector<double> law = plackettLuceRates(experts, k, zipf);
    for (int layer : {1, 2}) {
      int sets = 0;
      const std::vector<int> counts = selectionCounts(out, layer, tokens, &sets);
      const std::vector<float> bias = Container::open(out).readF32(
          "model.layers." + std::to_string(layer) + ".mlp.gate.e_score_correction_bias");
      // Popularity rank = bias rank (the layer's random order of the experts).
      std::vector<int> byRank(static_cast<size_t>(experts));
      std::iota(byRank.begin(), byRank.end(), 0);
      std::stable_sort(byRank.begin(), byRank.end(),
                       [&](int a, int b) { return bias[a] > bias[b]; });
      double worst = 0;
      for (int r = 0; r < experts; ++r) {
        const double rate = double(counts[byRank[r]]) / tokens;
        worst = std::max(worst, std::fabs(rate - law[r]) - 0.1 * law[r]);
        QVERIFY2(std::fabs(rate - law[r]) <= 0.025 + 0.1 * law[r],
                 qPrintable(QString("layer %1, rank %2: picked by %3 of tokens, law %4")
                                .arg(layer)
                                .arg(r + 1)
                                .arg(rate)
                                .arg(law[r])));
      }
      const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
      const int mid = median(counts);
      qInfo(
          "zipf %g, layer %d: experts picked by %.1f%%..%.1f%% of tokens (median %.1f%%), "
          "%d distinct expert sets in %d tokens, worst excess over 10%% of the law %.3f",
          zipf, layer, 100.0 * *lo / tokens, 100.0 * *hi / tokens, 100.0 * mid / tokens, sets,
          tokens, worst);
      QVERIFY(sets > tokens / 2);
      if (zipf > 0) {
        QCOMPARE(counts[byRank[0]], *hi);
        QVERIFY(*hi >= 8 * mid);
      } else {
        QVERIFY(*hi <= 1.4 * mid && *lo >= 0.7 * mid);
      }
    }
  }

  void badInputIsRefused_data() {
    QTest::addColumn<QString>("what");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown preset")
        << "preset" << 2 << "unknown preset 'huge' (known: medium, large)";
    QTest::newRow("neither preset nor config") << "neither" << 2 << "exactly one of";
    QTest::newRow("both preset and config") << "both" << 2 << "exactly one of";
    QTest::newRow("negative zipf") << "zipf" << 2 << "--zipf: '-1'";
    QTest::newRow("unknown policy")
        << "policy" << 2 << "unknown policy 'int3' (known: default, int8";
    QTest::newRow("context without dry run") << "context" << 2 << "--context goes with --dry-run";
    QTest::newRow("malformed config") << "malformed" << 1 << "not valid JSON";
    QTest::newRow("other model type") << "type" << 1 << "model_type";
    QTest::newRow("missing config") << "missing" << 1 << "cannot open";
  }

  void badInputIsRefused() {
    QFETCH(QString, what);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    const fs::path out = fresh("bad");
    QStringList args = {"synth", "--out", path(out)};
    const fs::path good = writeConfig(tinyConfig());
    if (what == "preset")
      args << "--preset"
           << "huge";
    if (what == "both")
      args << "--preset"
           << "medium"
           << "--from-config" << path(good);
    if (what == "zipf")
      args << "--from-config" << path(good) << "--zipf"
           << "-1";
    if (what == "malformed") {
      const fs::path file = fresh("broken") += ".json";
      testckpt::writeBytes(file, "{\"model_type\": \"glm_moe_dsa\",");
      args << "--from-config" << path(file);
      message = path(file) + ": " + message;
    }
    if (what == "type") {
      nlohmann::json config = tinyConfig();
      config["model_type"] = "llama";
      args << "--from-config" << path(writeConfig(config));
    }
    if (what == "missing") args << "--from-config" << path(root() / "absent.json");
    if (what == "policy")
      args << "--from-config" << path(good) << "--policy"
           << "int3";
    if (what == "context")
      args << "--from-config" << path(good) << "--context"
           << "100";
    const CliRun r = runCli(args);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(!fs::exists(out));
  }

  void refusesANonEmptyOutput() {
    const fs::path out = fresh("occupied");
    fs::create_directories(out);
    testckpt::writeBytes(out / "notes.txt", "keep me");
    const CliRun r = runCli({"synth", "--preset", "medium", "--out", path(out)});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("is not empty"), qPrintable(r.err));
    QCOMPARE(testckpt::readBytes(out / "notes.txt"), std::string("keep me"));
    QCOMPARE(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
  }

  // Embeddings of 2^30 x 2^16 int8 (70 TB each): no disk has that free.
  void refusesWhenTheDiskIsTooSmall() {
    nlohmann::json config = tinyConfig();
    config["vocab_size"] = 1 << 30;
    config["hidden_size"] = 1 << 16;
    const fs::path out = fresh("huge");
    const CliRun r =
        runCli({"synth", "--from-config", path(writeConfig(config)), "--out", path(out)});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(
        r.err.contains("needs") && r.err.contains("GB but only") && r.err.contains("is free on"),
        qPrintable(r.err));
    QVERIFY(!fs::exists(out));
  }
};

QTEST_GUILESS_MAIN(TestSynth)
#include "test_synth.moc"
