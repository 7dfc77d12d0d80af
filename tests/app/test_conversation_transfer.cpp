// Conversation export (Markdown, JSON) and import (JSON): a round trip through a file gives the
// same messages; the Markdown has the turns, the thinking folded and the code verbatim; the
// OpenAI shapes are read; every malformed file is refused with a message naming the problem
// and leaves the store as it was.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

#include "chat/chat_controller.h"
#include "chat/conversation_transfer.h"
#include "shell/app_controller.h"
#include "store/conversation_list_model.h"
#include "store/conversation_store.h"

using namespace strata::app;

namespace {

const QString kCode = QStringLiteral(
    "Here it is:\n\n```python\nfor i in range(3):\n    print(i)  # <b>not html</b>\n```\n");
const QString kThinking = QStringLiteral("The user wants a loop.\nKeep it short.");

std::unique_ptr<ConversationStore> openStore(const QTemporaryDir& dir, const QString& name) {
  auto store = std::make_unique<ConversationStore>(dir.filePath(name + QStringLiteral(".sqlite")),
                                                   dir.filePath(QStringLiteral("kv")));
  QString error;
  if (!store->open(&error)) qWarning() << error;
  return store;
}

// A conversation with a system turn, code, thinking and a second exchange.
qint64 addSample(ConversationStore& store) {
  const qint64 id = store.createConversation(QStringLiteral("Loops in Python"));
  store.addMessage(id, QStringLiteral("system"), QStringLiteral("Answer briefly."));
  store.addMessage(id, QStringLiteral("user"), QStringLiteral("Write a loop"));
  store.addMessage(id, QStringLiteral("assistant"), kCode, kThinking);
  store.addMessage(id, QStringLiteral("user"), QStringLiteral("Thanks"));
  store.addMessage(id, QStringLiteral("assistant"), QStringLiteral("You're welcome."));
  return id;
}

void writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
}

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// What the store holds, as one comparable list of strings.
QStringList snapshot(ConversationStore& store) {
  QStringList out;
  for (const ConversationRow& row : store.conversations()) {
    out << QStringLiteral("# %1").arg(row.title);
    for (const StoredMessage& m : store.messages(row.id))
      out << m.role + u'|' + m.content + u'|' + m.thinking;
  }
  return out;
}

}  // namespace

class TestConversationTransfer : public QObject {
  Q_OBJECT
 private slots:
  void jsonRoundTripKeepsTheMessages() {
    QTemporaryDir dir;
    auto source = openStore(dir, QStringLiteral("source"));
    const qint64 id = addSample(*source);
    const QString file = dir.filePath(QStringLiteral("loops.json"));
    ConversationTransfer exporter(source.get());
    QSignalSpy exported(&exporter, &ConversationTransfer::exported);
    QVERIFY(exporter.exportJson(id, QUrl::fromLocalFile(file)));
    QCOMPARE(exported.count(), 1);

    // The documented shape, read independently of the importer.
    const QJsonObject root = QJsonDocument::fromJson(readFile(file)).object();
    QCOMPARE(root.value(QLatin1String("format")).toString(), QStringLiteral("strata-conversation"));
    QCOMPARE(root.value(QLatin1String("version")).toInt(), 1);
    QCOMPARE(root.value(QLatin1String("title")).toString(), QStringLiteral("Loops in Python"));
    const QJsonArray messages = root.value(QLatin1String("messages")).toArray();
    QCOMPARE(messages.size(), 5);
    QCOMPARE(messages[2].toObject().value(QLatin1String("role")).toString(),
             QStringLiteral("assistant"));
    QCOMPARE(messages[2].toObject().value(QLatin1String("content")).toString(), kCode);
    QCOMPARE(messages[2].toObject().value(QLatin1String("reasoning_content")).toString(),
             kThinking);
    QVERIFY(!messages[4].toObject().contains(QLatin1String("reasoning_content")));

    auto target = openStore(dir, QStringLiteral("target"));
    target->createConversation(QStringLiteral("Already here"));
    ConversationTransfer importer(target.get());
    QSignalSpy imported(&importer, &ConversationTransfer::imported);
    const qint64 newId = importer.importJson(QUrl::fromLocalFile(file));
    QVERIFY(newId > 0);
    QCOMPARE(imported.count(), 1);
    QCOMPARE(imported.first().first().toLongLong(), newId);
    QCOMPARE(target->conversations().size(), 2);

    const auto before = source->messages(id);
    const auto after = target->messages(newId);
    QCOMPARE(after.size(), before.size());
    for (qsizetype i = 0; i < before.size(); ++i) {
      QCOMPARE(after[i].role, before[i].role);
      QCOMPARE(after[i].content, before[i].content);
      QCOMPARE(after[i].thinking, before[i].thinking);
    }
    QCOMPARE(target->conversation(newId)->title, QStringLiteral("Loops in Python"));
    QCOMPARE(target->conversation(newId)->createdMs, source->conversation(id)->createdMs);
  }

  void markdownHasTheTurns() {
    QTemporaryDir dir;
    auto store = openStore(dir, QStringLiteral("c"));
    const qint64 id = addSample(*store);
    const QString file = dir.filePath(QStringLiteral("loops.md"));
    ConversationTransfer transfer(store.get());
    QVERIFY(transfer.exportMarkdown(id, QUrl::fromLocalFile(file)));
    const QString md = QString::fromUtf8(readFile(file));

    QVERIFY2(md.startsWith(QStringLiteral("# Loops in Python\n")), qPrintable(md));
    const qsizetype system = md.indexOf(QStringLiteral("## System\n\nAnswer briefly.\n"));
    const qsizetype user = md.indexOf(QStringLiteral("## User\n\nWrite a loop\n"));
    const qsizetype thinking =
        md.indexOf(QStringLiteral("## Assistant\n\n<details>\n<summary>Thinking</summary>\n\n") +
                   kThinking + QStringLiteral("\n\n</details>\n\n"));
    const qsizetype code = md.indexOf(kCode);  // verbatim, fence and all
    const qsizetype thanks = md.indexOf(QStringLiteral("## User\n\nThanks\n"));
    const qsizetype welcome = md.indexOf(QStringLiteral("## Assistant\n\nYou're welcome.\n"));
    QVERIFY2(system > 0 && user > system && thinking > user && code > thinking && thanks > code &&
                 welcome > thanks,
             qPrintable(md));
    // Only the turn with thinking has a <details> block.
    QCOMPARE(md.count(QStringLiteral("<details>")), 1);
  }

  void readsOpenAiShapes_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("title");
    QTest::addColumn<QStringList>("messages");
    QTest::newRow("request body") << QByteArray(R"({"model": "gpt-x", "messages": [
             {"role": "developer", "content": "Be terse."},
             {"role": "user", "content": [{"type": "text", "text": "Hello "},
                                          {"type": "text", "text": "there"}]},
             {"role": "assistant", "content": "Hi.", "reasoning_content": null}]})")
                                  << QStringLiteral("Hello there")
                                  << QStringList{QStringLiteral("system|Be terse.|"),
                                                 QStringLiteral("user|Hello there|"),
                                                 QStringLiteral("assistant|Hi.|")};
    QTest::newRow("bare array") << QByteArray(R"([{"role": "user", "content": "What is 2+2?"},
                         {"role": "assistant", "content": "4", "reasoning_content": "Add."}])")
                                << QStringLiteral("What is 2+2?")
                                << QStringList{QStringLiteral("user|What is 2+2?|"),
                                               QStringLiteral("assistant|4|Add.")};
  }

  void readsOpenAiShapes() {
    QFETCH(QByteArray, json);
    QFETCH(QString, title);
    QFETCH(QStringList, messages);
    QTemporaryDir dir;
    auto store = openStore(dir, QStringLiteral("c"));
    const QString file = dir.filePath(QStringLiteral("in.json"));
    writeFile(file, json);
    ConversationTransfer transfer(store.get());
    QSignalSpy errors(&transfer, &ConversationTransfer::error);
    const qint64 id = transfer.importJson(QUrl::fromLocalFile(file));
    QVERIFY2(id > 0, errors.isEmpty() ? "" : qPrintable(errors.first().first().toString()));
    QCOMPARE(snapshot(*store), QStringList{QStringLiteral("# ") + title} + messages);
  }

  void refusesBadFiles_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("problem");
    QTest::newRow("truncated") << QByteArray(R"({"messages": [{"role": "user")")
                               << QStringLiteral("not valid JSON");
    QTest::newRow("not json") << QByteArray("# A chat\n\nhello")
                              << QStringLiteral("not valid JSON");
    QTest::newRow("no messages") << QByteArray(R"({"title": "x"})")
                                 << QStringLiteral("messages is missing, expected a list");
    QTest::newRow("messages an object")
        << QByteArray(R"({"messages": {"role": "user", "content": "hi"}})")
        << QStringLiteral("messages is an object, expected a list");
    QTest::newRow("empty messages")
        << QByteArray(R"({"messages": []})") << QStringLiteral("messages is empty");
    QTest::newRow("empty array") << QByteArray("[]") << QStringLiteral("messages is empty");
    QTest::newRow("message not an object")
        << QByteArray(R"(["hi"])") << QStringLiteral("messages[0] is text, expected an object");
    QTest::newRow("role a number") << QByteArray(R"([{"role": 1, "content": "hi"}])")
                                   << QStringLiteral("messages[0].role is a number");
    QTest::newRow("content a number")
        << QByteArray(R"([{"role": "user", "content": 5}])")
        << QStringLiteral("messages[0].content is a number, expected text");
    QTest::newRow("tool turn")
        << QByteArray(R"([{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}])")
        << QStringLiteral("messages[1].role is \"tool\"");
    QTest::newRow("image part")
        << QByteArray(R"([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}])")
        << QStringLiteral("messages[0].content[0] is not a {\"type\": \"text\"} part");
    QTest::newRow("reasoning a list")
        << QByteArray(R"([{"role": "assistant", "content": "a", "reasoning_content": []}])")
        << QStringLiteral("messages[0].reasoning_content is a list, expected text");
    QTest::newRow("other format") << QByteArray(
                                         R"({"format": "other-chat", "version": 1, "messages": [
                         {"role": "user", "content": "hi"}]})")
                                  << QStringLiteral("format is \"other-chat\"");
    QTest::newRow("newer version")
        << QByteArray(R"({"format": "strata-conversation", "version": 2, "messages": [
                         {"role": "user", "content": "hi"}]})")
        << QStringLiteral("version 2 is newer than this app reads (1)");
    QTest::newRow("version text")
        << QByteArray(R"({"format": "strata-conversation", "version": "1", "messages": [
                         {"role": "user", "content": "hi"}]})")
        << QStringLiteral("version is text, expected a whole number");
    QTest::newRow("title a number")
        << QByteArray(R"({"title": 7, "messages": [{"role": "user", "content": "hi"}]})")
        << QStringLiteral("title is a number, expected text");
    QTest::newRow("created not a date")
        << QByteArray(
               R"({"created": "yesterday", "messages": [{"role": "user", "content": "hi"}]})")
        << QStringLiteral("created is \"yesterday\", expected an ISO 8601 date");
  }

  void refusesBadFiles() {
    QFETCH(QByteArray, json);
    QFETCH(QString, problem);
    QTemporaryDir dir;
    auto store = openStore(dir, QStringLiteral("c"));
    addSample(*store);
    const QStringList before = snapshot(*store);
    const QString file = dir.filePath(QStringLiteral("bad.json"));
    writeFile(file, json);

    ConversationTransfer transfer(store.get());
    QSignalSpy errors(&transfer, &ConversationTransfer::error);
    QSignalSpy imported(&transfer, &ConversationTransfer::imported);
    QCOMPARE(transfer.importJson(QUrl::fromLocalFile(file)), 0);
    QCOMPARE(imported.count(), 0);
    QCOMPARE(errors.count(), 1);
    const QString message = errors.first().first().toString();
    QVERIFY2(message.contains(problem), qPrintable(message));
    QVERIFY2(message.contains(file), qPrintable(message));
    QCOMPARE(snapshot(*store), before);
  }

  void refusesAMissingFileAndAnUnwritableDestination() {
    QTemporaryDir dir;
    auto store = openStore(dir, QStringLiteral("c"));
    const qint64 id = addSample(*store);
    const QStringList before = snapshot(*store);
    ConversationTransfer transfer(store.get());
    QSignalSpy errors(&transfer, &ConversationTransfer::error);

    const QString missing = dir.filePath(QStringLiteral("nowhere.json"));
    QCOMPARE(transfer.importJson(QUrl::fromLocalFile(missing)), 0);
    QCOMPARE(errors.count(), 1);
    QVERIFY(errors.last().first().toString().contains(missing));
    QCOMPARE(snapshot(*store), before);

    const QString unwritable = dir.filePath(QStringLiteral("no-such-folder/out.md"));
    QVERIFY(!transfer.exportMarkdown(id, QUrl::fromLocalFile(unwritable)));
    QCOMPARE(errors.count(), 2);
    QVERIFY(errors.last().first().toString().contains(unwritable));
    QVERIFY(!transfer.exportJson(id + 100,
                                 QUrl::fromLocalFile(dir.filePath(QStringLiteral("x.json")))));
    QCOMPARE(errors.count(), 3);
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x.json"))));
  }

  void suggestedFileIsTheTitle() {
    QTemporaryDir dir;
    auto store = openStore(dir, QStringLiteral("c"));
    const qint64 id = store->createConversation(QStringLiteral("a/b: c?  <d>"));
    ConversationTransfer transfer(store.get());
    QCOMPARE(QFileInfo(transfer.suggestedFile(id, QStringLiteral("md")).toLocalFile()).fileName(),
             QStringLiteral("a b c d.md"));
    const qint64 dots = store->createConversation(QStringLiteral("..."));
    QCOMPARE(
        QFileInfo(transfer.suggestedFile(dots, QStringLiteral("json")).toLocalFile()).fileName(),
        QStringLiteral("conversation.json"));
  }

  // Through the app: an import opens the new conversation; a refused one fills the error banner.
  void appOpensAnImportAndShowsARefusal() {
    QTemporaryDir dir;
    AppOptions options;
    options.dataDir = dir.filePath(QStringLiteral("data"));
    options.settingsFile = dir.filePath(QStringLiteral("settings.ini"));
    AppController app(options);
    QVERIFY2(app.errorText().isEmpty(), qPrintable(app.errorText()));

    const QString bad = dir.filePath(QStringLiteral("bad.json"));
    writeFile(bad, QByteArray(R"({"messages": []})"));
    QCOMPARE(app.transfer()->importJson(QUrl::fromLocalFile(bad)), 0);
    QVERIFY2(app.errorText().contains(QStringLiteral("messages is empty")),
             qPrintable(app.errorText()));
    QCOMPARE(app.chat()->conversations()->count(), 0);
    app.dismissError();

    const QString good = dir.filePath(QStringLiteral("good.json"));
    writeFile(good, QByteArray(R"({"format": "strata-conversation", "version": 1,
        "title": "Imported chat", "messages": [{"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"}]})"));
    const qint64 id = app.transfer()->importJson(QUrl::fromLocalFile(good));
    QVERIFY(id > 0);
    QVERIFY(app.errorText().isEmpty());
    QCOMPARE(app.chat()->conversations()->count(), 1);
    QCOMPARE(app.chat()->conversationId(), id);
    QCOMPARE(app.chat()->title(), QStringLiteral("Imported chat"));
  }
};

QTEST_MAIN(TestConversationTransfer)
#include "test_conversation_transfer.moc"
