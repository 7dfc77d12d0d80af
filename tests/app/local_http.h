#pragma once
// HTTP for the tests of the app's API server: one request at a time with its own
// QNetworkAccessManager (no connection is kept alive after it), waited for in an event loop.
#include <QEventLoop>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

namespace strata::app::test {

struct HttpReply {
  int status = 0;  // 0: no HTTP answer (see error)
  QByteArray body;
  QString error;
  QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
};

// GET without a body, POST (JSON) with one.
inline HttpReply httpRequest(const QString& url, const QByteArray& postBody = {},
                             const QByteArray& apiKey = {}, int timeoutMs = 60000) {
  QNetworkAccessManager manager;
  manager.setProxy(QNetworkProxy::NoProxy);  // loopback, whatever the machine's proxy is
  QNetworkRequest request{QUrl(url)};
  if (!apiKey.isEmpty()) request.setRawHeader("Authorization", "Bearer " + apiKey);
  QNetworkReply* reply = nullptr;
  if (postBody.isEmpty()) {
    reply = manager.get(request);
  } else {
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    reply = manager.post(request, postBody);
  }
  QEventLoop loop;
  QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
  QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
  loop.exec();
  HttpReply r;
  if (!reply->isFinished()) {
    reply->abort();
    r.error = QStringLiteral("timed out after %1 ms").arg(timeoutMs);
  } else {
    r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    r.body = reply->readAll();
    if (reply->error() != QNetworkReply::NoError) r.error = reply->errorString();
  }
  delete reply;
  return r;
}

// A short chat completion (greedy, at most 4 tokens).
inline QByteArray shortChatRequest(const QString& model) {
  return QJsonDocument(QJsonObject{{QStringLiteral("model"), model},
                                   {QStringLiteral("messages"),
                                    QJsonArray{QJsonObject{
                                        {QStringLiteral("role"), QStringLiteral("user")},
                                        {QStringLiteral("content"),
                                         QStringLiteral("What is the capital of France?")}}}},
                                   {QStringLiteral("max_tokens"), 4},
                                   {QStringLiteral("temperature"), 0}})
      .toJson(QJsonDocument::Compact);
}

// A port nothing listens on now (the OS's choice for port 0, released again).
inline int freePort() {
  QTcpServer probe;
  if (!probe.listen(QHostAddress::LocalHost, 0)) return 0;
  return probe.serverPort();
}

// True if a connection to 127.0.0.1:port is refused (nothing listens there).
inline bool connectionRefused(int port) {
  QTcpSocket socket;
  socket.connectToHost(QHostAddress::LocalHost, static_cast<quint16>(port));
  if (socket.waitForConnected(3000)) return false;
  return socket.error() == QAbstractSocket::ConnectionRefusedError;
}

}  // namespace strata::app::test
