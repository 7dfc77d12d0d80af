// The engine on a converted container: it computes with exactly the values the container
// stores, and the converted tiny-fp8 model's logits stay within a stated tolerance of the
// float64 reference.
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "checkpoint_writer.h"
#include "fixtures.h"
#include "io/container.h"
#include "io/safetensors.h"
#include "model/weights.h"
#include "strata/convert.h"
#include "strata/engine.h"

namespace fs = std::filesystem;
using strata::io::Container;

namespace {

fs::path fixture(const std::string& name) { return fixtures::dataDir() / name; }

void convert(const fs::path& in, const fs::path& out, const std::string& policy = "default") {
  strata::ConvertOptions o;
  o.input = in;
  o.output = out;
  o.policy = policy;
  strata::convertModel(o);
}

}  // namespace

class TestContainerEngine : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  int counter_ = 0;
  fs::path fresh(const std::string& label) {
    return fs::path(tmp_.path().toStdString()) / (label + std::to_string(++counter_));
  }

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  // The engine opens a container like a checkpoint; its logits stay near the float64
  // reference (tests/data/tiny-fp8). Compared with DSA off (dense_logits.f32): the indexer's
  // top-k flips near-ties under any perturbation, which hides the weight error being measured.
  // Stated tolerance: at least 90 % of positions within `tol` of the reference in every logit
  // (int8: 0.25, default with int4 experts: 0.5; max |logit| is 7.2), the rest (a router
  // picking another expert on a near-tie) within 2.5, and top-1 agreement >= 85 %.
  void containerLogitsStayNearReference_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<bool>("integerKernels");
    QTest::addColumn<double>("tol");
    QTest::newRow("int8, dequantize path") << "int8" << false << 0.25;
    QTest::newRow("int8, integer kernels") << "int8" << true << 0.25;
    QTest::newRow("default, dequantize path") << "default" << false << 0.5;
  }

  void containerLogitsStayNearReference() {
    QFETCH(QString, policy);
    QFETCH(bool, integerKernels);
    QFETCH(double, tol);
    const fixtures::Reference ref = fixtures::Reference::load("tiny-fp8");
    const fs::path out = fresh("engine");
    convert(fixture("tiny-fp8"), out, policy.toStdString());
    strata::EngineSettings settings;
    settings.kernelPath =
        integerKernels ? strata::KernelPath::Automatic : strata::KernelPath::Dequantize;
    settings.denseAttention = true;
    auto engine = strata::Engine::open(out, settings);
    const std::vector<float> logits = engine->newSession()->append(ref.prompt).logits;
    QCOMPARE(logits.size(), ref.denseLogits.size());
    size_t within = 0, agree = 0;
    float worst = 0;
    for (size_t p = 0; p < ref.prompt.size(); ++p) {
      const std::span<const float> a(logits.data() + p * ref.vocab, ref.vocab);
      const std::span<const float> b(ref.denseLogits.data() + p * ref.vocab, ref.vocab);
      float diff = 0;
      for (size_t v = 0; v < ref.vocab; ++v) diff = std::max(diff, std::fabs(a[v] - b[v]));
      within += diff <= tol;
      worst = std::max(worst, diff);
      agree += strata::argmax(a) == strata::argmax(b);
    }
    qInfo("%zu/%zu positions within %.2f, worst %.3f, top-1 agreement %zu/%zu", within,
          ref.prompt.size(), tol, worst, agree, ref.prompt.size());
    QVERIFY(within >= ref.prompt.size() * 9 / 10);
    QVERIFY(worst <= 2.5f);
    QVERIFY(agree >= ref.prompt.size() * 85 / 100);
  }

  // The engine computes with exactly the values the container stores: same logits as an F32
  // checkpoint written from Container::readF32 (the quantization error is all in the values).
  void engineUsesTheStoredValues() {
    const fs::path out = fresh("engine"), plain = fresh("plain");
    convert(fixture("tiny-fp8"), out);
    const Container c = Container::open(out);
    std::vector<testckpt::Tensor> tensors;
    for (const strata::io::ContainerTensor& t : c.tensors()) {
      const std::vector<float> v = c.readF32(t.name());
      tensors.push_back({t.name(), "F32", t.entry.shape,
                         std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4)});
    }
    testckpt::writeCheckpoint(plain, testckpt::readBytes(out / "config.json"), {tensors});
    const fixtures::Reference ref = fixtures::Reference::load("tiny-fp8");
    strata::EngineSettings settings;
    settings.kernelPath = strata::KernelPath::Dequantize;
    settings.denseAttention = true;
    const auto a = strata::Engine::open(out, settings)->newSession()->append(ref.prompt).logits;
    const auto b = strata::Engine::open(plain, settings)->newSession()->append(ref.prompt).logits;
    QVERIFY(fixtures::maxAbsDiff(a, b) <= 1e-4f * fixtures::maxAbs(b));
  }

  // A container's embedding table stays on disk (read a row per token, model/embedding_table.h):
  // the loaded weights hold none of it; a checkpoint's is held in memory. engineUsesTheStoredValues
  // above shows the rows read from disk are the stored values.
  void embeddingTableStaysOnDisk() {
    const fs::path out = fresh("engine");
    convert(fixture("tiny-fp8"), out);
    const Container c = Container::open(out);
    const auto config = strata::model::loadModelConfig(out / "config.json");
    const auto fromContainer = strata::model::loadModelWeights(
        config, *strata::model::containerWeightSource(c), strata::model::WeightPrecision::Native);
    QVERIFY(fromContainer.embedTokens.onDisk());
    QCOMPARE(fromContainer.embedTokens.bytes(), int64_t{0});

    const auto store = strata::io::TensorStore::openDirectory(fixture("tiny-fp8"));
    const auto fromCheckpoint = strata::model::loadModelWeights(
        config, *strata::model::checkpointWeightSource(store, config),
        strata::model::WeightPrecision::Native);
    QVERIFY(!fromCheckpoint.embedTokens.onDisk());
    QVERIFY(fromCheckpoint.embedTokens.bytes() >=
            int64_t{config.vocabSize} * config.hiddenSize * 2);
  }
};

QTEST_APPLESS_MAIN(TestContainerEngine)
#include "test_container_engine.moc"
