// The whole window with the tiny model: type a message, press Enter, see the reply stream in
// and get stored; reopen the app and the conversation resumes from its KV cache. The Inside
// panel's heatmap is live for the resident tiny model and marks the experts of the token chosen
// in the routing trail; its speculative decoding block shows the engine's stats, and the
// setting in the Settings dialog switches speculation live. The sidebar's export dialog starts at the conversation's
// title and writes the file; an import opens the new conversation. Code blocks are
// syntax-highlighted in the theme's colours, and the theme setting switches them all live. The
// window opens where it was left.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QPalette>
#include <QQmlApplicationEngine>
#include <QQmlExtensionPlugin>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QQuickTextDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>

#include "bridge/engine_bridge.h"
#include "chat/chat_controller.h"
#include "chat/conversation_transfer.h"
#include "chat/message_list_model.h"
#include "heatmap/heatmap_item.h"
#include "heatmap/routing_monitor.h"
#include "settings/app_settings.h"
#include "shell/app_controller.h"
#include "shell/window_memory.h"
#include "speculation/speculation_monitor.h"
#include "store/conversation_list_model.h"

Q_IMPORT_QML_PLUGIN(Strata_CorePlugin)
Q_IMPORT_QML_PLUGIN(StrataPlugin)

using namespace strata::app;

namespace {

// QTest::keyClicks exists for widgets only.
void typeText(QWindow* window, const QString& text) {
  for (QChar c : text) QTest::keyClick(window, c.toLatin1());
}

// An item by objectName in the visual tree (Repeater delegates and popups included, which
// QObject::findChild does not always reach).
QQuickItem* findItem(QQuickItem* root, const QString& name) {
  if (!root) return nullptr;
  if (root->objectName() == name) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findItem(child, name)) return found;
  return nullptr;
}

// The first item named `name` whose text is not empty.
QQuickItem* findItemWithText(QQuickItem* root, const QString& name) {
  if (!root) return nullptr;
  if (root->objectName() == name && !root->property("text").toString().isEmpty()) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findItemWithText(child, name)) return found;
  return nullptr;
}

QString textOf(QQuickItem* root, const QString& name) {
  QQuickItem* item = findItem(root, name);
  return item ? item->property("text").toString() : QStringLiteral("<no item %1>").arg(name);
}

const DrafterData* drafter(const SpeculationData& data, const QString& name) {
  for (const DrafterData& d : data.drafters)
    if (d.name == name) return &d;
  return nullptr;
}

struct Window {
  explicit Window(const QString& dataDir, bool demo = false) : app(options(dataDir, demo)) {
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
  static AppOptions options(const QString& dataDir, bool demo) {
    AppOptions o;
    o.demo = demo;
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

  void insidePanelShowsSpeculationFromTheEngine() {
    QTemporaryDir data;
    Window w(data.path());
    QVERIFY(w.window);
    QVERIFY(QTest::qWaitForWindowExposed(w.window));
    QTRY_COMPARE_WITH_TIMEOUT(w.app.engine()->state(), EngineBridge::State::Ready, 60000);
    QQuickItem* root = w.window->contentItem();
    // Published with the first snapshot after loading: one row per drafter, none measured yet.
    QTRY_VERIFY_WITH_TIMEOUT(findItem(root, QStringLiteral("drafter_grammar")), 10000);
    QQuickItem* block = findItem(root, QStringLiteral("speculationBlock"));
    QVERIFY(block);
    QVERIFY(block->isVisible());
    // Its rows are laid out on a later frame than they are created (a loaded CI machine
    // showed the block before it had grown).
    QTRY_VERIFY_WITH_TIMEOUT(block->height() > 40, 5000);
    for (const char* name : {"mtp", "ngram", "grammar"}) {
      const QString n = QString::fromLatin1(name);
      QVERIFY2(findItem(root, QStringLiteral("drafter_") + n), name);
      // The MTP chain shows its depth and n-grams their longest draft: the settings (3, 8)
      // until the tuner has measured.
      const QString state = n == QLatin1String("mtp")     ? QStringLiteral("on · depth 3")
                            : n == QLatin1String("ngram") ? QStringLiteral("on · up to 8")
                                                          : QStringLiteral("on");
      QCOMPARE(textOf(root, QStringLiteral("drafterState_") + n), state);
      QCOMPARE(textOf(root, QStringLiteral("drafterAcceptance_") + n), QStringLiteral("—"));
    }
    QCOMPARE(textOf(root, QStringLiteral("speculationTokensPerPass")),
             QStringLiteral("— tokens/pass"));

    // A reply with the default (Automatic): the MTP head drafts, the panel shows its numbers.
    QSignalSpy finished(w.app.engine(), &EngineBridge::replyFinished);
    QSignalSpy loaded(w.app.engine(), &EngineBridge::loaded);
    w.app.chat()->send(QStringLiteral("What is the capital of France?"));
    QVERIFY(finished.wait(60000));
    auto outcome = finished.last().first().value<ReplyOutcome>();
    QVERIFY2(outcome.drafted > 0, qPrintable(QString::number(outcome.drafted)));
    QVERIFY(outcome.forwards > 0);
    QTRY_COMPARE_WITH_TIMEOUT(
        textOf(root, QStringLiteral("speculationTokensPerPass")),
        QStringLiteral("%1 tokens/pass")
            .arg(double(outcome.forwards + outcome.accepted) / double(outcome.forwards), 0, 'f', 2),
        5000);
    QCOMPARE(textOf(root, QStringLiteral("speculationDraftsKept")),
             QStringLiteral("· %1 of %2 drafts kept").arg(outcome.accepted).arg(outcome.drafted));
    // The KV gauge: the chat's cache after the reply, its tokens in the label.
    QQuickItem* kv = findItem(root, QStringLiteral("kvGauge"));
    QVERIFY(kv);
    QVERIFY(kv->isVisible());
    QTRY_VERIFY(w.app.monitor()->kvTokens() >= outcome.promptTokens);
    QCOMPARE(kv->property("label").toString(),
             QStringLiteral("KV cache · %1 tokens").arg(QLocale().toString(qint64(w.app.monitor()->kvTokens()))));
    QVERIFY(kv->property("used").toDouble() > 0);
    QCOMPARE(kv->property("used").toDouble(), w.app.monitor()->kvBytes());
    QVERIFY(kv->property("budget").toDouble() > kv->property("used").toDouble());

    const DrafterData* found = drafter(w.app.speculation()->data(), QStringLiteral("mtp"));
    QVERIFY(found);
    const DrafterData mtpStats = *found;  // a copy: the monitor's data is replaced by updates
    const DrafterData* mtp = &mtpStats;
    QVERIFY(mtp->rounds > 0);
    QCOMPARE(textOf(root, QStringLiteral("drafterAcceptance_mtp")),
             QStringLiteral("%1 %").arg(qRound(100.0 * mtp->firstAccepted / mtp->rounds)));
    QVERIFY(mtp->depth >= 1 && mtp->depth <= 3);
    QCOMPARE(textOf(root, QStringLiteral("drafterState_mtp")),
             mtp->active ? QStringLiteral("on · depth %1").arg(mtp->depth) : QStringLiteral("paused"));
    const QString speedup = textOf(root, QStringLiteral("drafterSpeedup_mtp"));
    if (mtp->speedup > 0)
      QCOMPARE(speedup, QStringLiteral("×") + QString::number(mtp->speedup, 'f', 2));
    else
      QCOMPARE(speedup, QStringLiteral("—"));

    // Off in the Settings dialog: applied at once (no reload), the next reply drafts nothing.
    QObject* dialog = nullptr;
    for (QObject* o : w.window->findChildren<QObject*>())
      if (o->inherits("QQuickDialog")) dialog = o;
    QVERIFY(dialog);
    QMetaObject::invokeMethod(dialog, "open");
    QTRY_VERIFY(dialog->property("opened").toBool());
    QQuickItem* top = w.window->contentItem();  // the overlay that holds popups is above it
    while (top->parentItem()) top = top->parentItem();
    QQuickItem* mode = findItem(top, QStringLiteral("speculationMode"));
    QVERIFY(mode);
    QCOMPARE(mode->property("currentText").toString(), QStringLiteral("Automatic"));
    QVERIFY(QMetaObject::invokeMethod(mode, "activated", Q_ARG(int, 1)));
    QCOMPARE(w.app.settings()->speculationMode(), QStringLiteral("off"));
    QMetaObject::invokeMethod(dialog, "close");

    finished.clear();
    w.app.chat()->send(QStringLiteral("What is the capital of Italy?"));
    QVERIFY(finished.wait(60000));
    outcome = finished.last().first().value<ReplyOutcome>();
    QCOMPARE(outcome.drafted, 0);
    QCOMPARE(loaded.count(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(textOf(root, QStringLiteral("drafterState_mtp")),
                              QStringLiteral("off"), 5000);
    QCOMPARE(textOf(root, QStringLiteral("drafterState_ngram")), QStringLiteral("off"));
    QCOMPARE(textOf(root, QStringLiteral("speculationTokensPerPass")),
             QStringLiteral("1.00 tokens/pass"));
    // The acceptance measured earlier stays (the stats are the engine's, over its lifetime).
    QCOMPARE(textOf(root, QStringLiteral("drafterAcceptance_mtp")),
             QStringLiteral("%1 %").arg(qRound(100.0 * mtp->firstAccepted / mtp->rounds)));

    // Persisted: a second start reads Off.
    w.app.settings()->setMtpDepth(6);
    auto reopened = std::make_unique<AppSettings>(
        std::make_unique<QSettings>(QDir(data.path()).filePath(QStringLiteral("settings.ini")),
                                    QSettings::IniFormat),
        QString());
    QCOMPARE(reopened->speculationMode(), QStringLiteral("off"));
    QCOMPARE(reopened->mtpDepth(), 6);
  }

  // The tiny model is loaded whole (no streaming), yet the heatmap shows its router's heat,
  // and the routing view's chips are the reply's last tokens; clicking one marks its experts.
  void insidePanelShowsTheRouting() {
    QTemporaryDir data;
    Window w(data.path());
    QVERIFY(w.window);
    QVERIFY(QTest::qWaitForWindowExposed(w.window));
    QTRY_COMPARE_WITH_TIMEOUT(w.app.engine()->state(), EngineBridge::State::Ready, 60000);
    QSignalSpy finished(w.app.engine(), &EngineBridge::replyFinished);
    w.app.chat()->send(QStringLiteral("What is the capital of France?"));
    QVERIFY(finished.wait(60000));
    const QString reply = w.app.chat()->messages()->contentAt(1);

    QQuickItem* root = w.window->contentItem();
    auto* heatmap = qobject_cast<HeatmapItem*>(findItem(root, QStringLiteral("heatmap")));
    QVERIFY(heatmap);
    QVERIFY(heatmap->isVisible());
    QCOMPARE(heatmap->layers(), 4);  // strata-tiny: MoE layers 1-4
    QCOMPARE(heatmap->experts(), 32);
    RoutingMonitor* routing = w.app.routing();
    // Published with the stats after the reply: its last token (before the end token) last.
    QTRY_VERIFY_WITH_TIMEOUT(routing->tokens().size() >= 3, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(
        reply.endsWith(routing->tokens().mid(routing->tokens().size() - 3).join(QString())), 5000);
    QCOMPARE(heatmap->marks().size(), 4 * 4);  // top-4 in each MoE layer
    QQuickItem* trail = findItem(root, QStringLiteral("routingTrail"));
    QVERIFY(trail);
    QTRY_COMPARE(trail->childItems().size() - 1, routing->tokens().size());  // chips + the Repeater

    // Click the oldest chip in view (the oldest may be clipped on the left): its experts are
    // marked; "Follow latest" comes back to the newest.
    const QVector<HeatmapItem::Mark> latest = heatmap->marks();
    QQuickItem* clip = trail->parentItem();
    QTRY_VERIFY(trail->childItems().at(1)->x() > 0);  // laid out (at the next frame's polish)
    int clicked = -1;
    for (int i = 0; i + 1 < routing->tokens().size() && clicked < 0; ++i) {
      QQuickItem* chip = trail->childItems().at(i);
      const QPointF inClip = chip->mapToItem(clip, QPointF(chip->width() / 2, chip->height() / 2));
      if (inClip.x() < 0 || inClip.x() > clip->width()) continue;
      QTest::mouseClick(w.window, Qt::LeftButton, {},
                        chip->mapToScene(QPointF(chip->width() / 2, chip->height() / 2)).toPoint());
      clicked = i;
    }
    QVERIFY(clicked >= 0);
    QTRY_VERIFY(!routing->following());
    QCOMPARE(routing->shownIndex(), clicked);
    QCOMPARE(routing->shownText(), routing->tokens().at(clicked));
    QCOMPARE(heatmap->marks().size(), 4 * 4);
    QQuickItem* follow = findItem(root, QStringLiteral("followLatest"));
    QVERIFY(follow && follow->isVisible());
    const QPointF f = follow->mapToScene(QPointF(follow->width() / 2, follow->height() / 2));
    QTest::mouseClick(w.window, Qt::LeftButton, {}, f.toPoint());
    QTRY_VERIFY(routing->following());
    QCOMPARE(heatmap->marks().size(), latest.size());
    for (qsizetype i = 0; i < latest.size(); ++i) {
      QCOMPARE(heatmap->marks()[i].row, latest[i].row);
      QCOMPARE(heatmap->marks()[i].expert, latest[i].expert);
    }
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

  // The demo's C++ code block: its TextEdit's document carries the highlighter's formats, in
  // the theme's colours (the keyword colour on `return`), and follows a theme switch.
  void codeBlocksAreHighlighted() {
    QTemporaryDir data;
    Window w(data.path(), /*demo=*/true);
    QVERIFY(w.window);
    w.app.settings()->setTheme(QStringLiteral("dark"));
    QVERIFY(QTest::qWaitForWindowExposed(w.window));
    QQuickItem* root = w.window->contentItem();
    QTRY_VERIFY(findItemWithText(root, QStringLiteral("codeText")));
    QQuickItem* code = findItemWithText(root, QStringLiteral("codeText"));
    QVERIFY(code->property("text").toString().startsWith(QStringLiteral("#include")));
    auto* quickDoc = code->property("textDocument").value<QQuickTextDocument*>();
    QVERIFY(quickDoc && quickDoc->textDocument());
    QTextDocument* doc = quickDoc->textDocument();
    QTRY_VERIFY(!doc->firstBlock().layout()->formats().isEmpty());

    auto returnColour = [doc] {
      for (QTextBlock b = doc->firstBlock(); b.isValid(); b = b.next()) {
        const int at = b.text().indexOf(QStringLiteral("return"));
        if (at < 0) continue;
        for (const QTextLayout::FormatRange& r : b.layout()->formats())
          if (at >= r.start && at < r.start + r.length) return r.format.foreground().color();
      }
      return QColor();
    };
    QTRY_COMPARE(returnColour(), QColor(QStringLiteral("#c792ea")));  // the dark Theme.codeKeyword
    w.app.settings()->setTheme(QStringLiteral("light"));
    QTRY_COMPARE(returnColour(), QColor(QStringLiteral("#8232b8")));  // the light one
  }

  // Settings → Theme switches every Theme colour at once, and "Follow the system" follows the
  // desktop's palette as it changes (Qt 6.4 has no colour scheme hint).
  void themeSettingSwitchesColoursLive() {
    const QColor darkWindow(QStringLiteral("#15171c")), lightWindow(QStringLiteral("#fbfbfd"));
    const QColor darkDim(QStringLiteral("#9aa1b2")), lightDim(QStringLiteral("#586074"));
    QTemporaryDir data;
    Window w(data.path(), /*demo=*/true);
    QVERIFY(w.window);
    QVERIFY(QTest::qWaitForWindowExposed(w.window));
    QQuickItem* status = findItem(w.window->contentItem(), QStringLiteral("modelStatus"));
    QVERIFY(status);
    auto statusColour = [status] { return status->property("color").value<QColor>(); };
    // The offscreen platform's palette is light, so the default ("system") is light.
    QCOMPARE(w.app.settings()->theme(), QStringLiteral("system"));
    QCOMPARE(w.window->color(), lightWindow);
    QCOMPARE(statusColour(), lightDim);

    QObject* dialog = nullptr;
    for (QObject* o : w.window->findChildren<QObject*>())
      if (o->inherits("QQuickDialog")) dialog = o;
    QVERIFY(dialog);
    QMetaObject::invokeMethod(dialog, "open");
    QTRY_VERIFY(dialog->property("opened").toBool());
    QQuickItem* top = w.window->contentItem();
    while (top->parentItem()) top = top->parentItem();
    QQuickItem* choice = findItem(top, QStringLiteral("themeChoice"));
    QVERIFY(choice);
    QCOMPARE(choice->property("currentText").toString(), QStringLiteral("Follow the system"));
    QVERIFY(QMetaObject::invokeMethod(choice, "activated", Q_ARG(int, 2)));
    QCOMPARE(w.app.settings()->theme(), QStringLiteral("dark"));
    QCOMPARE(w.window->color(), darkWindow);
    QCOMPARE(statusColour(), darkDim);
    QMetaObject::invokeMethod(dialog, "close");

    w.app.settings()->setTheme(QStringLiteral("light"));
    QCOMPARE(w.window->color(), lightWindow);
    QCOMPARE(choice->property("currentText").toString(), QStringLiteral("Light"));

    // Following the system: the desktop switches to a dark palette, and back.
    w.app.settings()->setTheme(QStringLiteral("system"));
    const QPalette desktop = QGuiApplication::palette();
    QPalette dark = desktop;
    dark.setColor(QPalette::Window, QColor(QStringLiteral("#202124")));
    QGuiApplication::setPalette(dark);
    QTRY_COMPARE(w.window->color(), darkWindow);
    QCOMPARE(statusColour(), darkDim);
    QGuiApplication::setPalette(desktop);
    QTRY_COMPARE(w.window->color(), lightWindow);
  }

  // main() hands the saved window place to Main.qml as initial properties: the window opens
  // there, and maximized when it was left so. The window is no narrower than its minimum.
  void windowOpensWhereItWasLeft() {
    for (const bool maximized : {false, true}) {
      QTemporaryDir data;
      AppController app(Window::options(data.path(), /*demo=*/true));
      app.settings()->setWindowGeometry(QRect(40, 30, 962, 600));
      app.settings()->setWindowMaximized(maximized);
      // A 1600x1000 screen (the offscreen platform's is 800x600, smaller than the window).
      QVariantMap initial = restoredWindowProperties(*app.settings(), {QRect(0, 0, 1600, 1000)});
      initial.insert(QStringLiteral("app"), QVariant::fromValue(&app));
      QQmlApplicationEngine engine;
      engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
      engine.setInitialProperties(initial);
      engine.load(QUrl(QStringLiteral("qrc:/qt/qml/Strata/Main.qml")));
      QVERIFY(!engine.rootObjects().isEmpty());
      auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().first());
      QVERIFY(window);
      QVERIFY(QTest::qWaitForWindowExposed(window));
      if (maximized) {
        QTRY_VERIFY(window->windowStates() & Qt::WindowMaximized);
      } else {
        QCOMPARE(window->size(), QSize(962, 600));
        QCOMPARE(window->position(), QPoint(40, 30));
        QVERIFY(!(window->windowStates() & Qt::WindowMaximized));
        // As narrow as it goes (the window manager holds it there): 640 px, where the Inside
        // panel takes the sidebar's place (test_app_chat_narrow checks the column there).
        QCOMPARE(window->minimumWidth(), 640);
      }
    }
  }

  void sidebarExportsAndImports() {
    QTemporaryDir data;
    Window w(data.path());
    QVERIFY(w.window);
    QVERIFY(QTest::qWaitForWindowExposed(w.window));
    QQuickItem* root = w.window->contentItem();
    QVERIFY(findItem(root, QStringLiteral("importButton")));

    const QString source = data.filePath(QStringLiteral("in.json"));
    {
      QFile f(source);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(R"({"title": "Trip: Lisbon?", "messages": [{"role": "user", "content": "Plan it"},
                 {"role": "assistant", "content": "Day 1: Alfama."}]})");
    }
    const qint64 id = w.app.transfer()->importJson(QUrl::fromLocalFile(source));
    QVERIFY2(id > 0, qPrintable(w.app.errorText()));
    QCOMPARE(w.app.chat()->conversationId(), id);
    QTRY_VERIFY(findItem(root, QStringLiteral("exportButton")));  // on the open conversation

    QObject* dialog = w.window->findChild<QObject*>(QStringLiteral("exportDialog"));
    QVERIFY(dialog);
    QVERIFY(QMetaObject::invokeMethod(dialog, "start", Q_ARG(QVariant, QVariant(id)),
                                      Q_ARG(QVariant, QVariant(QStringLiteral("json")))));
    const QUrl suggested = dialog->property("selectedFile").toUrl();
    QCOMPARE(QFileInfo(suggested.toLocalFile()).fileName(), QStringLiteral("Trip Lisbon.json"));
    QCOMPARE(dialog->property("currentFolder").toUrl().toLocalFile(),
             QFileInfo(suggested.toLocalFile()).absolutePath());

    // Accepting writes the chosen file (chosen here as the dialog opens, as start() does).
    QVERIFY(QMetaObject::invokeMethod(dialog, "reject"));
    const QString target = data.filePath(QStringLiteral("out.json"));
    dialog->setProperty("currentFolder", QUrl::fromLocalFile(data.path()));
    dialog->setProperty("selectedFile", QUrl::fromLocalFile(target));
    QVERIFY(QMetaObject::invokeMethod(dialog, "open"));
    QVERIFY(QMetaObject::invokeMethod(dialog, "accept"));
    QTRY_VERIFY(QFile::exists(target));
    QFile out(target);
    QVERIFY(out.open(QIODevice::ReadOnly));
    const QJsonObject json = QJsonDocument::fromJson(out.readAll()).object();
    QCOMPARE(json.value(QLatin1String("title")).toString(), QStringLiteral("Trip: Lisbon?"));
    QVERIFY2(w.app.errorText().isEmpty(), qPrintable(w.app.errorText()));
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
