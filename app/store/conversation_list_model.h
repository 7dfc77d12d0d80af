#pragma once
// The sidebar's list: conversations from the store, newest first, narrowed by `filter`
// (full-text search over titles and messages).
#include <QtQml/qqmlregistration.h>

#include <QAbstractListModel>

#include "store/conversation_store.h"

namespace strata::app {

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the chat controller")
  Q_PROPERTY(QString filter READ filter WRITE setFilter NOTIFY filterChanged)
  Q_PROPERTY(int count READ count NOTIFY countChanged)

 public:
  enum Role { IdRole = Qt::UserRole + 1, TitleRole, UpdatedRole };

  explicit ConversationListModel(ConversationStore* store, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;
  int count() const { return static_cast<int>(rows_.size()); }

  QString filter() const { return filter_; }
  void setFilter(const QString& filter);
  void reload();
  Q_INVOKABLE int rowOf(qint64 id) const;

  // Demo and tests: rows shown without a database.
  void setRows(QList<ConversationRow> rows);

 signals:
  void filterChanged();
  void countChanged();

 private:
  ConversationStore* store_;
  QString filter_;
  QList<ConversationRow> rows_;
};

}  // namespace strata::app
