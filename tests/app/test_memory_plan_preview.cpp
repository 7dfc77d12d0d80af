// What Settings shows before a reload: the load request's engine settings, and the memory plan
// for them - the bundled tiny model loaded whole, the same model converted and streamed under a
// budget (its parts, sessions and the experts that fit), and a budget too small to start.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "bridge/load_settings.h"
#include "settings/memory_plan_preview.h"
#include "strata/convert.h"
#include "strata/engine.h"

using namespace strata::app;

namespace {

QString rowValue(const PlanPreview& p, const QString& name) {
  for (const QVariant& r : p.rows)
    if (r.toMap().value(QStringLiteral("name")).toString() == name)
      return r.toMap().value(QStringLiteral("value")).toString();
  return QStringLiteral("<no row %1>").arg(name);
}

}  // namespace

class TestMemoryPlanPreview : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString container_;

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    container_ = tmp_.filePath(QStringLiteral("strata-tiny-int4"));
    strata::ConvertOptions o;
    o.input = STRATA_TINY_MODEL_DIR;
    o.output = container_.toStdString();
    strata::convertModel(o);
  }

  void requestBecomesEngineSettings() {
    LoadRequest r;
    r.threads = 3;
    r.memoryBudgetBytes = 5LL << 30;
    r.kvPrecision = QStringLiteral("bf16");
    r.io = QStringLiteral("uring");
    r.kernelPath = QStringLiteral("dequantize");
    r.tiers = {40, false};
    r.sessions = 3;
    const strata::EngineSettings s = engineSettingsFor(r);
    QCOMPARE(s.threads, 3);
    QCOMPARE(s.memory.budgetBytes, 5LL << 30);
    QVERIFY(s.kvPrecision == strata::KvPrecision::BF16);
    QVERIFY(s.memory.io == strata::IoBackend::Uring);
    QVERIFY(s.kernelPath == strata::KernelPath::Dequantize);
    QCOMPARE(s.memory.pinnedFraction, 0.40);
    QVERIFY(!s.memory.prefetch);
    QCOMPARE(s.memory.sessions, 3);
    // Defaults, and unknown names keep them.
    r = {};
    r.io = QStringLiteral("floppy");
    const strata::EngineSettings d = engineSettingsFor(r);
    QVERIFY(d.memory.io == strata::IoBackend::Direct);
    QVERIFY(d.kernelPath == strata::KernelPath::Automatic);
    QVERIFY(d.precision == strata::Precision::Native);  // BF16 weights kept 16-bit
    QCOMPARE(d.memory.pinnedFraction, 0.25);
    QVERIFY(d.memory.prefetch);
    QCOMPARE(d.memory.sessions, 1);
  }

  // No budget: the whole model in memory, as much as the engine then really holds.
  void wholeModelWithoutABudget() {
    LoadRequest r;
    r.modelDir = QStringLiteral(STRATA_TINY_MODEL_DIR);
    const PlanPreview p = MemoryPlanPreview::compute(r);
    QVERIFY(p.fits);
    QVERIFY2(p.summary.startsWith(QStringLiteral("No memory budget")), qPrintable(p.summary));
    const auto engine = strata::Engine::open(STRATA_TINY_MODEL_DIR, engineSettingsFor(r));
    QCOMPARE(rowValue(p, QStringLiteral("Resident weights")),
             QLocale::c().formattedDataSize(engine->info().residentBytes, 1));
    QCOMPARE(p.rows.size(), 1);
  }

  // Streaming under a budget: every part, three sessions' KV caches, and how many of the 160
  // routed experts (4 MoE layers + the MTP layer, 32 each) the pinned set and cache hold.
  void streamingUnderABudget() {
    LoadRequest r;
    r.modelDir = container_;
    r.sessions = 3;
    // Room for what must fit, plus half of all the experts.
    r.memoryBudgetBytes = 1LL << 40;
    const strata::MemoryPlan roomy =
        strata::Engine::plan(container_.toStdString(), engineSettingsFor(r));
    r.memoryBudgetBytes = roomy.residentBytes + roomy.kvBytes + roomy.scratchBytes +
                          roomy.expertCount * roomy.expertBytes / 2;
    const PlanPreview p = MemoryPlanPreview::compute(r);
    QVERIFY2(p.fits, qPrintable(p.summary));
    for (const char* name :
         {"Resident weights", "KV cache", "Scratch", "Pinned experts", "Expert cache", "Total"})
      QVERIFY2(!rowValue(p, QString::fromLatin1(name)).startsWith(QLatin1Char('<')), name);
    QVERIFY2(rowValue(p, QStringLiteral("KV cache"))
                 .endsWith(QStringLiteral("(4,096 tokens × 3 sessions)")),
             qPrintable(rowValue(p, QStringLiteral("KV cache"))));
    const strata::MemoryPlan plan =
        strata::Engine::plan(container_.toStdString(), engineSettingsFor(r));
    QVERIFY(plan.streaming);
    QCOMPARE(plan.expertCount, int64_t{160});
    const int64_t held =
        std::min<int64_t>(160, (plan.pinnedBytes + plan.cacheBytes) / plan.expertBytes);
    QVERIFY2(
        p.summary.startsWith(QStringLiteral("Experts stream from disk: %1 of 160 fit").arg(held)),
        qPrintable(p.summary));
    QCOMPARE(rowValue(p, QStringLiteral("Total")),
             QStringLiteral("%1 of %2")
                 .arg(QLocale::c().formattedDataSize(plan.totalBytes(), 1),
                      QLocale::c().formattedDataSize(r.memoryBudgetBytes, 1)));
  }

  void tooSmallABudgetSaysWhy() {
    LoadRequest r;
    r.modelDir = container_;
    r.memoryBudgetBytes = 1 << 20;
    const PlanPreview p = MemoryPlanPreview::compute(r);
    QVERIFY(!p.fits);
    QVERIFY(p.rows.isEmpty());
    QVERIFY2(p.summary.contains(QStringLiteral("too small")), qPrintable(p.summary));
    r.modelDir = tmp_.filePath(QStringLiteral("missing"));
    QVERIFY(!MemoryPlanPreview::compute(r).fits);
  }

  // refresh() plans on a pool thread and announces the answer.
  void refreshAnnouncesThePlan() {
    MemoryPlanPreview preview;
    QSignalSpy changed(&preview, &MemoryPlanPreview::changed);
    LoadRequest r;
    r.modelDir = QStringLiteral(STRATA_TINY_MODEL_DIR);
    preview.refresh(r);
    QVERIFY(changed.wait(10000));
    QVERIFY(preview.fits());
    QCOMPARE(preview.rows().size(), 1);
  }
};

QTEST_GUILESS_MAIN(TestMemoryPlanPreview)
#include "test_memory_plan_preview.moc"
