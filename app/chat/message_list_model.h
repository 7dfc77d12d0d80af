#pragma once
// The messages of the open conversation, for the chat ListView. Lives on the GUI thread and is
// changed only there (the controller applies the worker's coalesced deltas). Each assistant
// message keeps its answer as MarkdownBlocks, so streaming re-renders only the open tail.
#include <QtQml/qqmlregistration.h>

#include <QAbstractListModel>
#include <memory>

#include "chat/think_splitter.h"

namespace strata::app {

class MarkdownBlocks;

class MessageListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the chat controller")
  Q_PROPERTY(int count READ count NOTIFY countChanged)
  Q_PROPERTY(int lastUserRow READ lastUserRow NOTIFY countChanged)

 public:
  enum Role {
    RoleRole = Qt::UserRole + 1,  // "user", "assistant", "system"
    ContentRole,                  // the answer's text (raw Markdown)
    ThinkingRole,
    ThinkingActiveRole,  // the model is still thinking
    StreamingRole,
    BlocksRole,    // MarkdownBlocks*
    StatsRole,     // "42 tokens · 118 tok/s"
    MessageIdRole  // the store's id (0: not stored yet)
  };

  struct Message {
    qint64 id = 0;
    QString role;
    QString content;
    QString thinking;
    bool streaming = false;
    QString stats;
    MarkdownBlocks* blocks = nullptr;         // owned by the model
    std::unique_ptr<ThinkSplitter> splitter;  // while streaming
  };

  explicit MessageListModel(QObject* parent = nullptr);
  ~MessageListModel() override;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;
  int count() const { return static_cast<int>(messages_.size()); }

  // A complete message (from the store, or what the user typed).
  void appendMessage(qint64 id, const QString& role, const QString& content,
                     const QString& thinking = {});
  // An empty assistant message that deltas will fill; `thinkingOpen` as in ThinkSplitter.
  void beginReply(bool thinkingOpen);
  void appendReplyDelta(const QString& text);
  void finishReply(qint64 id, const QString& stats);
  void setMessageId(int row, qint64 id);
  void removeFrom(int row);  // drops rows [row, count)
  void clear();

  const Message& at(int row) const { return messages_[row]; }
  int lastRowWithRole(const QString& role) const;
  int lastUserRow() const { return lastRowWithRole(QStringLiteral("user")); }
  Q_INVOKABLE QString contentAt(int row) const;

 signals:
  void countChanged();

 private:
  std::vector<Message> messages_;
};

}  // namespace strata::app
