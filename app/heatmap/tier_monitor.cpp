#include "heatmap/tier_monitor.h"

namespace strata::app {

TierMonitor::TierMonitor(QObject* parent) : QObject(parent) {
  clock_.start();
  idle_.setSingleShot(true);
  idle_.setInterval(kRateIdleMs);
  connect(&idle_, &QTimer::timeout, this, [this] {
    reads_.clear();
    if (readRate_ == 0) return;
    readRate_ = 0;
    emit statsChanged();
  });
}

void TierMonitor::update(const TierData& data) { updateAt(data, clock_.elapsed()); }

void TierMonitor::updateAt(const TierData& data, qint64 msecs) {
  // Another model (or a reload) starts counting again.
  if (data.bytesRead < data_.bytesRead || data.streaming != data_.streaming) reads_.clear();
  data_ = data;
  reads_.emplace_back(msecs, data.bytesRead);
  while (reads_.size() > 2 && reads_[1].first <= msecs - kRateWindowMs) reads_.pop_front();
  const auto& [t0, b0] = reads_.front();
  readRate_ = msecs > t0 ? static_cast<double>(data.bytesRead - b0) * 1000.0 /
                               static_cast<double>(msecs - t0)
                         : 0.0;
  idle_.start();
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
