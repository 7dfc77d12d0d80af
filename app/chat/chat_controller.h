#pragma once
// The chat's use cases on the GUI thread: send, stop, regenerate, edit, and the conversation
// list (new, open, rename, delete, search). It keeps the message model, the store and the
// engine's session in step; the engine itself is reached only through the bridge.
#include <QtQml/qqmlregistration.h>

#include <QObject>

#include "bridge/bridge_types.h"

namespace strata::app {

class AppSettings;
class ConversationListModel;
class ConversationStore;
class EngineBridge;
class MessageListModel;
class TierMonitor;

class ChatController : public QObject {
  Q_OBJECT
  Q_MOC_INCLUDE("chat/message_list_model.h")
  Q_MOC_INCLUDE("store/conversation_list_model.h")
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")
  Q_PROPERTY(strata::app::MessageListModel* messages READ messages CONSTANT)
  Q_PROPERTY(strata::app::ConversationListModel* conversations READ conversations CONSTANT)
  Q_PROPERTY(qint64 conversationId READ conversationId NOTIFY conversationChanged)
  Q_PROPERTY(QString title READ title NOTIFY conversationChanged)
  Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
  Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)

 public:
  ChatController(EngineBridge* bridge, ConversationStore* store, AppSettings* settings,
                 TierMonitor* monitor, QObject* parent = nullptr);

  MessageListModel* messages() const { return messages_; }
  ConversationListModel* conversations() const { return conversations_; }
  qint64 conversationId() const { return conversationId_; }
  QString title() const { return title_; }
  bool busy() const;
  QString notice() const { return notice_; }

  Q_INVOKABLE void send(const QString& text);
  Q_INVOKABLE void stop();
  Q_INVOKABLE void regenerate();
  Q_INVOKABLE void editLastUserMessage(const QString& text);
  Q_INVOKABLE void copyMessage(int row);
  Q_INVOKABLE void copyText(const QString& text);
  Q_INVOKABLE void newConversation();
  Q_INVOKABLE void openConversation(qint64 id);
  Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
  Q_INVOKABLE void deleteConversation(qint64 id);
  void setNotice(const QString& notice);
  void setTitle(const QString& title);  // demo content
  // Applies a streamed piece of the reply to the last message (already begun with
  // MessageListModel::beginReply), as every replyDelta of a reply started here is applied.
  // Public for the responsiveness benchmark (shell/frame_bench), which streams replies to
  // short prompts of its own into a long conversation that the model is not sent.
  void applyReplyDelta(const QString& text, double tokensPerSecond);

 signals:
  void conversationChanged();
  void busyChanged();
  void noticeChanged();
  void error(const QString& message);

 private:
  void startReply();
  void onDelta(quint64 id, const QString& text, int tokens, double tokensPerSecond);
  void onFinished(const strata::app::ReplyOutcome& outcome);
  void onFailed(quint64 id, const QString& message);
  QString kvFile() const;
  bool storing() const;

  EngineBridge* bridge_;
  ConversationStore* store_;
  AppSettings* settings_;
  TierMonitor* monitor_;
  MessageListModel* messages_;
  ConversationListModel* conversations_;
  qint64 conversationId_ = 0;  // 0: a new chat not stored yet
  QString title_;
  quint64 replyId_ = 0;  // the reply being streamed (0: none)
  QString notice_;
};

}  // namespace strata::app
