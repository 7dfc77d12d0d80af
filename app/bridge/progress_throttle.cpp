#include "bridge/progress_throttle.h"

namespace strata::app {

bool ProgressThrottle::allow(qint64 done, qint64 total, qint64 nowMs) {
  if (done < total && lastMs_ >= 0 && nowMs - lastMs_ < intervalMs_) return false;
  lastMs_ = nowMs;
  return true;
}

}  // namespace strata::app
