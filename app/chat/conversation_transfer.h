#pragma once
// The sidebar's export and import: a stored conversation written to a file as Markdown or
// JSON (conversation_export.h), and a JSON file read into a new conversation
// (conversation_import.h). A refused file changes nothing in the store; every failure is
// reported through `error` with the file and the reason.
#include <QtQml/qqmlregistration.h>

#include <QObject>
#include <QUrl>

namespace strata::app {

class ConversationStore;

class ConversationTransfer : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")

 public:
  // Files larger than this are refused before they are read.
  static constexpr qint64 kMaxImportBytes = 64ll << 20;

  explicit ConversationTransfer(ConversationStore* store, QObject* parent = nullptr);

  // Write conversation `id` to `file` (a local file URL or path); false after `error`.
  Q_INVOKABLE bool exportMarkdown(qint64 id, const QUrl& file);
  Q_INVOKABLE bool exportJson(qint64 id, const QUrl& file);
  // The new conversation's id, or 0 after `error`.
  Q_INVOKABLE qint64 importJson(const QUrl& file);
  // Where the save dialog starts: the documents folder (else home), the title as the file name.
  Q_INVOKABLE QUrl suggestedFile(qint64 id, const QString& suffix);

 signals:
  void error(const QString& message);
  void exported(const QString& file);
  void imported(qint64 id);

 private:
  bool exportAs(qint64 id, const QUrl& file, bool markdown);
  bool fail(const QString& message);
  qint64 importFrom(const QString& path, QString* why);  // 0 with `why` on refusal

  ConversationStore* store_;
};

}  // namespace strata::app
