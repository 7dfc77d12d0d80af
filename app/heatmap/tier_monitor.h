#pragma once
// What the "Inside the model" panel shows: the latest tier snapshot (for the heatmap and the
// gauges) and the recent decode speed. Updated on the GUI thread from the bridge's signals.
#include <QtQml/qqmlregistration.h>

#include <QObject>

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
  Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY speedChanged)
  Q_PROPERTY(QList<qreal> speedHistory READ speedHistory NOTIFY speedChanged)

 public:
  static constexpr int kHistoryLength = 60;

  explicit TierMonitor(QObject* parent = nullptr);

  void update(const TierData& data);
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
  double tokensPerSecond() const { return speed_; }
  QList<qreal> speedHistory() const { return history_; }

 signals:
  void statsChanged();
  void heatChanged();
  void speedChanged();

 private:
  TierData data_;
  double speed_ = 0;
  QList<qreal> history_;
};

}  // namespace strata::app
