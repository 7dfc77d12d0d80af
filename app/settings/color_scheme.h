#pragma once
// Whether the app draws in its dark or its light palette: the theme setting, or for "system"
// the desktop's scheme. Qt 6.4 has no QStyleHints::colorScheme (it arrived in 6.5), so the
// desktop's scheme is read from the application palette instead: a dark window colour means a
// dark desktop, and the palette's change event follows the desktop switching schemes (where the
// platform theme reports it; a desktop whose palette does not change reads as light).
#include <QtQml/qqmlregistration.h>

#include <QColor>
#include <QObject>

namespace strata::app {

class AppSettings;

// `theme` is the setting ("system", "light", "dark"); `systemWindow` the desktop's window colour.
bool themeIsDark(const QString& theme, const QColor& systemWindow);

class ColorScheme : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")
  Q_PROPERTY(bool dark READ dark NOTIFY darkChanged)

 public:
  explicit ColorScheme(AppSettings* settings, QObject* parent = nullptr);

  bool dark() const { return dark_; }

 signals:
  void darkChanged();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void update();

  AppSettings* settings_;
  bool dark_ = true;
};

}  // namespace strata::app
