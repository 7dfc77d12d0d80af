// strata-cli serve driven by the official `openai` npm client (tests/server/openai_client.mjs).
// The client is installed with npm into the build folder on first run; if that fails the test
// fails - a missing client is not a pass.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QtTest>

#include "serve_process.h"

namespace {

struct Run {
  int exitCode = -1;
  QString output;
};

Run runTool(const QString& program, const QStringList& args, int timeoutMs) {
  QProcess p;
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(program, args);
  if (!p.waitForStarted(10000)) return {-1, program + ": cannot start (is it installed?)"};
  p.waitForFinished(timeoutMs);
  const QString output = QString::fromUtf8(p.readAll());
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, output};
}

}  // namespace

class TestServeOpenAi : public QObject {
  Q_OBJECT

 private slots:
  void officialClient() {
    const QString dir = STRATA_NPM_DIR;
    QVERIFY(QDir().mkpath(dir));
    if (!QFile::exists(dir + "/node_modules/openai/package.json")) {
      const Run install = runTool(
          "npm", {"install", "--no-save", "--no-audit", "--no-fund", "--prefix", dir, "openai@4"},
          240000);
      QVERIFY2(install.exitCode == 0, qPrintable("npm install openai failed: " + install.output));
    }
    // ESM resolves packages next to the script, so the script runs from the install folder.
    const QString script = dir + "/openai_client.mjs";
    QFile::remove(script);
    QVERIFY(QFile::copy(STRATA_OPENAI_SCRIPT, script));

    ServeProcess server;
    QVERIFY2(server.start({"--api-key", "test-key", "--slots", "2"}), qPrintable(server.error));
    const Run client = runTool(
        "node",
        {script, QString("http://127.0.0.1:%1/v1").arg(server.port), "strata-tiny", "test-key"},
        120000);
    QVERIFY2(client.exitCode == 0, qPrintable(client.output));
    QVERIFY2(client.output.contains("\"ok\":true"), qPrintable(client.output));
    QCOMPARE(server.stop(), 0);
  }
};

QTEST_GUILESS_MAIN(TestServeOpenAi)
#include "test_serve_openai.moc"
