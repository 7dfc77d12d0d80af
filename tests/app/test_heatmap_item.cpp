// The expert heatmap item: the image it builds from heat and tiers, its hover lookup, and what
// the software scene graph actually draws.
#include <QGuiApplication>
#include <QQuickWindow>
#include <QTest>

#include "heatmap/heat_colors.h"
#include "heatmap/heatmap_item.h"
#include "heatmap/tier_monitor.h"
#include "strata/tiers.h"

using namespace strata::app;
using strata::ExpertTier;

namespace {

// 2 layers x 4 experts: layer 1 expert 2 is the hottest, the rest cold; tiers vary.
struct Sample {
  QVector<float> heat{0, 0, 0, 0, 0, 0, 8, 0};
  QVector<quint8> tiers{quint8(ExpertTier::Disk),   quint8(ExpertTier::Ram),
                        quint8(ExpertTier::Disk),   quint8(ExpertTier::Disk),
                        quint8(ExpertTier::Disk),   quint8(ExpertTier::Disk),
                        quint8(ExpertTier::Pinned), quint8(ExpertTier::Loading)};
};

}  // namespace

class TestHeatmapItem : public QObject {
  Q_OBJECT
 private slots:
  void colourRampEnds() {
    QVERIFY(heatColor(0) != heatColor(1));
    QCOMPARE(heatColor(-3), heatColor(0));
    QCOMPARE(heatColor(7), heatColor(1));
    QVERIFY(qGray(heatColor(1)) > qGray(heatColor(0.5f)));
    QVERIFY(qGray(heatColor(0.5f)) > qGray(heatColor(0)));
    QVERIFY(tierColor(quint8(ExpertTier::Pinned)) != tierColor(quint8(ExpertTier::Ram)));
  }

  void imageHasOneColumnPerExpertAndATierStripe() {
    HeatmapItem item;
    Sample s;
    item.setData(2, 4, s.heat, s.tiers);
    QCOMPARE(item.layers(), 2);
    QCOMPARE(item.experts(), 4);
    const QImage& img = item.image();
    QCOMPARE(img.width(), 4);
    QCOMPARE(img.height(), 2 * HeatmapItem::kRowsPerLayer);
    const int hotRow = 1 * HeatmapItem::kRowsPerLayer;  // layer 1, first heat row
    QCOMPARE(img.pixel(2, hotRow), heatColor(1));       // normalized: the hottest is 1
    QCOMPARE(img.pixel(1, hotRow), heatColor(0));
    QCOMPARE(img.pixel(2, 0), heatColor(0));
    const int stripe = 2 * HeatmapItem::kRowsPerLayer - 1;
    QCOMPARE(img.pixel(2, stripe), tierColor(quint8(ExpertTier::Pinned)));
    QCOMPARE(img.pixel(3, stripe), tierColor(quint8(ExpertTier::Loading)));
    QCOMPARE(img.pixel(1, HeatmapItem::kRowsPerLayer - 1), tierColor(quint8(ExpertTier::Ram)));
  }

  void inconsistentDataShowsNothing() {
    HeatmapItem item;
    item.setData(2, 4, QVector<float>(5, 1.0f), {});
    QCOMPARE(item.layers(), 0);
    QVERIFY(item.image().isNull());
  }

  void cellAtMapsPointsToExperts() {
    HeatmapItem item;
    Sample s;
    item.setData(2, 4, s.heat, s.tiers);
    item.setSize(QSizeF(400, 100));
    const QVariantMap c = item.cellAt(250, 75);  // third column, second row
    QCOMPARE(c.value(QStringLiteral("layer")).toInt(), 1);
    QCOMPARE(c.value(QStringLiteral("expert")).toInt(), 2);
    QCOMPARE(c.value(QStringLiteral("heat")).toFloat(), 1.0f);
    QCOMPARE(c.value(QStringLiteral("tier")).toString(), QStringLiteral("pinned"));
    QVERIFY(item.cellAt(401, 10).isEmpty());
  }

  void followsItsMonitor() {
    TierMonitor monitor;
    HeatmapItem item;
    item.setMonitor(&monitor);
    QCOMPARE(item.layers(), 0);
    TierData d;
    Sample s;
    d.layers = 2;
    d.experts = 4;
    d.heat = s.heat;
    d.tiers = s.tiers;
    monitor.update(d);
    QCOMPARE(item.layers(), 2);
    QCOMPARE(item.image().pixel(2, HeatmapItem::kRowsPerLayer), heatColor(1));
  }

  void softwareRendererDrawsTheCells() {
    QQuickWindow window;
    window.resize(400, 200);
    HeatmapItem item(window.contentItem());
    item.setSize(QSizeF(400, 200));
    Sample s;
    item.setData(2, 4, s.heat, s.tiers);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QImage shot = window.grabWindow();
    QVERIFY(!shot.isNull());
    shot = shot.scaled(400, 200);  // device pixel ratio aside
    // Middle of layer 1 / expert 2's heat rows, and of a cold cell.
    QCOMPARE(QColor(shot.pixel(250, 125)).rgb(), QColor(heatColor(1)).rgb());
    QCOMPARE(QColor(shot.pixel(50, 25)).rgb(), QColor(heatColor(0)).rgb());
    // Updating repaints: now layer 0 expert 0 is the hot one.
    QVector<float> heat(8, 0.0f);
    heat[0] = 1;
    item.setData(2, 4, heat, s.tiers);
    shot = window.grabWindow().scaled(400, 200);
    QCOMPARE(QColor(shot.pixel(50, 25)).rgb(), QColor(heatColor(1)).rgb());
    QCOMPARE(QColor(shot.pixel(250, 125)).rgb(), QColor(heatColor(0)).rgb());
  }
};

int main(int argc, char** argv) {
  // The software scene graph: what the app uses for screenshots, and needs no GPU here.
  QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
  QGuiApplication app(argc, argv);
  TestHeatmapItem test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_heatmap_item.moc"
