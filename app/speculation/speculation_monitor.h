#pragma once
// What the Inside panel's "Speculative decoding" block shows: per drafter its state, first-token
// acceptance and measured speed-up (from the bridge's speculation stats), and the last reply's
// tokens per forward pass. Values are formatted here, so the QML only lays them out.
#include <QtQml/qqmlregistration.h>

#include <QObject>
#include <QVariantList>

#include "bridge/bridge_types.h"

namespace strata::app {

class SpeculationMonitor : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")
  // One map per drafter: name, label, state ("on", "paused", "off"), stateText (the state
  // shown: "on · depth 2" for the MTP chain, "on · up to 8" for n-grams), acceptance and speedup
  // (numbers, -1: unknown) and their texts ("83 %", "×1.23", "—").
  Q_PROPERTY(QVariantList drafters READ drafters NOTIFY statsChanged)
  Q_PROPERTY(bool hasLastReply READ hasLastReply NOTIFY lastReplyChanged)
  Q_PROPERTY(double lastTokensPerPass READ lastTokensPerPass NOTIFY lastReplyChanged)
  Q_PROPERTY(QString lastTokensPerPassText READ lastTokensPerPassText NOTIFY lastReplyChanged)
  Q_PROPERTY(qint64 lastDrafted READ lastDrafted NOTIFY lastReplyChanged)
  Q_PROPERTY(qint64 lastAccepted READ lastAccepted NOTIFY lastReplyChanged)

 public:
  explicit SpeculationMonitor(QObject* parent = nullptr);

  void update(const SpeculationData& data);
  void setLastReply(const ReplyOutcome& outcome);
  const SpeculationData& data() const { return data_; }

  QVariantList drafters() const;
  bool hasLastReply() const { return lastForwards_ > 0; }
  double lastTokensPerPass() const { return lastTokensPerPass_; }
  QString lastTokensPerPassText() const;
  qint64 lastDrafted() const { return lastDrafted_; }
  qint64 lastAccepted() const { return lastAccepted_; }

  // "on": proposing drafts; "paused": self-tuning switched it off for now; "off": by setting.
  static QString stateOf(const DrafterData& d);
  // The state; with the draft length in use: "on · depth 2" (MTP chain), "on · up to 8" (n-grams).
  static QString stateText(const DrafterData& d);
  static QString acceptanceText(const DrafterData& d);  // "83 %", "—" before its first round
  static QString speedupText(const DrafterData& d);     // "×1.23", "—" while unmeasured

 signals:
  void statsChanged();
  void lastReplyChanged();

 private:
  SpeculationData data_;
  qint64 lastForwards_ = 0;
  qint64 lastDrafted_ = 0;
  qint64 lastAccepted_ = 0;
  double lastTokensPerPass_ = 0;
};

}  // namespace strata::app
