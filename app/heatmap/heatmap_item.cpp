#include "heatmap/heatmap_item.h"

#include <QQuickWindow>
#include <QSGSimpleTextureNode>
#include <algorithm>

#include "heatmap/heat_colors.h"

namespace strata::app {

HeatmapItem::HeatmapItem(QQuickItem* parent) : QQuickItem(parent) { setFlag(ItemHasContents); }

void HeatmapItem::setMonitor(TierMonitor* monitor) {
  if (monitor_ == monitor) return;
  if (monitor_) disconnect(monitor_, nullptr, this, nullptr);
  monitor_ = monitor;
  if (monitor_) connect(monitor_, &TierMonitor::heatChanged, this, &HeatmapItem::pullFromMonitor);
  pullFromMonitor();
  emit monitorChanged();
}

void HeatmapItem::pullFromMonitor() {
  if (!monitor_) return;
  const TierData& d = monitor_->data();
  setData(d.layers, d.experts, d.heat, d.tiers);
}

void HeatmapItem::setData(int layers, int experts, const QVector<float>& heat,
                          const QVector<quint8>& tiers) {
  const qsizetype cells = static_cast<qsizetype>(layers) * experts;
  if (layers <= 0 || experts <= 0 || heat.size() != cells) {
    layers = experts = 0;  // nothing (or inconsistent data) to show
  }
  layers_ = layers;
  experts_ = experts;
  heat_ = layers ? heat : QVector<float>();
  tiers_ = layers && tiers.size() == cells ? tiers : QVector<quint8>();
  const float hottest = heat_.isEmpty() ? 0.0f : *std::max_element(heat_.begin(), heat_.end());
  if (hottest > 0)
    for (float& h : heat_) h /= hottest;

  if (!layers_) {
    image_ = QImage();
  } else {
    image_ = QImage(experts_, layers_ * kRowsPerLayer, QImage::Format_RGB32);
    for (int l = 0; l < layers_; ++l) {
      for (int row = 0; row < kRowsPerLayer; ++row) {
        auto* line = reinterpret_cast<QRgb*>(image_.scanLine(l * kRowsPerLayer + row));
        for (int e = 0; e < experts_; ++e) {
          const qsizetype i = static_cast<qsizetype>(l) * experts_ + e;
          const bool stripe = row == kRowsPerLayer - 1 && !tiers_.isEmpty();
          line[e] = stripe ? tierColor(tiers_[i]) : heatColor(heat_[i]);
        }
      }
    }
  }
  imageChanged_ = true;
  update();
  emit dataChanged();
}

QVariantMap HeatmapItem::cellAt(qreal x, qreal y) const {
  if (!layers_ || width() <= 0 || height() <= 0 || x < 0 || y < 0 || x >= width() || y >= height())
    return {};
  const int expert = std::min(experts_ - 1, static_cast<int>(x / width() * experts_));
  const int layer = std::min(layers_ - 1, static_cast<int>(y / height() * layers_));
  const qsizetype i = static_cast<qsizetype>(layer) * experts_ + expert;
  static const char* kTierNames[] = {"disk", "loading", "RAM cache", "pinned"};
  QVariantMap cell{{QStringLiteral("layer"), layer},
                   {QStringLiteral("expert"), expert},
                   {QStringLiteral("heat"), heat_[i]}};
  if (!tiers_.isEmpty() && tiers_[i] < 4)
    cell.insert(QStringLiteral("tier"), QString::fromLatin1(kTierNames[tiers_[i]]));
  return cell;
}

QSGNode* HeatmapItem::updatePaintNode(QSGNode* old, UpdatePaintNodeData*) {
  auto* node = static_cast<QSGSimpleTextureNode*>(old);
  if (image_.isNull() || !window()) {
    delete node;
    return nullptr;
  }
  if (!node) {
    node = new QSGSimpleTextureNode;
    node->setOwnsTexture(true);
    node->setFiltering(QSGTexture::Nearest);
    imageChanged_ = true;
  }
  if (imageChanged_) {
    node->setTexture(window()->createTextureFromImage(image_));  // the node deletes the old one
    imageChanged_ = false;
  }
  node->setRect(boundingRect());
  return node;
}

}  // namespace strata::app
