#include "chat/chat_controller.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QLocale>

#include "bridge/engine_bridge.h"
#include "chat/message_list_model.h"
#include "heatmap/tier_monitor.h"
#include "settings/app_settings.h"
#include "store/conversation_list_model.h"
#include "store/conversation_store.h"

namespace strata::app {
namespace {

QString titleFrom(const QString& text) {
  const QString line = text.simplified();
  return line.size() <= 48 ? line : line.left(47) + QChar(0x2026);
}

}  // namespace

ChatController::ChatController(EngineBridge* bridge, ConversationStore* store,
                               AppSettings* settings, TierMonitor* monitor, QObject* parent)
    : QObject(parent),
      bridge_(bridge),
      store_(store),
      settings_(settings),
      monitor_(monitor),
      messages_(new MessageListModel(this)),
      conversations_(new ConversationListModel(store, this)) {
  connect(bridge_, &EngineBridge::replyDelta, this, &ChatController::onDelta);
  connect(bridge_, &EngineBridge::replyFinished, this, &ChatController::onFinished);
  connect(bridge_, &EngineBridge::replyFailed, this, &ChatController::onFailed);
  connect(bridge_, &EngineBridge::generatingChanged, this, &ChatController::busyChanged);
  connect(bridge_, &EngineBridge::conversationResumed, this,
          [this](const QString& file, qint64 tokens, double ms) {
            if (file != kvFile()) return;
            setNotice(tr("Resumed %1 tokens in %2 ms")
                          .arg(QLocale().toString(tokens))
                          .arg(QLocale().toString(ms, 'f', ms < 10 ? 1 : 0)));
          });
  connect(bridge_, &EngineBridge::resumeFailed, this,
          [this](const QString& file, const QString& why) {
            if (file != kvFile()) return;
            setNotice(tr("The saved KV cache could not be used (%1); the next reply recomputes the "
                         "conversation.")
                          .arg(why));
          });
  conversations_->reload();
}

bool ChatController::busy() const { return bridge_->generating(); }

bool ChatController::storing() const { return store_ && store_->isOpen(); }

QString ChatController::kvFile() const {
  return storing() && conversationId_ ? store_->kvFile(conversationId_) : QString();
}

void ChatController::setNotice(const QString& notice) {
  if (notice_ == notice) return;
  notice_ = notice;
  emit noticeChanged();
}

void ChatController::setTitle(const QString& title) {
  title_ = title;
  emit conversationChanged();
}

void ChatController::send(const QString& text) {
  const QString message = text.trimmed();
  if (message.isEmpty() || busy()) return;
  if (!conversationId_ && storing()) {
    conversationId_ = store_->createConversation(titleFrom(message));
    title_ = titleFrom(message);
    // The session the worker holds (if any) now belongs to this conversation's KV file.
    bridge_->openConversation(kvFile());
    emit conversationChanged();
  } else if (title_.isEmpty()) {
    title_ = titleFrom(message);
    emit conversationChanged();
  }
  const qint64 id =
      storing() ? store_->addMessage(conversationId_, QStringLiteral("user"), message) : 0;
  messages_->appendMessage(id, QStringLiteral("user"), message);
  conversations_->reload();
  startReply();
}

void ChatController::startReply() {
  GenerateRequest request;
  if (!settings_->systemPrompt().trimmed().isEmpty())
    request.messages.append({QStringLiteral("system"), settings_->systemPrompt(), {}});
  for (int r = 0; r < messages_->count(); ++r) {
    const MessageListModel::Message& m = messages_->at(r);
    request.messages.append({m.role, m.content, m.thinking});
  }
  request.kvFile = kvFile();
  request.thinking = settings_->thinking();
  request.temperature = static_cast<float>(settings_->temperature());
  request.topP = static_cast<float>(settings_->topP());
  request.topK = settings_->topK();
  request.maxTokens = settings_->maxTokens();
  messages_->beginReply(request.thinking);
  setNotice({});
  replyId_ = bridge_->generate(request);
}

void ChatController::onDelta(quint64 id, const QString& text, int, double tokensPerSecond) {
  if (id != replyId_) return;
  applyReplyDelta(text, tokensPerSecond);
}

void ChatController::applyReplyDelta(const QString& text, double tokensPerSecond) {
  messages_->appendReplyDelta(text);
  if (monitor_ && tokensPerSecond > 0) monitor_->addSpeedSample(tokensPerSecond);
}

void ChatController::onFinished(const ReplyOutcome& outcome) {
  if (outcome.id != replyId_) return;
  replyId_ = 0;
  const QString stats =
      tr("%1 tokens · %2 tok/s · prompt %3 tokens (%4 reused) in %5 ms%6")
          .arg(outcome.tokens)
          .arg(outcome.tokensPerSecond, 0, 'f', 1)
          .arg(outcome.promptTokens)
          .arg(outcome.reusedTokens)
          .arg(outcome.prefillSeconds * 1000.0, 0, 'f', 0)
          .arg(outcome.finishReason == QLatin1String("cancelled") ? tr(" · stopped")
               : outcome.finishReason == QLatin1String("length")  ? tr(" · token limit")
                                                                  : QString());
  messages_->finishReply(0, stats);
  const int row = messages_->count() - 1;
  const MessageListModel::Message& m = messages_->at(row);
  if (storing() && conversationId_) {
    const qint64 id = store_->addMessage(conversationId_, m.role, m.content, m.thinking);
    messages_->setMessageId(row, id);  // regenerate and edit delete from this id
    conversations_->reload();
  }
  if (monitor_ && outcome.tokensPerSecond > 0) monitor_->addSpeedSample(outcome.tokensPerSecond);
}

void ChatController::onFailed(quint64 id, const QString& message) {
  if (id != replyId_) return;
  replyId_ = 0;
  messages_->finishReply(0, tr("failed"));
  emit error(tr("The reply failed: %1").arg(message));
}

void ChatController::stop() { bridge_->stop(); }

void ChatController::regenerate() {
  if (busy()) return;
  const int row = messages_->count() - 1;
  if (row < 0 || messages_->at(row).role != QLatin1String("assistant")) return;
  if (storing() && messages_->at(row).id)
    store_->removeMessagesFrom(conversationId_, messages_->at(row).id);
  messages_->removeFrom(row);
  startReply();  // the session keeps the conversation's prefix; only the reply is recomputed
}

void ChatController::editLastUserMessage(const QString& text) {
  if (busy() || text.trimmed().isEmpty()) return;
  const int row = messages_->lastRowWithRole(QStringLiteral("user"));
  if (row < 0) return;
  if (storing() && messages_->at(row).id)
    store_->removeMessagesFrom(conversationId_, messages_->at(row).id);
  messages_->removeFrom(row);
  send(text);
}

void ChatController::copyMessage(int row) { copyText(messages_->contentAt(row)); }

void ChatController::copyText(const QString& text) {
  if (auto* clipboard = QGuiApplication::clipboard()) clipboard->setText(text);
}

void ChatController::newConversation() {
  if (busy()) bridge_->stop();
  replyId_ = 0;
  conversationId_ = 0;
  title_.clear();
  messages_->clear();
  bridge_->openConversation({});
  setNotice({});
  emit conversationChanged();
}

void ChatController::openConversation(qint64 id) {
  if (!storing() || id == conversationId_) return;
  if (busy()) bridge_->stop();
  replyId_ = 0;
  messages_->clear();
  conversationId_ = id;
  const int row = conversations_->rowOf(id);
  title_ = row >= 0
               ? conversations_->data(conversations_->index(row), ConversationListModel::TitleRole)
                     .toString()
               : QString();
  for (const StoredMessage& m : store_->messages(id))
    messages_->appendMessage(m.id, m.role, m.content, m.thinking);
  setNotice({});
  bridge_->openConversation(kvFile());
  emit conversationChanged();
}

void ChatController::renameConversation(qint64 id, const QString& title) {
  if (!storing() || title.trimmed().isEmpty()) return;
  store_->renameConversation(id, title.trimmed());
  if (id == conversationId_) {
    title_ = title.trimmed();
    emit conversationChanged();
  }
  conversations_->reload();
}

void ChatController::deleteConversation(qint64 id) {
  if (!storing()) return;
  const QString file = store_->kvFile(id);
  if (id == conversationId_) newConversation();
  if (!store_->removeConversation(id))
    emit error(tr("Could not delete the conversation: %1").arg(store_->lastError()));
  // Also on the worker, after any save it still has queued for this file.
  bridge_->discardConversation(file);
  conversations_->reload();
}

}  // namespace strata::app
