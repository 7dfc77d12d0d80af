#pragma once
// What the "Inside the model" panel shows: the latest tier snapshot (for the heatmap and the
// gauges), the disk's read rate and the recent decode speed. Updated on the GUI thread from the
// bridge's signals.
#include <QtQml/qqmlregistration.h>

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <deque>

#include "bridge/bridge_types.h"

namespace strata::app {

class TierMonitor : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")
  Q_PROPERTY(bool streaming READ streaming NOTIFY statsChanged)
  Q_PROPERTY(bool hasHeat READ hasHeat NOTIFY heatChanged)
  Q_PROPERTY(double hitRate READ hitRate NOTIFY statsChanged)
  Q_PROPERTY(double pinnedBytes READ pinnedBytes NOTIFY statsChanged)
  Q_PROPERTY(double pinnedBudget READ pinnedBudget NOTIFY statsChanged)
  Q_PROPERTY(double cacheBytes READ cacheBytes NOTIFY statsChanged)
  Q_PROPERTY(double cacheBudget READ cacheBudget NOTIFY statsChanged)
  Q_PROPERTY(double residentBytes READ residentBytes NOTIFY statsChanged)
  // Expert bytes the OS page cache holds (estimated), of the model's expert bytes; -1: unknown.
  Q_PROPERTY(double pageCacheBytes READ pageCacheBytes NOTIFY statsChanged)
  Q_PROPERTY(double pageCacheTotal READ pageCacheTotal NOTIFY statsChanged)
  // Expert bytes read from disk per second over the last second (0 once nothing was read for a
  // while), per second of reading (the disk's speed as the reads see it), and in all.
  Q_PROPERTY(double readRate READ readRate NOTIFY statsChanged)
  Q_PROPERTY(double readThroughput READ readThroughput NOTIFY statsChanged)
  Q_PROPERTY(double bytesRead READ bytesRead NOTIFY statsChanged)
  // The open chat's KV cache: tokens, bytes, and the plan's reservation for one conversation.
  Q_PROPERTY(double kvTokens READ kvTokens NOTIFY statsChanged)
  Q_PROPERTY(double kvBytes READ kvBytes NOTIFY statsChanged)
  Q_PROPERTY(double kvReservedBytes READ kvReservedBytes NOTIFY statsChanged)
  Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY speedChanged)
  Q_PROPERTY(QList<qreal> speedHistory READ speedHistory NOTIFY speedChanged)

 public:
  static constexpr int kHistoryLength = 60;
  static constexpr qint64 kRateWindowMs = 1000;
  static constexpr qint64 kRateIdleMs = 1500;  // no snapshot for this long: nothing is read

  explicit TierMonitor(QObject* parent = nullptr);

  void update(const TierData& data);
  // As update(), at `msecs` on a monotonic clock (tests give the times).
  void updateAt(const TierData& data, qint64 msecs);
  void addSpeedSample(double tokensPerSecond);
  const TierData& data() const { return data_; }

  bool streaming() const { return data_.streaming; }
  bool hasHeat() const { return data_.layers > 0 && data_.experts > 0; }
  double hitRate() const { return data_.hitRate; }
  double pinnedBytes() const { return static_cast<double>(data_.pinnedBytes); }
  double pinnedBudget() const { return static_cast<double>(data_.pinnedBudget); }
  double cacheBytes() const { return static_cast<double>(data_.cacheBytes); }
  double cacheBudget() const { return static_cast<double>(data_.cacheBudget); }
  double residentBytes() const { return static_cast<double>(data_.residentBytes); }
  double pageCacheBytes() const { return static_cast<double>(data_.pageCacheBytes); }
  double pageCacheTotal() const { return static_cast<double>(data_.pageCacheTotal); }
  double readRate() const { return readRate_; }
  double readThroughput() const {
    return data_.readSeconds > 0 ? static_cast<double>(data_.bytesRead) / data_.readSeconds : 0.0;
  }
  double bytesRead() const { return static_cast<double>(data_.bytesRead); }
  double kvTokens() const { return static_cast<double>(data_.kvTokens); }
  double kvBytes() const { return static_cast<double>(data_.kvBytes); }
  double kvReservedBytes() const { return static_cast<double>(data_.kvReservedBytes); }
  double tokensPerSecond() const { return speed_; }
  QList<qreal> speedHistory() const { return history_; }

 signals:
  void statsChanged();
  void heatChanged();
  void speedChanged();

 private:
  TierData data_;
  std::deque<std::pair<qint64, qint64>> reads_;  // (msecs, bytesRead) of the last second
  double readRate_ = 0;
  QElapsedTimer clock_;
  QTimer idle_;  // zeroes the read rate when snapshots stop (decoding ended)
  double speed_ = 0;
  QList<qreal> history_;
};

}  // namespace strata::app
