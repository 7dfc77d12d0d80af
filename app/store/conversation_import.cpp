#include "store/conversation_import.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

namespace strata::app {
namespace {

QString kindOf(const QJsonValue& v) {
  switch (v.type()) {
    case QJsonValue::Null:
      return QStringLiteral("null");
    case QJsonValue::Bool:
      return QStringLiteral("true/false");
    case QJsonValue::Double:
      return QStringLiteral("a number");
    case QJsonValue::String:
      return QStringLiteral("text");
    case QJsonValue::Array:
      return QStringLiteral("a list");
    case QJsonValue::Object:
      return QStringLiteral("an object");
    case QJsonValue::Undefined:
      break;
  }
  return QStringLiteral("missing");
}

QString wrongKind(const QString& field, const QJsonValue& v, const QString& expected) {
  return QStringLiteral("%1 is %2, expected %3").arg(field, kindOf(v), expected);
}

QString titleFrom(const QList<StoredMessage>& messages) {
  for (const StoredMessage& m : messages) {
    if (m.role != QLatin1String("user")) continue;
    const QString line = m.content.simplified();
    if (line.isEmpty()) continue;
    return line.size() <= 48 ? line : line.left(47) + QChar(0x2026);
  }
  return QStringLiteral("Imported conversation");
}

// Text content: a string, null (empty) or OpenAI's list of {"type": "text", "text"} parts.
std::optional<QString> readContent(const QJsonValue& v, const QString& field, QString* error) {
  if (v.isString()) return v.toString();
  if (v.isNull() || v.isUndefined()) return QString();
  if (!v.isArray()) {
    *error = wrongKind(field, v, QStringLiteral("text"));
    return std::nullopt;
  }
  QString text;
  const QJsonArray parts = v.toArray();
  for (qsizetype j = 0; j < parts.size(); ++j) {
    const QString partField = QStringLiteral("%1[%2]").arg(field).arg(j);
    const QJsonObject part = parts[j].toObject();
    if (!parts[j].isObject() ||
        part.value(QLatin1String("type")).toString() != QLatin1String("text")) {
      *error = QStringLiteral("%1 is not a {\"type\": \"text\"} part; only text can be imported")
                   .arg(partField);
      return std::nullopt;
    }
    if (!part.value(QLatin1String("text")).isString()) {
      *error = wrongKind(partField + QStringLiteral(".text"), part.value(QLatin1String("text")),
                         QStringLiteral("text"));
      return std::nullopt;
    }
    text += part.value(QLatin1String("text")).toString();
  }
  return text;
}

std::optional<StoredMessage> readMessage(const QJsonValue& v, qsizetype i, QString* error) {
  const QString field = QStringLiteral("messages[%1]").arg(i);
  if (!v.isObject()) {
    *error = wrongKind(field, v, QStringLiteral("an object with \"role\" and \"content\""));
    return std::nullopt;
  }
  const QJsonObject o = v.toObject();
  const QJsonValue role = o.value(QLatin1String("role"));
  if (!role.isString()) {
    *error = wrongKind(field + QStringLiteral(".role"), role,
                       QStringLiteral("\"user\", \"assistant\" or \"system\""));
    return std::nullopt;
  }
  StoredMessage m;
  m.role = role.toString();
  if (m.role == QLatin1String("developer")) m.role = QStringLiteral("system");
  if (m.role != QLatin1String("user") && m.role != QLatin1String("assistant") &&
      m.role != QLatin1String("system")) {
    *error = QStringLiteral(
                 "%1.role is \"%2\"; only user, assistant and system turns can be "
                 "imported")
                 .arg(field, m.role);
    return std::nullopt;
  }
  const auto content =
      readContent(o.value(QLatin1String("content")), field + QStringLiteral(".content"), error);
  if (!content) return std::nullopt;
  m.content = *content;
  const QJsonValue reasoning = o.value(QLatin1String("reasoning_content"));
  if (!reasoning.isUndefined() && !reasoning.isNull() && !reasoning.isString()) {
    *error =
        wrongKind(field + QStringLiteral(".reasoning_content"), reasoning, QStringLiteral("text"));
    return std::nullopt;
  }
  m.thinking = reasoning.toString();
  return m;
}

// Strata's header fields: format, version, title, created.
bool readHeader(const QJsonObject& root, ConversationDocument* doc, QString* error) {
  const QJsonValue format = root.value(QLatin1String("format"));
  if (!format.isUndefined()) {
    if (format.toString() != QLatin1String(kConversationFormat)) {
      *error = QStringLiteral("format is %1, expected \"%2\"")
                   .arg(format.isString() ? QStringLiteral("\"%1\"").arg(format.toString())
                                          : kindOf(format),
                        QLatin1String(kConversationFormat));
      return false;
    }
    const QJsonValue version = root.value(QLatin1String("version"));
    const double number = version.toDouble(-1);
    if (!version.isDouble() || number != static_cast<int>(number) || number < 1) {
      *error = wrongKind(QStringLiteral("version"), version, QStringLiteral("a whole number"));
      return false;
    }
    if (number > kConversationFormatVersion) {
      *error = QStringLiteral("version %1 is newer than this app reads (%2); update Strata")
                   .arg(static_cast<int>(number))
                   .arg(kConversationFormatVersion);
      return false;
    }
  }
  const QJsonValue title = root.value(QLatin1String("title"));
  if (!title.isUndefined() && !title.isNull() && !title.isString()) {
    *error = wrongKind(QStringLiteral("title"), title, QStringLiteral("text"));
    return false;
  }
  doc->title = title.toString().simplified();
  const QJsonValue created = root.value(QLatin1String("created"));
  if (!created.isUndefined() && !created.isNull()) {
    doc->created = QDateTime::fromString(created.toString(), Qt::ISODate);
    if (!doc->created.isValid()) {
      *error = QStringLiteral("created is %1, expected an ISO 8601 date (2026-01-31T12:00:00Z)")
                   .arg(created.isString() ? QStringLiteral("\"%1\"").arg(created.toString())
                                           : kindOf(created));
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<ConversationDocument> parseConversationJson(const QByteArray& json, QString* error) {
  QJsonParseError parseError;
  const QJsonDocument parsed = QJsonDocument::fromJson(json, &parseError);
  if (parseError.error != QJsonParseError::NoError) {
    *error = QStringLiteral("not valid JSON (%1 at byte %2)")
                 .arg(parseError.errorString())
                 .arg(parseError.offset);
    return std::nullopt;
  }
  ConversationDocument doc;
  QJsonValue messages;
  if (parsed.isArray()) {
    messages = parsed.array();
  } else {
    const QJsonObject root = parsed.object();
    if (!readHeader(root, &doc, error)) return std::nullopt;
    messages = root.value(QLatin1String("messages"));
  }
  if (!messages.isArray()) {
    *error = wrongKind(QStringLiteral("messages"), messages, QStringLiteral("a list"));
    return std::nullopt;
  }
  const QJsonArray list = messages.toArray();
  if (list.isEmpty()) {
    *error = QStringLiteral("messages is empty; there is no conversation to import");
    return std::nullopt;
  }
  for (qsizetype i = 0; i < list.size(); ++i) {
    auto m = readMessage(list[i], i, error);
    if (!m) return std::nullopt;
    doc.messages.append(*m);
  }
  if (doc.title.isEmpty()) doc.title = titleFrom(doc.messages);
  return doc;
}

}  // namespace strata::app
