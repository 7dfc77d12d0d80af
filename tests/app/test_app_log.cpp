// The app's log file: Qt's own messages (QML warnings) land in DATA/logs/strata.log next to the
// engine's lines, and a data folder that cannot be written is reported, not fatal.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "shell/app_log.h"

class TestAppLog : public QObject {
  Q_OBJECT

 private slots:
  void unwritableFolderIsReported() {
    QTemporaryDir dir;
    QFile blocker(dir.filePath(QStringLiteral("data")));
    QVERIFY(blocker.open(QIODevice::WriteOnly));  // a file where the data folder should be
    blocker.close();
    const QString error = strata::app::startAppLog(blocker.fileName());
    QVERIFY2(error.contains(QStringLiteral("strata.log")), qPrintable(error));
  }

  void qtMessagesReachTheFile() {
    QTemporaryDir dir;
    QCOMPARE(strata::app::startAppLog(dir.path()), QString());
    qWarning("a QML warning, say");
    QFile log(dir.filePath(QStringLiteral("logs/strata.log")));
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QByteArray text = log.readAll();
    QVERIFY2(text.contains("a QML warning, say"), text.constData());
    QVERIFY(text.contains("warning"));
    QVERIFY(text.contains("started (data folder"));
  }
};

QTEST_GUILESS_MAIN(TestAppLog)
#include "test_app_log.moc"
