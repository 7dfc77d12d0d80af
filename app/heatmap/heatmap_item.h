#pragma once
// The expert heatmap: layers (rows) x experts (columns), drawn as one small texture (each
// expert a few pixels: heat colour above, tier stripe below) scaled with nearest filtering.
// Cheap enough to update many times a second; works with the software scene graph backend.
#include <QImage>
#include <QPointer>
#include <QQuickItem>
#include <QVariantMap>
#include <QVector>

#include "heatmap/tier_monitor.h"

namespace strata::app {

class HeatmapItem : public QQuickItem {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(strata::app::TierMonitor* monitor READ monitor WRITE setMonitor NOTIFY monitorChanged)
  Q_PROPERTY(int layers READ layers NOTIFY dataChanged)
  Q_PROPERTY(int experts READ experts NOTIFY dataChanged)

 public:
  static constexpr int kRowsPerLayer = 4;  // 3 rows of heat, 1 row of tier

  explicit HeatmapItem(QQuickItem* parent = nullptr);

  TierMonitor* monitor() const { return monitor_; }
  void setMonitor(TierMonitor* monitor);
  int layers() const { return layers_; }
  int experts() const { return experts_; }

  // heat and tiers are [layers x experts]; heat is scaled so the hottest expert is 1.
  void setData(int layers, int experts, const QVector<float>& heat, const QVector<quint8>& tiers);
  const QImage& image() const { return image_; }
  // The cell under a point in item coordinates: {layer, expert, heat, tier} or {} outside.
  Q_INVOKABLE QVariantMap cellAt(qreal x, qreal y) const;

 signals:
  void monitorChanged();
  void dataChanged();

 protected:
  QSGNode* updatePaintNode(QSGNode* old, UpdatePaintNodeData*) override;

 private:
  void pullFromMonitor();

  QPointer<TierMonitor> monitor_;
  int layers_ = 0;
  int experts_ = 0;
  QVector<float> heat_;  // normalized
  QVector<quint8> tiers_;
  QImage image_;
  bool imageChanged_ = false;
};

}  // namespace strata::app
