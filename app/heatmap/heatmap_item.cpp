#include "heatmap/heatmap_item.h"

#include <QQuickWindow>
#include <QSGSimpleRectNode>
#include <QSGSimpleTextureNode>
#include <algorithm>
#include <iterator>

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

void HeatmapItem::setRouting(RoutingMonitor* routing) {
  if (routing_ == routing) return;
  if (routing_) disconnect(routing_, nullptr, this, nullptr);
  routing_ = routing;
  if (routing_) connect(routing_, &RoutingMonitor::shownChanged, this, &HeatmapItem::pullRouting);
  pullRouting();
  emit routingChanged();
}

void HeatmapItem::pullFromMonitor() {
  if (!monitor_) return;
  const TierData& d = monitor_->data();
  layerIds_ = d.layerIds;
  // Without streaming every expert is in RAM: no tier stripe to tell them apart.
  setData(d.layers, d.experts, d.heat, d.streaming ? d.tiers : QVector<quint8>());
}

void HeatmapItem::pullRouting() {
  QVector<Mark> marks;
  const RoutedTokenData* token = routing_ ? routing_->shown() : nullptr;
  const int perToken = routing_ ? routing_->expertsPerToken() : 0;
  if (token && layers_ && perToken > 0) {
    const QVector<int>& layers = routing_->layers();
    for (int k = 0; k < layers.size() && (k + 1) * perToken <= token->experts.size(); ++k) {
      // The heatmap's rows may be another list of layers (a container's include the MTP layer).
      const int row = layerIds_.isEmpty() ? k : static_cast<int>(layerIds_.indexOf(layers[k]));
      if (row < 0 || row >= layers_) continue;
      for (int i = 0; i < perToken; ++i) {
        const int expert = token->experts[k * perToken + i];
        if (expert >= 0 && expert < experts_)
          marks.push_back({row, expert, token->weights.value(k * perToken + i), i});
      }
    }
  }
  if (marks == marks_) return;
  marks_ = std::move(marks);
  marksChanged_ = true;
  update();
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
  pullRouting();  // the rows may be other layers now
  update();
  emit dataChanged();
}

QVariantMap HeatmapItem::cellAt(qreal x, qreal y) const {
  if (!layers_ || width() <= 0 || height() <= 0 || x < 0 || y < 0 || x >= width() || y >= height())
    return {};
  const int expert = std::min(experts_ - 1, static_cast<int>(x / width() * experts_));
  const int layer = std::min(layers_ - 1, static_cast<int>(y / height() * layers_));
  const qsizetype i = static_cast<qsizetype>(layer) * experts_ + expert;
  static const char* kTierNames[] = {"disk", "loading", "RAM cache", "pinned", "page cache"};
  QVariantMap cell{{QStringLiteral("layer"), layerIds_.size() == layers_ ? layerIds_[layer] : layer},
                   {QStringLiteral("expert"), expert},
                   {QStringLiteral("heat"), heat_[i]}};
  if (!tiers_.isEmpty() && tiers_[i] < std::size(kTierNames))
    cell.insert(QStringLiteral("tier"), QString::fromLatin1(kTierNames[tiers_[i]]));
  for (const Mark& m : marks_)
    if (m.row == layer && m.expert == expert) {
      cell.insert(QStringLiteral("weight"), m.weight);
      cell.insert(QStringLiteral("rank"), m.rank + 1);
      cell.insert(QStringLiteral("token"), routing_ ? routing_->shownText() : QString());
    }
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
  if (node->rect() != boundingRect() || marksChanged_) {
    // The marks are the texture node's children (drawn over it), rebuilt when they change.
    while (QSGNode* child = node->firstChild()) {
      node->removeChildNode(child);
      delete child;
    }
    if (QSGNode* marks = markNodes()) node->appendChildNode(marks);
    marksChanged_ = false;
  }
  node->setRect(boundingRect());
  return node;
}

QSGNode* HeatmapItem::markNodes() const {
  if (marks_.isEmpty() || !layers_) return nullptr;
  const float top =
      std::max_element(marks_.begin(), marks_.end(), [](const Mark& a, const Mark& b) {
        return a.weight < b.weight;
      })->weight;
  const qreal cellW = width() / experts_;
  const qreal cellH = height() / layers_;
  const qreal heatH = cellH * (kRowsPerLayer - 1) / kRowsPerLayer;  // above the tier stripe
  // A light square, on a dark rim where cells are big enough for one (it reads on every heat
  // colour); at least 2 px where cells are tiny (GLM-5: 256 experts in ~300 px).
  const qreal side = std::max<qreal>(2.0, 0.55 * std::min(cellW, heatH));
  const qreal rim = side >= 4 ? 1.0 : 0.0;
  auto* group = new QSGNode;
  for (const Mark& m : marks_) {
    const QRectF square((m.expert + 0.5) * cellW - side / 2, m.row * cellH + (heatH - side) / 2,
                        side, side);
    const qreal alpha = top > 0 ? 0.55 + 0.45 * std::clamp(m.weight / top, 0.0f, 1.0f) : 1.0;
    if (rim > 0)
      group->appendChildNode(
          new QSGSimpleRectNode(square.adjusted(-rim, -rim, rim, rim), QColor(16, 18, 26, 230)));
    group->appendChildNode(new QSGSimpleRectNode(square, QColor::fromRgbF(1, 1, 1, alpha)));
  }
  return group;
}

}  // namespace strata::app
