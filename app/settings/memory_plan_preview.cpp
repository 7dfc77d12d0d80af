#include "settings/memory_plan_preview.h"

#include <QLocale>
#include <QPromise>
#include <QThreadPool>
#include <exception>
#include <memory>

#include "bridge/load_settings.h"
#include "strata/engine.h"

namespace strata::app {
namespace {

QString size(int64_t bytes) { return QLocale::c().formattedDataSize(bytes, 1); }

QVariantMap row(const QString& name, const QString& value) {
  return {{QStringLiteral("name"), name}, {QStringLiteral("value"), value}};
}

}  // namespace

MemoryPlanPreview::MemoryPlanPreview(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcher<PlanPreview>::finished, this, [this] {
    if (watcher_.future().resultCount() == 0) return;
    preview_ = watcher_.future().result();
    emit changed();
  });
}

void MemoryPlanPreview::refresh(const LoadRequest& request) {
  auto promise = std::make_shared<QPromise<PlanPreview>>();
  QFuture<PlanPreview> future = promise->future();
  promise->start();
  QThreadPool::globalInstance()->start([promise, request] {
    promise->addResult(compute(request));
    promise->finish();
  });
  watcher_.setFuture(future);  // a newer request replaces an older one still running
}

PlanPreview MemoryPlanPreview::compute(const LoadRequest& request) {
  try {
    const EngineSettings settings = engineSettingsFor(request);
    return describe(Engine::plan(std::filesystem::path(request.modelDir.toStdString()), settings),
                    settings.memory);
  } catch (const std::exception& e) {
    return {false, {}, QString::fromStdString(e.what())};
  }
}

PlanPreview MemoryPlanPreview::describe(const MemoryPlan& plan, const MemorySettings& settings) {
  PlanPreview p;
  p.fits = true;
  p.rows.push_back(row(tr("Resident weights"), size(plan.residentBytes)));
  if (plan.streaming) {
    const int sessions = settings.sessions;
    const int64_t context = settings.contextTokens;
    const QString tokens = tr("%1 tokens").arg(QLocale().toString(context));
    const QString who = sessions == 1 ? tr("1 session") : tr("%1 sessions").arg(sessions);
    p.rows.push_back(row(tr("KV cache"), tr("%1 (%2 × %3)").arg(size(plan.kvBytes), tokens, who)));
    p.rows.push_back(row(tr("Scratch"), size(plan.scratchBytes)));
    p.rows.push_back(row(tr("Pinned experts"), size(plan.pinnedBytes)));
    p.rows.push_back(row(tr("Expert cache"), size(plan.cacheBytes)));
    p.rows.push_back(
        row(tr("Total"), tr("%1 of %2").arg(size(plan.totalBytes()), size(plan.budgetBytes))));
    const int64_t held =
        plan.expertBytes > 0 ? (plan.pinnedBytes + plan.cacheBytes) / plan.expertBytes : 0;
    p.summary =
        tr("Experts stream from disk: %1 of %2 fit in memory (%3 %).")
            .arg(QLocale().toString(std::min(held, plan.expertCount)))
            .arg(QLocale().toString(plan.expertCount))
            .arg(plan.expertCount ? 100.0 * std::min(held, plan.expertCount) / plan.expertCount : 0,
                 0, 'f', 1);
  } else {
    p.summary = plan.budgetBytes > 0
                    ? tr("The whole model fits the budget: every expert stays in memory.")
                    : tr("No memory budget: the whole model is loaded, every expert in memory.");
  }
  return p;
}

}  // namespace strata::app
