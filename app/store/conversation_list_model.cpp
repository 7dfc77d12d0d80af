#include "store/conversation_list_model.h"

#include <QDateTime>

namespace strata::app {

ConversationListModel::ConversationListModel(ConversationStore* store, QObject* parent)
    : QAbstractListModel(parent), store_(store) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : count();
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= count()) return {};
  const ConversationRow& r = rows_[index.row()];
  switch (role) {
    case IdRole:
      return r.id;
    case TitleRole:
      return r.title;
    case UpdatedRole:
      return QDateTime::fromMSecsSinceEpoch(r.updatedMs);
    default:
      return {};
  }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  return {{IdRole, "conversationId"}, {TitleRole, "title"}, {UpdatedRole, "updated"}};
}

void ConversationListModel::setFilter(const QString& filter) {
  if (filter == filter_) return;
  filter_ = filter;
  emit filterChanged();
  reload();
}

void ConversationListModel::reload() {
  if (store_ && store_->isOpen()) setRows(store_->conversations(filter_));
}

void ConversationListModel::setRows(QList<ConversationRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
  emit countChanged();
}

int ConversationListModel::rowOf(qint64 id) const {
  for (int r = 0; r < count(); ++r)
    if (rows_[r].id == id) return r;
  return -1;
}

}  // namespace strata::app
