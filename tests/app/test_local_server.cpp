// The app's OpenAI-compatible server with the bundled tiny model, through the engine bridge:
// real HTTP requests get answers, a stopped server's port refuses connections, a port in use is
// an error message (the app keeps working), the server waits for a model and follows a reload,
// the chat and API clients share the model, a client hanging up frees its slot, and the
// bridge's end stops the server.
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>
#include <memory>

#include "bridge/engine_bridge.h"
#include "bridge/local_server.h"
#include "local_http.h"
#include "strata/engine.h"

using namespace strata::app;
using namespace strata::app::test;

namespace {

constexpr int kLoadMs = 60000;

LoadRequest tinyModel() {
  LoadRequest r;
  r.modelDir = QStringLiteral(STRATA_TINY_MODEL_DIR);
  r.threads = 2;
  return r;
}

ServerRequest onPort(int port) {
  ServerRequest r;
  r.port = port;
  return r;
}

QString url(int port, const char* path) {
  return QStringLiteral("http://127.0.0.1:%1%2").arg(port).arg(QLatin1String(path));
}

GenerateRequest capitalQuestion() {
  GenerateRequest r;
  r.messages.append({QStringLiteral("user"), QStringLiteral("What is the capital of France?"), {}});
  r.thinking = false;
  r.temperature = 0;
  r.maxTokens = 64;
  return r;
}

// A chat completion's answer: 200, one choice, the model's folder name, 1 to 4 tokens.
void checkChatCompletion(const HttpReply& reply) {
  QVERIFY2(reply.status == 200, qPrintable(reply.error + QLatin1Char(' ') + reply.body));
  const QJsonObject json = reply.json();
  QCOMPARE(json.value(QStringLiteral("object")).toString(), QStringLiteral("chat.completion"));
  QCOMPARE(json.value(QStringLiteral("model")).toString(), QStringLiteral("strata-tiny"));
  const QJsonArray choices = json.value(QStringLiteral("choices")).toArray();
  QCOMPARE(choices.size(), 1);
  QVERIFY(choices.first().toObject().value(QStringLiteral("message")).isObject());
  const int tokens = json.value(QStringLiteral("usage"))
                         .toObject()
                         .value(QStringLiteral("completion_tokens"))
                         .toInt();
  QVERIFY2(tokens >= 1 && tokens <= 4, qPrintable(QString::number(tokens)));
}

// Sends a streaming chat completion of 4000 tokens (end-of-sequence ignored) and waits for its
// first bytes. "Connection: close": httplib keeps an idle keep-alive connection up to 5 s, and a
// stop waits for it.
bool startLongStream(QTcpSocket& client, int port) {
  const QByteArray body = QByteArrayLiteral(
      R"({"model":"strata-tiny","max_tokens":4000,"ignore_eos":true,"stream":true,)"
      R"("messages":[{"role":"user","content":"Tell me a story."}]})");
  client.connectToHost(QHostAddress::LocalHost, static_cast<quint16>(port));
  if (!client.waitForConnected(3000)) return false;
  client.write(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      QByteArray::number(body.size()) + "\r\n\r\n" + body);
  return client.waitForBytesWritten(3000) && client.waitForReadyRead(10000);
}

}  // namespace

class TestLocalServer : public QObject {
  Q_OBJECT
 private slots:
  void aTakenPortIsAnErrorMessage() {
    const auto engine = strata::Engine::open(STRATA_TINY_MODEL_DIR);
    strata::server::ServerSettings settings;
    settings.modelId = "strata-tiny";

    // Taken by another program.
    QTcpServer other;
    QVERIFY(other.listen(QHostAddress::LocalHost, 0));
    settings.port = other.serverPort();
    LocalServer blocked;
    const std::string error = blocked.start(*engine, settings);
    QVERIFY2(QString::fromStdString(error).contains(QStringLiteral(":%1").arg(settings.port)),
             error.c_str());
    QVERIFY(!blocked.running());
    other.close();

    // Taken by another server of ours: httplib's SO_REUSEPORT alone would let both bind.
    settings.port = freePort();
    LocalServer first, second;
    QCOMPARE(first.start(*engine, settings), std::string());
    QVERIFY(first.running());
    QCOMPARE(first.port(), settings.port);
    const std::string again = second.start(*engine, settings);
    QVERIFY2(again.find("already listens") != std::string::npos, again.c_str());
    QVERIFY(!second.running());
    QCOMPARE(httpRequest(url(settings.port, "/health")).status, 200);

    first.stop();
    QVERIFY(!first.running());
    QVERIFY(connectionRefused(settings.port));
    // The port is free again for the next start.
    QCOMPARE(second.start(*engine, settings), std::string());
    QCOMPARE(httpRequest(url(settings.port, "/health")).status, 200);

    // A connection the server closed itself leaves it a TIME_WAIT socket on the port for a
    // minute; that is not "in use": a restart there works.
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, static_cast<quint16>(settings.port));
    QVERIFY(client.waitForConnected(3000));
    client.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    QVERIFY(client.state() == QAbstractSocket::UnconnectedState ||
            client.waitForDisconnected(5000));  // closed by the server
    QVERIFY(client.readAll().startsWith("HTTP/1.1 200"));
    second.stop();
    QCOMPARE(second.start(*engine, settings), std::string());
    QCOMPARE(httpRequest(url(settings.port, "/health")).status, 200);
  }

  void serverAnswersThroughTheBridgeAndStops() {
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(kLoadMs));
    const int port = freePort();
    ServerRequest request = onPort(port);
    request.slotCount = 3;
    bridge.startServer(request);
    QTRY_VERIFY_WITH_TIMEOUT(bridge.serverRunning(), 10000);
    QCOMPARE(bridge.serverUrl(), QStringLiteral("http://127.0.0.1:%1").arg(port));
    QCOMPARE(bridge.serverError(), QString());

    const HttpReply health = httpRequest(bridge.serverUrl() + QStringLiteral("/health"));
    QVERIFY2(health.status == 200, qPrintable(health.error));
    QCOMPARE(health.json().value(QStringLiteral("model")).toString(),
             QStringLiteral("strata-tiny"));
    QCOMPARE(health.json().value(QStringLiteral("slots")).toInt(), 3);
    checkChatCompletion(httpRequest(url(port, "/v1/chat/completions"),
                                    shortChatRequest(QStringLiteral("strata-tiny"))));

    bridge.stopServer();
    QTRY_VERIFY_WITH_TIMEOUT(!bridge.serverRunning(), 10000);
    QCOMPARE(bridge.serverUrl(), QString());
    QVERIFY(connectionRefused(port));
  }

  void apiKeyIsRequiredWhenSet() {
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(kLoadMs));
    ServerRequest request = onPort(freePort());
    request.apiKey = QStringLiteral("s3cret");
    bridge.startServer(request);
    QTRY_VERIFY_WITH_TIMEOUT(bridge.serverRunning(), 10000);
    const QString models = bridge.serverUrl() + QStringLiteral("/v1/models");
    QCOMPARE(httpRequest(models).status, 401);
    QCOMPARE(httpRequest(models, {}, "wrong").status, 401);
    QCOMPARE(httpRequest(models, {}, "s3cret").status, 200);

    // Another key restarts the server with it.
    request.apiKey = QStringLiteral("other");
    bridge.startServer(request);
    QTRY_COMPARE_WITH_TIMEOUT(httpRequest(models, {}, "other").status, 200, 10000);
    QCOMPARE(httpRequest(models, {}, "s3cret").status, 401);
  }

  void chatAndApiShareTheModel() {
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(kLoadMs));
    const int port = freePort();
    bridge.startServer(onPort(port));
    QTRY_VERIFY_WITH_TIMEOUT(bridge.serverRunning(), 10000);

    bridge.generate(capitalQuestion());  // on the worker thread while the request is served
    checkChatCompletion(httpRequest(url(port, "/v1/chat/completions"),
                                    shortChatRequest(QStringLiteral("strata-tiny"))));
    QVERIFY(finished.count() == 1 || finished.wait(kLoadMs));
    const auto outcome = finished.first().first().value<ReplyOutcome>();
    QVERIFY2(outcome.text.contains(QStringLiteral("Paris")), qPrintable(outcome.text));
  }

  void portInUseIsReportedAndTheAppKeepsWorking() {
    QTcpServer other;
    QVERIFY(other.listen(QHostAddress::LocalHost, 0));
    const int port = other.serverPort();
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(kLoadMs));
    bridge.startServer(onPort(port));
    QTRY_VERIFY_WITH_TIMEOUT(!bridge.serverError().isEmpty(), 10000);
    QVERIFY2(bridge.serverError().contains(QStringLiteral("127.0.0.1:%1").arg(port)),
             qPrintable(bridge.serverError()));
    QVERIFY(!bridge.serverRunning());
    QCOMPARE(bridge.serverUrl(), QString());

    bridge.generate(capitalQuestion());
    QVERIFY(finished.wait(kLoadMs));
    QVERIFY(finished.first().first().value<ReplyOutcome>().text.contains(QStringLiteral("Paris")));

    // Once the port is free, asking again starts it, and the error is gone.
    other.close();
    bridge.startServer(onPort(port));
    QTRY_VERIFY_WITH_TIMEOUT(bridge.serverRunning(), 10000);
    QCOMPARE(bridge.serverError(), QString());
    QCOMPARE(httpRequest(url(port, "/health")).status, 200);
  }

  void serverWaitsForTheModelAndFollowsReloads() {
    EngineBridge bridge;
    QList<bool> running;  // every state the bridge reports
    connect(&bridge, &EngineBridge::serverChanged, this,
            [&] { running.append(bridge.serverRunning()); });
    const int port = freePort();
    bridge.startServer(onPort(port));  // no model yet: kept until one loads
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(kLoadMs));
    QTRY_VERIFY_WITH_TIMEOUT(bridge.serverRunning(), 10000);
    QCOMPARE(running, QList<bool>{true});

    // Another model (the same folder again): the server stops before the old engine goes and
    // starts over the new one, on the same address.
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(kLoadMs));
    QTRY_COMPARE_WITH_TIMEOUT(running, (QList<bool>{true, false, true}), 10000);
    QCOMPARE(bridge.serverUrl(), QStringLiteral("http://127.0.0.1:%1").arg(port));
    checkChatCompletion(httpRequest(url(port, "/v1/chat/completions"),
                                    shortChatRequest(QStringLiteral("strata-tiny"))));

    // A model that fails to load leaves it off, with no error of its own (the load reports it).
    LoadRequest missing;
    missing.modelDir = QStringLiteral("/nonexistent/strata-model");
    QSignalSpy failed(&bridge, &EngineBridge::loadFailed);
    bridge.load(missing);
    QVERIFY(failed.wait(kLoadMs));
    QTRY_VERIFY_WITH_TIMEOUT(!bridge.serverRunning(), 10000);
    QCOMPARE(bridge.serverError(), QString());
    QVERIFY(connectionRefused(port));
  }

  void aClientHangingUpMidStreamFreesItsSlot() {
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(kLoadMs));
    const int port = freePort();
    bridge.startServer(onPort(port));
    QTRY_VERIFY_WITH_TIMEOUT(bridge.serverRunning(), 10000);
    QTcpSocket client;
    QVERIFY(startLongStream(client, port));
    client.abort();  // a reset mid-stream: the server's next write fails
    // The abandoned request's generation is cancelled, and the server goes on answering.
    const QString health = bridge.serverUrl() + QStringLiteral("/health");
    QTRY_COMPARE_WITH_TIMEOUT(httpRequest(health).json().value(QStringLiteral("active")).toInt(-1),
                              0, 10000);
  }

  void theBridgesEndStopsTheServer() {
    const int port = freePort();
    QTcpSocket client;
    {
      EngineBridge bridge;
      QSignalSpy loaded(&bridge, &EngineBridge::loaded);
      bridge.load(tinyModel());
      QVERIFY(loaded.wait(kLoadMs));
      bridge.startServer(onPort(port));
      QTRY_VERIFY_WITH_TIMEOUT(bridge.serverRunning(), 10000);
      // A long stream in flight when the bridge (and with it the engine) goes.
      QVERIFY(startLongStream(client, port));
      QVERIFY(client.readAll().startsWith("HTTP/1.1 200"));
    }
    QVERIFY(connectionRefused(port));
    // The stream's connection was closed with the server, long before 4000 tokens.
    QVERIFY(client.state() == QAbstractSocket::UnconnectedState ||
            client.waitForDisconnected(10000));
  }
};

QTEST_GUILESS_MAIN(TestLocalServer)
#include "test_local_server.moc"
