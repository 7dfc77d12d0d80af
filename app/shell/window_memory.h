#pragma once
// The main window's size, position and maximized state: saved on quit, restored at start. The
// saved place is fitted to the screens there are now, so a window last shown on a monitor that
// has since been disconnected opens on one that is there.
#include <QList>
#include <QObject>
#include <QRect>
#include <QTimer>
#include <QVariantMap>

class QWindow;

namespace strata::app {

class AppSettings;

// Where a window saved at `saved` opens, given the screens' available geometries (the primary
// first): on the screen it overlaps most, or centred on the primary when it overlaps none; no
// larger than that screen and wholly on it. `saved` as it is when invalid or without screens.
QRect fitToScreens(const QRect& saved, const QList<QRect>& screens);

// The screens' available geometries (without panels and docks), the primary first.
QList<QRect> availableScreenGeometries();

// Main.qml's initial window properties (x, y, width, height, visibility) from the saved state
// fitted to `screens`; empty when nothing was saved.
QVariantMap restoredWindowProperties(const AppSettings& settings, const QList<QRect>& screens);

// Follows a window's normal (not maximized) geometry and its maximized state while it is shown;
// save() writes them to the settings.
class WindowMemory : public QObject {
  Q_OBJECT
 public:
  WindowMemory(QWindow* window, AppSettings* settings, QObject* parent = nullptr);
  void save();
  QRect normalGeometry() const { return normal_; }

 private:
  void track();
  void settle();

  QWindow* window_;
  AppSettings* settings_;
  QRect normal_;
  bool maximized_ = false;
  // A normal geometry is kept once it has settled: window managers report a maximized
  // window's new geometry before or after its new state, so one taken at once could be the
  // maximized one.
  QRect pending_;
  QTimer settle_;
};

}  // namespace strata::app
