#pragma once
// The app's log file: the engine's log plus Qt's own messages (QML warnings included), in
// DATA/logs/strata.log, rotated by size, so a user can attach it to a bug report.
#include <QString>

namespace strata::app {

// Starts writing the log under `dataDir`; returns an error message (empty on success) - the
// app runs on without a file when the folder cannot be written.
QString startAppLog(const QString& dataDir);

}  // namespace strata::app
