#pragma once
// Lets progress reports through at most once per interval, but always the first and the last
// (done == total): the bar appears at once, moves a few times a second and always ends full,
// without a queued signal per prefill chunk.
#include <QtGlobal>

namespace strata::app {

class ProgressThrottle {
 public:
  explicit ProgressThrottle(qint64 intervalMs) : intervalMs_(intervalMs) {}

  // `nowMs`: a steady clock's reading. True when this report should be sent.
  bool allow(qint64 done, qint64 total, qint64 nowMs);

 private:
  qint64 intervalMs_;
  qint64 lastMs_ = -1;  // when the last report went out; -1: none yet
};

}  // namespace strata::app
