#include "settings/color_scheme.h"

#include <QEvent>
#include <QGuiApplication>
#include <QPalette>

#include "settings/app_settings.h"

namespace strata::app {
namespace {

// The desktop's window colour; light without a GUI application (no palette to ask).
QColor systemWindowColor() {
  if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance())) return QColor(Qt::white);
  return QGuiApplication::palette().color(QPalette::Window);
}

}  // namespace

bool themeIsDark(const QString& theme, const QColor& systemWindow) {
  if (theme == QLatin1String("dark")) return true;
  if (theme == QLatin1String("light")) return false;
  return systemWindow.lightnessF() < 0.5;
}

ColorScheme::ColorScheme(AppSettings* settings, QObject* parent)
    : QObject(parent), settings_(settings) {
  connect(settings_, &AppSettings::themeChanged, this, &ColorScheme::update);
  // QGuiApplication sends ApplicationPaletteChange to itself when the desktop's palette changes.
  if (QCoreApplication* app = QCoreApplication::instance()) app->installEventFilter(this);
  dark_ = themeIsDark(settings_->theme(), systemWindowColor());
}

bool ColorScheme::eventFilter(QObject* watched, QEvent* event) {
  // A filter on the application sees every object's events: the type is the cheap test.
  if (event->type() == QEvent::ApplicationPaletteChange && watched == QCoreApplication::instance())
    update();
  return QObject::eventFilter(watched, event);
}

void ColorScheme::update() {
  const bool dark = themeIsDark(settings_->theme(), systemWindowColor());
  if (dark == dark_) return;
  dark_ = dark;
  emit darkChanged();
}

}  // namespace strata::app
