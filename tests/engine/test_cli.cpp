// strata-cli's stable interfaces, driven as a script would: output lines, logit files, exit codes.
#include <QTemporaryDir>
#include <QtTest>

#include "cli_runner.h"
#include "fixtures.h"

using fixtures::Reference;

namespace {

QString joinIds(const std::vector<int32_t>& ids, const QString& sep) {
  QStringList parts;
  for (int32_t id : ids) parts << QString::number(id);
  return parts.join(sep);
}

// The ids after "<label> " on the line that starts with it.
QString lineAfter(const QString& out, const QString& label) {
  for (const QString& line : out.split('\n'))
    if (line.startsWith(label + " ")) return line.mid(label.size() + 1).trimmed();
  return {};
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT

 private slots:
  void evalWritesLogitsAndTop1() {
    const Reference ref = Reference::load("tiny-dsa");
    QTemporaryDir dir;
    const QString logits = dir.filePath("logits.f32");
    const QString mtp = dir.filePath("mtp.f32");
    const CliRun r = runCli({"eval", "--model", QString::fromStdString(ref.dir.string()), "--tokens",
                          joinIds(ref.prompt, ","), "--logits-out", logits, "--mtp-logits-out", mtp});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(lineAfter(r.text(), "top1:"), joinIds(ref.meta.at("top1").get<std::vector<int32_t>>(), " "));
    QCOMPARE(lineAfter(r.text(), "mtp_top1:"),
             joinIds(ref.meta.at("mtp_top1").get<std::vector<int32_t>>(), " "));

    const auto written = fixtures::readFloats(logits.toStdString());
    QCOMPARE(written.size(), ref.logits.size());
    QVERIFY(fixtures::maxAbsDiff(written, ref.logits) <= 1e-4f * fixtures::maxAbs(ref.logits));
    const auto writtenMtp = fixtures::readFloats(mtp.toStdString());
    QCOMPARE(writtenMtp.size(), (ref.prompt.size() - 1) * ref.vocab);
  }

  void generatePrintsGreedyIds() {
    const Reference ref = Reference::load("tiny-indexshare");
    const auto prompt = ref.meta.at("greedy_prompt").get<std::vector<int32_t>>();
    auto expected = ref.meta.at("greedy_new").get<std::vector<int32_t>>();
    expected.resize(8);
    const CliRun r = runCli({"generate", "--model", QString::fromStdString(ref.dir.string()), "--tokens",
                          joinIds(prompt, ","), "--max-new", "8", "--greedy"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(lineAfter(r.text(), "ids:"), joinIds(expected, " "));
  }

  void errorsGoToStderrWithNonZeroExit_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    const QString model = QString::fromStdString((fixtures::dataDir() / "tiny-dsa").string());
    QTest::newRow("no such model") << QStringList{"eval", "--model", "/nonexistent/model", "--tokens", "1"}
                                   << 1 << "not a model directory";
    QTest::newRow("token out of range") << QStringList{"eval", "--model", model, "--tokens", "1,999999"}
                                        << 1 << "out of range";
    QTest::newRow("bad token list") << QStringList{"eval", "--model", model, "--tokens", "1,x"} << 2
                                    << "not an integer";
    QTest::newRow("unknown option") << QStringList{"eval", "--model", model, "--tokens", "1", "--bogus", "2"}
                                    << 2 << "unknown option --bogus";
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << 2 << "unknown command";
    QTest::newRow("bad precision") << QStringList{"eval", "--model", model, "--tokens", "1", "--precision", "int3"}
                                   << 2 << "--precision must be";
  }
  void errorsGoToStderrWithNonZeroExit() {
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    const CliRun r = runCli(args);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(lineAfter(r.text(), "top1:").isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
