// strata: the desktop app. Everything but start-up lives in strata_app and the QML module.
#include <QDir>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQmlExtensionPlugin>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "bridge/engine_bridge.h"
#include "chat/chat_controller.h"
#include "settings/app_settings.h"
#include "shell/app_controller.h"
#include "shell/app_log.h"
#include "shell/command_line.h"
#include "shell/frame_bench.h"
#include "shell/model_location.h"
#include "shell/screenshot.h"
#include "shell/window_memory.h"
#include "strata/openmp_wait_policy.h"

Q_IMPORT_QML_PLUGIN(Strata_CorePlugin)
Q_IMPORT_QML_PLUGIN(StrataPlugin)

int main(int argc, char* argv[]) {
  // The engine's OpenMP threads must sleep between steps, not spin: spinning took the cores
  // from the GUI thread (frame p99 35 -> 32 ms) and from each other (468 -> 816 tokens/s in
  // the frame benchmark on 2 cores).
  strata::ensurePassiveOpenMpWaiting(argv);
  QGuiApplication app(argc, argv);
  QGuiApplication::setOrganizationName(QStringLiteral("Strata"));
  QGuiApplication::setApplicationName(QStringLiteral("Strata"));
  QGuiApplication::setApplicationVersion(QStringLiteral(STRATA_VERSION));
  // Matches installer/io.strata.Strata.desktop (Wayland app id: the icon and name shown).
  QGuiApplication::setDesktopFileName(QStringLiteral("io.strata.Strata"));
  const strata::app::CommandLine cl = strata::app::parseCommandLine(app);

  // Screenshots are drawn by the software renderer: the same pixels with or without a GPU. So
  // is the frame benchmark on the offscreen platform, which has no OpenGL.
  const bool offscreen = QGuiApplication::platformName() == QLatin1String("offscreen");
  if (!cl.screenshotFile.isEmpty() || (cl.benchFrames && offscreen))
    QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
  QQuickStyle::setStyle(QStringLiteral("Basic"));

  // The demo and the frame benchmark store nothing in the user's folders.
  QTemporaryDir demoDir;
  const bool temporary = cl.demo || cl.benchFrames;
  strata::app::AppOptions options;
  options.demo = cl.demo;
  options.dataDir = temporary ? demoDir.path()
                    : !cl.dataDir.isEmpty()
                        ? cl.dataDir
                        : QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
  // The demo writes nothing to the user's folders, its log included; the benchmark's warnings
  // stay on stderr.
  if (!temporary)
    if (const QString error = strata::app::startAppLog(options.dataDir); !error.isEmpty())
      qWarning("%s (the log goes to stderr only)", qPrintable(error));
  options.settingsFile =
      temporary ? demoDir.filePath(QStringLiteral("settings.ini")) : cl.settingsFile;
  options.defaultModelFolder =
      strata::app::bundledModelFolder(QCoreApplication::applicationDirPath());
  strata::app::AppController controller(options);
  if (!cl.theme.isEmpty()) controller.settings()->setTheme(cl.theme);

  // The window opens where it was left, but screenshots and the demo always look the same.
  const bool rememberWindow = !temporary && cl.screenshotFile.isEmpty();
  QVariantMap initial{{QStringLiteral("app"), QVariant::fromValue(&controller)}};
  if (rememberWindow)
    initial.insert(strata::app::restoredWindowProperties(*controller.settings(),
                                                         strata::app::availableScreenGeometries()));

  QQmlApplicationEngine engine;
  engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
  engine.setInitialProperties(initial);
  engine.load(QUrl(QStringLiteral("qrc:/qt/qml/Strata/Main.qml")));
  auto* window = engine.rootObjects().isEmpty()
                     ? nullptr
                     : qobject_cast<QQuickWindow*>(engine.rootObjects().first());
  if (!window) return 1;
  if (rememberWindow) {
    auto* memory = new strata::app::WindowMemory(window, controller.settings(), window);
    QObject::connect(&app, &QGuiApplication::aboutToQuit, memory, &strata::app::WindowMemory::save);
  }
  if (!cl.send.isEmpty())
    QObject::connect(
        controller.engine(), &strata::app::EngineBridge::loaded, controller.chat(),
        [&controller, text = cl.send] { controller.chat()->send(text); }, Qt::SingleShotConnection);
  if (cl.benchFrames) strata::app::startFrameBench(window, &controller, {cl.benchSeconds, cl.json});
  controller.loadModel();
  if (!cl.screenshotFile.isEmpty())
    strata::app::scheduleScreenshot(window, cl.screenshotFile, cl.afterMs);
  return app.exec();
}
