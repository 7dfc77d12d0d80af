#include "store/schema_migrations.h"

#include <QSqlError>
#include <QSqlQuery>

namespace strata::app {

const QList<QStringList>& schemaMigrations() {
  static const QList<QStringList> migrations = {
      // 1: conversations and their messages.
      {
          "CREATE TABLE conversations ("
          " id INTEGER PRIMARY KEY,"
          " title TEXT NOT NULL,"
          " created_ms INTEGER NOT NULL,"
          " updated_ms INTEGER NOT NULL)",
          "CREATE TABLE messages ("
          " id INTEGER PRIMARY KEY,"
          " conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
          " role TEXT NOT NULL,"
          " content TEXT NOT NULL,"
          " thinking TEXT NOT NULL DEFAULT '',"
          " created_ms INTEGER NOT NULL)",
          "CREATE INDEX messages_by_conversation ON messages(conversation_id, id)",
      },
      // 2: full-text search over message text (FTS5, kept in step by triggers).
      {
          "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', "
          "content_rowid='id')",
          "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN"
          " INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END",
          "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN"
          " INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, "
          "old.content); END",
          "CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages BEGIN"
          " INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, "
          "old.content);"
          " INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END",
          "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
      },
  };
  return migrations;
}

int latestSchemaVersion() { return static_cast<int>(schemaMigrations().size()); }

int schemaVersion(QSqlDatabase& db) {
  QSqlQuery q(db);
  return q.exec(QStringLiteral("PRAGMA user_version")) && q.next() ? q.value(0).toInt() : -1;
}

bool migrateSchema(QSqlDatabase& db, QString* error) {
  const int current = schemaVersion(db);
  if (current < 0) {
    *error = QStringLiteral("cannot read the schema version: ") + db.lastError().text();
    return false;
  }
  if (current > latestSchemaVersion()) {
    *error = QStringLiteral("the database has schema version %1, newer than this app's %2")
                 .arg(current)
                 .arg(latestSchemaVersion());
    return false;
  }
  for (int v = current; v < latestSchemaVersion(); ++v) {
    db.transaction();
    QSqlQuery q(db);
    for (const QString& statement : schemaMigrations()[v]) {
      if (!q.exec(statement)) {
        *error =
            QStringLiteral("schema migration %1 failed: %2").arg(v + 1).arg(q.lastError().text());
        db.rollback();
        return false;
      }
    }
    // PRAGMA takes no bound parameters; v is our own integer.
    if (!q.exec(QStringLiteral("PRAGMA user_version = %1").arg(v + 1)) || !db.commit()) {
      *error = QStringLiteral("schema migration %1 could not be committed: %2")
                   .arg(v + 1)
                   .arg(db.lastError().text());
      db.rollback();
      return false;
    }
  }
  return true;
}

}  // namespace strata::app
