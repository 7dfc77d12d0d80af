#include "speculation/speculation_monitor.h"

#include <QVariantMap>

namespace strata::app {
namespace {

const QString kUnknown = QStringLiteral("—");

QString labelOf(const QString& name) {
  if (name == QLatin1String("mtp")) return SpeculationMonitor::tr("MTP head");
  if (name == QLatin1String("ngram")) return SpeculationMonitor::tr("N-grams");
  if (name == QLatin1String("grammar")) return SpeculationMonitor::tr("Grammar");
  return name;
}

}  // namespace

SpeculationMonitor::SpeculationMonitor(QObject* parent) : QObject(parent) {}

void SpeculationMonitor::update(const SpeculationData& data) {
  if (data == data_) return;  // published ten times a second, mostly unchanged
  data_ = data;
  emit statsChanged();
}

void SpeculationMonitor::setLastReply(const ReplyOutcome& outcome) {
  lastForwards_ = outcome.forwards;
  lastDrafted_ = outcome.drafted;
  lastAccepted_ = outcome.accepted;
  lastTokensPerPass_ = outcome.tokensPerPass;
  emit lastReplyChanged();
}

QString SpeculationMonitor::stateOf(const DrafterData& d) {
  if (d.mode == QLatin1String("off")) return QStringLiteral("off");
  return d.active ? QStringLiteral("on") : QStringLiteral("paused");
}

QString SpeculationMonitor::stateText(const DrafterData& d) {
  const QString state = stateOf(d);
  if (state != QLatin1String("on") || d.depth <= 0) return state;
  // The MTP head drafts a chain of that depth; n-grams copy up to that many tokens.
  if (d.name == QLatin1String("mtp")) return tr("on · depth %1").arg(d.depth);
  return tr("on · up to %1").arg(d.depth);
}

QString SpeculationMonitor::acceptanceText(const DrafterData& d) {
  if (d.rounds <= 0) return kUnknown;
  return QStringLiteral("%1 %").arg(qRound(d.acceptance * 100.0));
}

QString SpeculationMonitor::speedupText(const DrafterData& d) {
  if (d.speedup <= 0) return kUnknown;
  return QStringLiteral("×%1").arg(d.speedup, 0, 'f', 2);
}

QString SpeculationMonitor::lastTokensPerPassText() const {
  return hasLastReply() ? QString::number(lastTokensPerPass_, 'f', 2) : kUnknown;
}

QVariantList SpeculationMonitor::drafters() const {
  QVariantList out;
  for (const DrafterData& d : data_.drafters) {
    QVariantMap m;
    m[QStringLiteral("name")] = d.name;
    m[QStringLiteral("label")] = labelOf(d.name);
    m[QStringLiteral("state")] = stateOf(d);
    m[QStringLiteral("stateText")] = stateText(d);
    m[QStringLiteral("rounds")] = d.rounds;
    m[QStringLiteral("acceptance")] = d.rounds > 0 ? d.acceptance : -1.0;
    m[QStringLiteral("acceptanceText")] = acceptanceText(d);
    m[QStringLiteral("speedup")] = d.speedup > 0 ? d.speedup : -1.0;
    m[QStringLiteral("speedupText")] = speedupText(d);
    out.append(m);
  }
  return out;
}

}  // namespace strata::app
