// The expert heatmap item: the image it builds from heat and tiers, its hover lookup, the
// routing view's marks (which token they follow, which cells they land on), and what the
// software scene graph actually draws.
#include <QGuiApplication>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTest>

#include "heatmap/heat_colors.h"
#include "heatmap/heatmap_item.h"
#include "heatmap/routing_monitor.h"
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

// Two tokens routed over MoE layers 1 and 2, two experts each (by descending gate).
RoutingData twoTokens() {
  RoutingData d;
  d.layers = {1, 2};
  d.expertsPerToken = 2;
  d.trail = {{QStringLiteral("Hel"), 7, 20, {3, 0, 1, 2}, {1.5f, 1.0f, 2.0f, 0.5f}},
             {QStringLiteral("lo"), 8, 21, {2, 1, 0, 3}, {1.25f, 1.25f, 2.25f, 0.25f}}};
  return d;
}

QString marksOf(const HeatmapItem& item) {  // "row:expert@weight#rank ..."
  QStringList out;
  for (const HeatmapItem::Mark& m : item.marks())
    out << QStringLiteral("%1:%2@%3#%4").arg(m.row).arg(m.expert).arg(m.weight).arg(m.rank);
  return out.join(QLatin1Char(' '));
}

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

  // An expert only the OS page cache holds has its own stripe colour and hover name.
  void pageCacheTierIsShown() {
    HeatmapItem item;
    const QVector<quint8> tiers = {quint8(ExpertTier::PageCache), quint8(ExpertTier::Disk)};
    item.setData(1, 2, {1.0f, 0.5f}, tiers);
    const int stripe = HeatmapItem::kRowsPerLayer - 1;
    QCOMPARE(item.image().pixel(0, stripe), tierColor(quint8(ExpertTier::PageCache)));
    QVERIFY(tierColor(quint8(ExpertTier::PageCache)) != tierColor(quint8(ExpertTier::Disk)));
    QVERIFY(tierColor(quint8(ExpertTier::PageCache)) != tierColor(quint8(ExpertTier::Ram)));
    item.setSize(QSizeF(200, 40));
    QCOMPARE(item.cellAt(50, 20).value(QStringLiteral("tier")).toString(), QStringLiteral("page cache"));
    QCOMPARE(item.cellAt(150, 20).value(QStringLiteral("tier")).toString(), QStringLiteral("disk"));
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

  // The routing monitor shows the newest token until one is held; the trail moving on keeps
  // the held one (its index follows it, -1 once it has left the trail).
  void routingMonitorFollowsOrHolds() {
    RoutingMonitor routing;
    QSignalSpy trail(&routing, &RoutingMonitor::trailChanged);
    QSignalSpy shown(&routing, &RoutingMonitor::shownChanged);
    QVERIFY(!routing.shown());
    QCOMPARE(routing.shownIndex(), -1);
    routing.update(twoTokens());
    QCOMPARE(routing.tokens(), (QStringList{QStringLiteral("Hel"), QStringLiteral("lo")}));
    QCOMPARE(routing.shownText(), QStringLiteral("lo"));
    QCOMPARE(routing.shownIndex(), 1);
    QCOMPARE(trail.count(), 1);
    QCOMPARE(shown.count(), 1);
    routing.update(twoTokens());  // nothing new: no signal
    QCOMPARE(trail.count(), 1);
    QCOMPARE(shown.count(), 1);

    routing.hold(0);
    QVERIFY(!routing.following());
    QCOMPARE(routing.shownText(), QStringLiteral("Hel"));
    QCOMPARE(routing.shownIndex(), 0);
    RoutingData next = twoTokens();
    next.trail.push_back({QStringLiteral("!"), 9, 22, {0, 1, 2, 3}, {1, 1, 1, 1}});
    routing.update(next);
    QCOMPARE(routing.shownText(), QStringLiteral("Hel"));  // still held
    next.trail.removeFirst();
    routing.update(next);
    QCOMPARE(routing.shownIndex(), -1);  // left the trail, still shown
    QCOMPARE(routing.shownText(), QStringLiteral("Hel"));
    routing.follow();
    QVERIFY(routing.following());
    QCOMPARE(routing.shownText(), QStringLiteral("!"));
    routing.hold(5);  // out of range: ignored
    QVERIFY(routing.following());
  }

  // The chips' model follows the trail by rows: tokens that left are removed at the front, new
  // ones appended; a trail with nothing in common (another conversation) resets it.
  void trailModelChangesByRows() {
    RoutingMonitor routing;
    QAbstractItemModel* model = routing.trail();
    QSignalSpy inserted(model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy reset(model, &QAbstractItemModel::modelReset);
    routing.update(twoTokens());
    QCOMPARE(model->rowCount(), 2);
    QCOMPARE(inserted.count(), 1);
    RoutingData next = twoTokens();
    next.trail.removeFirst();
    next.trail.push_back({QStringLiteral("!"), 9, 22, {0, 1, 2, 3}, {1, 1, 1, 1}});
    next.trail.push_back({QStringLiteral("?"), 10, 23, {0, 1, 2, 3}, {1, 1, 1, 1}});
    routing.update(next);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(removed.last().at(1).toInt(), 0);  // first row
    QCOMPARE(removed.last().at(2).toInt(), 0);  // last row
    QCOMPARE(inserted.count(), 2);
    QCOMPARE(inserted.last().at(1).toInt(), 1);
    QCOMPARE(inserted.last().at(2).toInt(), 2);
    QCOMPARE(reset.count(), 0);
    QStringList texts;
    for (int r = 0; r < model->rowCount(); ++r)
      texts << model->data(model->index(r, 0), TokenTrailModel::TextRole).toString();
    QCOMPARE(texts, (QStringList{QStringLiteral("lo"), QStringLiteral("!"), QStringLiteral("?")}));
    QCOMPARE(texts, routing.tokens());

    RoutingData other;
    other.layers = {1, 2};
    other.expertsPerToken = 2;
    other.trail = {{QStringLiteral("new"), 1, 0, {0, 1, 2, 3}, {1, 1, 1, 1}}};
    routing.update(other);
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model->rowCount(), 1);
  }

  // Marks land on the shown token's experts, mapped to the heatmap's rows by layer index (a
  // streaming container's rows include the MTP layer, which the routing view does not).
  void marksLandOnTheShownTokensExperts() {
    TierMonitor monitor;
    RoutingMonitor routing;
    HeatmapItem item;
    item.setMonitor(&monitor);
    item.setRouting(&routing);
    routing.update(twoTokens());
    QVERIFY(item.marks().isEmpty());  // no heat rows yet
    TierData d;
    d.streaming = true;
    d.layers = 3;
    d.experts = 4;
    d.layerIds = {1, 2, 4};  // 4: the MTP layer
    d.heat = QVector<float>(12, 1.0f);
    d.tiers = QVector<quint8>(12, quint8(ExpertTier::Ram));
    monitor.update(d);
    QCOMPARE(marksOf(item), QStringLiteral("0:2@1.25#0 0:1@1.25#1 1:0@2.25#0 1:3@0.25#1"));

    item.setSize(QSizeF(400, 300));
    const QVariantMap chosen = item.cellAt(10, 150);  // row 1, expert 0
    QCOMPARE(chosen.value(QStringLiteral("layer")).toInt(), 2);
    QCOMPARE(chosen.value(QStringLiteral("weight")).toFloat(), 2.25f);
    QCOMPARE(chosen.value(QStringLiteral("rank")).toInt(), 1);
    QCOMPARE(chosen.value(QStringLiteral("token")).toString(), QStringLiteral("lo"));
    QVERIFY(!item.cellAt(110, 150).contains(QStringLiteral("weight")));  // expert 1 of layer 2
    QCOMPARE(item.cellAt(10, 250).value(QStringLiteral("layer")).toInt(), 4);

    routing.hold(0);
    QCOMPARE(marksOf(item), QStringLiteral("0:3@1.5#0 0:0@1#1 1:1@2#0 1:2@0.5#1"));

    // Rows named otherwise (no layer ids): the routing's layers in order.
    d.layerIds.clear();
    d.layers = 2;
    d.heat.resize(8);
    d.tiers.resize(8);
    monitor.update(d);
    QCOMPARE(marksOf(item), QStringLiteral("0:3@1.5#0 0:0@1#1 1:1@2#0 1:2@0.5#1"));
  }

  void softwareRendererDrawsTheMarks() {
    QQuickWindow window;
    window.resize(400, 200);
    HeatmapItem item(window.contentItem());
    item.setSize(QSizeF(400, 200));
    RoutingMonitor routing;
    item.setRouting(&routing);
    item.setData(2, 4, QVector<float>(8, 0.0f), {});  // all cold, no tier stripe
    routing.update(twoTokens());                      // "lo": layer 1 experts 2, 1; layer 2: 0, 3
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QImage shot = window.grabWindow().scaled(400, 200);
    // Cell (row 0, expert 2) is x 200..300, y 0..100; heat rows y 0..75: its mark's centre is
    // (250, 37). The largest gate (row 1, expert 0: 2.25) is opaque white, smaller ones fainter;
    // an unmarked cell keeps its heat colour.
    QCOMPARE(QColor(shot.pixel(50, 137)).rgb(), QColor(Qt::white).rgb());
    const QColor light(shot.pixel(250, 37));  // gate 1.25
    QVERIFY2(light.lightness() > 180 && light.lightness() < 255, qPrintable(light.name()));
    QCOMPARE(QColor(shot.pixel(150, 37)).rgb(), light.rgb());  // expert 1: the same gate
    const QColor faint(shot.pixel(350, 137));  // row 1, expert 3: gate 0.25
    QVERIFY2(faint.lightness() > 100 && faint.lightness() < light.lightness(), qPrintable(faint.name()));
    QCOMPARE(QColor(shot.pixel(350, 37)).rgb(), QColor(heatColor(0)).rgb());
    QCOMPARE(QColor(shot.pixel(250, 5)).rgb(), QColor(heatColor(0)).rgb());  // outside the mark
  }

  // The disk's read rate: bytes over the last second of snapshots; per second of reading; zero
  // once snapshots stop (nothing decodes); a reload counting from zero starts over.
  void readRateCoversTheLastSecond() {
    TierMonitor monitor;
    TierData d;
    d.streaming = true;
    auto at = [&](qint64 ms, qint64 mb) {
      d.bytesRead = mb * 1000000;
      monitor.updateAt(d, ms);
    };
    at(0, 0);
    QCOMPARE(monitor.readRate(), 0.0);
    at(500, 50);
    at(1000, 100);
    QCOMPARE(monitor.readRate(), 100e6);
    at(2000, 300);  // the last second: 100 -> 300 MB
    QCOMPARE(monitor.readRate(), 200e6);
    d.readSeconds = 0.5;
    at(2100, 300);
    QCOMPARE(monitor.readThroughput(), 600e6);
    QCOMPARE(monitor.bytesRead(), 300e6);
    QTRY_COMPARE_WITH_TIMEOUT(monitor.readRate(), 0.0, 3000);  // no snapshot for 1.5 s
    d.readSeconds = 0;
    at(9000, 0);  // another model
    at(9500, 10);
    QCOMPARE(monitor.readRate(), 20e6);
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
