// The conversation store: migrations from an empty database and from schema 1, search,
// rename, delete (with the KV file), and a database newer than the app.
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "store/conversation_list_model.h"
#include "store/conversation_store.h"
#include "store/schema_migrations.h"

using namespace strata::app;

namespace {

// Runs a .sql fixture through a separate connection, as an older app would have left the file.
void writeFixture(const QString& dbFile, const QString& sqlFile, int userVersion = -1) {
  {
    QSqlDatabase db =
        QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("fixture"));
    db.setDatabaseName(dbFile);
    QVERIFY(db.open());
    QSqlQuery q(db);
    if (!sqlFile.isEmpty()) {
      QFile f(sqlFile);
      QVERIFY(f.open(QIODevice::ReadOnly));
      for (const QString& statement : QString::fromUtf8(f.readAll()).split(u';')) {
        QString s = statement;
        s.remove(QRegularExpression(QStringLiteral("--[^\n]*")));
        if (!s.trimmed().isEmpty()) QVERIFY2(q.exec(s), qPrintable(s));
      }
    }
    if (userVersion >= 0)
      QVERIFY(q.exec(QStringLiteral("PRAGMA user_version = %1").arg(userVersion)));
    db.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("fixture"));
}

QStringList titles(const QList<ConversationRow>& rows) {
  QStringList out;
  for (const auto& r : rows) out << r.title;
  return out;
}

}  // namespace

class TestConversationStore : public QObject {
  Q_OBJECT
 private slots:
  void emptyDatabaseGetsTheLatestSchema() {
    QTemporaryDir dir;
    ConversationStore store(dir.filePath(QStringLiteral("c.sqlite")),
                            dir.filePath(QStringLiteral("kv")));
    QString error;
    QVERIFY2(store.open(&error), qPrintable(error));
    QCOMPARE(store.schemaVersion(), 2);
    QCOMPARE(latestSchemaVersion(), 2);
    QVERIFY(store.conversations().isEmpty());
  }

  void messagesAndConversationsRoundTrip() {
    QTemporaryDir dir;
    ConversationStore store(dir.filePath(QStringLiteral("c.sqlite")),
                            dir.filePath(QStringLiteral("kv")));
    QString error;
    QVERIFY(store.open(&error));
    const qint64 a = store.createConversation(QStringLiteral("First"));
    const qint64 b = store.createConversation(QStringLiteral("Second"));
    QVERIFY(a > 0 && b > a);
    QVERIFY2(store.addMessage(a, QStringLiteral("user"), QStringLiteral("hello")) > 0,
             qPrintable(store.lastError()));
    QVERIFY(store.addMessage(a, QStringLiteral("assistant"), QStringLiteral("hi there"),
                             QStringLiteral("greet")) > 0);
    const auto messages = store.messages(a);
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[1].role, QStringLiteral("assistant"));
    QCOMPARE(messages[1].content, QStringLiteral("hi there"));
    QCOMPARE(messages[1].thinking, QStringLiteral("greet"));
    QVERIFY(store.messages(b).isEmpty());
    // Newest activity first: `a` got messages after `b` was created.
    QCOMPARE(titles(store.conversations()),
             (QStringList{QStringLiteral("First"), QStringLiteral("Second")}));
    QVERIFY(store.renameConversation(b, QStringLiteral("Renamed")));
    QVERIFY(titles(store.conversations()).contains(QStringLiteral("Renamed")));
  }

  void removeMessagesFromCutsTheConversation() {
    QTemporaryDir dir;
    ConversationStore store(dir.filePath(QStringLiteral("c.sqlite")),
                            dir.filePath(QStringLiteral("kv")));
    QString error;
    QVERIFY(store.open(&error));
    const qint64 c = store.createConversation(QStringLiteral("c"));
    store.addMessage(c, QStringLiteral("user"), QStringLiteral("one"));
    const qint64 second = store.addMessage(c, QStringLiteral("assistant"), QStringLiteral("two"));
    store.addMessage(c, QStringLiteral("user"), QStringLiteral("three"));
    QVERIFY(store.removeMessagesFrom(c, second));
    QCOMPARE(store.messages(c).size(), 1);
    QVERIFY(store.conversations(QStringLiteral("three")).isEmpty());  // the index forgot it too
  }

  void searchMatchesMessagesAndTitles() {
    QTemporaryDir dir;
    ConversationStore store(dir.filePath(QStringLiteral("c.sqlite")),
                            dir.filePath(QStringLiteral("kv")));
    QString error;
    QVERIFY(store.open(&error));
    const qint64 cooking = store.createConversation(QStringLiteral("Dinner"));
    store.addMessage(cooking, QStringLiteral("user"),
                     QStringLiteral("How long do I boil potatoes?"));
    const qint64 code = store.createConversation(QStringLiteral("Rust lifetimes"));
    store.addMessage(code, QStringLiteral("user"), QStringLiteral("Explain borrowing"));

    QCOMPARE(titles(store.conversations(QStringLiteral("potatoes"))),
             QStringList{QStringLiteral("Dinner")});
    QCOMPARE(titles(store.conversations(QStringLiteral("pota"))),
             QStringList{QStringLiteral("Dinner")});  // prefix
    QCOMPARE(titles(store.conversations(QStringLiteral("boil how"))),
             QStringList{QStringLiteral("Dinner")});
    QCOMPARE(titles(store.conversations(QStringLiteral("lifetimes"))),
             QStringList{QStringLiteral("Rust lifetimes")});
    QVERIFY(store.conversations(QStringLiteral("potatoes borrowing"))
                .isEmpty());  // every word must match
    // FTS syntax in user text is taken literally, not as a query error.
    QVERIFY(store.conversations(QStringLiteral("\"boil* OR (")).isEmpty());
    QVERIFY(store.lastError().isEmpty());

    ConversationListModel list(&store);
    list.reload();
    QCOMPARE(list.count(), 2);
    list.setFilter(QStringLiteral("borrowing"));
    QCOMPARE(list.count(), 1);
    QCOMPARE(list.data(list.index(0), ConversationListModel::TitleRole).toString(),
             QStringLiteral("Rust lifetimes"));
  }

  void migratesFromSchemaOne() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("c.sqlite"));
    writeFixture(db, QStringLiteral(STRATA_APP_TEST_DATA "/schema_v1.sql"));
    ConversationStore store(db, dir.filePath(QStringLiteral("kv")));
    QString error;
    QVERIFY2(store.open(&error), qPrintable(error));
    QCOMPARE(store.schemaVersion(), 2);
    QCOMPARE(store.conversations().size(), 2);
    // Messages written before search existed are found.
    QCOMPARE(titles(store.conversations(QStringLiteral("porto"))),
             QStringList{QStringLiteral("Old trip")});
    QCOMPARE(store.messages(2).last().thinking, QStringLiteral("twelve twelves"));
    // And new ones are indexed by the triggers.
    store.addMessage(2, QStringLiteral("user"), QStringLiteral("and squared again"));
    QCOMPARE(titles(store.conversations(QStringLiteral("squared"))),
             QStringList{QStringLiteral("Old maths")});
  }

  void refusesANewerSchema() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("c.sqlite"));
    writeFixture(db, {}, 99);
    ConversationStore store(db, dir.filePath(QStringLiteral("kv")));
    QString error;
    QVERIFY(!store.open(&error));
    QVERIFY2(error.contains(QStringLiteral("99")), qPrintable(error));
  }

  void deleteRemovesMessagesAndTheKvFile() {
    QTemporaryDir dir;
    ConversationStore store(dir.filePath(QStringLiteral("c.sqlite")),
                            dir.filePath(QStringLiteral("kv")));
    QString error;
    QVERIFY(store.open(&error));
    const qint64 keep = store.createConversation(QStringLiteral("keep"));
    const qint64 drop = store.createConversation(QStringLiteral("drop"));
    store.addMessage(drop, QStringLiteral("user"), QStringLiteral("ephemeral words"));
    QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("kv"))));
    for (qint64 id : {keep, drop}) {
      QFile f(store.kvFile(id));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("kv");
    }
    QVERIFY(store.kvFile(keep) != store.kvFile(drop));
    QVERIFY(store.removeConversation(drop));
    QVERIFY(!QFile::exists(store.kvFile(drop)));
    QVERIFY(QFile::exists(store.kvFile(keep)));
    QCOMPARE(titles(store.conversations()), QStringList{QStringLiteral("keep")});
    QVERIFY(store.messages(drop).isEmpty());
    QVERIFY(store.conversations(QStringLiteral("ephemeral")).isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestConversationStore)
#include "test_conversation_store.moc"
