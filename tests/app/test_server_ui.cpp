// The API server from the app's side: with "serverEnabled" saved, a start serves once the
// model is loaded; the Settings dialog's switch starts and stops it live, its status line says
// where it listens, and a port in use shows the error in the theme's error colour.
#include <QColor>
#include <QDir>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQmlExtensionPlugin>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include "bridge/engine_bridge.h"
#include "local_http.h"
#include "settings/app_settings.h"
#include "shell/app_controller.h"

Q_IMPORT_QML_PLUGIN(Strata_CorePlugin)
Q_IMPORT_QML_PLUGIN(StrataPlugin)

using namespace strata::app;
using namespace strata::app::test;

namespace {

AppOptions options(const QString& dataDir) {
  AppOptions o;
  o.dataDir = dataDir;
  o.settingsFile = QDir(dataDir).filePath(QStringLiteral("settings.ini"));
  o.defaultModelFolder = QStringLiteral(STRATA_TINY_MODEL_DIR);
  return o;
}

QQuickItem* findItem(QQuickItem* root, const QString& name) {
  if (!root) return nullptr;
  if (root->objectName() == name) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findItem(child, name)) return found;
  return nullptr;
}

// As a click does: the switch flips, then reports it (onToggled writes the setting).
void toggle(QQuickItem* control) {
  QVERIFY(QMetaObject::invokeMethod(control, "toggle"));
  QVERIFY(QMetaObject::invokeMethod(control, "toggled"));
}

}  // namespace

class TestServerUi : public QObject {
  Q_OBJECT
 private slots:
  void savedSettingStartsTheServerWithTheModel() {
    QTemporaryDir data;
    const int port = freePort();
    {
      QSettings saved(options(data.path()).settingsFile, QSettings::IniFormat);
      saved.setValue(QStringLiteral("server/enabled"), true);
      saved.setValue(QStringLiteral("server/port"), port);
    }
    AppController app(options(data.path()));
    EngineBridge* engine = app.engine();
    app.loadModel();
    QTRY_VERIFY_WITH_TIMEOUT(engine->serverRunning(), 60000);
    QCOMPARE(engine->serverUrl(), QStringLiteral("http://127.0.0.1:%1").arg(port));
    QCOMPARE(httpRequest(engine->serverUrl() + QStringLiteral("/health")).status, 200);

    // Off and on again from the settings, with another port: applied without a reload.
    app.settings()->setServerEnabled(false);
    QTRY_VERIFY_WITH_TIMEOUT(!engine->serverRunning(), 10000);
    QVERIFY(connectionRefused(port));
    const int other = freePort();
    app.settings()->setServerPort(other);
    QVERIFY(!engine->serverRunning());  // a port change alone does not start it
    app.settings()->setServerEnabled(true);
    QTRY_VERIFY_WITH_TIMEOUT(engine->serverRunning(), 10000);
    QCOMPARE(engine->serverUrl(), QStringLiteral("http://127.0.0.1:%1").arg(other));
    QCOMPARE(httpRequest(engine->serverUrl() + QStringLiteral("/health")).status, 200);
    QVERIFY(app.errorText().isEmpty());
  }

  void settingsDialogSwitchesTheServer() {
    QTemporaryDir data;
    AppController app(options(data.path()));
    const int port = freePort();
    app.settings()->setServerPort(port);
    app.settings()->setTheme(QStringLiteral("dark"));  // the error colour checked below is dark's
    QQmlApplicationEngine qml;
    qml.addImportPath(QStringLiteral("qrc:/qt/qml"));
    qml.setInitialProperties({{QStringLiteral("app"), QVariant::fromValue(&app)}});
    qml.load(QUrl(QStringLiteral("qrc:/qt/qml/Strata/Main.qml")));
    QVERIFY(!qml.rootObjects().isEmpty());
    auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().first());
    QVERIFY(window);
    app.loadModel();
    QTRY_COMPARE_WITH_TIMEOUT(app.engine()->state(), EngineBridge::State::Ready, 60000);

    QObject* dialog = nullptr;
    for (QObject* o : window->findChildren<QObject*>())
      if (o->inherits("QQuickDialog") &&
          o->property("title").toString() == QLatin1String("Settings"))
        dialog = o;
    QVERIFY(dialog);
    QMetaObject::invokeMethod(dialog, "open");
    QTRY_VERIFY(dialog->property("opened").toBool());
    QQuickItem* top = window->contentItem();  // the overlay that holds popups is above it
    while (top->parentItem()) top = top->parentItem();
    QQuickItem* enabled = findItem(top, QStringLiteral("serverEnabled"));
    QQuickItem* status = findItem(top, QStringLiteral("serverStatus"));
    QQuickItem* portBox = findItem(top, QStringLiteral("serverPort"));
    QVERIFY(enabled && status && portBox);
    QCOMPARE(status->property("text").toString(), QStringLiteral("Off"));
    QCOMPARE(portBox->property("displayText").toString(), QString::number(port));  // no "8,080"

    toggle(enabled);
    QVERIFY(app.settings()->serverEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(status->property("text").toString(),
                              QStringLiteral("Listening on http://127.0.0.1:%1").arg(port), 10000);
    QCOMPARE(httpRequest(QStringLiteral("http://127.0.0.1:%1/health").arg(port)).status, 200);

    toggle(enabled);
    QVERIFY(!app.settings()->serverEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(status->property("text").toString(), QStringLiteral("Off"), 10000);
    QVERIFY(connectionRefused(port));

    // Another program holds the port: the error, in the error colour, and the app goes on.
    QTcpServer holder;
    QVERIFY(holder.listen(QHostAddress::LocalHost, 0));
    portBox->setProperty("value", holder.serverPort());
    QVERIFY(QMetaObject::invokeMethod(portBox, "valueModified"));
    QCOMPARE(app.settings()->serverPort(), int(holder.serverPort()));
    toggle(enabled);
    const QString where = QStringLiteral("127.0.0.1:%1").arg(holder.serverPort());
    QTRY_VERIFY_WITH_TIMEOUT(status->property("text").toString().contains(where), 10000);
    QCOMPARE(status->property("color").value<QColor>(), QColor(QStringLiteral("#f0616d")));
    QVERIFY(!app.engine()->serverRunning());
    QVERIFY(app.errorText().isEmpty());  // the status line says it; no banner
    QCOMPARE(app.engine()->state(), EngineBridge::State::Ready);
  }
};

int main(int argc, char** argv) {
  QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
  QGuiApplication app(argc, argv);
  QQuickStyle::setStyle(QStringLiteral("Basic"));  // as main() does
  TestServerUi test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_server_ui.moc"
