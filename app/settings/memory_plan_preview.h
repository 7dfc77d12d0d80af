#pragma once
// The memory plan Settings shows before a model is (re)loaded: what Engine::plan() computes for
// the settings as they stand - resident weights, KV cache, scratch, pinned experts, expert cache
// - or why the budget cannot work. Planned on a pool thread (it reads the model's headers);
// the newest request's answer wins.
#include <QtQml/qqmlregistration.h>

#include <QFutureWatcher>
#include <QObject>
#include <QVariantList>

#include "bridge/bridge_types.h"
#include "strata/tiers.h"

namespace strata::app {

struct PlanPreview {
  bool fits = false;
  QVariantList rows;  // {name, value} maps, in plan order, the total last
  QString summary;    // one sentence: streaming or not, or the error
};

class MemoryPlanPreview : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")
  Q_PROPERTY(bool fits READ fits NOTIFY changed)
  Q_PROPERTY(QVariantList rows READ rows NOTIFY changed)
  Q_PROPERTY(QString summary READ summary NOTIFY changed)

 public:
  explicit MemoryPlanPreview(QObject* parent = nullptr);

  void refresh(const LoadRequest& request);
  // The plan of `request`, now, on this thread.
  static PlanPreview compute(const LoadRequest& request);
  // The rows shown for `plan`, computed from `settings`.
  static PlanPreview describe(const MemoryPlan& plan, const MemorySettings& settings);

  bool fits() const { return preview_.fits; }
  QVariantList rows() const { return preview_.rows; }
  QString summary() const { return preview_.summary; }

 signals:
  void changed();

 private:
  QFutureWatcher<PlanPreview> watcher_;
  PlanPreview preview_;
};

}  // namespace strata::app
