// `strata --bench-frames`: the app runs the benchmark with the bundled tiny model and prints one
// well-formed JSON object, writing nothing to the user's folders; its percentiles and its
// conversation. No timing is asserted (the benchmark reports the target, it does not enforce it).
#include <QDir>
#include <QDirIterator>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "shell/frame_bench.h"

using namespace strata::app;

class TestFrameBench : public QObject {
  Q_OBJECT
 private slots:
  void percentilesAreNearestRank() {
    std::vector<qint64> ns;
    for (int ms = 100; ms >= 1; --ms) ns.push_back(ms * 1000000LL);  // 1..100 ms, unsorted
    const FrameStats s = frameStats(ns);
    QCOMPARE(s.frames, 100);
    QCOMPARE(s.medianMs, 50.5);
    QCOMPARE(s.p90Ms, 90.0);
    QCOMPARE(s.p99Ms, 99.0);
    QCOMPARE(s.maxMs, 100.0);
    // One stall among 99 steady frames is above p99 only when it is more than 1 % of them.
    std::vector<qint64> steady(99, 16000000LL);
    steady.push_back(200000000LL);
    QCOMPARE(frameStats(steady).p99Ms, 16.0);
    QCOMPARE(frameStats(steady).maxMs, 200.0);
  }

  void conversationIsMarkdownOfTheAskedLength() {
    const auto turns = benchConversation(50000);
    qsizetype chars = 0;
    QString all;
    for (const auto& [role, content] : turns) {
      chars += content.size();
      all += content;
    }
    QVERIFY2(chars >= 50000 && chars < 53000, qPrintable(QString::number(chars)));
    QCOMPARE(turns.front().first, QStringLiteral("user"));
    QCOMPARE(turns.back().first, QStringLiteral("assistant"));
    QVERIFY(all.contains(QStringLiteral("```cpp\n")));
    QVERIFY(all.contains(QStringLiteral("\n- ")));
    QVERIFY(all.contains(QStringLiteral("\n1. ")));
  }

  void appPrintsOneJsonObject() {
    QTemporaryDir home;  // the user's folders: the benchmark must leave them empty
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("HOME"), home.path());
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
    env.insert(QStringLiteral("XDG_CACHE_HOME"), home.filePath(QStringLiteral("cache")));
    QProcess app;
    app.setProcessEnvironment(env);
    app.start(QStringLiteral(STRATA_APP_BINARY),
              {QStringLiteral("--bench-frames"), QStringLiteral("--json"),
               QStringLiteral("--seconds"), QStringLiteral("2")});
    QVERIFY2(app.waitForFinished(180000), "the benchmark did not finish in 3 minutes");
    const QByteArray err = app.readAllStandardError();
    QVERIFY2(app.exitStatus() == QProcess::NormalExit && app.exitCode() == 0, err.constData());

    const QList<QByteArray> lines = app.readAllStandardOutput().trimmed().split('\n');
    QCOMPARE(lines.size(), 1);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(lines.front(), &error);
    QVERIFY2(error.error == QJsonParseError::NoError && doc.isObject(), lines.front().constData());
    const QJsonObject o = doc.object();
    for (const char* key :
         {"frames", "seconds", "median_ms", "p90_ms", "p99_ms", "max_ms", "target_p99_ms", "ratio",
          "pass", "tokens", "tokens_per_second", "conversation_chars", "platform"})
      QVERIFY2(o.contains(QLatin1String(key)), key);
    QVERIFY(o.value(QStringLiteral("frames")).toInt() > 0);
    QVERIFY(o.value(QStringLiteral("tokens")).toInt() > 0);
    QVERIFY(o.value(QStringLiteral("conversation_chars")).toInt() >= 50000);
    QVERIFY(o.value(QStringLiteral("seconds")).toDouble() > 1.9);  // --seconds 2
    const double median = o.value(QStringLiteral("median_ms")).toDouble();
    const double p90 = o.value(QStringLiteral("p90_ms")).toDouble();
    const double p99 = o.value(QStringLiteral("p99_ms")).toDouble();
    QVERIFY(median > 0);
    QVERIFY(median <= p90 && p90 <= p99 && p99 <= o.value(QStringLiteral("max_ms")).toDouble());
    QCOMPARE(o.value(QStringLiteral("target_p99_ms")).toDouble(), 25.0);
    QCOMPARE(o.value(QStringLiteral("ratio")).toDouble(), p99 / 25.0);
    QCOMPARE(o.value(QStringLiteral("pass")).toBool(), p99 < 25.0);
    QCOMPARE(o.value(QStringLiteral("platform")).toString(), QStringLiteral("offscreen"));
#ifdef Q_OS_LINUX
    // The GUI thread's CPU time per interval (what it did, against how long it took).
    QVERIFY(o.contains(QStringLiteral("gui_cpu_p99_ms")));
    QVERIFY(o.value(QStringLiteral("gui_cpu_median_ms")).toDouble() > 0);
    QVERIFY(o.value(QStringLiteral("gui_cpu_p99_ms")).toDouble() >=
            o.value(QStringLiteral("gui_cpu_median_ms")).toDouble());
#endif

    QDirIterator files(home.path(), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    QVERIFY2(!files.hasNext(), qPrintable(files.hasNext() ? files.next() : QString()));
  }
};

QTEST_GUILESS_MAIN(TestFrameBench)
#include "test_frame_bench.moc"
