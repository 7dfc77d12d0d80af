// The main window's place: fitted to the screens there are (a window saved on a monitor that is
// gone, or larger than the screen, opens wholly on one), turned into Main.qml's initial
// properties, and followed while shown so that quitting a maximized window keeps its normal size.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QWindow>

#include "settings/app_settings.h"
#include "shell/window_memory.h"

using namespace strata::app;

namespace {

std::unique_ptr<AppSettings> open(const QString& file) {
  return std::make_unique<AppSettings>(std::make_unique<QSettings>(file, QSettings::IniFormat),
                                       QString());
}

// A 1920x1080 primary (a 40 px panel at the bottom) and a 2560x1440 monitor to its right.
const QRect kPrimary(0, 0, 1920, 1040);
const QRect kRight(1920, 0, 2560, 1440);

}  // namespace

class TestWindowMemory : public QObject {
  Q_OBJECT
 private slots:
  void aWindowOnAScreenStaysWhereItWas() {
    QCOMPARE(fitToScreens(QRect(100, 80, 1360, 820), {kPrimary, kRight}),
             QRect(100, 80, 1360, 820));
    QCOMPARE(fitToScreens(QRect(2200, 300, 1600, 1000), {kPrimary, kRight}),
             QRect(2200, 300, 1600, 1000));
  }

  void aWindowOnARemovedMonitorOpensCentredOnThePrimary() {
    // Saved on the right-hand monitor, which is now disconnected.
    const QRect fitted = fitToScreens(QRect(2200, 300, 1600, 1000), {kPrimary});
    QCOMPARE(fitted.size(), QSize(1600, 1000));
    QCOMPARE(fitted.center(), kPrimary.center());
    QVERIFY(kPrimary.contains(fitted));
    // Saved left of everything (a monitor that was on the left).
    QVERIFY(kPrimary.contains(fitToScreens(QRect(-1700, 200, 1200, 800), {kPrimary, kRight})));
  }

  void aWindowLargerThanItsScreenShrinksToIt() {
    // Saved on the big monitor at nearly its size, now on the smaller one only.
    QCOMPARE(fitToScreens(QRect(1920, 0, 2500, 1400), {kPrimary}), kPrimary);
    // Partly off the bottom-right edge of the screen it is mostly on: moved back onto it.
    QCOMPARE(fitToScreens(QRect(1000, 600, 1360, 820), {kPrimary}), QRect(560, 220, 1360, 820));
    // Mostly on the right-hand monitor, sticking out above it: onto that monitor, not the primary.
    QCOMPARE(fitToScreens(QRect(2400, -100, 1360, 820), {kPrimary, kRight}),
             QRect(2400, 0, 1360, 820));
  }

  void aTinyWindowGrowsToAUsableSize() {
    QCOMPARE(fitToScreens(QRect(50, 50, 120, 90), {kPrimary}), QRect(50, 50, 640, 400));
    // But never past a small screen.
    QCOMPARE(fitToScreens(QRect(0, 0, 120, 90), {QRect(0, 0, 600, 380)}), QRect(0, 0, 600, 380));
  }

  void nothingSavedOrNoScreensIsLeftAlone() {
    QVERIFY(!fitToScreens(QRect(), {kPrimary}).isValid());
    QCOMPARE(fitToScreens(QRect(10, 10, 800, 600), {}), QRect(10, 10, 800, 600));
  }

  void savedPlaceBecomesInitialProperties() {
    QTemporaryDir dir;
    auto s = open(dir.filePath(QStringLiteral("s.ini")));
    QVERIFY(restoredWindowProperties(*s, {kPrimary}).isEmpty());  // first run: Main.qml's size

    s->setWindowGeometry(QRect(2200, 300, 1600, 1000));  // on a monitor that is gone
    s->setWindowMaximized(true);
    const QVariantMap p = restoredWindowProperties(*s, {kPrimary});
    const QRect opened(p.value(QStringLiteral("x")).toInt(), p.value(QStringLiteral("y")).toInt(),
                       p.value(QStringLiteral("width")).toInt(),
                       p.value(QStringLiteral("height")).toInt());
    QVERIFY2(kPrimary.contains(opened), qPrintable(QStringLiteral("%1,%2 %3x%4")
                                                       .arg(opened.x())
                                                       .arg(opened.y())
                                                       .arg(opened.width())
                                                       .arg(opened.height())));
    QCOMPARE(p.value(QStringLiteral("visibility")).value<QWindow::Visibility>(),
             QWindow::Maximized);
  }

  // Window managers report a maximized window's new state and its new geometry in either
  // order: the normal geometry saved is the one before, either way.
  void quittingMaximizedKeepsTheNormalGeometry_data() {
    QTest::addColumn<bool>("geometryFirst");
    QTest::newRow("state first") << false;
    QTest::newRow("geometry first") << true;
  }
  void quittingMaximizedKeepsTheNormalGeometry() {
    QFETCH(bool, geometryFirst);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("s.ini"));
    auto s = open(file);
    QWindow window;
    window.setGeometry(100, 120, 640, 480);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    WindowMemory memory(&window, s.get());
    QCOMPARE(memory.normalGeometry(), window.geometry());  // where it opened
    const QRect normal(150, 130, 700, 500);
    window.setGeometry(normal);  // moved and resized by the user
    QTRY_COMPARE(memory.normalGeometry(), normal);

    if (geometryFirst) {
      QSignalSpy resized(&window, &QWindow::widthChanged);
      window.setGeometry(0, 0, 800, 600);  // the screen's whole area, then the state
      QVERIFY(resized.wait(2000));
      window.setWindowStates(Qt::WindowMaximized);
    } else {
      window.showMaximized();  // here the state comes first, the offscreen geometry after it
    }
    QTRY_VERIFY(window.windowStates() & Qt::WindowMaximized);
    QTRY_VERIFY(window.geometry() != normal);
    QTest::qWait(600);  // longer than a geometry takes to settle
    memory.save();
    QCOMPARE(s->windowGeometry(), normal);
    QCOMPARE(s->windowMaximized(), true);

    window.showNormal();
    QTRY_VERIFY(!(window.windowStates() & Qt::WindowMaximized));
    QSignalSpy moved(&window, &QWindow::xChanged);
    window.setGeometry(200, 140, 900, 600);
    QTRY_VERIFY(!moved.isEmpty() && moved.last().first().toInt() == 200);
    window.hide();  // hidden on quit right after a resize: what it was while shown counts
    memory.save();
    QCOMPARE(open(file)->windowMaximized(), false);
    QCOMPARE(open(file)->windowGeometry(), QRect(200, 140, 900, 600));
  }
};

QTEST_MAIN(TestWindowMemory)
#include "test_window_memory.moc"
