#pragma once
// strata's command line: --version, --screenshot FILE --after-ms N, --demo, --data-dir DIR,
// --settings FILE, --send TEXT, --theme THEME, --bench-frames [--json] [--seconds N].
#include <QGuiApplication>
#include <QString>

namespace strata::app {

struct CommandLine {
  QString screenshotFile;  // empty: run normally
  int afterMs = 1500;
  bool demo = false;
  QString dataDir;           // empty: the platform's app data folder
  QString settingsFile;      // empty: the platform's settings location
  QString send;              // a message sent as soon as the model is loaded (reviews, screenshots)
  QString theme;             // "system", "light" or "dark" (set as in Settings); empty: unchanged
  bool benchFrames = false;  // the responsiveness benchmark (shell/frame_bench.h)
  bool json = false;         // its result as one JSON object
  int benchSeconds = 10;
};

// Prints help or the version and exits for --help / --version, like any Qt tool.
CommandLine parseCommandLine(const QGuiApplication& app);

}  // namespace strata::app
