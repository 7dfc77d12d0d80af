#pragma once
// `strata-cli serve` on a free port as a child process, stopped with SIGTERM.
#include <signal.h>

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStringList>
#include <memory>

class ServeProcess {
 public:
  // Starts the server for the bundled tiny model; false (with `error` set) if it did not
  // print its listening address within a minute.
  bool start(const QStringList& extraArgs) {
    process_ = std::make_unique<QProcess>();
    QStringList args = {"serve",  "--model", QString(STRATA_RESOURCES_DIR) + "/models/strata-tiny",
                        "--port", "0",       "--threads",
                        "1"};
    process_->start(STRATA_CLI_PATH, args + extraArgs);
    QByteArray out;
    const QRegularExpression address("listening on http://127\\.0\\.0\\.1:(\\d+)");
    while (process_->waitForReadyRead(60000)) {
      out += process_->readAllStandardOutput();
      const auto match = address.match(QString::fromUtf8(out));
      if (match.hasMatch()) {
        port = static_cast<quint16>(match.captured(1).toUInt());
        return true;
      }
    }
    error = "no listening address; stdout: " + QString::fromUtf8(out) +
            " stderr: " + QString::fromUtf8(process_->readAllStandardError());
    return false;
  }

  bool running() const { return process_ && process_->state() == QProcess::Running; }

  // The server's peak resident memory so far (VmHWM), in bytes; -1 if unreadable.
  long long peakRssBytes() const {
    if (!running()) return -1;
    QFile status(QString("/proc/%1/status").arg(process_->processId()));
    if (!status.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : status.readAll().split('\n'))
      if (line.startsWith("VmHWM:")) return line.mid(6).trimmed().split(' ').first().toLongLong() * 1024;
    return -1;
  }

  // SIGTERM, then the exit code (-1 if it crashed or did not stop within `ms`).
  int stop(int ms = 15000) {
    if (!running()) return -1;
    ::kill(static_cast<pid_t>(process_->processId()), SIGTERM);
    if (!process_->waitForFinished(ms)) {
      process_->kill();
      process_->waitForFinished();
      return -1;
    }
    return process_->exitStatus() == QProcess::NormalExit ? process_->exitCode() : -1;
  }

  QString standardError() {
    return process_ ? QString::fromUtf8(process_->readAllStandardError()) : QString();
  }

  ~ServeProcess() {
    if (running()) stop();
  }

  quint16 port = 0;
  QString error;

 private:
  std::unique_ptr<QProcess> process_;
};
