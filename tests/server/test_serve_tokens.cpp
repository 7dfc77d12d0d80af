// strata-cli serve's /tokenize and /detokenize in llama.cpp's and vLLM's request shapes: text
// gives the CLI tokenizer's ids, messages give the ids of the prompt the chat endpoint renders
// (their count is a chat request's usage.prompt_tokens), ids give back their text, and bad
// input is a 400 naming the field. The API key guarding them is in test_serve_http.
#include <QJsonArray>
#include <QtTest>

#include "engine/cli_runner.h"
#include "http_client.h"
#include "serve_process.h"

class TestServeTokens : public QObject {
  Q_OBJECT

  ServeProcess server_;

  QJsonObject post(const QByteArray& path, const QJsonObject& body, int status = 200) {
    const HttpResponse r = postJson(server_.port, path, body);
    if (r.status != status) qWarning() << path << r.status << r.body;
    return r.status == status ? r.json() : QJsonObject{{"unexpected status", r.status}};
  }

 private slots:
  void initTestCase() {
    QVERIFY2(server_.start({"--max-prompt-tokens", "500"}), qPrintable(server_.error));
  }

  void cleanupTestCase() { QCOMPARE(server_.stop(), 0); }

  void textBothWays() {
    const QString text = "The capital of Kenya is Nairobi. Ünïcödé too.";
    const CliRun cli = runCli({"tokenize", "--tokenizer",
                               QString(STRATA_RESOURCES_DIR) + "/models/strata-tiny/tokenizer.json",
                               "--text", text});
    QCOMPARE(cli.exitCode, 0);
    QJsonArray expected;
    for (const QString& id : cli.text().trimmed().mid(5).split(' ')) expected.append(id.toInt());

    const QJsonObject llama = post("/tokenize", {{"content", text}});
    QCOMPARE(llama.value("tokens").toArray(), expected);
    QCOMPARE(llama.value("count").toInt(), expected.size());
    QCOMPARE(llama.value("max_model_len").toInt(), 500);
    const QJsonObject vllm = post("/tokenize", {{"model", "strata-tiny"}, {"prompt", text}});
    QCOMPARE(vllm.value("tokens").toArray(), expected);

    // Pieces: each id with its text; together they spell the input.
    const QJsonArray pieces =
        post("/tokenize", {{"content", text}, {"with_pieces", true}}).value("tokens").toArray();
    QCOMPARE(pieces.size(), expected.size());
    QByteArray spelled;
    for (qsizetype i = 0; i < pieces.size(); ++i) {
      const QJsonObject p = pieces[i].toObject();
      QCOMPARE(p.value("id"), expected[i]);
      if (p.value("piece").isString()) {
        spelled += p.value("piece").toString().toUtf8();
      } else {  // bytes of a split character
        for (const QJsonValue& b : p.value("piece").toArray()) spelled += char(b.toInt());
      }
    }
    QCOMPARE(QString::fromUtf8(spelled), text);

    const QJsonObject back = post("/detokenize", {{"tokens", expected}});
    QCOMPARE(back.value("content").toString(), text);
    QCOMPARE(back.value("prompt").toString(), text);
  }

  // Messages count as the chat endpoint's prompt: usage.prompt_tokens of the same request.
  void messagesCountAsTheChatPrompt() {
    const QJsonArray messages{QJsonObject{{"role", "system"}, {"content", "Be brief."}},
                              QJsonObject{{"role", "user"}, {"content", "What is 2 + 3?"}}};
    const QJsonArray tools{
        QJsonObject{{"type", "function"},
                    {"function", QJsonObject{{"name", "add"},
                                             {"description", "Adds two numbers"},
                                             {"parameters", QJsonObject{{"type", "object"}}}}}}};
    for (const bool withTools : {false, true}) {
      QJsonObject request{{"model", "strata-tiny"}, {"messages", messages}, {"max_tokens", 1}};
      if (withTools) request["tools"] = tools;
      const int usage = post("/v1/chat/completions", request)
                            .value("usage")
                            .toObject()
                            .value("prompt_tokens")
                            .toInt();
      QJsonObject tokenize{{"messages", messages}};
      if (withTools) tokenize["tools"] = tools;
      const QJsonObject counted = post("/tokenize", tokenize);
      QVERIFY(usage > 10);
      QCOMPARE(counted.value("count").toInt(), usage);
      QCOMPARE(counted.value("tokens").toArray().size(), usage);
    }
    // Thinking off renders another prompt ("</think>" closed at once).
    const QJsonObject on = post("/tokenize", {{"messages", messages}});
    const QJsonObject off =
        post("/tokenize", {{"messages", messages},
                           {"chat_template_kwargs", QJsonObject{{"enable_thinking", false}}}});
    QVERIFY(on.value("tokens") != off.value("tokens"));
  }

  void badInputIsNamed_data() {
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("param");
    QTest::newRow("nothing to tokenize")
        << QByteArray("/tokenize") << QByteArray("{}") << "content";
    QTest::newRow("content type") << QByteArray("/tokenize") << QByteArray(R"({"content": 5})")
                                  << "content";
    QTest::newRow("messages type")
        << QByteArray("/tokenize") << QByteArray(R"({"messages": "hi"})") << "messages";
    QTest::newRow("not JSON") << QByteArray("/tokenize") << QByteArray("{") << "";
    QTest::newRow("no tokens") << QByteArray("/detokenize") << QByteArray("{}") << "tokens";
    QTest::newRow("tokens type") << QByteArray("/detokenize") << QByteArray(R"({"tokens": 5})")
                                 << "tokens";
    QTest::newRow("token outside the vocabulary")
        << QByteArray("/detokenize") << QByteArray(R"({"tokens": [1, 3072]})") << "tokens";
    QTest::newRow("negative token")
        << QByteArray("/detokenize") << QByteArray(R"({"tokens": [-1]})") << "tokens";
  }
  void badInputIsNamed() {
    QFETCH(QByteArray, path);
    QFETCH(QByteArray, body);
    QFETCH(QString, param);
    const HttpResponse r = httpRequest(server_.port, "POST", path, body);
    QCOMPARE(r.status, 400);
    const QJsonObject error = r.json().value("error").toObject();
    QVERIFY2(!error.value("message").toString().isEmpty(), r.body.constData());
    if (!param.isEmpty()) QCOMPARE(error.value("param").toString(), param);
  }
};

QTEST_GUILESS_MAIN(TestServeTokens)
#include "test_serve_tokens.moc"
