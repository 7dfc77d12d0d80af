#pragma once
// Conversations and their messages in SQLite (Qt SQL), plus each conversation's KV cache file
// in `kvDir`: the store names the file and deletes it with the conversation.
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <optional>

namespace strata::app {

struct ConversationRow {
  qint64 id = 0;
  QString title;
  qint64 updatedMs = 0;
  qint64 createdMs = 0;
};

struct StoredMessage {
  qint64 id = 0;
  QString role;
  QString content;
  QString thinking;
};

class ConversationStore {
 public:
  ConversationStore(QString databaseFile, QString kvDir);
  ~ConversationStore();
  ConversationStore(const ConversationStore&) = delete;
  ConversationStore& operator=(const ConversationStore&) = delete;

  // Opens (creating if needed) and migrates the database; false with `error` on failure.
  bool open(QString* error);
  bool isOpen() const { return db_.isOpen(); }
  int schemaVersion();

  // Newest first. `search` non-empty: only conversations whose title or messages match it
  // (every word, as a prefix, in any order).
  QList<ConversationRow> conversations(const QString& search = {});
  std::optional<ConversationRow> conversation(qint64 id);
  qint64 createConversation(const QString& title);  // 0 on failure
  // A whole conversation in one transaction (import): its id, or 0 with nothing written.
  // `createdMs` <= 0: now.
  qint64 insertConversation(const QString& title, qint64 createdMs,
                            const QList<StoredMessage>& messages);
  bool renameConversation(qint64 id, const QString& title);
  // Deletes the conversation, its messages and its KV file.
  bool removeConversation(qint64 id);

  QList<StoredMessage> messages(qint64 conversationId);
  qint64 addMessage(qint64 conversationId, const QString& role, const QString& content,
                    const QString& thinking = {});  // 0 on failure
  // Deletes the message `messageId` and every later one of its conversation (regenerate, edit).
  bool removeMessagesFrom(qint64 conversationId, qint64 messageId);

  QString kvFile(qint64 conversationId) const;
  QString lastError() const { return lastError_; }

 private:
  bool exec(const QString& sql, const QVariantList& values, qint64* insertId = nullptr);
  void touch(qint64 conversationId);

  QString connectionName_;
  QString databaseFile_;
  QString kvDir_;
  QSqlDatabase db_;
  QString lastError_;
};

}  // namespace strata::app
