#pragma once
// Runs strata-cli as a script would and captures what it printed.
#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

struct CliRun {
  int exitCode = -1;  // -1 if it crashed or timed out
  QByteArray out;     // stdout, exact bytes
  QString err;
  QString text() const { return QString::fromUtf8(out); }
};

inline CliRun runCli(const QStringList& args, const QByteArray& input = {}) {
  QProcess p;
  p.start(STRATA_CLI_PATH, args);
  if (!input.isEmpty()) p.write(input);
  p.closeWriteChannel();
  p.waitForFinished(300000);  // 5 minutes: conversions on a busy machine
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
          QString::fromUtf8(p.readAllStandardError())};
}
