// The whole window with the tiny model: type a message, press Enter, see the reply stream in
// and get stored; reopen the app and the conversation resumes from its KV cache.
#include <QDir>
#include <QFile>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQmlExtensionPlugin>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTest>

#include "bridge/engine_bridge.h"
#include "chat/chat_controller.h"
#include "chat/message_list_model.h"
#include "settings/app_settings.h"
#include "shell/app_controller.h"
#include "store/conversation_list_model.h"

Q_IMPORT_QML_PLUGIN(Strata_CorePlugin)
Q_IMPORT_QML_PLUGIN(StrataPlugin)

using namespace strata::app;

namespace {

// QTest::keyClicks exists for widgets only.
void typeText(QWindow* window, const QString& text) {
  for (QChar c : text) QTest::keyClick(window, c.toLatin1());
}

struct Window {
  explicit Window(const QString& dataDir) : app(options(dataDir)) {
    app.settings()->setTemperature(0);  // greedy: a reply we can check
    app.settings()->setThinking(false);
    engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
    engine.setInitialProperties({{QStringLiteral("app"), QVariant::fromValue(&app)}});
    engine.load(QUrl(QStringLiteral("qrc:/qt/qml/Strata/Main.qml")));
    window = engine.rootObjects().isEmpty()
                 ? nullptr
                 : qobject_cast<QQuickWindow*>(engine.rootObjects().first());
    app.loadModel();
  }
  static AppOptions options(const QString& dataDir) {
    AppOptions o;
    o.dataDir = dataDir;
    o.settingsFile = QDir(dataDir).filePath(QStringLiteral("settings.ini"));
    o.defaultModelFolder = QStringLiteral(STRATA_TINY_MODEL_DIR);
    return o;
  }
  AppController app;
  QQmlApplicationEngine engine;
  QQuickWindow* window = nullptr;
};

}  // namespace

class TestChatUi : public QObject {
  Q_OBJECT
 private slots:
  void sendingAMessageShowsTheReply() {
    QTemporaryDir data;
    qint64 conversation = 0;
    {
      Window w(data.path());
      QVERIFY(w.window);
      QVERIFY(QTest::qWaitForWindowExposed(w.window));
      QTRY_COMPARE_WITH_TIMEOUT(w.app.engine()->state(), EngineBridge::State::Ready, 60000);

      auto* input = w.window->findChild<QQuickItem*>(QStringLiteral("composerInput"));
      QVERIFY(input);
      input->forceActiveFocus();
      typeText(w.window, QStringLiteral("What is the capital of France?"));
      QCOMPARE(input->property("text").toString(),
               QStringLiteral("What is the capital of France?"));
      QTest::keyClick(w.window, Qt::Key_Return);

      MessageListModel* messages = w.app.chat()->messages();
      QTRY_COMPARE_WITH_TIMEOUT(messages->count(), 2, 5000);
      QCOMPARE(input->property("text").toString(), QString());  // Enter sent it
      QTRY_VERIFY_WITH_TIMEOUT(!w.app.chat()->busy(), 60000);
      const QString reply = messages->contentAt(1);
      QVERIFY2(reply.contains(QStringLiteral("Paris")), qPrintable(reply));
      QVERIFY(w.app.errorText().isEmpty());

      // The ListView has a delegate for each visible message.
      auto* list = w.window->findChild<QQuickItem*>(QStringLiteral("messageList"));
      QVERIFY(list);
      QCOMPARE(list->property("count").toInt(), 2);

      // Stored, with its KV cache next to it.
      ConversationListModel* conversations = w.app.chat()->conversations();
      QCOMPARE(conversations->count(), 1);
      conversation = w.app.chat()->conversationId();
      QVERIFY(conversation > 0);
      QTRY_VERIFY_WITH_TIMEOUT(
          QFile::exists(QDir(data.path())
                            .filePath(QStringLiteral("kv/conversation-%1.kv").arg(conversation))),
          10000);

      // Shift+Enter adds a line instead of sending.
      input->forceActiveFocus();
      typeText(w.window, QStringLiteral("one"));
      QTest::keyClick(w.window, Qt::Key_Return, Qt::ShiftModifier);
      typeText(w.window, QStringLiteral("two"));
      QCOMPARE(input->property("text").toString(), QStringLiteral("one\ntwo"));
      QCOMPARE(messages->count(), 2);
    }
    // A second start: the conversation is listed, and opening it resumes the saved KV cache.
    Window again(data.path());
    QVERIFY(again.window);
    QTRY_COMPARE_WITH_TIMEOUT(again.app.engine()->state(), EngineBridge::State::Ready, 60000);
    QCOMPARE(again.app.chat()->conversations()->count(), 1);
    again.app.chat()->openConversation(conversation);
    QCOMPARE(again.app.chat()->messages()->count(), 2);
    QTRY_VERIFY_WITH_TIMEOUT(again.app.chat()->notice().startsWith(QStringLiteral("Resumed")),
                             10000);
  }

  void badModelFolderShowsADismissableError() {
    QTemporaryDir data;
    Window w(data.path());
    QVERIFY(w.window);
    QTRY_COMPARE_WITH_TIMEOUT(w.app.engine()->state(), EngineBridge::State::Ready, 60000);
    w.app.settings()->setModelFolder(data.filePath(QStringLiteral("missing-model")));
    QVERIFY(w.app.reloadNeeded());
    w.app.loadModel();
    QTRY_COMPARE_WITH_TIMEOUT(w.app.engine()->state(), EngineBridge::State::Failed, 30000);
    QVERIFY2(w.app.errorText().contains(QStringLiteral("missing-model")),
             qPrintable(w.app.errorText()));
    w.app.dismissError();
    QVERIFY(w.app.errorText().isEmpty());
  }
};

int main(int argc, char** argv) {
  QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
  QGuiApplication app(argc, argv);
  QQuickStyle::setStyle(QStringLiteral("Basic"));  // as main() does
  TestChatUi test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_chat_ui.moc"
