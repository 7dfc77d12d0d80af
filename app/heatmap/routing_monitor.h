#pragma once
// The routing view's state: the latest tokens (a trail of chips) and which one the heatmap marks
// - the newest, or one the user clicked to hold while the reply goes on. Updated on the GUI
// thread from the bridge's routingData signal.
#include <QtQml/qqmlregistration.h>

#include <QObject>
#include <QStringList>
#include <optional>

#include "bridge/bridge_types.h"
#include "heatmap/token_trail_model.h"

namespace strata::app {

class RoutingMonitor : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")
  Q_PROPERTY(QStringList tokens READ tokens NOTIFY trailChanged)
  // The same tokens as a list model (role "text") that changes by rows, for the chips.
  Q_PROPERTY(QAbstractItemModel* trail READ trail CONSTANT)
  // The trail index of the token the heatmap marks; -1 when a held one has left the trail.
  Q_PROPERTY(int shownIndex READ shownIndex NOTIFY shownChanged)
  Q_PROPERTY(bool following READ following NOTIFY shownChanged)
  Q_PROPERTY(QString shownText READ shownText NOTIFY shownChanged)

 public:
  explicit RoutingMonitor(QObject* parent = nullptr);

  void update(const RoutingData& data);
  // Hold trail[index]'s routing on the heatmap while new tokens arrive.
  Q_INVOKABLE void hold(int index);
  // Mark the newest token again.
  Q_INVOKABLE void follow();

  QStringList tokens() const;
  QAbstractItemModel* trail() { return &trail_; }
  int shownIndex() const;
  bool following() const { return !held_; }
  QString shownText() const;
  // The token the heatmap marks, or nullptr; its experts are [layers() x expertsPerToken()].
  const RoutedTokenData* shown() const;
  const QVector<int>& layers() const { return data_.layers; }
  int expertsPerToken() const { return data_.expertsPerToken; }

 signals:
  void trailChanged();
  void shownChanged();

 private:
  RoutingData data_;
  TokenTrailModel trail_;
  std::optional<RoutedTokenData> held_;
};

}  // namespace strata::app
