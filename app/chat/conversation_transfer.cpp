#include "chat/conversation_transfer.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>

#include "store/conversation_export.h"
#include "store/conversation_import.h"
#include "store/conversation_store.h"

namespace strata::app {
namespace {

// A file URL from QML, or a plain path (tests, the command line).
QString localPath(const QUrl& file) {
  return file.isLocalFile() ? file.toLocalFile() : file.toString();
}

}  // namespace

ConversationTransfer::ConversationTransfer(ConversationStore* store, QObject* parent)
    : QObject(parent), store_(store) {}

bool ConversationTransfer::fail(const QString& message) {
  emit error(message);
  return false;
}

bool ConversationTransfer::exportMarkdown(qint64 id, const QUrl& file) {
  return exportAs(id, file, true);
}

bool ConversationTransfer::exportJson(qint64 id, const QUrl& file) {
  return exportAs(id, file, false);
}

bool ConversationTransfer::exportAs(qint64 id, const QUrl& file, bool markdown) {
  if (!store_ || !store_->isOpen())
    return fail(tr("Nothing to export: conversations are not being stored."));
  const std::optional<ConversationRow> row = store_->conversation(id);
  if (!row) return fail(tr("Could not export the conversation: %1").arg(store_->lastError()));
  ConversationDocument doc;
  doc.title = row->title;
  if (row->createdMs > 0) doc.created = QDateTime::fromMSecsSinceEpoch(row->createdMs, Qt::UTC);
  doc.messages = store_->messages(id);

  const QString path = localPath(file);
  const QByteArray bytes =
      markdown ? conversationToMarkdown(doc).toUtf8() : conversationToJson(doc);
  // Written to a temporary file and renamed: an existing file is never left half-written.
  QSaveFile out(path);
  if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size() || !out.commit())
    return fail(tr("Could not write %1: %2").arg(path, out.errorString()));
  emit exported(path);
  return true;
}

qint64 ConversationTransfer::importJson(const QUrl& file) {
  const QString path = localPath(file);
  QString why;
  const qint64 id = importFrom(path, &why);
  if (!id) {
    emit error(tr("Cannot import %1: %2").arg(path, why));
    return 0;
  }
  emit imported(id);
  return id;
}

qint64 ConversationTransfer::importFrom(const QString& path, QString* why) {
  if (!store_ || !store_->isOpen()) {
    *why = tr("conversations are not being stored");
    return 0;
  }
  QFile in(path);
  if (!in.open(QIODevice::ReadOnly)) {
    *why = in.errorString();
    return 0;
  }
  if (in.size() > kMaxImportBytes) {
    *why = tr("it is %1 MiB, more than the %2 MiB a conversation file may be")
               .arg(in.size() >> 20)
               .arg(kMaxImportBytes >> 20);
    return 0;
  }
  const std::optional<ConversationDocument> doc = parseConversationJson(in.readAll(), why);
  if (!doc) return 0;
  const qint64 id = store_->insertConversation(
      doc->title, doc->created.isValid() ? doc->created.toMSecsSinceEpoch() : 0, doc->messages);
  if (!id) *why = store_->lastError();
  return id;
}

QUrl ConversationTransfer::suggestedFile(qint64 id, const QString& suffix) {
  QString name;
  if (store_ && store_->isOpen())
    if (const auto row = store_->conversation(id)) name = row->title;
  // Characters file systems or shells dislike become spaces; runs of them one space.
  name.replace(QRegularExpression(QStringLiteral("[\\\\/:*?\"<>|\\x00-\\x1f]+")),
               QStringLiteral(" "));
  name = name.simplified().left(80);
  if (name.isEmpty() || name.startsWith(u'.')) name = QStringLiteral("conversation");
  QString folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  if (folder.isEmpty() || !QFileInfo(folder).isDir()) folder = QDir::homePath();
  return QUrl::fromLocalFile(QDir(folder).filePath(name + QStringLiteral(".") + suffix));
}

}  // namespace strata::app
