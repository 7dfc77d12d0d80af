#include "chat/message_list_model.h"

#include "chat/markdown_blocks.h"

namespace strata::app {

MessageListModel::MessageListModel(QObject* parent) : QAbstractListModel(parent) {}
MessageListModel::~MessageListModel() = default;

int MessageListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : count();
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= count()) return {};
  const Message& m = messages_[static_cast<size_t>(index.row())];
  switch (role) {
    case RoleRole:
      return m.role;
    case ContentRole:
      return m.content;
    case ThinkingRole:
      return m.thinking;
    case ThinkingActiveRole:
      return m.streaming && m.splitter && m.splitter->inThinking();
    case StreamingRole:
      return m.streaming;
    case BlocksRole:
      return QVariant::fromValue(static_cast<QObject*>(m.blocks));
    case StatsRole:
      return m.stats;
    case MessageIdRole:
      return m.id;
    default:
      return {};
  }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
  return {{RoleRole, "role"},           {ContentRole, "content"},
          {ThinkingRole, "thinking"},   {ThinkingActiveRole, "thinkingActive"},
          {StreamingRole, "streaming"}, {BlocksRole, "blocks"},
          {StatsRole, "stats"},         {MessageIdRole, "messageId"}};
}

void MessageListModel::appendMessage(qint64 id, const QString& role, const QString& content,
                                     const QString& thinking) {
  const int row = count();
  beginInsertRows({}, row, row);
  Message m;
  m.id = id;
  m.role = role;
  m.content = content;
  m.thinking = thinking;
  m.blocks = new MarkdownBlocks(this);
  m.blocks->append(content);
  m.blocks->finish();
  messages_.push_back(std::move(m));
  endInsertRows();
  emit countChanged();
}

void MessageListModel::beginReply(bool thinkingOpen) {
  const int row = count();
  beginInsertRows({}, row, row);
  Message m;
  m.role = QStringLiteral("assistant");
  m.streaming = true;
  m.blocks = new MarkdownBlocks(this);
  m.splitter = std::make_unique<ThinkSplitter>(thinkingOpen);
  messages_.push_back(std::move(m));
  endInsertRows();
  emit countChanged();
}

void MessageListModel::appendReplyDelta(const QString& text) {
  if (messages_.empty() || !messages_.back().streaming) return;
  Message& m = messages_.back();
  const bool wasThinking = m.splitter->inThinking();
  const ThinkSplitter::Parts parts = m.splitter->push(text);
  m.thinking += parts.thinking;
  m.content += parts.answer;
  m.blocks->append(parts.answer);
  // The answer's own blocks update themselves; the row changes only for the thinking part.
  QList<int> roles;
  if (!parts.thinking.isEmpty()) roles << ThinkingRole;
  if (wasThinking != m.splitter->inThinking()) roles << ThinkingActiveRole;
  if (!parts.answer.isEmpty()) roles << ContentRole;
  if (!roles.isEmpty()) {
    const QModelIndex i = index(count() - 1);
    emit dataChanged(i, i, roles);
  }
}

void MessageListModel::finishReply(qint64 id, const QString& stats) {
  if (messages_.empty() || !messages_.back().streaming) return;
  Message& m = messages_.back();
  const ThinkSplitter::Parts parts = m.splitter->finish();
  m.thinking = (m.thinking + parts.thinking).trimmed();
  m.content = (m.content + parts.answer).trimmed();
  m.blocks->append(parts.answer);
  m.blocks->finish();
  m.splitter.reset();
  m.streaming = false;
  m.id = id;
  m.stats = stats;
  const QModelIndex i = index(count() - 1);
  emit dataChanged(i, i);
}

void MessageListModel::setMessageId(int row, qint64 id) {
  if (row < 0 || row >= count()) return;
  messages_[static_cast<size_t>(row)].id = id;
  const QModelIndex i = index(row);
  emit dataChanged(i, i, {MessageIdRole});
}

void MessageListModel::removeFrom(int row) {
  if (row < 0 || row >= count()) return;
  beginRemoveRows({}, row, count() - 1);
  for (size_t r = static_cast<size_t>(row); r < messages_.size(); ++r)
    messages_[r].blocks->deleteLater();  // QML may still hold it until the delegate goes
  messages_.erase(messages_.begin() + row, messages_.end());
  endRemoveRows();
  emit countChanged();
}

void MessageListModel::clear() {
  if (messages_.empty()) return;
  removeFrom(0);
}

int MessageListModel::lastRowWithRole(const QString& role) const {
  for (int r = count() - 1; r >= 0; --r)
    if (messages_[static_cast<size_t>(r)].role == role) return r;
  return -1;
}

QString MessageListModel::contentAt(int row) const {
  return row >= 0 && row < count() ? messages_[static_cast<size_t>(row)].content : QString();
}

}  // namespace strata::app
