#pragma once
// What the Inside panel shows about reading the prompt: progress while a reply's prompt is
// evaluated (prefill), then the last reply's time to first token as the engine measured it
// (GenerateResult::prefillSeconds). Updated on the GUI thread from the bridge's signals.
#include <QtQml/qqmlregistration.h>

#include <QObject>

#include "bridge/bridge_types.h"

namespace strata::app {

class PrefillMonitor : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")
  Q_PROPERTY(bool reading READ reading NOTIFY progressChanged)
  // done / total, 0 before the first chunk is in.
  Q_PROPERTY(double fraction READ fraction NOTIFY progressChanged)
  // "Reading prompt… 1,234 / 3,412 tokens"
  Q_PROPERTY(QString progressText READ progressText NOTIFY progressChanged)
  Q_PROPERTY(bool hasTimeToFirstToken READ hasTimeToFirstToken NOTIFY timeToFirstTokenChanged)
  Q_PROPERTY(QString timeToFirstTokenText READ timeToFirstTokenText NOTIFY timeToFirstTokenChanged)

 public:
  explicit PrefillMonitor(QObject* parent = nullptr);

  // The bridge's replyStarted, prefillProgress, replyFinished and replyFailed.
  void start(quint64 id);
  void update(quint64 id, qint64 done, qint64 total);
  void finish(const ReplyOutcome& outcome);
  void fail(quint64 id);

  bool reading() const { return reading_; }
  qint64 done() const { return done_; }
  qint64 total() const { return total_; }
  double fraction() const;
  QString progressText() const;
  double timeToFirstTokenMs() const { return timeToFirstTokenMs_; }  // 0: no reply yet
  bool hasTimeToFirstToken() const { return timeToFirstTokenMs_ > 0; }
  QString timeToFirstTokenText() const;  // "412 ms"

 signals:
  void progressChanged();
  void timeToFirstTokenChanged();

 private:
  void setReading(bool reading);

  quint64 id_ = 0;  // the reply being followed
  bool reading_ = false;
  qint64 done_ = 0;
  qint64 total_ = 0;
  double timeToFirstTokenMs_ = 0;
};

}  // namespace strata::app
