#include "heatmap/token_trail_model.h"

#include <algorithm>

namespace strata::app {

void TokenTrailModel::update(const QList<Token>& tokens) {
  if (tokens == tokens_) return;
  // The fewest tokens to drop at the front so that the rest starts `tokens`.
  qsizetype drop = 0;
  for (; drop < tokens_.size(); ++drop) {
    const qsizetype kept = tokens_.size() - drop;
    if (kept <= tokens.size() && std::equal(tokens_.begin() + drop, tokens_.end(), tokens.begin()))
      break;
  }
  if (drop == tokens_.size() && !tokens_.isEmpty()) {  // nothing in common
    beginResetModel();
    tokens_ = tokens;
    endResetModel();
    return;
  }
  if (drop > 0) {
    beginRemoveRows({}, 0, static_cast<int>(drop - 1));
    tokens_.remove(0, drop);
    endRemoveRows();
  }
  if (tokens.size() > tokens_.size()) {
    beginInsertRows({}, static_cast<int>(tokens_.size()), static_cast<int>(tokens.size() - 1));
    tokens_.append(tokens.mid(tokens_.size()));
    endInsertRows();
  }
}

int TokenTrailModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(tokens_.size());
}

QVariant TokenTrailModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= tokens_.size()) return {};
  if (role == TextRole || role == Qt::DisplayRole) return tokens_[index.row()].text;
  return {};
}

QHash<int, QByteArray> TokenTrailModel::roleNames() const { return {{TextRole, "text"}}; }

}  // namespace strata::app
