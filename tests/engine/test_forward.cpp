// The GLM-5 forward pass against the independent PyTorch reference (tools/reference/).
// Tolerance of the f32 path: max |Δlogit| <= 1e-4 * max |reference logit|.
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <random>

#include "fixtures.h"
#include "model/config.h"
#include "model/ops.h"
#include "strata/convert.h"
#include "strata/engine.h"

using fixtures::Reference;

namespace {

constexpr float kTolerance = 1e-4f;

std::vector<float> evalLogits(const Reference& ref, const strata::EngineSettings& settings) {
  auto engine = strata::Engine::open(ref.dir, settings);
  auto session = engine->newSession();
  return session->append(ref.prompt).logits;
}

std::vector<int32_t> argmaxRows(const std::vector<float>& logits, size_t vocab) {
  std::vector<int32_t> top;
  for (size_t row = 0; row * vocab < logits.size(); ++row)
    top.push_back(strata::argmax({logits.data() + row * vocab, vocab}));
  return top;
}

strata::EngineSettings withForm(strata::AttentionForm form) {
  strata::EngineSettings s;
  s.attentionForm = form;
  return s;
}

}  // namespace

class TestForward : public QObject {
  Q_OBJECT

 private:
  void fixtureRows() {
    QTest::addColumn<QString>("name");
    for (const char* name : {"tiny-dsa", "tiny-indexshare", "tiny-fp8"}) QTest::newRow(name) << name;
  }

 private slots:
  void logitsMatchReference_data() { fixtureRows(); }
  void logitsMatchReference() {
    QFETCH(QString, name);
    const Reference ref = Reference::load(name.toStdString());
    const std::vector<float> logits = evalLogits(ref, {});
    const float limit = kTolerance * fixtures::maxAbs(ref.logits);
    const float diff = fixtures::maxAbsDiff(logits, ref.logits);
    QVERIFY2(diff <= limit, qPrintable(QString("max |Δ| %1 > %2").arg(diff).arg(limit)));
    // Teacher-forced argmax identical at every position.
    QCOMPARE(argmaxRows(logits, ref.vocab), ref.meta.at("top1").get<std::vector<int32_t>>());
  }

  // Prefill part of the prompt, then decode token by token: the cache path (absorbed MLA at
  // batch 1, no recomputation) must reproduce the reference's full-sequence logits.
  void incrementalDecodeMatchesReference_data() { fixtureRows(); }
  void incrementalDecodeMatchesReference() {
    QFETCH(QString, name);
    const Reference ref = Reference::load(name.toStdString());
    auto engine = strata::Engine::open(ref.dir);
    auto session = engine->newSession();
    const size_t prefill = 20;
    std::vector<float> logits = session->append({ref.prompt.data(), prefill}).logits;
    for (size_t i = prefill; i < ref.prompt.size(); ++i) {
      const auto step = session->append({ref.prompt.data() + i, 1}).logits;
      logits.insert(logits.end(), step.begin(), step.end());
    }
    QCOMPARE(session->length(), static_cast<int64_t>(ref.prompt.size()));
    const float limit = kTolerance * fixtures::maxAbs(ref.logits);
    const float diff = fixtures::maxAbsDiff(logits, ref.logits);
    QVERIFY2(diff <= limit, qPrintable(QString("max |Δ| %1 > %2").arg(diff).arg(limit)));
  }

  void greedyMatchesReference_data() { fixtureRows(); }
  void greedyMatchesReference() {
    QFETCH(QString, name);
    const Reference ref = Reference::load(name.toStdString());
    const auto prompt = ref.meta.at("greedy_prompt").get<std::vector<int32_t>>();
    const auto expected = ref.meta.at("greedy_new").get<std::vector<int32_t>>();
    QCOMPARE(expected.size(), size_t{32});
    auto engine = strata::Engine::open(ref.dir);
    auto session = engine->newSession();
    // Step by step rather than generate() so an end-of-sequence id cannot stop it early.
    std::vector<float> logits = session->append(prompt).logits;
    std::vector<int32_t> produced;
    const size_t vocab = engine->info().vocabSize;
    while (produced.size() < expected.size()) {
      const int32_t next = strata::argmax({logits.data() + logits.size() - vocab, vocab});
      produced.push_back(next);
      logits = session->append({&next, 1}).logits;
    }
    QCOMPARE(produced, expected);
  }

  void absorbedEqualsExpanded_data() { fixtureRows(); }
  void absorbedEqualsExpanded() {
    QFETCH(QString, name);
    const Reference ref = Reference::load(name.toStdString());
    const auto expanded = evalLogits(ref, withForm(strata::AttentionForm::Expanded));
    const auto absorbed = evalLogits(ref, withForm(strata::AttentionForm::Absorbed));
    const float limit = 1e-5f * fixtures::maxAbs(expanded);
    const float diff = fixtures::maxAbsDiff(expanded, absorbed);
    QVERIFY2(diff <= limit, qPrintable(QString("max |Δ| %1 > %2").arg(diff).arg(limit)));
  }

  // A converted container holds kv_b quantized (int8 under the default policy) and the engine
  // keeps it so: the absorbed form widens its rows one at a time, the expanded form multiplies
  // the whole matrix. Both see the same dequantized values, so they agree as on f32 weights.
  void absorbedEqualsExpandedWithQuantizedKvB() {
    const Reference ref = Reference::load("tiny-dsa");
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    strata::ConvertOptions options;
    options.input = ref.dir;
    options.output = std::filesystem::path(tmp.path().toStdString()) / "converted";
    strata::convertModel(options);
    Reference converted = ref;
    converted.dir = options.output;
    const auto expanded = evalLogits(converted, withForm(strata::AttentionForm::Expanded));
    const auto absorbed = evalLogits(converted, withForm(strata::AttentionForm::Absorbed));
    const float limit = 1e-5f * fixtures::maxAbs(expanded);
    const float diff = fixtures::maxAbsDiff(expanded, absorbed);
    QVERIFY2(diff <= limit, qPrintable(QString("max |Δ| %1 > %2").arg(diff).arg(limit)));
    // Quantization moved the logits: the engine really ran the quantized weights.
    const float moved = fixtures::maxAbsDiff(expanded, ref.logits);
    QVERIFY2(moved > 100 * limit, qPrintable(QString("moved %1").arg(moved)));
  }

  void mtpLogitsMatchReference_data() { fixtureRows(); }
  void mtpLogitsMatchReference() {
    QFETCH(QString, name);
    const Reference ref = Reference::load(name.toStdString());
    auto engine = strata::Engine::open(ref.dir);
    QVERIFY(engine->info().hasMtp);
    auto session = engine->newSession();
    const auto step = session->append(ref.prompt);
    const size_t rows = ref.prompt.size() - 1;
    const size_t width = engine->info().hiddenSize;
    // Feed the MTP layer in two chunks to exercise its own KV cache.
    const size_t first = rows / 2;
    std::vector<float> mtp = session->appendMtp({step.hidden.data(), first * width},
                                                {ref.prompt.data() + 1, first});
    const auto rest = session->appendMtp({step.hidden.data() + first * width, (rows - first) * width},
                                         {ref.prompt.data() + 1 + first, rows - first});
    mtp.insert(mtp.end(), rest.begin(), rest.end());
    const float limit = kTolerance * fixtures::maxAbs(ref.mtpLogits);
    const float diff = fixtures::maxAbsDiff(mtp, ref.mtpLogits);
    QVERIFY2(diff <= limit, qPrintable(QString("max |Δ| %1 > %2").arg(diff).arg(limit)));
    QCOMPARE(argmaxRows(mtp, engine->info().vocabSize),
             ref.meta.at("mtp_top1").get<std::vector<int32_t>>());
  }

  // A draft's catch-up form: the rows before the last only add their keys to the MTP cache.
  // The last row's logits still match the reference, and so do those of later rows, which
  // attend over the keys added without attention (indexer keys too, on the DSA fixtures).
  void mtpKeysOnlyRowsMatchReference_data() { fixtureRows(); }
  void mtpKeysOnlyRowsMatchReference() {
    QFETCH(QString, name);
    const Reference ref = Reference::load(name.toStdString());
    auto engine = strata::Engine::open(ref.dir);
    auto session = engine->newSession();
    const auto step = session->append(ref.prompt);
    const size_t rows = ref.prompt.size() - 1;
    const size_t width = engine->info().hiddenSize;
    const size_t vocab = engine->info().vocabSize;
    const size_t first = rows / 2;
    QVERIFY(first >= 2);
    const std::vector<float> last = session->appendMtpLastRow({step.hidden.data(), first * width},
                                                              {ref.prompt.data() + 1, first});
    QCOMPARE(last.size(), vocab);
    const auto rest =
        session->appendMtp({step.hidden.data() + first * width, (rows - first) * width},
                           {ref.prompt.data() + 1 + first, rows - first});
    const float limit = kTolerance * fixtures::maxAbs(ref.mtpLogits);
    const std::vector<float> expectedLast(ref.mtpLogits.begin() + (first - 1) * vocab,
                                          ref.mtpLogits.begin() + first * vocab);
    const std::vector<float> expectedRest(ref.mtpLogits.begin() + first * vocab,
                                          ref.mtpLogits.end());
    const float diffLast = fixtures::maxAbsDiff(last, expectedLast);
    const float diffRest = fixtures::maxAbsDiff(rest, expectedRest);
    QVERIFY2(diffLast <= limit,
             qPrintable(QString("last row: max |Δ| %1 > %2").arg(diffLast).arg(limit)));
    QVERIFY2(diffRest <= limit,
             qPrintable(QString("later rows: max |Δ| %1 > %2").arg(diffRest).arg(limit)));
  }

  // DSA must really prune: with index_topk small and a long prompt, forcing dense attention
  // reproduces the reference's dense logits and visibly differs from the pruned ones.
  void dsaPruningChangesLogits_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("tiny-dsa") << "tiny-dsa";
    QTest::newRow("tiny-indexshare") << "tiny-indexshare";
  }
  void dsaPruningChangesLogits() {
    QFETCH(QString, name);
    const Reference ref = Reference::load(name.toStdString());
    const auto config = strata::model::loadModelConfig(ref.dir / "config.json");
    QVERIFY(config.indexTopk <= 8);
    QVERIFY(ref.prompt.size() >= 48);

    strata::EngineSettings dense;
    dense.denseAttention = true;
    const auto denseLogits = evalLogits(ref, dense);
    const float limit = kTolerance * fixtures::maxAbs(ref.denseLogits);
    QVERIFY(fixtures::maxAbsDiff(denseLogits, ref.denseLogits) <= limit);
    // Pruned vs dense differ by far more than the tolerance (at least 100x).
    QVERIFY(fixtures::maxAbsDiff(denseLogits, ref.logits) > 100 * limit);
    // ...and the first index_topk positions, which see at most index_topk keys, agree.
    const size_t vocab = config.vocabSize;
    const size_t head = static_cast<size_t>(config.indexTopk) * vocab;
    QVERIFY(fixtures::maxAbsDiff({denseLogits.begin(), denseLogits.begin() + head},
                                 {ref.logits.begin(), ref.logits.begin() + head}) <= limit);
  }

  // The indexer's linear-time selection keeps exactly the keys the ordered top-k keeps,
  // ties at the cut included (values drawn from a few levels, so most rows have them).
  void topkInOrderKeepsTheTopkSet() {
    std::mt19937 random(7);
    for (int trial = 0; trial < 300; ++trial) {
      const int n = 1 + static_cast<int>(random() % 200);
      const int levels = 1 + static_cast<int>(random() % 12);
      std::vector<float> values(static_cast<size_t>(n));
      for (float& v : values) v = static_cast<float>(random() % levels) * 0.5f - 1.0f;
      for (const int k : {0, 1, 2, n / 3, n - 1, n, n + 5}) {
        std::vector<int> expected = strata::model::topkIndices(values.data(), n, k);
        std::sort(expected.begin(), expected.end());
        const std::vector<int> got = strata::model::topkIndicesInOrder(values.data(), n, k);
        QCOMPARE(got, expected);
      }
    }
  }

  void indexShareHasSharedLayers() {
    const Reference ref = Reference::load("tiny-indexshare");
    const auto config = strata::model::loadModelConfig(ref.dir / "config.json");
    const auto full = std::count(config.layerHasIndexer.begin(), config.layerHasIndexer.end(), true);
    QVERIFY(full >= 1);
    QVERIFY(full < config.numHiddenLayers);  // some layers reuse another layer's top-k
  }

  // Group-limited routing matters: the same checkpoint with n_group = 1 gives other logits.
  void groupRoutingMatters() {
    const Reference ref = Reference::load("tiny-dsa");
    const auto config = strata::model::loadModelConfig(ref.dir / "config.json");
    QVERIFY(config.nGroup > 1);
    QVERIFY(config.topkGroup < config.nGroup);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::filesystem::path copy = dir.path().toStdString();
    for (const auto& entry : std::filesystem::directory_iterator(ref.dir))
      std::filesystem::copy(entry.path(), copy / entry.path().filename());
    auto json = fixtures::readJson(copy / "config.json");
    json["n_group"] = 1;
    json["topk_group"] = 1;
    std::ofstream(copy / "config.json") << json.dump(2);

    Reference ungrouped = ref;
    ungrouped.dir = copy;
    const auto logits = evalLogits(ungrouped, {});
    QVERIFY(fixtures::maxAbsDiff(logits, ref.logits) > 100 * kTolerance * fixtures::maxAbs(ref.logits));
  }

  // Native precision keeps BF16 weights 16-bit; the values are the same, so logits agree
  // with the f32 path up to summation order.
  void nativePrecisionMatchesF32() {
    const Reference ref = Reference::load("tiny-dsa");
    strata::EngineSettings native;
    native.precision = strata::Precision::Native;
    const auto logits = evalLogits(ref, native);
    const float limit = kTolerance * fixtures::maxAbs(ref.logits);
    QVERIFY(fixtures::maxAbsDiff(logits, ref.logits) <= limit);
    // BF16 matrices really stay 16-bit: well under the f32 footprint (norms, an unquantized
    // kv_b and the indexer gates stay f32 by design).
    const int64_t nativeBytes = strata::Engine::open(ref.dir, native)->info().residentBytes;
    const int64_t f32Bytes = strata::Engine::open(ref.dir)->info().residentBytes;
    QVERIFY2(nativeBytes < f32Bytes * 0.7, qPrintable(QString("%1 vs %2").arg(nativeBytes).arg(f32Bytes)));
  }

  void truncateThenReappendMatches() {
    const Reference ref = Reference::load("tiny-dsa");
    auto engine = strata::Engine::open(ref.dir);
    auto session = engine->newSession();
    const auto full = session->append(ref.prompt).logits;
    session->truncate(30);
    QCOMPARE(session->length(), int64_t{30});
    const auto again = session->append({ref.prompt.data() + 30, ref.prompt.size() - 30}).logits;
    const size_t vocab = engine->info().vocabSize;
    const std::vector<float> tail(full.begin() + 30 * vocab, full.end());
    QVERIFY(fixtures::maxAbsDiff(again, tail) <= 1e-5f * fixtures::maxAbs(tail));
  }

  void outOfRangeTokenIsAnError() {
    const Reference ref = Reference::load("tiny-dsa");
    auto engine = strata::Engine::open(ref.dir);
    auto session = engine->newSession();
    const int32_t bad[] = {1, engine->info().vocabSize};
    try {
      session->append(bad);
      QFAIL("expected an error");
    } catch (const strata::Error& e) {
      QVERIFY2(QString(e.what()).contains("out of range"), e.what());
    }
    QCOMPARE(session->length(), int64_t{0});  // nothing half-appended
  }

  void negativeThreadCountIsAnError() {
    const Reference ref = Reference::load("tiny-dsa");
    strata::EngineSettings s;
    s.threads = -3;
    QVERIFY_THROWS_EXCEPTION(strata::Error, strata::Engine::open(ref.dir, s));
    auto engine = strata::Engine::open(ref.dir);
    QVERIFY_THROWS_EXCEPTION(strata::Error, engine->setThreads(-1));
    engine->setThreads(1);  // a live retune within range still works
    QCOMPARE(engine->newSession()->append(std::vector<int32_t>{1, 2}).logits.size(),
             size_t{2} * static_cast<size_t>(engine->info().vocabSize));
  }
};

QTEST_GUILESS_MAIN(TestForward)
#include "test_forward.moc"
