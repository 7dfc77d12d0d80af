// strata-cli run / chat with --grammar and --json-schema: a bad grammar or schema file is a
// clear error (exit status 1, the file, line and column or schema path named) before the model
// opens; a grammar constrains the answer of the bundled tiny model, after its free thinking.
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "json_schema_check.h"

namespace {

QString tinyModel() { return QString(STRATA_RESOURCES_DIR) + "/models/strata-tiny"; }

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
  QFile f(dir.filePath(name));
  if (!f.open(QIODevice::WriteOnly)) return {};
  f.write(text);
  return f.fileName();
}

// A small object, so that the answer always ends within the token limit.
const QByteArray kSchema =
    R"({"type": "object", "properties": {"answer": {"type": "string", "maxLength": 12},
        "sure": {"type": "boolean"}}, "required": ["answer", "sure"]})";

}  // namespace

class TestGrammarCli : public QObject {
  Q_OBJECT

 private slots:
  void badGrammarFileIsNamed() {
    QTemporaryDir dir;
    const QString file =
        writeFile(dir, "bad.gbnf", "root ::= answer\nanswer ::= \"yes\" | maybe\n");
    for (const char* command : {"run", "chat"}) {
      QStringList args = {command, "--model", tinyModel(), "--grammar", file};
      if (QString(command) == "run")
        args << "--prompt"
             << "hi";
      const CliRun r = runCli(args);
      QCOMPARE(r.exitCode, 1);
      QVERIFY2(r.err.contains(file + ": line 2, column 20: undefined rule 'maybe'"),
               qPrintable(r.err));
    }
  }

  void badSchemaFileIsNamed() {
    QTemporaryDir dir;
    const QString file =
        writeFile(dir, "bad.json", R"({"type": "object", "properties": {"a": {"type": "text"}}})");
    const CliRun r =
        runCli({"run", "--model", tinyModel(), "--prompt", "hi", "--json-schema", file});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(file + ": properties.a.type: unknown type \"text\""),
             qPrintable(r.err));
    const QString notJson = writeFile(dir, "not.json", "{oops");
    const CliRun n =
        runCli({"run", "--model", tinyModel(), "--prompt", "hi", "--json-schema", notJson});
    QCOMPARE(n.exitCode, 1);
    QVERIFY2(n.err.contains(notJson + ": schema: not valid JSON"), qPrintable(n.err));
  }

  void missingFileAndBothOptions() {
    const CliRun missing = runCli(
        {"run", "--model", tinyModel(), "--prompt", "hi", "--grammar", "/nonexistent/g.gbnf"});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.err.contains("/nonexistent/g.gbnf") && missing.err.contains("cannot open"),
             qPrintable(missing.err));
    QTemporaryDir dir;
    const QString g = writeFile(dir, "g.gbnf", "root ::= \"x\"");
    const CliRun both = runCli(
        {"run", "--model", tinyModel(), "--prompt", "hi", "--grammar", g, "--json-schema", g});
    QCOMPARE(both.exitCode, 2);
    QVERIFY2(both.err.contains("not both"), qPrintable(both.err));
  }

  // Needs the session to apply GenerateOptions::grammar. With --no-think the grammar shapes
  // the whole reply.
  void grammarConstrainsTheAnswer() {
    QTemporaryDir dir;
    const QString g = writeFile(dir, "yesno.gbnf", "root ::= (\"yes\" | \"no\") \".\"\n");
    const CliRun r =
        runCli({"run", "--model", tinyModel(), "--prompt", "Is Paris in France?", "--grammar", g,
                "--temperature", "0", "--max-new", "16", "--no-think"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out == "yes.\n" || r.out == "no.\n", r.out.constData());
    QVERIFY2(!r.err.contains("thinking:"), qPrintable(r.err));
  }

  // Thinking stays on with a grammar: the model thinks freely (shown apart, on stderr) and
  // the grammar shapes only the answer after `</think>`.
  void grammarStartsAfterThinking() {
    QTemporaryDir dir;
    const QString file = writeFile(dir, "schema.json", kSchema);
    const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(kSchema.toStdString());
    const CliRun r = runCli({"run", "--model", tinyModel(), "--prompt",
                             "Tell me about Paris as JSON.", "--json-schema", file,
                             "--temperature", "0", "--max-new", "96"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("thinking:"), qPrintable(r.err));
    const int thoughtAt = r.err.indexOf("thinking:");
    QVERIFY2(!r.err.mid(thoughtAt, r.err.indexOf('\n', thoughtAt) - thoughtAt).contains('{'),
             qPrintable(r.err));  // the thinking itself is free text, not the schema's JSON
    nlohmann::ordered_json answer;
    try {
      answer = nlohmann::ordered_json::parse(r.out.toStdString());
    } catch (const std::exception&) {
      QFAIL(qPrintable("not JSON: " + QString::fromUtf8(r.out)));
    }
    const std::string why = json_schema_check::check(answer, schema, schema);
    QVERIFY2(why.empty(),
             qPrintable(QString::fromUtf8(r.out) + ": " + QString::fromStdString(why)));
  }

  // Needs the session to apply GenerateOptions::grammar.
  void schemaConstrainsTheAnswer() {
    QTemporaryDir dir;
    const QString file = writeFile(dir, "schema.json", kSchema);
    const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(kSchema.toStdString());
    for (const char* seed : {"1", "2", "3"}) {
      const CliRun r = runCli({"run", "--model", tinyModel(), "--prompt",
                               "What is the capital of France? Answer in JSON.", "--json-schema",
                               file, "--temperature", "0.8", "--seed", seed, "--max-new", "160"});
      QVERIFY2(r.exitCode == 0, qPrintable(r.err));
      nlohmann::ordered_json answer;
      try {
        answer = nlohmann::ordered_json::parse(r.out.toStdString());
      } catch (const std::exception& e) {
        QFAIL(qPrintable("not JSON: " + QString::fromUtf8(r.out)));
      }
      const std::string why = json_schema_check::check(answer, schema, schema);
      QVERIFY2(why.empty(),
               qPrintable(QString::fromUtf8(r.out) + ": " + QString::fromStdString(why)));
    }
  }

  // Needs the session to apply GenerateOptions::grammar.
  void chatTurnsFollowTheGrammar() {
    QTemporaryDir dir;
    const QString g = writeFile(dir, "yesno.gbnf", "root ::= \"yes\" | \"no\"");
    const CliRun r = runCli(
        {"chat", "--model", tinyModel(), "--grammar", g, "--temperature", "0", "--max-new", "8",
         "--no-think"},
        "Is water wet?\nIs fire cold?\n");
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    for (const QString& line : lines) QVERIFY2(line == "yes" || line == "no", qPrintable(line));
  }
};

QTEST_GUILESS_MAIN(TestGrammarCli)
#include "test_grammar_cli.moc"
