#include "shell/screenshot.h"

#include <QCoreApplication>
#include <QImage>
#include <QTimer>
#include <cstdio>

namespace strata::app {

void scheduleScreenshot(QQuickWindow* window, const QString& file, int afterMs) {
  QTimer::singleShot(afterMs, window, [window, file] {
    const QImage image = window->grabWindow();
    const bool saved = !image.isNull() && image.save(file, "PNG");
    if (!saved)
      std::fprintf(stderr, "strata: could not write the screenshot to %s\n", qPrintable(file));
    QCoreApplication::exit(saved ? 0 : 1);
  });
}

}  // namespace strata::app
