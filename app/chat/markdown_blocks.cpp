#include "chat/markdown_blocks.h"

namespace strata::app {
namespace {

bool isFence(QStringView line) {
  const QStringView t = line.trimmed();
  return t.startsWith(u"```") || t.startsWith(u"~~~");
}

// Position of the first line (after the first) that starts a fence, or -1.
qsizetype fenceLineAfterStart(const QString& text) {
  for (qsizetype nl = text.indexOf(u'\n'); nl >= 0; nl = text.indexOf(u'\n', nl + 1)) {
    const qsizetype end = text.indexOf(u'\n', nl + 1);
    const QStringView line = QStringView(text).mid(nl + 1, end < 0 ? -1 : end - nl - 1);
    if (isFence(line) && line.trimmed().size() == line.size()) return nl + 1;
    if (end < 0 && QStringView(u"```").startsWith(line)) return -1;  // may become a fence
  }
  return -1;
}

}  // namespace

MarkdownBlocks::MarkdownBlocks(QObject* parent) : QAbstractListModel(parent) {}

int MarkdownBlocks::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(blocks_.size());
}

QVariant MarkdownBlocks::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= blocks_.size()) return {};
  const Block& b = blocks_[index.row()];
  switch (role) {
    case TextRole:
      return b.text;
    case CodeRole:
      return b.code;
    case LanguageRole:
      return b.language;
    default:
      return {};
  }
}

QHash<int, QByteArray> MarkdownBlocks::roleNames() const {
  return {{TextRole, "text"}, {CodeRole, "code"}, {LanguageRole, "language"}};
}

void MarkdownBlocks::append(const QString& text) {
  if (text.isEmpty()) return;
  open_ += text;
  while (freezeOne()) {
  }
  emit tailChanged();
}

void MarkdownBlocks::finish() {
  open_ += u'\n';  // a closing fence on the last line counts as ended
  while (freezeOne()) {
  }
  if (tailIsCode()) {
    freeze({tail(), true, tailLanguage()});
  } else if (!open_.trimmed().isEmpty()) {
    freeze({open_.trimmed(), false, {}});
  }
  open_.clear();
  emit tailChanged();
}

bool MarkdownBlocks::freezeOne() {
  // Blank lines between blocks belong to no block.
  qsizetype start = 0;
  while (start < open_.size() && (open_[start] == u'\n' || open_[start] == u'\r')) ++start;
  if (start) open_.remove(0, start);
  const qsizetype firstEnd = open_.indexOf(u'\n');
  if (firstEnd < 0) return false;

  if (isFence(QStringView(open_).left(firstEnd))) {
    // A code block is complete once its closing fence line has ended.
    for (qsizetype nl = firstEnd; nl >= 0; nl = open_.indexOf(u'\n', nl + 1)) {
      const qsizetype end = open_.indexOf(u'\n', nl + 1);
      if (end < 0) return false;
      if (isFence(QStringView(open_).mid(nl + 1, end - nl - 1))) {
        freeze({open_.mid(firstEnd + 1, nl - firstEnd - 1), true,
                QStringView(open_).left(firstEnd).trimmed().mid(3).trimmed().toString()});
        open_.remove(0, end + 1);
        return true;
      }
    }
    return false;
  }

  const qsizetype blank = open_.indexOf(QStringLiteral("\n\n"));
  const qsizetype fence = fenceLineAfterStart(open_);
  if (fence >= 0 && (blank < 0 || fence < blank)) {
    freeze({open_.left(fence).trimmed(), false, {}});
    open_.remove(0, fence);
    return true;
  }
  if (blank < 0) return false;
  const QString block = open_.left(blank).trimmed();
  open_.remove(0, blank + 2);
  if (!block.isEmpty()) freeze({block, false, {}});
  return true;
}

void MarkdownBlocks::freeze(Block block) {
  const int row = static_cast<int>(blocks_.size());
  beginInsertRows({}, row, row);
  blocks_.append(std::move(block));
  endInsertRows();
}

QString MarkdownBlocks::tail() const {
  if (!tailIsCode()) return open_;
  const qsizetype firstEnd = open_.indexOf(u'\n');
  return firstEnd < 0 ? QString() : open_.mid(firstEnd + 1);
}

bool MarkdownBlocks::tailIsCode() const {
  return isFence(QStringView(open_).left(open_.indexOf(u'\n')));
}

QString MarkdownBlocks::tailLanguage() const {
  if (!tailIsCode()) return {};
  const qsizetype firstEnd = open_.indexOf(u'\n');
  return QStringView(open_).left(firstEnd).trimmed().mid(3).trimmed().toString();
}

}  // namespace strata::app
