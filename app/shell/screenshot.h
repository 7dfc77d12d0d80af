#pragma once
// Screenshot mode: grab the window after a delay, save it as PNG and quit (exit code 1 if the
// image could not be written).
#include <QQuickWindow>
#include <QString>

namespace strata::app {

void scheduleScreenshot(QQuickWindow* window, const QString& file, int afterMs);

}  // namespace strata::app
