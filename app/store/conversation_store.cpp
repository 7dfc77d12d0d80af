#include "store/conversation_store.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>
#include <QUuid>

#include "store/schema_migrations.h"

namespace strata::app {
namespace {

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

// A null QString binds as SQL NULL; the text columns are NOT NULL.
QString text(const QString& s) { return s.isNull() ? QStringLiteral("") : s; }

// User text -> an FTS5 query: each word quoted (so no character is FTS syntax) as a prefix.
QString ftsQuery(const QString& search) {
  QStringList terms;
  for (const QString& word :
       search.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts)) {
    QString quoted = word;
    quoted.replace(u'"', QStringLiteral("\"\""));
    terms << QStringLiteral("\"%1\"*").arg(quoted);
  }
  return terms.join(u' ');
}

}  // namespace

ConversationStore::ConversationStore(QString databaseFile, QString kvDir)
    : connectionName_(QStringLiteral("strata-store-") +
                      QUuid::createUuid().toString(QUuid::WithoutBraces)),
      databaseFile_(std::move(databaseFile)),
      kvDir_(std::move(kvDir)) {}

ConversationStore::~ConversationStore() {
  if (db_.isValid()) {
    db_.close();
    db_ = QSqlDatabase();
    QSqlDatabase::removeDatabase(connectionName_);
  }
}

bool ConversationStore::open(QString* error) {
  QDir().mkpath(QFileInfo(databaseFile_).absolutePath());
  db_ = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connectionName_);
  db_.setDatabaseName(databaseFile_);
  if (!db_.open()) {
    *error = databaseFile_ + QStringLiteral(": cannot open: ") + db_.lastError().text();
    return false;
  }
  QSqlQuery(db_).exec(QStringLiteral("PRAGMA foreign_keys = ON"));
  QString why;
  if (!migrateSchema(db_, &why)) {
    *error = databaseFile_ + QStringLiteral(": ") + why;
    db_.close();
    return false;
  }
  return true;
}

int ConversationStore::schemaVersion() { return strata::app::schemaVersion(db_); }

bool ConversationStore::exec(const QString& sql, const QVariantList& values, qint64* insertId) {
  QSqlQuery q(db_);
  q.prepare(sql);
  for (const QVariant& v : values) q.addBindValue(v);
  if (!q.exec()) {
    lastError_ = q.lastError().text();
    return false;
  }
  if (insertId) *insertId = q.lastInsertId().toLongLong();
  return true;
}

QList<ConversationRow> ConversationStore::conversations(const QString& search) {
  QSqlQuery q(db_);
  const QString fts = ftsQuery(search);
  if (fts.isEmpty()) {
    q.prepare(
        QStringLiteral("SELECT id, title, updated_ms, created_ms FROM conversations ORDER BY "
                       "updated_ms DESC, id DESC"));
  } else {
    q.prepare(QStringLiteral(
        "SELECT id, title, updated_ms, created_ms FROM conversations"
        " WHERE title LIKE ? ESCAPE '\\'"
        " OR id IN (SELECT m.conversation_id FROM messages_fts f JOIN messages m ON m.id = f.rowid"
        "           WHERE messages_fts MATCH ?)"
        " ORDER BY updated_ms DESC, id DESC"));
    QString like = search.trimmed();
    like.replace(u'\\', QStringLiteral("\\\\"))
        .replace(u'%', QStringLiteral("\\%"))
        .replace(u'_', QStringLiteral("\\_"));
    q.addBindValue(QStringLiteral("%") + like + QStringLiteral("%"));
    q.addBindValue(fts);
  }
  QList<ConversationRow> rows;
  if (!q.exec()) {
    lastError_ = q.lastError().text();
    return rows;
  }
  while (q.next())
    rows.append({q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toLongLong(),
                 q.value(3).toLongLong()});
  return rows;
}

std::optional<ConversationRow> ConversationStore::conversation(qint64 id) {
  QSqlQuery q(db_);
  q.prepare(
      QStringLiteral("SELECT id, title, updated_ms, created_ms FROM conversations WHERE id = ?"));
  q.addBindValue(id);
  if (!q.exec()) {
    lastError_ = q.lastError().text();
    return std::nullopt;
  }
  if (!q.next()) {
    lastError_ = QStringLiteral("no conversation %1").arg(id);
    return std::nullopt;
  }
  return ConversationRow{q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toLongLong(),
                         q.value(3).toLongLong()};
}

qint64 ConversationStore::createConversation(const QString& title) {
  qint64 id = 0;
  const qint64 now = nowMs();
  return exec(QStringLiteral(
                  "INSERT INTO conversations(title, created_ms, updated_ms) VALUES (?, ?, ?)"),
              {text(title), now, now}, &id)
             ? id
             : 0;
}

qint64 ConversationStore::insertConversation(const QString& title, qint64 createdMs,
                                             const QList<StoredMessage>& messages) {
  const qint64 now = nowMs();
  if (!db_.transaction()) {
    lastError_ = db_.lastError().text();
    return 0;
  }
  qint64 id = 0;
  bool ok = exec(
      QStringLiteral("INSERT INTO conversations(title, created_ms, updated_ms) VALUES (?, ?, ?)"),
      {text(title), createdMs > 0 ? createdMs : now, now}, &id);
  for (qsizetype i = 0; ok && i < messages.size(); ++i) {
    const StoredMessage& m = messages[i];
    ok = exec(
        QStringLiteral("INSERT INTO messages(conversation_id, role, content, thinking, created_ms)"
                       " VALUES (?, ?, ?, ?, ?)"),
        {id, m.role, text(m.content), text(m.thinking), now});
  }
  if (!ok || !db_.commit()) {
    if (ok) lastError_ = db_.lastError().text();
    db_.rollback();
    return 0;
  }
  return id;
}

bool ConversationStore::renameConversation(qint64 id, const QString& title) {
  return exec(QStringLiteral("UPDATE conversations SET title = ? WHERE id = ?"), {title, id});
}

bool ConversationStore::removeConversation(qint64 id) {
  db_.transaction();
  const bool ok = exec(QStringLiteral("DELETE FROM messages WHERE conversation_id = ?"), {id}) &&
                  exec(QStringLiteral("DELETE FROM conversations WHERE id = ?"), {id});
  if (!ok || !db_.commit()) {
    db_.rollback();
    return false;
  }
  const QString kv = kvFile(id);
  QFile::remove(kv);
  QFile::remove(kv + QStringLiteral(".tmp"));  // left by a save cut short
  return true;
}

QList<StoredMessage> ConversationStore::messages(qint64 conversationId) {
  QSqlQuery q(db_);
  q.prepare(QStringLiteral(
      "SELECT id, role, content, thinking FROM messages WHERE conversation_id = ? ORDER BY id"));
  q.addBindValue(conversationId);
  QList<StoredMessage> out;
  if (!q.exec()) {
    lastError_ = q.lastError().text();
    return out;
  }
  while (q.next())
    out.append({q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toString(),
                q.value(3).toString()});
  return out;
}

qint64 ConversationStore::addMessage(qint64 conversationId, const QString& role,
                                     const QString& content, const QString& thinking) {
  qint64 id = 0;
  if (!exec(QStringLiteral(
                "INSERT INTO messages(conversation_id, role, content, thinking, created_ms)"
                " VALUES (?, ?, ?, ?, ?)"),
            {conversationId, role, text(content), text(thinking), nowMs()}, &id))
    return 0;
  touch(conversationId);
  return id;
}

bool ConversationStore::removeMessagesFrom(qint64 conversationId, qint64 messageId) {
  return exec(QStringLiteral("DELETE FROM messages WHERE conversation_id = ? AND id >= ?"),
              {conversationId, messageId});
}

void ConversationStore::touch(qint64 conversationId) {
  exec(QStringLiteral("UPDATE conversations SET updated_ms = ? WHERE id = ?"),
       {nowMs(), conversationId});
}

QString ConversationStore::kvFile(qint64 conversationId) const {
  return QDir(kvDir_).filePath(QStringLiteral("conversation-%1.kv").arg(conversationId));
}

}  // namespace strata::app
