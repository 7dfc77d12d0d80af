// The chat's text pipeline on the GUI side: think/answer splitting, incremental Markdown blocks,
// the message list model and the delta coalescer.
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include "bridge/text_coalescer.h"
#include "chat/markdown_blocks.h"
#include "chat/message_list_model.h"
#include "chat/think_splitter.h"

using namespace strata::app;

class TestMessageModel : public QObject {
  Q_OBJECT
 private slots:
  void thinkSplitterHoldsBackAPartialMarker() {
    ThinkSplitter s(true);
    auto a = s.push(QStringLiteral("Two plus two</thi"));
    QCOMPARE(a.thinking, QStringLiteral("Two plus two"));  // "</thi" held back
    QVERIFY(a.answer.isEmpty());
    QVERIFY(s.inThinking());
    auto b = s.push(QStringLiteral("nk>\n\nThe answer is 4."));
    QVERIFY(b.thinking.isEmpty());
    QCOMPARE(b.answer, QStringLiteral("The answer is 4."));  // leading blank lines dropped
    QVERIFY(!s.inThinking());
  }

  void thinkSplitterWithoutThinkingPassesTextThrough() {
    ThinkSplitter s(false);
    QCOMPARE(s.push(QStringLiteral("Hello")).answer, QStringLiteral("Hello"));
    QCOMPARE(s.push(QStringLiteral(" </b>")).answer, QStringLiteral(" </b>"));
  }

  void thinkSplitterOpensABlockTheReplyStarts() {
    ThinkSplitter s(false);
    auto a = s.push(QStringLiteral("<thi"));
    QVERIFY(a.answer.isEmpty() && a.thinking.isEmpty());
    auto b = s.push(QStringLiteral("nk>hmm</think>Yes"));
    QCOMPARE(b.thinking, QStringLiteral("hmm"));
    QCOMPARE(b.answer, QStringLiteral("Yes"));
  }

  void markdownFreezesFinishedParagraphsOnly() {
    MarkdownBlocks doc;
    QSignalSpy inserted(&doc, &QAbstractItemModel::rowsInserted);
    doc.append(QStringLiteral("First para"));
    QCOMPARE(doc.rowCount(), 0);
    QCOMPARE(doc.tail(), QStringLiteral("First para"));
    doc.append(QStringLiteral("graph.\n\nSecond"));
    QCOMPARE(doc.rowCount(), 1);
    QCOMPARE(doc.blocks()[0].text, QStringLiteral("First paragraph."));
    QCOMPARE(doc.tail(), QStringLiteral("Second"));
    doc.append(QStringLiteral(" one."));
    QCOMPARE(inserted.count(), 1);  // the tail grew; the frozen block was not touched
    doc.finish();
    QCOMPARE(doc.rowCount(), 2);
    QCOMPARE(doc.blocks()[1].text, QStringLiteral("Second one."));
    QVERIFY(doc.tail().isEmpty());
  }

  void markdownCodeBlockStaysOpenUntilItsFenceCloses() {
    MarkdownBlocks doc;
    doc.append(QStringLiteral("Look:\n```cpp\nint x = 1;\n\nint y"));
    // The blank line inside the fence does not end the code block.
    QCOMPARE(doc.rowCount(), 1);
    QCOMPARE(doc.blocks()[0].text, QStringLiteral("Look:"));
    QVERIFY(doc.tailIsCode());
    QCOMPARE(doc.tailLanguage(), QStringLiteral("cpp"));
    QCOMPARE(doc.tail(), QStringLiteral("int x = 1;\n\nint y"));
    doc.append(QStringLiteral(" = 2;\n```\nAfter."));
    QCOMPARE(doc.rowCount(), 2);
    QVERIFY(doc.blocks()[1].code);
    QCOMPARE(doc.blocks()[1].text, QStringLiteral("int x = 1;\n\nint y = 2;"));
    QCOMPARE(doc.blocks()[1].language, QStringLiteral("cpp"));
    QVERIFY(!doc.tailIsCode());
    QCOMPARE(doc.tail(), QStringLiteral("After."));
  }

  void markdownClosingFenceOnTheLastLine() {
    MarkdownBlocks doc;
    doc.append(QStringLiteral("```\ncode\n```"));
    doc.finish();
    QCOMPARE(doc.rowCount(), 1);
    QCOMPARE(doc.blocks()[0].text, QStringLiteral("code"));
    QVERIFY(doc.blocks()[0].code);
  }

  void streamingReplyFillsThinkingAndAnswer() {
    MessageListModel model;
    model.appendMessage(7, QStringLiteral("user"), QStringLiteral("2+2?"));
    model.beginReply(true);
    QCOMPARE(model.count(), 2);
    const QModelIndex reply = model.index(1);
    QVERIFY(model.data(reply, MessageListModel::StreamingRole).toBool());
    model.appendReplyDelta(QStringLiteral("add them</think>"));
    QVERIFY(model.data(reply, MessageListModel::ThinkingActiveRole).toBool() == false);
    model.appendReplyDelta(QStringLiteral("**4**\n\nDone"));
    auto* blocks = qobject_cast<MarkdownBlocks*>(
        model.data(reply, MessageListModel::BlocksRole).value<QObject*>());
    QVERIFY(blocks);
    QCOMPARE(blocks->rowCount(), 1);
    QCOMPARE(blocks->tail(), QStringLiteral("Done"));
    model.finishReply(9, QStringLiteral("3 tokens"));
    QCOMPARE(model.data(reply, MessageListModel::ThinkingRole).toString(),
             QStringLiteral("add them"));
    QCOMPARE(model.data(reply, MessageListModel::ContentRole).toString(),
             QStringLiteral("**4**\n\nDone"));
    QCOMPARE(model.data(reply, MessageListModel::MessageIdRole).toLongLong(), 9);
    QVERIFY(!model.data(reply, MessageListModel::StreamingRole).toBool());
    QCOMPARE(blocks->rowCount(), 2);
    QCOMPARE(model.lastUserRow(), 0);
  }

  void removeFromDropsTheTail() {
    MessageListModel model;
    for (int i = 0; i < 4; ++i)
      model.appendMessage(i + 1, i % 2 ? QStringLiteral("assistant") : QStringLiteral("user"),
                          QString::number(i));
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    model.removeFrom(2);
    QCOMPARE(model.count(), 2);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(model.contentAt(1), QStringLiteral("1"));
    QCOMPARE(model.lastRowWithRole(QStringLiteral("user")), 0);
  }

  void coalescerReleasesAtMostOncePerInterval() {
    TextCoalescer c(40);
    QVERIFY(c.add(QStringLiteral("a")));  // the first text goes out at once
    QCOMPARE(c.take(), QStringLiteral("a"));
    QVERIFY(!c.add(QStringLiteral("b")));
    QVERIFY(!c.add(QStringLiteral("c")));
    QThread::msleep(50);
    QVERIFY(c.add(QStringLiteral("d")));
    QCOMPARE(c.take(), QStringLiteral("bcd"));
    QVERIFY(c.isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestMessageModel)
#include "test_message_model.moc"
