// strata-cli serve over raw HTTP: endpoints, streaming, usage, errors, the API key, admission
// under load, keep-alive while queued, and a client disconnect freeing its slot.
#include <QElapsedTimer>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <cmath>

#include "engine/cli_runner.h"
#include "http_client.h"
#include "serve_process.h"

namespace {

const QString kQuestion = "What is the capital of France?";

QJsonObject chatRequest(const QString& question, int maxTokens) {
  return {{"model", "strata-tiny"},
          {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", question}}}},
          {"temperature", 0},
          {"max_tokens", maxTokens}};
}

// A request that generates exactly `tokens` tokens (ignore_eos), for load and cancel tests.
QJsonObject longStreamRequest(int tokens) {
  return {{"model", "strata-tiny"}, {"prompt", "a a a a a"}, {"temperature", 0},
          {"max_tokens", tokens},   {"ignore_eos", true},    {"stream", true}};
}

// JSON written with single quotes (readable in a table), as real JSON.
QByteArray quoted(QByteArray text) { return text.replace('\'', '"'); }

// An error response in the OpenAI shape: {"error": {"message", "type", "param", "code"}}.
bool isOpenAiError(const HttpResponse& r) {
  const QJsonObject e = r.json().value("error").toObject();
  return r.headers.value("content-type").startsWith("application/json") &&
         !e.value("message").toString().isEmpty() && !e.value("type").toString().isEmpty() &&
         e.contains("param") && e.contains("code");
}

// One streaming request whose bytes are read as they come.
struct StreamClient {
  QTcpSocket socket;
  QByteArray raw;

  bool send(quint16 port, const QJsonObject& body, const QByteArray& path = "/v1/completions") {
    socket.connectToHost("127.0.0.1", port);
    if (!socket.waitForConnected(5000)) return false;
    socket.write(
        requestBytes("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact), {}));
    return socket.waitForBytesWritten(5000);
  }
  bool readUntil(const QByteArray& marker, int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (!raw.contains(marker) && clock.elapsed() < timeoutMs) {
      socket.waitForReadyRead(20);
      raw += socket.readAll();
      if (socket.state() == QAbstractSocket::UnconnectedState) break;
    }
    return raw.contains(marker);
  }
};

// Polls /health until `done` holds for it; returns the milliseconds taken, or -1.
template <typename Pred>
qint64 waitForHealth(quint16 port, Pred done, int timeoutMs) {
  QElapsedTimer clock;
  clock.start();
  while (clock.elapsed() < timeoutMs) {
    const HttpResponse h = httpRequest(port, "GET", "/health");
    if (h.status == 200 && done(h.json())) return clock.elapsed();
    QThread::msleep(5);
  }
  return -1;
}

}  // namespace

class TestServeHttp : public QObject {
  Q_OBJECT

  ServeProcess server_;  // --slots 2 --queue 4, shared by most tests

 private slots:
  void initTestCase() {
    QVERIFY2(server_.start({"--slots", "2", "--queue", "4", "--max-body-bytes", "65536"}),
             qPrintable(server_.error));
  }

  void cleanupTestCase() {
    QCOMPARE(server_.stop(), 0);  // SIGTERM: a clean stop, exit status 0
  }

  void health() {
    const HttpResponse r = httpRequest(server_.port, "GET", "/health");
    QCOMPARE(r.status, 200);
    QCOMPARE(r.json().value("status").toString(), QString("ok"));
    QCOMPARE(r.json().value("slots").toInt(), 2);
    QCOMPARE(r.json().value("queue_capacity").toInt(), 4);
  }

  void models() {
    const HttpResponse r = httpRequest(server_.port, "GET", "/v1/models");
    QCOMPARE(r.status, 200);
    const QJsonArray data = r.json().value("data").toArray();
    QCOMPARE(data.size(), 1);
    QCOMPARE(data[0].toObject().value("id").toString(), QString("strata-tiny"));
    QCOMPARE(httpRequest(server_.port, "GET", "/v1/models/strata-tiny").status, 200);
    QCOMPARE(httpRequest(server_.port, "GET", "/v1/models/other").status, 404);
  }

  // The greedy answer and its token counts agree with what the CLI computes on its own path
  // (`run` for the answer and its length, `chat-format` + `tokenize` for the prompt).
  void chatMatchesCli() {
    const HttpResponse r =
        postJson(server_.port, "/v1/chat/completions", chatRequest(kQuestion, 64));
    QCOMPARE(r.status, 200);
    const QJsonObject j = r.json();
    QCOMPARE(j.value("object").toString(), QString("chat.completion"));
    const QJsonObject choice = j.value("choices").toArray()[0].toObject();
    const QString content = choice.value("message").toObject().value("content").toString();
    QVERIFY2(content.contains("Paris"), qPrintable(content));
    QCOMPARE(choice.value("finish_reason").toString(), QString("stop"));

    const QString model = QString(STRATA_RESOURCES_DIR) + "/models/strata-tiny";
    const CliRun run = runCli({"run", "--model", model, "--prompt", kQuestion, "--temperature", "0",
                               "--max-new", "64", "--threads", "1"});
    QCOMPARE(run.exitCode, 0);
    QCOMPARE(content, run.text().trimmed());
    const QRegularExpressionMatch tokens = QRegularExpression("\\[(\\d+) tokens").match(run.err);
    QVERIFY2(tokens.hasMatch(), qPrintable(run.err));
    const QJsonObject usage = j.value("usage").toObject();
    QCOMPARE(usage.value("completion_tokens").toInt(), tokens.captured(1).toInt());

    QTemporaryDir dir;
    QFile messages(dir.filePath("messages.json"));
    QVERIFY(messages.open(QIODevice::WriteOnly));
    messages.write(QJsonDocument(chatRequest(kQuestion, 64).value("messages").toArray()).toJson());
    messages.close();
    const CliRun prompt =
        runCli({"chat-format", "--messages", messages.fileName(), "--add-generation-prompt"});
    QCOMPARE(prompt.exitCode, 0);
    QFile promptFile(dir.filePath("prompt.txt"));
    QVERIFY(promptFile.open(QIODevice::WriteOnly));
    promptFile.write(prompt.out);
    promptFile.close();
    const CliRun ids = runCli({"tokenize", "--tokenizer", model + "/tokenizer.json", "--text-file",
                               promptFile.fileName()});
    QCOMPARE(ids.exitCode, 0);
    const int promptTokens = ids.text().trimmed().split(' ').size() - 1;  // "ids: a b c"
    QCOMPARE(usage.value("prompt_tokens").toInt(), promptTokens);
    QCOMPARE(usage.value("total_tokens").toInt(), promptTokens + tokens.captured(1).toInt());
  }

  // Streamed deltas concatenate to the non-streaming answer (reasoning and content), the last
  // chunks carry finish_reason and usage, and the stream ends with [DONE].
  void streamingMatchesNonStreaming_data() {
    QTest::addColumn<QString>("question");
    QTest::newRow("answer") << kQuestion;
    QTest::newRow("thinking") << "What is 3 + 4?";
  }

  void streamingMatchesNonStreaming() {
    QFETCH(QString, question);
    const HttpResponse plain =
        postJson(server_.port, "/v1/chat/completions", chatRequest(question, 64));
    QCOMPARE(plain.status, 200);
    const QJsonObject message =
        plain.json().value("choices").toArray()[0].toObject().value("message").toObject();

    QJsonObject body = chatRequest(question, 64);
    body["stream"] = true;
    body["stream_options"] = QJsonObject{{"include_usage", true}};
    const HttpResponse r = postJson(server_.port, "/v1/chat/completions", body);
    QCOMPARE(r.status, 200);
    QVERIFY(r.complete);
    QVERIFY(r.headers.value("content-type").startsWith("text/event-stream"));
    const QList<QByteArray> events = sseData(r.body);
    QVERIFY(events.size() >= 4);
    QCOMPARE(events.last(), QByteArray("[DONE]"));
    QString content, reasoning, finish;
    QJsonObject usage;
    for (qsizetype i = 0; i + 1 < events.size(); ++i) {
      const QJsonObject chunk = QJsonDocument::fromJson(events[i]).object();
      QCOMPARE(chunk.value("object").toString(), QString("chat.completion.chunk"));
      if (chunk.value("usage").isObject()) usage = chunk.value("usage").toObject();
      const QJsonArray choices = chunk.value("choices").toArray();
      if (choices.isEmpty()) continue;
      const QJsonObject delta = choices[0].toObject().value("delta").toObject();
      if (i == 0) QCOMPARE(delta.value("role").toString(), QString("assistant"));
      content += delta.value("content").toString();
      reasoning += delta.value("reasoning_content").toString();
      if (choices[0].toObject().value("finish_reason").isString())
        finish = choices[0].toObject().value("finish_reason").toString();
    }
    QCOMPARE(content, message.value("content").toString());
    QCOMPARE(reasoning, message.value("reasoning_content").toString());
    QCOMPARE(finish, QString("stop"));
    QCOMPARE(usage, plain.json().value("usage").toObject());
    if (question != kQuestion) QVERIFY2(!reasoning.isEmpty(), "the arithmetic answer thinks first");
  }

  // "logprobs": true, "top_logprobs": 3: one entry per reply token (the end token is not text),
  // whose texts spell the reply (reasoning, </think>, answer); the alternatives are three, most
  // likely first, the greedy choice the first of them; a stream carries the same entries on its
  // chunks, in order.
  void logprobs() {
    QJsonObject body = chatRequest("What is 2 + 3?", 64);
    body["logprobs"] = true;
    body["top_logprobs"] = 3;
    const HttpResponse plain = postJson(server_.port, "/v1/chat/completions", body);
    QCOMPARE(plain.status, 200);
    const QJsonObject choice = plain.json().value("choices").toArray()[0].toObject();
    const QJsonObject message = choice.value("message").toObject();
    const QJsonArray entries = choice.value("logprobs").toObject().value("content").toArray();
    QCOMPARE(plain.json().value("usage").toObject().value("completion_tokens").toInt(),
             entries.size() + 1);  // + the end token
    QString spelled;
    for (const QJsonValue& v : entries) {
      const QJsonObject e = v.toObject();
      spelled += e.value("token").toString();
      QVERIFY(e.value("logprob").toDouble() <= 0);
      const QJsonArray top = e.value("top_logprobs").toArray();
      QCOMPARE(top.size(), 3);
      QCOMPARE(top[0].toObject().value("token").toString(), e.value("token").toString());
      QCOMPARE(top[0].toObject().value("logprob").toDouble(), e.value("logprob").toDouble());
      QVERIFY(top[0].toObject().value("logprob").toDouble() >= top[1].toObject().value("logprob").toDouble());
      QVERIFY(top[1].toObject().value("logprob").toDouble() >= top[2].toObject().value("logprob").toDouble());
      QByteArray bytes;
      for (const QJsonValue& b : e.value("bytes").toArray()) bytes += char(b.toInt());
      QCOMPARE(QString::fromUtf8(bytes), e.value("token").toString());
    }
    QCOMPARE(spelled, message.value("reasoning_content").toString() + "</think>" +
                          message.value("content").toString());

    body["stream"] = true;
    const HttpResponse streamed = postJson(server_.port, "/v1/chat/completions", body);
    QCOMPARE(streamed.status, 200);
    QJsonArray streamedEntries;
    for (const QByteArray& event : sseData(streamed.body)) {
      if (event == "[DONE]") continue;
      const QJsonObject c = QJsonDocument::fromJson(event).object().value("choices").toArray()[0].toObject();
      for (const QJsonValue& v : c.value("logprobs").toObject().value("content").toArray()) streamedEntries.append(v);
    }
    // The same tokens and numbers (up to float rounding: the second request may reuse the
    // first one's cached prompt and evaluate its last token in another form).
    QCOMPARE(streamedEntries.size(), entries.size());
    for (qsizetype i = 0; i < entries.size(); ++i) {
      const QJsonObject a = entries[i].toObject(), b = streamedEntries[i].toObject();
      QCOMPARE(b.value("token"), a.value("token"));
      QVERIFY(std::abs(b.value("logprob").toDouble() - a.value("logprob").toDouble()) < 1e-4);
      QCOMPARE(b.value("top_logprobs").toArray().size(), 3);
    }

    // A stop string ends the reply inside the model's text: the tokens past it are not listed.
    QJsonObject stopped = chatRequest("Hi", 32);
    stopped["chat_template_kwargs"] = QJsonObject{{"enable_thinking", false}};
    stopped["logprobs"] = true;
    stopped["stop"] = "help";
    for (const bool stream : {false, true}) {
      stopped["stream"] = stream;
      const HttpResponse r = postJson(server_.port, "/v1/chat/completions", stopped);
      QCOMPARE(r.status, 200);
      QString text, tokens;
      if (!stream) {
        const QJsonObject c = r.json().value("choices").toArray()[0].toObject();
        text = c.value("message").toObject().value("content").toString();
        for (const QJsonValue& v : c.value("logprobs").toObject().value("content").toArray())
          tokens += v.toObject().value("token").toString();
      } else {
        for (const QByteArray& event : sseData(r.body)) {
          if (event == "[DONE]") continue;
          const QJsonObject c = QJsonDocument::fromJson(event).object().value("choices").toArray()[0].toObject();
          text += c.value("delta").toObject().value("content").toString();
          for (const QJsonValue& v : c.value("logprobs").toObject().value("content").toArray())
            tokens += v.toObject().value("token").toString();
        }
      }
      QVERIFY2(text.startsWith("Hello") && !text.contains("help"), qPrintable(text));
      QVERIFY2(!tokens.contains("help") && tokens.startsWith(text.trimmed()), qPrintable(tokens + " | " + text));
    }

    // Not asked: null, as OpenAI answers.
    QVERIFY(postJson(server_.port, "/v1/chat/completions", chatRequest("Hi", 8))
                .json().value("choices").toArray()[0].toObject().value("logprobs").isNull());
  }

  void completions() {
    const QJsonObject request{{"model", "strata-tiny"},
                              {"prompt", "The capital of France is"},
                              {"max_tokens", 5},
                              {"temperature", 0},
                              {"ignore_eos", true}};
    const HttpResponse plain = postJson(server_.port, "/v1/completions", request);
    QCOMPARE(plain.status, 200);
    const QJsonObject choice = plain.json().value("choices").toArray()[0].toObject();
    QCOMPARE(plain.json().value("object").toString(), QString("text_completion"));
    QCOMPARE(choice.value("finish_reason").toString(), QString("length"));
    QCOMPARE(plain.json().value("usage").toObject().value("completion_tokens").toInt(), 5);

    QJsonObject streamed = request;
    streamed["stream"] = true;
    const HttpResponse r = postJson(server_.port, "/v1/completions", streamed);
    QCOMPARE(r.status, 200);
    QString text;
    const QList<QByteArray> events = sseData(r.body);
    QCOMPARE(events.last(), QByteArray("[DONE]"));
    for (qsizetype i = 0; i + 1 < events.size(); ++i)
      text += QJsonDocument::fromJson(events[i])
                  .object()
                  .value("choices")
                  .toArray()[0]
                  .toObject()
                  .value("text")
                  .toString();
    QCOMPARE(text, choice.value("text").toString());

    // The older logprobs shape ("logprobs": N alternatives): tokens spelling the text, their
    // character offsets, N alternatives each with the greedy choice among them; streamed, the
    // chunks' lists joined are the same and the offsets run on across chunks.
    QJsonObject scored = request;
    scored["logprobs"] = 2;
    const QJsonObject lp = postJson(server_.port, "/v1/completions", scored)
                               .json().value("choices").toArray()[0].toObject()
                               .value("logprobs").toObject();
    const QJsonArray tokens = lp.value("tokens").toArray();
    QCOMPARE(tokens.size(), 5);
    QString spelled;
    for (qsizetype i = 0; i < tokens.size(); ++i) {
      QCOMPARE(lp.value("text_offset").toArray()[i].toInt(), spelled.size());
      spelled += tokens[i].toString();
      const double logprob = lp.value("token_logprobs").toArray()[i].toDouble();
      QVERIFY(logprob <= 0);
      const QJsonObject top = lp.value("top_logprobs").toArray()[i].toObject();
      QVERIFY(top.size() >= 1 && top.size() <= 2);
      QCOMPARE(top.value(tokens[i].toString()).toDouble(), logprob);
    }
    QCOMPARE(spelled, choice.value("text").toString());
    scored["stream"] = true;
    QStringList streamedTokens;
    QList<int> streamedOffsets;
    for (const QByteArray& event : sseData(postJson(server_.port, "/v1/completions", scored).body)) {
      if (event == "[DONE]") continue;
      const QJsonObject c = QJsonDocument::fromJson(event).object().value("choices").toArray()[0].toObject();
      for (const QJsonValue& t : c.value("logprobs").toObject().value("tokens").toArray())
        streamedTokens << t.toString();
      for (const QJsonValue& o : c.value("logprobs").toObject().value("text_offset").toArray())
        streamedOffsets << o.toInt();
    }
    QCOMPARE(streamedTokens.join(""), spelled);
    QCOMPARE(streamedOffsets.size(), tokens.size());
    for (qsizetype i = 0; i < tokens.size(); ++i)
      QCOMPARE(streamedOffsets[i], lp.value("text_offset").toArray()[i].toInt());
  }

  void badRequests_data() {
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("param");
    const QByteArray chat = "/v1/chat/completions";
    // Bodies are written with ' for " (see quoted()).
    const QByteArray messages = "'messages': [{'role': 'user', 'content': 'Hi'}]";
    QTest::newRow("malformed JSON")
        << QByteArray("POST") << chat << quoted("{'model': 'strata-tiny', ") << 400 << "";
    QTest::newRow("not an object") << QByteArray("POST") << chat << quoted("[1]") << 400 << "";
    QTest::newRow("temperature type")
        << QByteArray("POST") << chat
        << quoted("{'model': 'strata-tiny', 'temperature': 'hot', " + messages + "}") << 400
        << "temperature";
    QTest::newRow("max_tokens type")
        << QByteArray("POST") << chat
        << quoted("{'model': 'strata-tiny', 'max_tokens': 'many', " + messages + "}") << 400
        << "max_tokens";
    QTest::newRow("messages type")
        << QByteArray("POST") << chat
        << quoted("{'model': 'strata-tiny', 'messages': {'role': 'user'}}") << 400 << "messages";
    QTest::newRow("message content type")
        << QByteArray("POST") << chat
        << quoted("{'model': 'strata-tiny', 'messages': [{'role': 'user', 'content': 5}]}") << 400
        << "messages";
    QTest::newRow("prompt type") << QByteArray("POST") << QByteArray("/v1/completions")
                                 << quoted("{'model': 'strata-tiny', 'prompt': {'text': 'x'}}")
                                 << 400 << "prompt";
    const QByteArray completions = "/v1/completions";
    QTest::newRow("logit_bias outside the vocabulary")
        << QByteArray("POST") << chat
        << quoted("{'model': 'strata-tiny', 'logit_bias': {'3072': -100}, " + messages + "}") << 400
        << "logit_bias";
    QTest::newRow("n beyond slots and queue")
        << QByteArray("POST") << chat
        << quoted("{'model': 'strata-tiny', 'n': 7, " + messages + "}") << 400 << "n";
    QTest::newRow("prompt batch beyond slots and queue")  // this server: 2 slots, a queue of 4
        << QByteArray("POST") << completions
        << quoted("{'model': 'strata-tiny', 'prompt': ['a', 'b', 'c', 'd', 'e', 'f', 'g']}") << 400
        << "prompt";
    QTest::newRow("prompt token id")
        << QByteArray("POST") << completions
        << quoted("{'model': 'strata-tiny', 'prompt': [1, -2]}") << 400 << "prompt";
    QTest::newRow("prompt token outside the vocabulary")
        << QByteArray("POST") << completions
        << quoted("{'model': 'strata-tiny', 'prompt': [[1, 99999]]}") << 400 << "prompt";
    QTest::newRow("max_tokens 0 without echo")
        << QByteArray("POST") << completions
        << quoted("{'model': 'strata-tiny', 'prompt': 'a', 'max_tokens': 0}") << 400
        << "max_tokens";
    QTest::newRow("chat max_tokens 0")
        << QByteArray("POST") << chat
        << quoted("{'model': 'strata-tiny', 'max_tokens': 0, " + messages + "}") << 400
        << "max_tokens";
    QTest::newRow("unknown model")
        << QByteArray("POST") << chat << quoted("{'model': 'gpt-4o', " + messages + "}") << 404
        << "model";
    QTest::newRow("unknown route")
        << QByteArray("GET") << QByteArray("/v1/embeddings") << QByteArray() << 404 << "";
    QTest::newRow("oversized body") << QByteArray("POST") << chat
                                    << quoted("{'model': 'strata-tiny', 'pad': '" +
                                              QByteArray(100000, 'x') + "', " + messages + "}")
                                    << 413 << "";
  }

  void badRequests() {
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, path);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, param);
    const HttpResponse r = httpRequest(server_.port, method, path, body);
    QCOMPARE(r.status, status);
    QVERIFY2(isOpenAiError(r), r.body.constData());
    if (!param.isEmpty())
      QCOMPARE(r.json().value("error").toObject().value("param").toString(), param);
    QVERIFY(server_.running());
    QCOMPARE(httpRequest(server_.port, "GET", "/health").status, 200);
  }

  void apiKeyAndCors() {
    QVERIFY(!httpRequest(server_.port, "GET", "/v1/models")
                 .headers.contains("access-control-allow-origin"));
    ServeProcess secured;
    QVERIFY2(secured.start({"--api-key", "s3cret-key", "--cors"}), qPrintable(secured.error));
    const HttpResponse preflight =
        httpRequest(secured.port, "OPTIONS", "/v1/chat/completions", {},
                    {"Origin: http://example.com", "Access-Control-Request-Method: POST"});
    QCOMPARE(preflight.status, 204);  // preflights carry no key
    QCOMPARE(preflight.headers.value("access-control-allow-origin"), QByteArray("*"));
    QVERIFY(preflight.headers.value("access-control-allow-headers").contains("Authorization"));
    const HttpResponse missing = httpRequest(secured.port, "GET", "/v1/models");
    QCOMPARE(missing.status, 401);
    QVERIFY(isOpenAiError(missing));
    QCOMPARE(
        httpRequest(secured.port, "GET", "/v1/models", {}, {"Authorization: Bearer s3cret-kez"})
            .status,
        401);
    QCOMPARE(
        httpRequest(secured.port, "GET", "/v1/models", {}, {"Authorization: Bearer s3cret-key2"})
            .status,
        401);
    QCOMPARE(postJson(secured.port, "/v1/chat/completions", chatRequest(kQuestion, 8)).status, 401);
    QCOMPARE(
        httpRequest(secured.port, "GET", "/v1/models", {}, {"Authorization: Bearer s3cret-key"})
            .status,
        200);
    QCOMPARE(httpRequest(secured.port, "GET", "/health").status, 200);  // probes need no key
    // The tokenizer endpoints are guarded too.
    QCOMPARE(postJson(secured.port, "/tokenize", {{"content", "Hi"}}).status, 401);
    QCOMPARE(postJson(secured.port, "/tokenize", {{"content", "Hi"}},
                      {"Authorization: Bearer s3cret-key"})
                 .status,
             200);
    QCOMPARE(secured.stop(), 0);
  }

  // The per-request timeout cancels generation (504), the prompt limit refuses long prompts
  // (400).
  void limitsAndShutdown() {
    ServeProcess limited;
    QVERIFY2(limited.start({"--timeout-s", "0.5", "--max-prompt-tokens", "20"}),
             qPrintable(limited.error));
    QJsonObject slow = longStreamRequest(20000);
    slow.remove("stream");
    QElapsedTimer clock;
    clock.start();
    const HttpResponse timedOut = postJson(limited.port, "/v1/completions", slow);
    QCOMPARE(timedOut.status, 504);
    QVERIFY(isOpenAiError(timedOut));
    QCOMPARE(timedOut.json().value("error").toObject().value("code").toString(),
             QString("timeout"));
    QVERIFY2(clock.elapsed() < 5000, "the timeout did not cancel generation");
    QCOMPARE(waitForHealth(
                 limited.port, [](const QJsonObject& h) { return h.value("active").toInt() == 0; },
                 2000) >= 0,
             true);

    const HttpResponse tooLong = postJson(limited.port, "/v1/chat/completions",
                                          chatRequest(QString("word ").repeated(40), 8));
    QCOMPARE(tooLong.status, 400);
    QCOMPARE(tooLong.json().value("error").toObject().value("code").toString(),
             QString("context_length_exceeded"));
    QCOMPARE(limited.stop(), 0);
  }

  // `clients` streaming requests of `tokens` tokens at once: every response is either a
  // complete stream ending in [DONE] or a 429 with Retry-After, at least `minAdmitted` are
  // admitted and at least `minRejected` refused. (How many more are admitted depends on how
  // fast the first ones finish; fullQueueRejects pins that down.)
  static void admitUnderLoad(quint16 port, int clients, int tokens, int minAdmitted, int minRejected) {
    std::vector<std::unique_ptr<StreamClient>> streams;
    for (int i = 0; i < clients; ++i) {
      streams.push_back(std::make_unique<StreamClient>());
      QVERIFY(streams.back()->send(port, longStreamRequest(tokens)));
    }
    QElapsedTimer clock;
    clock.start();
    bool open = true;
    while (open && clock.elapsed() < 120000) {
      open = false;
      for (auto& c : streams) {
        if (c->socket.state() == QAbstractSocket::UnconnectedState) continue;
        open = true;
        c->socket.waitForReadyRead(5);
        c->raw += c->socket.readAll();
      }
    }
    QVERIFY2(!open, "some responses did not end within two minutes");
    int completed = 0, rejected = 0;
    for (auto& c : streams) {
      c->raw += c->socket.readAll();
      const HttpResponse r = parseHttpResponse(c->raw);
      QVERIFY2(r.complete, c->raw.left(200).constData());
      if (r.status == 429) {
        QVERIFY(isOpenAiError(r));
        QCOMPARE(r.headers.value("retry-after"), QByteArray("1"));
        ++rejected;
        continue;
      }
      QCOMPARE(r.status, 200);
      const QList<QByteArray> events = sseData(r.body);
      QCOMPARE(events.last(), QByteArray("[DONE]"));
      const QJsonObject last = QJsonDocument::fromJson(events[events.size() - 2]).object();
      QCOMPARE(last.value("choices").toArray()[0].toObject().value("finish_reason").toString(),
               QString("length"));
      ++completed;
    }
    QCOMPARE(completed + rejected, clients);
    QVERIFY2(completed >= minAdmitted, qPrintable(QString("only %1 admitted").arg(completed)));
    QVERIFY2(rejected >= minRejected, qPrintable(QString("only %1 rejected").arg(rejected)));
    qInfo("%d admitted, %d rejected with 429", completed, rejected);
    const HttpResponse health = httpRequest(port, "GET", "/health");
    QCOMPARE(health.json().value("active").toInt(), 0);
    QCOMPARE(health.json().value("queued").toInt(), 0);
  }

  // 12 clients against the shared server's 2 slots and queue of 4.
  void boundedAdmission() { admitUnderLoad(server_.port, 12, 300, 6, 0); }

  // The load test: 32 clients against --slots 2 --queue 8, each asking for 4000 tokens
  // (seconds of work, so the 32 connect long before a place frees up). Every admitted request
  // completes, the excess gets 429, the server stays up, and its memory stays bounded: the
  // peak RSS after the burst is within 64 MiB of the peak after a warm-up request.
  void thirtyTwoClients() {
    ServeProcess server;
    QVERIFY2(server.start({"--slots", "2", "--queue", "8"}), qPrintable(server.error));
    QCOMPARE(postJson(server.port, "/v1/chat/completions", chatRequest(kQuestion, 8)).status, 200);
    const long long before = server.peakRssBytes();
    QVERIFY(before > 0);
    admitUnderLoad(server.port, 32, 4000, 10, 16);
    if (QTest::currentTestFailed()) return;
    QVERIFY(server.running());
    const long long after = server.peakRssBytes();
    qInfo("server peak RSS %.1f MiB after one request, %.1f MiB after 32 clients", before / 1048576.0,
          after / 1048576.0);
    QVERIFY2(after - before < (64LL << 20), "memory grew with the number of clients");
    QCOMPARE(server.stop(), 0);
  }

  // With both slots busy and the 4 queue places taken by streams that will not end by
  // themselves, each further request gets 429 at once; when those clients leave, everything
  // is freed (running ones after a token, queued ones at their next keep-alive write).
  void fullQueueRejects() {
    std::vector<std::unique_ptr<StreamClient>> holders;
    for (int i = 0; i < 6; ++i) {
      holders.push_back(std::make_unique<StreamClient>());
      QVERIFY(holders.back()->send(server_.port, longStreamRequest(20000)));
    }
    const auto full = [](const QJsonObject& h) {
      return h.value("active").toInt() == 2 && h.value("queued").toInt() == 4;
    };
    QVERIFY2(waitForHealth(server_.port, full, 10000) >= 0, "the six requests were not all admitted");
    for (int i = 0; i < 6; ++i) {
      QElapsedTimer clock;
      clock.start();
      const HttpResponse r = postJson(server_.port, "/v1/chat/completions", chatRequest(kQuestion, 8));
      QCOMPARE(r.status, 429);
      QVERIFY(isOpenAiError(r));
      QCOMPARE(r.headers.value("retry-after"), QByteArray("1"));
      QVERIFY2(clock.elapsed() < 2000, "a rejection should not wait for a slot");
    }
    for (auto& h : holders) h->socket.abort();
    const auto idle = [](const QJsonObject& h) {
      return h.value("active").toInt() == 0 && h.value("queued").toInt() == 0;
    };
    const qint64 freed = waitForHealth(server_.port, idle, 5000);
    QVERIFY2(freed >= 0, "slots and queue were not freed after the clients left");
    qInfo("2 running and 4 queued requests freed %lld ms after their clients left", freed);
  }

  // One slot, a queue of one. A long stream runs; a second waits in the queue and receives
  // keep-alive comments; closing either frees its place; the next request is served.
  void disconnectFreesSlot() {
    ServeProcess single;
    QVERIFY2(single.start({"--slots", "1", "--queue", "1"}), qPrintable(single.error));
    // 20000 tokens take tens of seconds: only a cancel frees the slot within the test's limits.
    StreamClient running, waiting;
    QVERIFY(running.send(single.port, longStreamRequest(20000)));
    QVERIFY(running.readUntil("\"text\"", 10000));
    QVERIFY(waiting.send(single.port, longStreamRequest(10)));
    QVERIFY2(waiting.readUntil(": keep-alive", 5000), waiting.raw.constData());
    QVERIFY(!waiting.raw.contains("\"text\""));  // still queued

    waiting.socket.abort();
    const qint64 dequeued = waitForHealth(
        single.port, [](const QJsonObject& h) { return h.value("queued").toInt() == 0; }, 5000);
    QVERIFY2(dequeued >= 0, "the queued request was not dropped after its client left");

    running.socket.abort();
    const qint64 freed = waitForHealth(
        single.port, [](const QJsonObject& h) { return h.value("active").toInt() == 0; }, 2000);
    QVERIFY2(freed >= 0, "the slot was not freed within 2 s of the client leaving");
    qInfo(
        "slot free %lld ms after the streaming client disconnected; queued request dropped after "
        "%lld ms",
        freed, dequeued);

    QElapsedTimer clock;
    clock.start();
    const HttpResponse next =
        postJson(single.port, "/v1/chat/completions", chatRequest(kQuestion, 64));
    QCOMPARE(next.status, 200);
    QVERIFY(next.json()
                .value("choices")
                .toArray()[0]
                .toObject()
                .value("message")
                .toObject()
                .value("content")
                .toString()
                .contains("Paris"));
    qInfo("the next request was answered in %lld ms", clock.elapsed());

    // A non-streaming request writes nothing until it is done; its client hanging up is still
    // seen and its slot freed (the job would otherwise generate for tens of seconds).
    QJsonObject quiet = longStreamRequest(20000);
    quiet.insert("stream", false);
    StreamClient silent;
    QVERIFY(silent.send(single.port, quiet));
    QVERIFY(waitForHealth(single.port, [](const QJsonObject& h) { return h.value("active").toInt() == 1; }, 5000) >= 0);
    QThread::msleep(300);  // generating
    silent.socket.abort();
    const qint64 quietFreed = waitForHealth(
        single.port, [](const QJsonObject& h) { return h.value("active").toInt() == 0; }, 2000);
    QVERIFY2(quietFreed >= 0, "the slot was not freed within 2 s of the non-streaming client leaving");
    qInfo("slot free %lld ms after a non-streaming client disconnected", quietFreed);

    // SIGTERM while a stream runs: the stream is cancelled and the server exits cleanly.
    StreamClient last;
    QVERIFY(last.send(single.port, longStreamRequest(20000)));
    QVERIFY(last.readUntil("\"text\"", 10000));
    clock.restart();
    QCOMPARE(single.stop(), 0);
    qInfo("stopped with a stream running in %lld ms", clock.elapsed());
  }
};

QTEST_GUILESS_MAIN(TestServeHttp)
#include "test_serve_http.moc"
