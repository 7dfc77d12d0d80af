#include "heatmap/tier_monitor.h"

namespace strata::app {

TierMonitor::TierMonitor(QObject* parent) : QObject(parent) {}

void TierMonitor::update(const TierData& data) {
  data_ = data;
  emit statsChanged();
  emit heatChanged();
}

void TierMonitor::addSpeedSample(double tokensPerSecond) {
  speed_ = tokensPerSecond;
  history_.append(tokensPerSecond);
  if (history_.size() > kHistoryLength) history_.removeFirst();
  emit speedChanged();
}

}  // namespace strata::app
