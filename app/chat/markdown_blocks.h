#pragma once
// A streamed Markdown message as a list of frozen blocks plus one open tail. Text arrives in
// deltas; whenever a block is certainly complete (a blank line ends a paragraph, a closing
// fence ends a code block) it is frozen: appended as a row that never changes again, so its
// rendered item is laid out once. Only the short open tail is re-rendered per delta.
#include <QtQml/qqmlregistration.h>

#include <QAbstractListModel>

namespace strata::app {

class MarkdownBlocks : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("made by the message list")
  Q_PROPERTY(QString tail READ tail NOTIFY tailChanged)
  Q_PROPERTY(bool tailIsCode READ tailIsCode NOTIFY tailChanged)
  Q_PROPERTY(QString tailLanguage READ tailLanguage NOTIFY tailChanged)

 public:
  enum Role { TextRole = Qt::UserRole + 1, CodeRole, LanguageRole };

  struct Block {
    QString text;  // Markdown source, or the code itself for a code block
    bool code = false;
    QString language;
  };

  explicit MarkdownBlocks(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  void append(const QString& text);
  void finish();  // the message is complete: the tail becomes the last block(s)

  const QList<Block>& blocks() const { return blocks_; }
  // The open tail as shown: Markdown, or the code of an unclosed code block.
  QString tail() const;
  bool tailIsCode() const;
  QString tailLanguage() const;

 signals:
  void tailChanged();

 private:
  bool freezeOne();  // freezes the first complete block of the tail, if there is one
  void freeze(Block block);

  QList<Block> blocks_;
  QString open_;  // the raw text after the last frozen block
};

}  // namespace strata::app
