// strata-cli tokenize / detokenize / bench tokenizer, driven as a script would: exact stdout
// bytes, exit codes and error messages. Expected ids come from tools/tokenizer/bpe_reference.py.
#include <QTemporaryDir>
#include <QtTest>

#include "cli_runner.h"
#include "fixtures.h"

using Json = nlohmann::json;

namespace {

QString fixture(const char* name) {
  return QString::fromStdString((fixtures::dataDir() / "tokenizer" / name).string());
}

std::vector<Json> readJsonLines(const QString& path) {
  std::ifstream in(path.toStdString());
  std::vector<Json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
  return lines;
}

QByteArray idsLine(const std::vector<int32_t>& ids) {
  QByteArray line = "ids:";
  for (int32_t id : ids) line += " " + QByteArray::number(id);
  return line + "\n";
}

QString joinIds(const std::vector<int32_t>& ids) {
  QStringList parts;
  for (int32_t id : ids) parts << QString::number(id);
  return parts.join(',');
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  QFile file(dir.filePath(name));
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) return {};
  return file.fileName();
}

}  // namespace

class TestTokenizerCli : public QObject {
  Q_OBJECT

  std::vector<Json> texts_;
  std::vector<Json> glmIds_;

  // The index of a fixture text, so tests name texts rather than line numbers.
  size_t indexOf(const std::string& text) const {
    for (size_t i = 0; i < texts_.size(); ++i)
      if (texts_[i].get<std::string>() == text) return i;
    throw std::runtime_error("not a fixture text: " + text);
  }
  std::vector<int32_t> referenceIds(const std::string& text) const {
    return glmIds_[indexOf(text)].get<std::vector<int32_t>>();
  }

 private slots:
  void initTestCase() {
    texts_ = readJsonLines(fixture("texts.jsonl"));
    glmIds_ = readJsonLines(fixture("glm_ids.jsonl"));
    QCOMPARE(texts_.size(), glmIds_.size());
  }

  void tokenizeTextPrintsTheReferenceIds_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("plain") << "Hello, world! How are you today?";
    QTest::newRow("special tokens") << "<|user|>What is 2+2?<|assistant|></think>4<|endoftext|>";
    QTest::newRow("cjk") << "人工智能正在改变我们的生活方式。";
  }
  void tokenizeTextPrintsTheReferenceIds() {
    QFETCH(QString, text);
    const CliRun r =
        runCli({"tokenize", "--tokenizer", fixture("glm_tokenizer.json"), "--text", text});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(r.out, idsLine(referenceIds(text.toStdString())));
  }

  void tokenizeTextFileUsesTheExactBytes() {
    QTemporaryDir dir;
    for (const std::string text : {"text ending with a newline\n",
                                   "line one\nline two\n\nline four\r\nwindows line\r\n", ""}) {
      const QString file = writeFile(dir, "text.txt", QByteArray::fromStdString(text));
      QVERIFY(!file.isEmpty());
      const CliRun r =
          runCli({"tokenize", "--tokenizer", fixture("glm_tokenizer.json"), "--text-file", file});
      QVERIFY2(r.exitCode == 0, qPrintable(r.err));
      QCOMPARE(r.out, idsLine(referenceIds(text)));
    }
  }

  void jsonlPrintsOneArrayPerLine_data() {
    QTest::addColumn<QString>("tokenizer");
    QTest::addColumn<QString>("ids");
    QTest::newRow("glm") << fixture("glm_tokenizer.json") << fixture("glm_ids.jsonl");
    QTest::newRow("features") << fixture("features_tokenizer.json")
                              << fixture("features_ids.jsonl");
  }
  void jsonlPrintsOneArrayPerLine() {
    QFETCH(QString, tokenizer);
    QFETCH(QString, ids);
    const CliRun r = runCli({"tokenize", "--tokenizer", tokenizer, "--jsonl", fixture("texts.jsonl")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QList<QByteArray> lines = r.out.split('\n');
    const std::vector<Json> expected = readJsonLines(ids);
    QCOMPARE(lines.size(), qsizetype(expected.size() + 1));  // ends with a newline
    QVERIFY(lines.back().isEmpty());
    for (size_t i = 0; i < expected.size(); ++i)
      QCOMPARE(Json::parse(lines[i].toStdString()), expected[i]);
  }

  void detokenizePrintsTheExactText_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("newlines") << QByteArray("line one\nline two\n\nline four\r\nwindows line\r\n");
    QTest::newRow("special tokens") << QByteArray(
        "[gMASK]<sop><|system|>You are a helpful assistant.<|user|>Hello!<|assistant|><think>");
    QTest::newRow("emoji") << QByteArray(
        "family 👨‍👩‍👧‍👦 couple 👩‍❤️‍👨 flags 🇫🇷🇯🇵 rainbow 🏳️‍🌈 keycap "
        "1️⃣");
    QTest::newRow("spaces") << QByteArray("  leading spaces and trailing spaces   ");
  }
  void detokenizePrintsTheExactText() {
    QFETCH(QByteArray, text);
    const CliRun r = runCli({"detokenize", "--tokenizer", fixture("glm_tokenizer.json"), "--ids",
                          joinIds(referenceIds(text.toStdString()))});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(r.out, text);
  }

  void benchTokenizerPrintsJson() {
    const CliRun r = runCli({"bench", "tokenizer", "--tokenizer", fixture("glm_tokenizer.json"),
                          "--text-file", fixture("texts.jsonl"), "--repeats", "1", "--json"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const Json result = Json::parse(r.out.toStdString());
    QCOMPARE(result.at("bytes").get<int64_t>(), QFileInfo(fixture("texts.jsonl")).size());
    QVERIFY(result.at("tokens").get<int64_t>() > 0);
    QVERIFY(result.contains("encode_cold_s"));
  }

  void errorsGoToStderrWithNonZeroExit_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    const QString tok = fixture("glm_tokenizer.json");
    QTest::newRow("no tokenizer") << QStringList{"tokenize", "--text", "x"} << 2
                                  << "missing --tokenizer";
    QTest::newRow("no text") << QStringList{"tokenize", "--tokenizer", tok} << 2
                             << "exactly one of --text";
    QTest::newRow("two texts") << QStringList{"tokenize", "--tokenizer", tok, "--text",
                                              "x",        "--text-file", tok}
                               << 2 << "exactly one of --text";
    QTest::newRow("unknown option")
        << QStringList{"tokenize", "--tokenizer", tok, "--txt", "x"} << 2 << "unknown option --txt";
    QTest::newRow("missing tokenizer file")
        << QStringList{"tokenize", "--tokenizer", "/nonexistent/tok.json", "--text", "x"} << 1
        << "/nonexistent/tok.json: cannot open the tokenizer file";
    QTest::newRow("missing text file")
        << QStringList{"tokenize", "--tokenizer", tok, "--text-file", "/nonexistent/t.txt"} << 1
        << "/nonexistent/t.txt: cannot open the text file";
    QTest::newRow("not a tokenizer")
        << QStringList{"tokenize", "--tokenizer", fixture("texts.jsonl"), "--text", "x"} << 1
        << "texts.jsonl: not valid JSON";
    QTest::newRow("bad ids") << QStringList{"detokenize", "--tokenizer", tok, "--ids", "1,x"} << 2
                             << "not an integer";
    QTest::newRow("id out of range")
        << QStringList{"detokenize", "--tokenizer", tok, "--ids", "1,99999"} << 1
        << "token id 99999 is out of range";
    QTest::newRow("no ids") << QStringList{"detokenize", "--tokenizer", tok} << 2
                            << "missing --ids";
  }
  void errorsGoToStderrWithNonZeroExit() {
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    const CliRun r = runCli(args);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
  }

  void badJsonLinesNameTheLine() {
    QTemporaryDir dir;
    const QString notJson = writeFile(dir, "a.jsonl", "\"fine\"\nnot json\n");
    CliRun r = runCli({"tokenize", "--tokenizer", fixture("glm_tokenizer.json"), "--jsonl", notJson});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("a.jsonl line 2: not a JSON string"), qPrintable(r.err));
    const QString number = writeFile(dir, "b.jsonl", "42\n");
    r = runCli({"tokenize", "--tokenizer", fixture("glm_tokenizer.json"), "--jsonl", number});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("b.jsonl line 1: expected a JSON string, found number"),
             qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestTokenizerCli)
#include "test_tokenizer_cli.moc"
