// `strata-cli bench decode` on a synthetic model whose experts dwarf everything else: the
// process's measured peak RSS stays within the memory budget (plus the program itself and a
// stated allowance) while the experts stream, the JSON line carries the promised fields, the
// routing trace it records replays under `bench cache`, and a budget that cannot work is
// refused with the numbers.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace fs = std::filesystem;

namespace {

QString path(const fs::path& p) { return QString::fromStdString(p.string()); }

// 3 MoE layers x 64 experts of about 1 MiB at int4: ~200 MiB of experts, ~10 MiB of the rest.
nlohmann::json expertHeavyConfig() {
  return {{"architectures", {"GlmMoeDsaForCausalLM"}},
          {"model_type", "glm_moe_dsa"},
          {"hidden_size", 512},
          {"num_hidden_layers", 4},
          {"first_k_dense_replace", 1},
          {"num_attention_heads", 4},
          {"q_lora_rank", 64},
          {"kv_lora_rank", 64},
          {"qk_nope_head_dim", 32},
          {"qk_rope_head_dim", 16},
          {"v_head_dim", 32},
          {"index_n_heads", 2},
          {"index_head_dim", 32},
          {"index_topk", 16},
          {"rope_parameters", {{"rope_theta", 1000000.0}, {"rope_type", "default"}}},
          {"max_position_embeddings", 1024},
          {"n_routed_experts", 64},
          {"num_experts_per_tok", 4},
          {"n_shared_experts", 1},
          {"moe_intermediate_size", 1024},
          {"intermediate_size", 1024},
          {"routed_scaling_factor", 2.5},
          {"n_group", 1},
          {"topk_group", 1},
          {"norm_topk_prob", true},
          {"rms_norm_eps", 1e-5},
          {"vocab_size", 1024},
          {"num_nextn_predict_layers", 0},
          {"eos_token_id", {1023}}};
}

QJsonObject lastJsonLine(const QByteArray& out) {
  const QList<QByteArray> lines = out.trimmed().split('\n');
  return QJsonDocument::fromJson(lines.last()).object();
}

// The stated allowance over the budget: the program itself (measured before the model opens)
// plus 24 MiB for allocator slack and thread stacks.
void verifyPeakWithinBudget(const QJsonObject& j) {
  const double budget = j["budget_bytes"].toDouble();
  const double allowance = j["baseline_rss_bytes"].toDouble() + 24.0 * 1048576;
  QVERIFY2(j["peak_rss_bytes"].toDouble() <= budget + allowance,
           qPrintable(QString("peak RSS %1 > budget %2 + allowance %3")
                          .arg(j["peak_rss_bytes"].toDouble())
                          .arg(budget)
                          .arg(allowance)));
}

}  // namespace

class TestDecodeBenchCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  fs::path model_;

  // Synthesizes `config` in its own folder and runs `bench decode` on it after a prompt of
  // `promptTokens` (half the experts cached): its JSON line, in `out`.
  void prefillRun(const char* name, const nlohmann::json& config, int promptTokens, int context,
                  QJsonObject& out) {
    const fs::path root = fs::path(tmp_.path().toStdString()) / name;
    fs::create_directories(root);
    std::ofstream(root / "config.json") << config.dump();
    const CliRun made = runCli(
        {"synth", "--from-config", path(root / "config.json"), "--out", path(root / "model")});
    QVERIFY2(made.exitCode == 0, qPrintable(made.err));
    const CliRun r =
        runCli({"bench", "decode", "--model", path(root / "model"), "--expert-fraction", "0.5",
                "--io", "buffered", "--prompt-tokens", QString::number(promptTokens), "--context",
                QString::number(context), "--tokens", "2", "--json"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    out = lastJsonLine(r.out);
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    const fs::path root = tmp_.path().toStdString();
    const fs::path config = root / "config.json";
    std::ofstream(config) << expertHeavyConfig().dump();
    model_ = root / "model";
    const CliRun r = runCli({"synth", "--from-config", path(config), "--out", path(model_), "--zipf", "1.0"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
  }

  // Experts at 20 % of their bytes: if they did not stream (all 200 MiB loaded), the peak RSS
  // would pass the budget by far more than the allowance.
  void peakRssStaysWithinTheBudget() {
    const fs::path trace = fs::path(tmp_.path().toStdString()) / "trace.jsonl";
    const CliRun r = runCli({"bench", "decode", "--model", path(model_), "--expert-fraction", "0.2",
                             "--tokens", "12", "--io", "buffered", "--context", "256", "--json",
                             "--record-trace", path(trace)});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QJsonObject j = lastJsonLine(r.out);
    for (const char* key : {"tok_s", "limit_tok_s", "ratio", "hit_rate", "bytes_read_per_token",
                            "peak_rss_bytes", "budget_bytes"})
      QVERIFY2(j.contains(key), key);
    // 12 tokens: segments of 8 and 4, the memory bandwidth probed before, between and after.
    QCOMPARE(j["segments"].toInt(), 2);
    QVERIFY(j["mem_gbps_min"].toDouble() > 0);
    QVERIFY(j["mem_gbps_min"].toDouble() <= j["mem_gbps"].toDouble());
    QVERIFY(j["mem_gbps"].toDouble() <= j["mem_gbps_max"].toDouble());
    const double budget = j["budget_bytes"].toDouble();
    const double experts = j["expert_bytes"].toDouble() * j["expert_count"].toDouble();
    QVERIFY(experts > 150e6);
    QVERIFY(budget < experts);  // the budget cannot hold the experts
    // The bandwidth probes' buffers (256 MiB each) must not count: they are not the engine's.
    QVERIFY2(j["baseline_rss_bytes"].toDouble() < 64.0 * 1048576,  // the program alone: ~15 MiB
             qPrintable(QString::number(j["baseline_rss_bytes"].toDouble())));
    verifyPeakWithinBudget(j);
    if (QTest::currentTestFailed()) return;
    QVERIFY(j["bytes_read_per_token"].toDouble() > 0);  // it really streamed
    QVERIFY(j["hit_rate"].toDouble() >= 0 && j["hit_rate"].toDouble() < 1);
    QVERIFY(j["tok_s"].toDouble() > 0 && j["limit_tok_s"].toDouble() > 0);

    // The trace it recorded replays under every policy and Belady.
    const CliRun replay = runCli({"bench", "cache", "--trace", path(trace), "--json"});
    QVERIFY2(replay.exitCode == 0, qPrintable(replay.err));
    int defaults = 0;
    for (const QByteArray& line : replay.out.trimmed().split('\n')) {
      const QJsonObject p = QJsonDocument::fromJson(line).object();
      QVERIFY(p["hit_rate"].toDouble() <= p["belady_hit_rate"].toDouble() + 1e-12);
      defaults += p["default"].toBool();
    }
    QCOMPARE(defaults, 1);
  }

  // A prompt longer than a prefill step (kPrefillChunkTokens, 512) with a 32,768-token
  // vocabulary: evaluated in one step, its logits alone (1,200 x 32,768 floats, 150 MiB) do not
  // fit in what the budget leaves besides the weights (that peaked at 404 MiB against a budget
  // of 181); in the plan's steps the peak stays within it.
  void longPromptStaysWithinTheBudget() {
    nlohmann::json c = expertHeavyConfig();
    c["vocab_size"] = 32768;
    c["n_routed_experts"] = 16;
    c["max_position_embeddings"] = 2048;
    QJsonObject j;
    prefillRun("long", c, 1200, 1280, j);
    if (QTest::currentTestFailed()) return;
    const double besidesWeights = j["budget_bytes"].toDouble() - j["resident_bytes"].toDouble() -
                                  j["pinned_bytes"].toDouble() - j["cache_bytes"].toDouble();
    QVERIFY(besidesWeights < 1200.0 * 32768 * 4);  // all the prompt's logits would not fit
    verifyPeakWithinBudget(j);
  }

  // GLM-5's per-head attention widths (nope 192 + v 256 per head, a 512-wide latent) and 32
  // heads: a 2,000-token prompt's prefill takes the expanded form, whose keys and values were
  // once expanded for all heads at once (2,000 x 32 x 448 floats, 115 MB, peaking ~38 MiB past
  // budget + allowance); per head and thread they stay well within it.
  void manyHeadsLongPromptStaysWithinTheBudget() {
    nlohmann::json c = expertHeavyConfig();
    c["hidden_size"] = 2048;
    c["num_hidden_layers"] = 2;
    c["num_attention_heads"] = 32;
    c["q_lora_rank"] = 128;
    c["kv_lora_rank"] = 512;
    c["qk_nope_head_dim"] = 192;
    c["qk_rope_head_dim"] = 64;
    c["v_head_dim"] = 256;
    c["index_head_dim"] = 128;
    c["index_topk"] = 2048;
    c["max_position_embeddings"] = 4096;
    c["n_routed_experts"] = 8;
    c["num_experts_per_tok"] = 2;
    c["moe_intermediate_size"] = 256;
    QJsonObject j;
    prefillRun("heads", c, 2000, 2048, j);
    if (QTest::currentTestFailed()) return;
    verifyPeakWithinBudget(j);
  }

  void everythingFitsReadsNothingWhileDecoding() {
    const CliRun r = runCli({"bench", "decode", "--model", path(model_), "--expert-fraction", "1",
                             "--tokens", "4", "--io", "direct", "--context", "256", "--json"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QJsonObject j = lastJsonLine(r.out);
    QCOMPARE(j["bytes_read_per_token"].toDouble(), 0.0);  // all pinned before timing
    QCOMPARE(j["hit_rate"].toDouble(), 1.0);
  }

  // --data-dir keeps the expert usage history across runs: the first writes it, the next one
  // reads it (for the pinned set and the cache's counts) and adds its own uses.
  void dataDirKeepsTheUsageHistory() {
    const fs::path data = fs::path(tmp_.path().toStdString()) / "data";
    auto usesRecorded = [&]() -> long long {
      if (!fs::is_directory(data / "usage")) return -1;
      long long total = 0;
      for (const auto& f : fs::directory_iterator(data / "usage")) {
        std::ifstream in(f.path());
        const nlohmann::json j = nlohmann::json::parse(in);
        if (j.at("format") != "strata-usage-history") return -2;
        for (long long c : j.at("counts").get<std::vector<long long>>()) total += c;
      }
      return total;
    };
    QCOMPARE(usesRecorded(), -1);
    for (const char* seed : {"1", "2"}) {
      const long long before = std::max(0LL, usesRecorded());
      const CliRun r = runCli({"bench", "decode", "--model", path(model_), "--expert-fraction", "0.2",
                               "--tokens", "6", "--context", "256", "--seed", seed, "--json",
                               "--data-dir", path(data)});
      QVERIFY2(r.exitCode == 0, qPrintable(r.err));
      // Each of the 6 decoded tokens (and the prompt) used 4 experts in each of 3 MoE layers.
      QVERIFY2(usesRecorded() >= before + 6 * 3 * 4, qPrintable(QString::number(usesRecorded())));
    }
  }

  void tooSmallBudgetIsRefused() {
    const CliRun r = runCli({"bench", "decode", "--model", path(model_), "--ram-gb", "0.001"});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("too small") && r.err.contains("resident weights"), qPrintable(r.err));
  }

  void usageErrors() {
    QCOMPARE(runCli({"bench", "decode", "--model", path(model_)}).exitCode, 2);  // no budget
    QCOMPARE(runCli({"bench", "decode", "--model", path(model_), "--ram-gb", "1", "--io", "mmap"}).exitCode, 2);
    QCOMPARE(runCli({"bench", "decode", "--model", path(model_), "--expert-fraction", "2"}).exitCode, 2);
  }
};

QTEST_APPLESS_MAIN(TestDecodeBenchCli)
#include "test_decode_bench_cli.moc"
