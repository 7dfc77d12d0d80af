// strata-cli convert and inspect, driven as a user would: progress and summary output, exit
// codes, and the converter's peak memory (VmHWM of the converting process) on a generated
// checkpoint big enough that holding it in memory would break the bound.
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "checkpoint_writer.h"
#include "cli_runner.h"
#include "convert/converter.h"
#include "fixtures.h"
#include "io/container.h"
#include "kernels/int_dot.h"
#include "strata/convert.h"
#include "strata/engine.h"
#include "strata/inspect.h"

namespace fs = std::filesystem;

namespace {

QString path(const fs::path& p) { return QString::fromStdString(p.string()); }

constexpr int64_t kHidden = 1024, kVocab = 4096, kExperts = 32, kExpertWidth = 512,
                  kDenseWidth = 2048;

// A two-layer (dense, MoE) BF16 checkpoint in two shards: ~124 MiB in all, the largest tensor
// (embed_tokens, lm_head) 8 MiB.
uint64_t writeLargeCheckpoint(const fs::path& dir, uint64_t* largest) {
  auto config = fixtures::readJson(fixtures::dataDir() / "tiny-fp8" / "config.json");
  config.erase("quantization_config");
  config["hidden_size"] = kHidden;
  config["vocab_size"] = kVocab;
  config["num_hidden_layers"] = 2;
  config["first_k_dense_replace"] = 1;
  config["mlp_layer_types"] = {"dense", "sparse"};
  config["indexer_types"] = {"full", "full"};
  config["num_nextn_predict_layers"] = 0;
  config["n_routed_experts"] = kExperts;
  config["moe_intermediate_size"] = kExpertWidth;
  config["intermediate_size"] = kDenseWidth;
  config["eos_token_id"] = {kVocab - 1};
  config["pad_token_id"] = kVocab - 1;

  testckpt::Random rng(7);
  std::vector<std::vector<testckpt::Tensor>> shards(2);
  shards[0].push_back(testckpt::randomBf16("model.embed_tokens.weight", {kVocab, kHidden}, rng, 1));
  shards[0].push_back(testckpt::randomBf16("model.norm.weight", {kHidden}, rng, 1));
  shards[0].push_back(testckpt::randomBf16("model.layers.0.mlp.gate_proj.weight",
                                           {kDenseWidth, kHidden}, rng, 0.03f));
  shards[0].push_back(testckpt::randomBf16("model.layers.0.mlp.up_proj.weight",
                                           {kDenseWidth, kHidden}, rng, 0.03f));
  shards[0].push_back(testckpt::randomBf16("model.layers.0.mlp.down_proj.weight",
                                           {kHidden, kDenseWidth}, rng, 0.02f));
  shards[1].push_back(testckpt::randomBf16("lm_head.weight", {kVocab, kHidden}, rng, 0.03f));
  shards[1].push_back(
      testckpt::randomBf16("model.layers.1.mlp.gate.weight", {kExperts, kHidden}, rng, 0.03f));
  shards[1].push_back(testckpt::randomF32("model.layers.1.mlp.gate.e_score_correction_bias",
                                          {kExperts}, rng, 0.1f));
  for (int e = 0; e < kExperts; ++e) {
    const std::string p = "model.layers.1.mlp.experts." + std::to_string(e) + ".";
    auto& shard = shards[e < kExperts / 2 ? 0 : 1];
    shard.push_back(
        testckpt::randomBf16(p + "gate_proj.weight", {kExpertWidth, kHidden}, rng, 0.03f));
    shard.push_back(
        testckpt::randomBf16(p + "up_proj.weight", {kExpertWidth, kHidden}, rng, 0.03f));
    shard.push_back(
        testckpt::randomBf16(p + "down_proj.weight", {kHidden, kExpertWidth}, rng, 0.04f));
  }
  uint64_t total = 0;
  *largest = 0;
  for (const auto& shard : shards)
    for (const auto& t : shard) {
      total += t.data.size();
      *largest = std::max<uint64_t>(*largest, t.data.size());
    }
  testckpt::writeCheckpoint(dir, config.dump(1), shards);
  return total;
}

}  // namespace

class TestConvertCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  uint64_t largeTotal_ = 0, largest_ = 0;
  fs::path dir(const std::string& name) const { return fs::path(tmp_.path().toStdString()) / name; }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    largeTotal_ = writeLargeCheckpoint(dir("large"), &largest_);
  }

  void convertPrintsProgressAndSummary() {
    const fs::path out = dir("tiny-dsa");
    const CliRun r = runCli({"convert", "--in", path(fixtures::dataDir() / "tiny-dsa"), "--out",
                          path(out), "--threads", "2"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.text().contains("converted: 164 tensors and experts (0 done by an earlier run)"),
             qPrintable(r.text()));
    QVERIFY(r.text().contains("container: "));
    QVERIFY2(r.err.contains("100.0%") && r.err.contains("MB/s") && r.err.contains("ETA"),
             qPrintable(r.err));
    QVERIFY(strata::io::Container::isContainer(out));

    const CliRun again =
        runCli({"convert", "--in", path(fixtures::dataDir() / "tiny-dsa"), "--out", path(out)});
    QCOMPARE(again.exitCode, 0);
    QVERIFY(again.text().contains("already converted"));

    const CliRun bad = runCli({"convert", "--in", path(fixtures::dataDir() / "tiny-dsa"), "--out",
                            path(dir("x")), "--policy", "int2"});
    QCOMPARE(bad.exitCode, 1);
    QVERIFY(bad.err.contains("unknown conversion policy 'int2'"));
    QCOMPARE(runCli({"convert", "--in", path(fixtures::dataDir() / "tiny-dsa")}).exitCode, 2);
  }

  void inspectDescribesCheckpointsAndContainers() {
    const fs::path out = dir("tiny-fp8");
    QCOMPARE(runCli({"convert", "--in", path(fixtures::dataDir() / "tiny-fp8"), "--out", path(out)})
                 .exitCode,
             0);
    const CliRun container = runCli({"inspect", path(out)});
    QVERIFY2(container.exitCode == 0, qPrintable(container.err));
    for (const char* line :
         {"kind:         strata container, policy default",
          "architecture: GlmMoeDsaForCausalLM (glm_moe_dsa), hidden 160, vocabulary 128",
          "layers:       3 (2 dense, 1 MoE) + 1 MTP", "experts:      8 routed per MoE layer",
          "routed_expert", "int4-g32", "int8-row", "machine:      RAM", "avx2",
          "verdict:      fits"})
      QVERIFY2(container.text().contains(line), qPrintable(QString(line) + "\n" + container.text()));
    // Resident weights as the app's engine will hold them (native precision: norms widened to
    // f32), not as stored: what the verdict compares with the machine's memory.
    strata::EngineSettings native;
    native.precision = strata::Precision::Native;
    const double held = static_cast<double>(strata::Engine::plan(out, native).residentBytes);
    const QString resident = held >= 1e6
                                 ? QString::asprintf("resident:     %.2f MB in RAM", held / 1e6)
                                 : QString::asprintf("resident:     %.1f KB in RAM", held / 1e3);
    QVERIFY2(container.text().contains(resident), qPrintable(resident + "\n" + container.text()));
    // The kernel path the engine would pick on this machine.
    const QString kernels = "integer kernels " +
                            QString::fromUtf8(strata::kernels::pathName(strata::kernels::bestIntPath()).data());
    QVERIFY2(container.text().contains(kernels), qPrintable(container.text()));

    const CliRun hf = runCli({"inspect", path(fixtures::dataDir() / "tiny-fp8")});
    QVERIFY2(hf.exitCode == 0, qPrintable(hf.err));
    QVERIFY(hf.text().contains("Hugging Face, FP8 e4m3 with 128x128 block scales"));
    QVERIFY(hf.text().contains("F8_E4M3"));
    // Before conversion, under every policy, the resident bytes the converted container's
    // engine holds (checked for default, converted above, and int4-g32).
    const fs::path int4 = dir("tiny-fp8-int4");
    QCOMPARE(runCli({"convert", "--in", path(fixtures::dataDir() / "tiny-fp8"), "--out", path(int4),
                     "--policy", "int4-g32"})
                 .exitCode,
             0);
    for (const auto& [policy, converted] :
         {std::pair{"default", out}, std::pair{"int4-g32", int4}}) {
      const double bytes =
          static_cast<double>(strata::Engine::plan(converted, native).residentBytes);
      const QString held = bytes >= 1e6 ? QString::asprintf("%.2f MB", bytes / 1e6)
                                        : QString::asprintf("%.1f KB", bytes / 1e3);
      const QRegularExpression line(
          QString("\\n(converted: |           ) +%1 resident, .*\\(policy %2\\)\\n")
              .arg(QRegularExpression::escape(held), policy));
      QVERIFY2(line.match(hf.text()).hasMatch(),
               qPrintable(held + " " + policy + "\n" + hf.text()));
    }
    for (const std::string& policy : strata::convertPolicyNames())
      QVERIFY2(hf.text().contains(QString("(policy %1)\n").arg(QString::fromStdString(policy))),
               policy.c_str());
    QVERIFY(!container.text().contains("(policy "));  // a container has its own policy

    const CliRun missing = runCli({"inspect", path(dir("nothing"))});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY(missing.err.contains("not a directory"));
    QCOMPARE(runCli({"inspect"}).exitCode, 2);
  }

  // The advice for a checkpoint: the most exact policy whose converted resident weights and KV
  // cache fit the RAM available, judged on machines just above and below each need.
  void policyThatFitsPicksTheMostExactThatFits() {
    const strata::ModelSummary m = strata::inspectModel(fixtures::dataDir() / "tiny-fp8");
    QCOMPARE(m.conversions.size(), strata::convertPolicyNames().size());
    std::map<std::string, uint64_t> need;
    for (const strata::ConvertedSize& c : m.conversions)
      need[c.policy] = c.residentBytes + m.kvBytesPerToken * 100;
    QVERIFY(need["int4-g32"] < need["default"]);
    strata::MachineSummary machine;
    const auto with = [&](uint64_t ram) {
      machine.ramTotal = machine.ramAvailable = ram;
      return strata::policyThatFits(m, machine, 100);
    };
    QCOMPARE(with(need["default"]), std::string("default"));
    QCOMPARE(with(need["default"] - 1), std::string("int4-g32"));
    QCOMPARE(with(need["int4-g32"]), std::string("int4-g32"));
    QCOMPARE(with(need["int4-row"] - 1), std::string());
    QVERIFY(need["int4-row"] <= need["int4-g128"] && need["int4-g128"] <= need["int4-g64"] &&
            need["int4-g64"] <= need["int4-g32"]);
  }

  // Peak RSS of the converting process <= 2 x largest tensor + 256 MB (the issue's bound), and
  // its growth over the process's size at start <= 2 x largest + 32 MiB: the checkpoint is more
  // than twice that, so a converter holding the model (or even one shard) would fail.
  void peakMemoryIsBounded() {
    const fs::path in = dir("large"), out = dir("large-out");
    const uint64_t largest = largest_, total = largeTotal_;
    const uint64_t tight = 2 * largest + (uint64_t{32} << 20);
    QVERIFY(total > 2 * tight);

    const CliRun r = runCli({"convert", "--in", path(in), "--out", path(out)});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    std::smatch m;
    const std::string text = r.text().toStdString();
    QVERIFY2(std::regex_search(text, m, std::regex(R"(peak_rss_kb=(\d+) start_rss_kb=(\d+))")),
             qPrintable(r.text()));
    const uint64_t peak = std::stoull(m[1]) * 1024, start = std::stoull(m[2]) * 1024;
    qInfo("%s", qPrintable(r.text().split('\n').first()));
    qInfo("checkpoint %.1f MiB, largest tensor %.1f MiB: peak RSS %.1f MiB (start %.1f MiB)",
          total / 1048576.0, largest / 1048576.0, peak / 1048576.0, start / 1048576.0);
    QVERIFY(peak <= 2 * largest + (uint64_t{256} << 20));
    QVERIFY(peak - start <= tight);

    const strata::io::Container c = strata::io::Container::open(out);
    QCOMPARE(c.expertCount(1), static_cast<int>(kExperts));
    QCOMPARE(c.readF32("model.embed_tokens.weight").size(), size_t(kVocab * kHidden));
  }

  // A real SIGKILL in the middle of a conversion, then the same command again: the result is
  // byte-identical to the uninterrupted conversion of peakMemoryIsBounded.
  void killedConversionResumes() {
    const fs::path in = dir("large"), out = dir("killed"), reference = dir("large-out");
    if (!fs::exists(reference / "strata-container.json"))
      QCOMPARE(runCli({"convert", "--in", path(in), "--out", path(reference)}).exitCode, 0);
    QProcess p;
    p.start(STRATA_CLI_PATH, {"convert", "--in", path(in), "--out", path(out), "--threads", "1"});
    QVERIFY(p.waitForStarted());
    // Wait until it is converting (its work directory and output files exist), then kill.
    const fs::path journal =
        out / strata::convert::kWorkDirName / strata::convert::kJournalFileName;
    for (int i = 0; i < 2000 && !fs::exists(journal); ++i) QThread::msleep(1);
    QThread::msleep(300);
    p.kill();  // SIGKILL
    p.waitForFinished();
    const bool interrupted = !fs::exists(out / "strata-container.json");
    qInfo("killed %s", interrupted ? "mid-conversion" : "after it had finished");
    if (interrupted) {
      const CliRun refused = runCli({"inspect", path(out)});
      QCOMPARE(refused.exitCode, 1);  // an unfinished output does not open as a model
    }
    const CliRun resumed = runCli({"convert", "--in", path(in), "--out", path(out)});
    QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
    for (const auto& e : fs::directory_iterator(reference))
      QVERIFY2(testckpt::readBytes(e.path()) == testckpt::readBytes(out / e.path().filename()),
               e.path().filename().c_str());
    QCOMPARE(std::distance(fs::directory_iterator(out), {}),
             std::distance(fs::directory_iterator(reference), {}));
  }
};

QTEST_APPLESS_MAIN(TestConvertCli)
#include "test_convert_cli.moc"
