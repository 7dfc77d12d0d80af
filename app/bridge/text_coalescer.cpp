#include "bridge/text_coalescer.h"

namespace strata::app {

bool TextCoalescer::add(const QString& text) {
  pending_ += text;
  // The first text after a pause goes out at once: the user sees the reply start.
  return !sinceTake_.isValid() || sinceTake_.elapsed() >= intervalMs_;
}

QString TextCoalescer::take() {
  sinceTake_.start();
  QString out;
  out.swap(pending_);
  return out;
}

}  // namespace strata::app
