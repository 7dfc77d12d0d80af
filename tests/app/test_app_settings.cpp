// Settings persist across restarts, out-of-range values are clamped, and the first run falls
// back to the bundled model folder. Speculative decoding, the API server and the theme are
// announced as they change (all are applied live); the theme setting picks the palette, "system"
// by the desktop's window colour. The main window's place persists.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "settings/app_settings.h"
#include "settings/color_scheme.h"

using namespace strata::app;

namespace {

std::unique_ptr<AppSettings> open(const QString& file) {
  return std::make_unique<AppSettings>(std::make_unique<QSettings>(file, QSettings::IniFormat),
                                       QStringLiteral("/bundled/strata-tiny"));
}

}  // namespace

class TestAppSettings : public QObject {
  Q_OBJECT
 private slots:
  void firstRunUsesTheBundledModel() {
    QTemporaryDir dir;
    auto s = open(dir.filePath(QStringLiteral("s.ini")));
    QCOMPARE(s->modelFolder(), QStringLiteral("/bundled/strata-tiny"));
    QCOMPARE(s->thinking(), true);
    QCOMPARE(s->kvPrecision(), QStringLiteral("bf16"));
    QCOMPARE(s->speculationMode(), QStringLiteral("auto"));
    QCOMPARE(s->mtpDepth(), 3);
    QCOMPARE(s->speculation(), (SpeculationChoice{true, 3}));
    // The API server: off, on 127.0.0.1:8080 without a key, two slots.
    QCOMPARE(s->serverEnabled(), false);
    QCOMPARE(s->serverPort(), 8080);
    QCOMPARE(s->serverApiKey(), QString());
    QCOMPARE(s->serverSlots(), 2);
    const ServerRequest server = s->server();
    QCOMPARE(server.host, QStringLiteral("127.0.0.1"));
    QCOMPARE(server.port, 8080);
    QCOMPARE(server.apiKey, QString());
    QCOMPARE(server.slotCount, 2);
    // The theme follows the desktop; no window place yet.
    QCOMPARE(s->theme(), QStringLiteral("system"));
    QVERIFY(!s->windowGeometry().isValid());
    QCOMPARE(s->windowMaximized(), false);
  }

  void themeSurvivesARestartAndIsAnnounced() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("s.ini"));
    {
      auto s = open(file);
      QSignalSpy theme(s.get(), &AppSettings::themeChanged);
      s->setTheme(QStringLiteral("light"));
      QCOMPARE(theme.count(), 1);
      QCOMPARE(s->theme(), QStringLiteral("light"));
      s->setTheme(QStringLiteral("light"));  // unchanged: not announced again
      s->setTheme(QStringLiteral("sepia"));  // not a theme: refused
      QCOMPARE(theme.count(), 1);
      QCOMPARE(s->theme(), QStringLiteral("light"));
      s->setThinking(false);  // another setting: not a theme change
      QCOMPARE(theme.count(), 1);
      s->setTheme(QStringLiteral("dark"));
      QCOMPARE(theme.count(), 2);
    }
    QCOMPARE(open(file)->theme(), QStringLiteral("dark"));
    {
      QSettings raw(file, QSettings::IniFormat);  // a value written by something else
      raw.setValue(QStringLiteral("appearance/theme"), QStringLiteral("neon"));
    }
    QCOMPARE(open(file)->theme(), QStringLiteral("system"));
  }

  void themePicksThePalette() {
    const QColor darkDesktop(QStringLiteral("#2a2a2e"));
    const QColor lightDesktop(QStringLiteral("#efefef"));
    QCOMPARE(themeIsDark(QStringLiteral("dark"), lightDesktop), true);
    QCOMPARE(themeIsDark(QStringLiteral("light"), darkDesktop), false);
    QCOMPARE(themeIsDark(QStringLiteral("system"), darkDesktop), true);
    QCOMPARE(themeIsDark(QStringLiteral("system"), lightDesktop), false);
    // Mid-grey desktops: by lightness, not by one channel.
    QCOMPARE(themeIsDark(QStringLiteral("system"), QColor(0x70, 0x70, 0x70)), true);
    QCOMPARE(themeIsDark(QStringLiteral("system"), QColor(0xa0, 0xa0, 0xa0)), false);
  }

  void windowPlaceSurvivesARestart() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("s.ini"));
    {
      auto s = open(file);
      s->setWindowGeometry(QRect(-1800, 40, 1280, 900));  // a monitor left of the primary
      s->setWindowMaximized(true);
    }
    auto s = open(file);
    QCOMPARE(s->windowGeometry(), QRect(-1800, 40, 1280, 900));
    QCOMPARE(s->windowMaximized(), true);
    s->setWindowMaximized(false);
    QCOMPARE(open(file)->windowMaximized(), false);
    {
      QSettings raw(file, QSettings::IniFormat);
      raw.setValue(QStringLiteral("window/geometry"), QStringLiteral("not a rectangle"));
    }
    QVERIFY(!open(file)->windowGeometry().isValid());  // as if none was saved
  }

  void serverSettingsSurviveARestartAndAreAnnounced() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("s.ini"));
    {
      auto s = open(file);
      QSignalSpy server(s.get(), &AppSettings::serverSettingsChanged);
      s->setServerEnabled(true);
      QCOMPARE(server.count(), 1);
      s->setServerPort(9123);
      s->setServerApiKey(QStringLiteral("s3cret"));
      s->setServerSlots(4);
      QCOMPARE(server.count(), 4);
      s->setServerSlots(4);  // unchanged: not announced again
      QCOMPARE(server.count(), 4);
      s->setThinking(false);  // another setting: not a server change
      QCOMPARE(server.count(), 4);
    }
    auto s = open(file);
    QCOMPARE(s->serverEnabled(), true);
    QCOMPARE(s->serverPort(), 9123);
    QCOMPARE(s->serverApiKey(), QStringLiteral("s3cret"));
    QCOMPARE(s->serverSlots(), 4);
    QCOMPARE(s->server(),
             (ServerRequest{QStringLiteral("127.0.0.1"), 9123, QStringLiteral("s3cret"), 4}));
    s->setServerEnabled(false);
    QCOMPARE(s->serverEnabled(), false);
    QCOMPARE(open(file)->serverEnabled(), false);
  }

  void speculationSurvivesARestartAndIsAnnounced() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("s.ini"));
    {
      auto s = open(file);
      QSignalSpy spec(s.get(), &AppSettings::speculationChanged);
      s->setSpeculationMode(QStringLiteral("off"));
      QCOMPARE(spec.count(), 1);
      QCOMPARE(spec.last().first().value<SpeculationChoice>(), (SpeculationChoice{false, 3}));
      s->setMtpDepth(5);
      QCOMPARE(spec.count(), 2);
      QCOMPARE(spec.last().first().value<SpeculationChoice>(), (SpeculationChoice{false, 5}));
      s->setMtpDepth(5);  // unchanged: not announced again
      QCOMPARE(spec.count(), 2);
      s->setTemperature(0.2);  // another setting: not a speculation change
      QCOMPARE(spec.count(), 2);
    }
    auto s = open(file);
    QCOMPARE(s->speculationMode(), QStringLiteral("off"));
    QCOMPARE(s->mtpDepth(), 5);
    QCOMPARE(s->speculation(), (SpeculationChoice{false, 5}));
    s->setSpeculationMode(QStringLiteral("auto"));
    QCOMPARE(s->speculation(), (SpeculationChoice{true, 5}));
  }

  void valuesSurviveARestart() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("s.ini"));
    {
      auto s = open(file);
      QSignalSpy threads(s.get(), &AppSettings::threadsChanged);
      s->setModelFolder(QStringLiteral("/models/glm-5"));
      s->setThreads(6);
      s->setTemperature(0.3);
      s->setTopK(40);
      s->setMaxTokens(1024);
      s->setSystemPrompt(QStringLiteral("Be brief."));
      s->setThinking(false);
      s->setMemoryBudgetGb(24);
      s->setKvPrecision(QStringLiteral("bf16"));
      QSignalSpy tiers(s.get(), &AppSettings::tierTuningChanged);
      s->setIoMode(QStringLiteral("uring"));
      s->setKernelPath(QStringLiteral("dequantize"));
      s->setPinnedPercent(40);
      s->setPrefetch(false);
      QCOMPARE(tiers.count(), 2);  // pinned share and prefetch apply live; the rest at a reload
      QCOMPARE(threads.count(), 1);
      QCOMPARE(threads.first().first().toInt(), 6);
    }
    auto s = open(file);
    QCOMPARE(s->modelFolder(), QStringLiteral("/models/glm-5"));
    QCOMPARE(s->threads(), 6);
    QCOMPARE(s->temperature(), 0.3);
    QCOMPARE(s->topK(), 40);
    QCOMPARE(s->maxTokens(), 1024);
    QCOMPARE(s->systemPrompt(), QStringLiteral("Be brief."));
    QCOMPARE(s->thinking(), false);
    QCOMPARE(s->memoryBudgetGb(), 24.0);
    QCOMPARE(s->kvPrecision(), QStringLiteral("bf16"));
    QCOMPARE(s->ioMode(), QStringLiteral("uring"));
    QCOMPARE(s->kernelPath(), QStringLiteral("dequantize"));
    QCOMPARE(s->tierChoice(), (TierChoice{40, false}));
  }

  void outOfRangeValuesAreClampedOrRefused() {
    QTemporaryDir dir;
    auto s = open(dir.filePath(QStringLiteral("s.ini")));
    s->setTemperature(9);
    QCOMPARE(s->temperature(), 2.0);
    s->setTopP(0);
    QCOMPARE(s->topP(), 0.01);
    s->setMaxTokens(0);
    QCOMPARE(s->maxTokens(), 1);
    s->setKvPrecision(QStringLiteral("f16"));
    s->setKvPrecision(QStringLiteral("int3"));
    QCOMPARE(s->kvPrecision(), QStringLiteral("f16"));
    s->setMtpDepth(0);
    QCOMPARE(s->mtpDepth(), 1);
    s->setMtpDepth(12);
    QCOMPARE(s->mtpDepth(), 8);
    s->setSpeculationMode(QStringLiteral("sometimes"));
    QCOMPARE(s->speculationMode(), QStringLiteral("auto"));
    s->setServerPort(0);
    QCOMPARE(s->serverPort(), 1);
    s->setServerPort(70000);
    QCOMPARE(s->serverPort(), 65535);
    s->setServerSlots(0);
    QCOMPARE(s->serverSlots(), 1);
    s->setServerSlots(100);
    QCOMPARE(s->serverSlots(), 16);
    s->setPinnedPercent(95);
    QCOMPARE(s->pinnedPercent(), 90);
    s->setPinnedPercent(-5);
    QCOMPARE(s->pinnedPercent(), 0);
    s->setIoMode(QStringLiteral("floppy"));
    QCOMPARE(s->ioMode(), QStringLiteral("direct"));
    s->setKernelPath(QStringLiteral("gpu"));
    QCOMPARE(s->kernelPath(), QStringLiteral("auto"));
  }
};

QTEST_GUILESS_MAIN(TestAppSettings)
#include "test_app_settings.moc"
