#pragma once
// Gathers streamed text and releases it at most once per interval, so the GUI thread gets a
// few deltas a second instead of one queued signal per token.
#include <QElapsedTimer>
#include <QString>

namespace strata::app {

class TextCoalescer {
 public:
  explicit TextCoalescer(int intervalMs = 50) : intervalMs_(intervalMs) {}

  // Adds text; returns true when enough time has passed that take() should be delivered now.
  bool add(const QString& text);
  // Everything gathered since the last take(), and starts a new interval.
  QString take();
  bool isEmpty() const { return pending_.isEmpty(); }

 private:
  int intervalMs_;
  QString pending_;
  QElapsedTimer sinceTake_;
};

}  // namespace strata::app
