#include "heatmap/routing_monitor.h"

namespace strata::app {

RoutingMonitor::RoutingMonitor(QObject* parent) : QObject(parent) {}

void RoutingMonitor::update(const RoutingData& data) {
  if (data == data_) return;
  const RoutedTokenData* before = shown();
  const std::optional<RoutedTokenData> shownBefore = before ? std::optional(*before) : std::nullopt;
  const bool trailMoved = data.trail != data_.trail;
  data_ = data;
  const RoutedTokenData* after = shown();
  const bool shownMoved =
      shownBefore.has_value() != (after != nullptr) || (after && !(*shownBefore == *after));
  if (trailMoved) {
    QList<TokenTrailModel::Token> tokens;
    for (const RoutedTokenData& t : data_.trail) tokens.push_back({t.text, t.step, t.position});
    trail_.update(tokens);
    emit trailChanged();
  }
  if (trailMoved || shownMoved) emit shownChanged();  // a held token's index moves with the trail
}

void RoutingMonitor::hold(int index) {
  if (index < 0 || index >= data_.trail.size()) return;
  if (index == data_.trail.size() - 1 && !held_) return;  // the newest is shown already
  held_ = data_.trail[index];
  emit shownChanged();
}

void RoutingMonitor::follow() {
  if (!held_) return;
  held_.reset();
  emit shownChanged();
}

QStringList RoutingMonitor::tokens() const {
  QStringList out;
  for (const RoutedTokenData& t : data_.trail) out.push_back(t.text);
  return out;
}

int RoutingMonitor::shownIndex() const {
  if (!held_) return static_cast<int>(data_.trail.size()) - 1;
  return static_cast<int>(data_.trail.indexOf(*held_));
}

const RoutedTokenData* RoutingMonitor::shown() const {
  if (held_) return &*held_;
  return data_.trail.isEmpty() ? nullptr : &data_.trail.back();
}

QString RoutingMonitor::shownText() const {
  const RoutedTokenData* t = shown();
  return t ? t->text : QString();
}

}  // namespace strata::app
