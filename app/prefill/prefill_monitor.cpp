#include "prefill/prefill_monitor.h"

#include <QLocale>
#include <algorithm>

namespace strata::app {

PrefillMonitor::PrefillMonitor(QObject* parent) : QObject(parent) {}

void PrefillMonitor::start(quint64 id) {
  id_ = id;
  done_ = total_ = 0;
  reading_ = true;
  emit progressChanged();
}

void PrefillMonitor::update(quint64 id, qint64 done, qint64 total) {
  if (id != id_ || !reading_) return;  // another reply's, or this one's prompt is read
  done_ = done;
  total_ = total;
  reading_ = done < total;
  emit progressChanged();
}

void PrefillMonitor::finish(const ReplyOutcome& outcome) {
  if (outcome.id != id_) return;
  setReading(false);
  // Stopped while the prompt was read: no token came, so there is no time to one.
  if (outcome.tokens == 0 || outcome.prefillSeconds <= 0) return;
  timeToFirstTokenMs_ = outcome.prefillSeconds * 1000.0;
  emit timeToFirstTokenChanged();
}

void PrefillMonitor::fail(quint64 id) {
  if (id == id_) setReading(false);
}

void PrefillMonitor::setReading(bool reading) {
  if (reading_ == reading) return;
  reading_ = reading;
  emit progressChanged();
}

double PrefillMonitor::fraction() const {
  return total_ > 0 ? std::clamp(double(done_) / double(total_), 0.0, 1.0) : 0.0;
}

QString PrefillMonitor::progressText() const {
  if (total_ <= 0) return tr("Reading prompt…");
  const QLocale locale;
  return tr("Reading prompt… %1 / %2 tokens").arg(locale.toString(done_), locale.toString(total_));
}

QString PrefillMonitor::timeToFirstTokenText() const {
  // Whole milliseconds, but a tenth below 10 ms (the tiny model's short prompts).
  const int decimals = timeToFirstTokenMs_ < 10 ? 1 : 0;
  return tr("%1 ms").arg(QLocale().toString(timeToFirstTokenMs_, 'f', decimals));
}

}  // namespace strata::app
