#pragma once
// The expert heatmap: layers (rows) x experts (columns), drawn as one small texture (each
// expert a few pixels: heat colour above, tier stripe below) scaled with nearest filtering.
// The routing view marks the experts one token chose (RoutingMonitor::shown) with a square per
// cell, more opaque for a larger gate weight. Cheap enough to update many times a second;
// works with the software scene graph backend (a texture and rectangles only).
#include <QImage>
#include <QPointer>
#include <QQuickItem>
#include <QVariantMap>
#include <QVector>

#include "heatmap/routing_monitor.h"
#include "heatmap/tier_monitor.h"

namespace strata::app {

class HeatmapItem : public QQuickItem {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(strata::app::TierMonitor* monitor READ monitor WRITE setMonitor NOTIFY monitorChanged)
  Q_PROPERTY(strata::app::RoutingMonitor* routing READ routing WRITE setRouting NOTIFY routingChanged)
  Q_PROPERTY(int layers READ layers NOTIFY dataChanged)
  Q_PROPERTY(int experts READ experts NOTIFY dataChanged)

 public:
  static constexpr int kRowsPerLayer = 4;  // 3 rows of heat, 1 row of tier

  // An expert the shown token chose: its cell, gate weight and rank in its layer (0: largest).
  struct Mark {
    int row = 0;
    int expert = 0;
    float weight = 0;
    int rank = 0;
    bool operator==(const Mark&) const = default;
  };

  explicit HeatmapItem(QQuickItem* parent = nullptr);

  TierMonitor* monitor() const { return monitor_; }
  void setMonitor(TierMonitor* monitor);
  RoutingMonitor* routing() const { return routing_; }
  void setRouting(RoutingMonitor* routing);
  const QVector<Mark>& marks() const { return marks_; }
  int layers() const { return layers_; }
  int experts() const { return experts_; }

  // heat and tiers are [layers x experts]; heat is scaled so the hottest expert is 1.
  void setData(int layers, int experts, const QVector<float>& heat, const QVector<quint8>& tiers);
  const QImage& image() const { return image_; }
  // The cell under a point in item coordinates: {layer, expert, heat, tier} or {} outside;
  // a marked cell adds {weight, rank (1 = largest gate), token}. `layer` is the model's layer
  // index when the monitor names the rows, else the row.
  Q_INVOKABLE QVariantMap cellAt(qreal x, qreal y) const;

 signals:
  void monitorChanged();
  void routingChanged();
  void dataChanged();

 protected:
  QSGNode* updatePaintNode(QSGNode* old, UpdatePaintNodeData*) override;

 private:
  void pullFromMonitor();
  void pullRouting();  // marks_ from the routing monitor's shown token
  QSGNode* markNodes() const;

  QPointer<TierMonitor> monitor_;
  QPointer<RoutingMonitor> routing_;
  QVector<int> layerIds_;  // the model's layer index of each row (empty: unknown)
  QVector<Mark> marks_;
  bool marksChanged_ = false;
  int layers_ = 0;
  int experts_ = 0;
  QVector<float> heat_;  // normalized
  QVector<quint8> tiers_;
  QImage image_;
  bool imageChanged_ = false;
};

}  // namespace strata::app
