#include "shell/app_log.h"

#include <QCoreApplication>
#include <QDir>
#include <QtGlobal>

#include "strata/error.h"
#include "strata/logging.h"

namespace strata::app {
namespace {

// Qt's messages go to the engine's log (stderr and the file) instead of only stderr.
void forwardQtMessage(QtMsgType type, const QMessageLogContext&, const QString& message) {
  LogLevel level = LogLevel::Info;
  switch (type) {
    case QtDebugMsg: level = LogLevel::Debug; break;
    case QtInfoMsg: level = LogLevel::Info; break;
    case QtWarningMsg: level = LogLevel::Warning; break;
    case QtCriticalMsg:
    case QtFatalMsg: level = LogLevel::Error; break;
  }
  writeLog(level, message.toStdString());
}

}  // namespace

QString startAppLog(const QString& dataDir) {
  try {
    logToFile(QDir(dataDir).filePath(QStringLiteral("logs/strata.log")).toStdString());
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  qInstallMessageHandler(forwardQtMessage);
  writeLog(LogLevel::Info, QStringLiteral("Strata %1 started (data folder %2)")
                               .arg(QCoreApplication::applicationVersion(), dataDir)
                               .toStdString());
  return {};
}

}  // namespace strata::app
