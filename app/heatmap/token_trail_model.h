#pragma once
// The routing view's token chips as a list model that changes by rows: as the trail moves on,
// the tokens that left are removed at the front and the new ones appended, so the view
// creates a chip or two per update instead of all sixteen (a fifth of the GUI thread's time
// while a reply streamed, when the chips came from a string list).
#include <QAbstractListModel>
#include <QList>
#include <QString>

namespace strata::app {

class TokenTrailModel : public QAbstractListModel {
  Q_OBJECT
 public:
  struct Token {
    QString text;
    qint64 step = 0;      // with the position: the same token across updates
    qint64 position = 0;
    bool operator==(const Token&) const = default;
  };
  enum Role { TextRole = Qt::UserRole + 1 };

  using QAbstractListModel::QAbstractListModel;

  // Becomes `tokens`: by removing rows at the front and appending when `tokens` continues
  // what is shown, else by a reset.
  void update(const QList<Token>& tokens);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

 private:
  QList<Token> tokens_;
};

}  // namespace strata::app
