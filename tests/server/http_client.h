#pragma once
// Raw HTTP/1.1 over QTcpSocket for the server tests: no client library between the test and
// the bytes the server writes. Blocking calls; no event loop needed.
#include <QByteArray>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QTcpSocket>

struct HttpResponse {
  int status = -1;                       // -1: no complete status line
  QMap<QByteArray, QByteArray> headers;  // names lower-cased
  QByteArray body;                       // de-chunked
  bool complete = false;                 // the whole body arrived
  QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
};

inline QByteArray requestBytes(const QByteArray& method, const QByteArray& path,
                               const QByteArray& body, const QList<QByteArray>& headers) {
  QByteArray r = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const QByteArray& h : headers) r += h + "\r\n";
  if (!body.isNull())
    r += "Content-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size()) +
         "\r\n";
  return r + "\r\n" + body;
}

// Parses what a "Connection: close" response sent: status line, headers, (chunked) body.
inline HttpResponse parseHttpResponse(const QByteArray& raw) {
  HttpResponse r;
  const qsizetype headEnd = raw.indexOf("\r\n\r\n");
  if (headEnd < 0) return r;
  const QList<QByteArray> lines = raw.left(headEnd).split('\n');
  const QList<QByteArray> statusLine = lines.value(0).trimmed().split(' ');
  if (statusLine.size() < 2 || !statusLine[0].startsWith("HTTP/1.")) return r;
  r.status = statusLine[1].toInt();
  for (qsizetype i = 1; i < lines.size(); ++i) {
    const qsizetype colon = lines[i].indexOf(':');
    if (colon > 0)
      r.headers[lines[i].left(colon).trimmed().toLower()] = lines[i].mid(colon + 1).trimmed();
  }
  QByteArray rest = raw.mid(headEnd + 4);
  if (r.headers.value("transfer-encoding") == "chunked") {
    qsizetype at = 0;
    while (true) {
      const qsizetype lineEnd = rest.indexOf("\r\n", at);
      if (lineEnd < 0) return r;
      bool ok = false;
      const qsizetype size = rest.mid(at, lineEnd - at).trimmed().toLongLong(&ok, 16);
      if (!ok || rest.size() < lineEnd + 2 + size + 2) return r;
      if (size == 0) break;
      r.body += rest.mid(lineEnd + 2, size);
      at = lineEnd + 2 + size + 2;
    }
    r.complete = true;
  } else {
    r.body = rest;
    r.complete = !r.headers.contains("content-length") ||
                 r.headers.value("content-length").toLongLong() == rest.size();
  }
  return r;
}

inline HttpResponse httpRequest(quint16 port, const QByteArray& method, const QByteArray& path,
                                const QByteArray& body = QByteArray(),
                                const QList<QByteArray>& headers = {}, int timeoutMs = 60000) {
  QTcpSocket socket;
  socket.connectToHost("127.0.0.1", port);
  if (!socket.waitForConnected(5000)) return {};
  socket.write(requestBytes(method, path, body, headers));
  QElapsedTimer clock;
  clock.start();
  QByteArray raw;
  while (clock.elapsed() < timeoutMs) {
    socket.waitForReadyRead(50);
    raw += socket.readAll();
    if (socket.state() == QAbstractSocket::UnconnectedState) break;
  }
  raw += socket.readAll();
  return parseHttpResponse(raw);
}

inline HttpResponse postJson(quint16 port, const QByteArray& path, const QJsonObject& body,
                             const QList<QByteArray>& headers = {}) {
  return httpRequest(port, "POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact),
                     headers);
}

// The JSON payloads of an SSE body's "data:" events ("[DONE]" included as the raw text).
inline QList<QByteArray> sseData(const QByteArray& body) {
  QList<QByteArray> events;
  for (const QByteArray& block : body.split('\n'))
    if (block.startsWith("data: ")) events.append(block.mid(6));
  return events;
}
