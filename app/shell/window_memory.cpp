#include "shell/window_memory.h"

#include <QGuiApplication>
#include <QScreen>
#include <QWindow>
#include <algorithm>

#include "settings/app_settings.h"

namespace strata::app {
namespace {

// Smaller than this is not a window anyone chose to keep (unless the screen is smaller).
constexpr QSize kMinimumSize(640, 400);
// How long a normal geometry must last to be kept (see WindowMemory::pending_).
constexpr int kSettleMs = 500;

qint64 area(const QRect& r) { return r.isEmpty() ? 0 : qint64(r.width()) * r.height(); }

}  // namespace

QRect fitToScreens(const QRect& saved, const QList<QRect>& screens) {
  if (!saved.isValid() || screens.isEmpty()) return saved;
  const QRect* screen = nullptr;
  qint64 overlap = 0;
  for (const QRect& s : screens)
    if (const qint64 a = area(s.intersected(saved)); a > overlap) {
      overlap = a;
      screen = &s;
    }
  const QRect target = screen ? *screen : screens.first();
  const QSize size = saved.size().expandedTo(kMinimumSize).boundedTo(target.size());
  QRect fitted(saved.topLeft(), size);
  if (!screen) fitted.moveCenter(target.center());
  // Wholly on the screen: a window wider than the screen was shrunk to fit above.
  fitted.moveLeft(
      std::clamp(fitted.left(), target.left(), target.x() + target.width() - size.width()));
  fitted.moveTop(
      std::clamp(fitted.top(), target.top(), target.y() + target.height() - size.height()));
  return fitted;
}

QList<QRect> availableScreenGeometries() {
  QList<QRect> screens;
  const QScreen* primary = QGuiApplication::primaryScreen();
  if (primary) screens.append(primary->availableGeometry());
  for (const QScreen* s : QGuiApplication::screens())
    if (s != primary) screens.append(s->availableGeometry());
  return screens;
}

QVariantMap restoredWindowProperties(const AppSettings& settings, const QList<QRect>& screens) {
  QVariantMap properties;
  const QRect geometry = fitToScreens(settings.windowGeometry(), screens);
  if (geometry.isValid()) {
    properties.insert(QStringLiteral("x"), geometry.x());
    properties.insert(QStringLiteral("y"), geometry.y());
    properties.insert(QStringLiteral("width"), geometry.width());
    properties.insert(QStringLiteral("height"), geometry.height());
  }
  if (settings.windowMaximized())
    properties.insert(QStringLiteral("visibility"), QVariant::fromValue(QWindow::Maximized));
  return properties;
}

WindowMemory::WindowMemory(QWindow* window, AppSettings* settings, QObject* parent)
    : QObject(parent), window_(window), settings_(settings) {
  settle_.setSingleShot(true);
  settle_.setInterval(kSettleMs);
  connect(&settle_, &QTimer::timeout, this, &WindowMemory::settle);
  for (auto signal :
       {&QWindow::xChanged, &QWindow::yChanged, &QWindow::widthChanged, &QWindow::heightChanged})
    connect(window_, signal, this, &WindowMemory::track);
  connect(window_, &QWindow::windowStateChanged, this, &WindowMemory::track);
  connect(window_, &QWindow::visibleChanged, this, &WindowMemory::track);
  track();
  settle();  // where it opened has settled
}

void WindowMemory::settle() {
  settle_.stop();
  if (!maximized_ && pending_.isValid()) normal_ = pending_;
}

void WindowMemory::track() {
  if (!window_->isVisible()) return;  // hidden on quit: keep what it looked like when shown
  const Qt::WindowStates states = window_->windowStates();
  if (states & Qt::WindowMinimized) return;  // restored as it was before
  maximized_ = states & (Qt::WindowMaximized | Qt::WindowFullScreen);
  if (maximized_) {
    pending_ = {};  // the geometry that came just before the state was the maximized one
    settle_.stop();
  } else if (window_->geometry() != pending_) {
    pending_ = window_->geometry();
    settle_.start();
  }
}

void WindowMemory::save() {
  if (settle_.isActive()) settle();  // quitting right after a move: it counts
  if (normal_.isValid()) settings_->setWindowGeometry(normal_);
  settings_->setWindowMaximized(maximized_);
}

}  // namespace strata::app
