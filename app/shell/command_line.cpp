#include "shell/command_line.h"

#include <QCommandLineParser>
#include <cstdio>
#include <cstdlib>

namespace strata::app {

CommandLine parseCommandLine(const QGuiApplication& app) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Strata: chat with GLM-5-class models on your own machine."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                      QStringLiteral("Render the window to FILE (PNG) and exit."),
                                      QStringLiteral("FILE"));
  const QCommandLineOption after(
      QStringLiteral("after-ms"),
      QStringLiteral("With --screenshot: wait this long first (default 1500)."),
      QStringLiteral("N"), QStringLiteral("1500"));
  const QCommandLineOption demo(
      QStringLiteral("demo"), QStringLiteral("Show sample content (nothing is loaded or saved)."));
  const QCommandLineOption dataDir(QStringLiteral("data-dir"),
                                   QStringLiteral("Keep conversations and KV caches in DIR."),
                                   QStringLiteral("DIR"));
  const QCommandLineOption settings(QStringLiteral("settings"),
                                    QStringLiteral("Read and write settings in this INI file."),
                                    QStringLiteral("FILE"));
  const QCommandLineOption send(QStringLiteral("send"),
                                QStringLiteral("Send TEXT as a message once the model is loaded."),
                                QStringLiteral("TEXT"));
  const QCommandLineOption theme(
      QStringLiteral("theme"),
      QStringLiteral("Switch the theme to THEME (system, light or dark), as Settings does."),
      QStringLiteral("THEME"));
  const QCommandLineOption benchFrames(
      QStringLiteral("bench-frames"),
      QStringLiteral("Measure frame times while replies stream into a 50,000-character "
                     "conversation (temporary data and settings), print them and exit."));
  const QCommandLineOption json(QStringLiteral("json"),
                                QStringLiteral("With --bench-frames: print one JSON object."));
  const QCommandLineOption seconds(
      QStringLiteral("seconds"),
      QStringLiteral("With --bench-frames: measure for N seconds (default 10)."),
      QStringLiteral("N"), QStringLiteral("10"));
  parser.addOptions(
      {screenshot, after, demo, dataDir, settings, send, theme, benchFrames, json, seconds});
  parser.process(app);

  CommandLine c;
  c.screenshotFile = parser.value(screenshot);
  bool ok = false;
  c.afterMs = parser.value(after).toInt(&ok);
  if (!ok || c.afterMs < 0) {
    std::fprintf(stderr, "strata: --after-ms must be a number of milliseconds, not '%s'\n",
                 qPrintable(parser.value(after)));
    std::exit(2);  // the executable's own argument check, before anything starts
  }
  c.demo = parser.isSet(demo);
  c.dataDir = parser.value(dataDir);
  c.settingsFile = parser.value(settings);
  c.send = parser.value(send);
  c.theme = parser.value(theme);
  if (parser.isSet(theme) &&
      !QStringList{QStringLiteral("system"), QStringLiteral("light"), QStringLiteral("dark")}
           .contains(c.theme)) {
    std::fprintf(stderr, "strata: --theme must be system, light or dark, not '%s'\n",
                 qPrintable(c.theme));
    std::exit(2);
  }
  c.benchFrames = parser.isSet(benchFrames);
  c.json = parser.isSet(json);
  c.benchSeconds = parser.value(seconds).toInt(&ok);
  if (!ok || c.benchSeconds < 1) {
    std::fprintf(stderr,
                 "strata: --seconds must be a whole number of seconds (1 or more), not '%s'\n",
                 qPrintable(parser.value(seconds)));
    std::exit(2);
  }
  return c;
}

}  // namespace strata::app
