#include "store/conversation_export.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace strata::app {
namespace {

QString roleHeading(const QString& role) {
  if (role == QLatin1String("user")) return QStringLiteral("User");
  if (role == QLatin1String("assistant")) return QStringLiteral("Assistant");
  if (role == QLatin1String("system")) return QStringLiteral("System");
  return role;
}

// Text followed by exactly one newline, so the blank line after it is a Markdown block break.
QString block(const QString& text) {
  QString out = text;
  while (out.endsWith(u'\n')) out.chop(1);
  return out + u'\n';
}

}  // namespace

QString conversationToMarkdown(const ConversationDocument& doc) {
  const QString title = doc.title.simplified();
  QString md =
      QStringLiteral("# %1\n\n").arg(title.isEmpty() ? QStringLiteral("Conversation") : title);
  if (doc.created.isValid())
    md += QStringLiteral("*Started %1*\n\n")
              .arg(doc.created.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'")));
  for (const StoredMessage& m : doc.messages) {
    md += QStringLiteral("## %1\n\n").arg(roleHeading(m.role));
    if (!m.thinking.trimmed().isEmpty()) {
      // Blank lines inside <details> let Markdown renderers format the thinking too.
      md += QStringLiteral("<details>\n<summary>Thinking</summary>\n\n");
      md += block(m.thinking);
      md += QStringLiteral("\n</details>\n\n");
    }
    md += block(m.content) + u'\n';
  }
  return md;
}

QByteArray conversationToJson(const ConversationDocument& doc) {
  QJsonArray messages;
  for (const StoredMessage& m : doc.messages) {
    QJsonObject o{{QStringLiteral("role"), m.role}, {QStringLiteral("content"), m.content}};
    if (!m.thinking.isEmpty()) o.insert(QStringLiteral("reasoning_content"), m.thinking);
    messages.append(o);
  }
  QJsonObject root{{QStringLiteral("format"), QString::fromLatin1(kConversationFormat)},
                   {QStringLiteral("version"), kConversationFormatVersion},
                   {QStringLiteral("title"), doc.title},
                   {QStringLiteral("messages"), messages}};
  if (doc.created.isValid())
    root.insert(QStringLiteral("created"), doc.created.toUTC().toString(Qt::ISODateWithMs));
  return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

}  // namespace strata::app
