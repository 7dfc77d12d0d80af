// The code-block highlighter: keywords by language, nothing coloured as a keyword inside a
// string or comment, block comments and triple-quoted strings across lines, and the fallback
// for an unknown fence tag.
#include <QTest>
#include <QTextBlock>
#include <QTextCursor>
#include <QAbstractTextDocumentLayout>
#include <QTextDocument>
#include <QTextLayout>

#include "chat/code_highlighter.h"

using namespace strata::app;
using Category = CodeHighlighter::Category;
using Language = CodeHighlighter::Language;

namespace {

struct Highlighted {
  Highlighted(const QString& code, const QString& language)
      : highlighter(&doc, language) {
    // As in a TextEdit: a document with a layout reports its changes (contentsChange), and
    // the highlighter follows them.
    doc.documentLayout();
    doc.setPlainText(code);
  }
  // The colour at the first character of the n-th occurrence of `word` on line `line`
  // (invalid where the highlighter left it alone).
  QColor colorAt(int line, const QString& word, int occurrence = 0) const {
    const QTextBlock block = doc.findBlockByNumber(line);
    int pos = -1;
    for (int i = 0; i <= occurrence; ++i) pos = block.text().indexOf(word, pos + 1);
    if (pos < 0) return QColor(Qt::magenta);  // a test typo must not pass
    for (const QTextLayout::FormatRange& r : block.layout()->formats())
      if (pos >= r.start && pos < r.start + r.length) return r.format.foreground().color();
    return {};
  }
  QColor color(Category c) const { return highlighter.formatOf(c).foreground().color(); }
  int state(int line) const { return doc.findBlockByNumber(line).userState(); }

  QTextDocument doc;
  CodeHighlighter highlighter;
};

}  // namespace

class TestCodeHighlighter : public QObject {
  Q_OBJECT
 private slots:
  void fenceTagsChooseTheLanguage() {
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("cpp")), Language::Cpp);
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("C++")), Language::Cpp);
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("c")), Language::Cpp);
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("py")), Language::Python);
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("typescript")), Language::JavaScript);
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("js")), Language::JavaScript);
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("json")), Language::Json);
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("bash")), Language::Shell);
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("sh")), Language::Shell);
    QCOMPARE(CodeHighlighter::languageFor(QStringLiteral("cobol-ish")), Language::Generic);
    QCOMPARE(CodeHighlighter::languageFor(QString()), Language::Generic);
  }

  void cppReturnIsAKeywordButNotInStringsOrComments() {
    Highlighted h(QStringLiteral("int f() {\n"
                                 "  return 1;  // return early\n"
                                 "  const char* s = \"return\";\n"
                                 "}"),
                  QStringLiteral("cpp"));
    QCOMPARE(h.colorAt(1, QStringLiteral("return")), h.color(Category::Keyword));
    QCOMPARE(h.colorAt(1, QStringLiteral("return"), 1), h.color(Category::Comment));
    QCOMPARE(h.colorAt(2, QStringLiteral("return")), h.color(Category::String));
    QCOMPARE(h.colorAt(2, QStringLiteral("const")), h.color(Category::Keyword));
    QCOMPARE(h.colorAt(1, QStringLiteral("1")), h.color(Category::Number));
    QCOMPARE(h.colorAt(0, QStringLiteral("int")), h.color(Category::Type));
    QCOMPARE(h.colorAt(0, QStringLiteral("f")), h.color(Category::Function));
    QVERIFY(h.color(Category::Keyword) != h.color(Category::String));
    QVERIFY(h.color(Category::Keyword) != h.color(Category::Comment));
  }

  void pythonDefIsAKeywordButNotInStringsOrComments() {
    Highlighted h(QStringLiteral("def greet(name):\n"
                                 "    s = 'def'  # def here\n"
                                 "    return f\"{s} {name}\"\n"),
                  QStringLiteral("python"));
    QCOMPARE(h.colorAt(0, QStringLiteral("def")), h.color(Category::Keyword));
    QCOMPARE(h.colorAt(1, QStringLiteral("def")), h.color(Category::String));
    QCOMPARE(h.colorAt(1, QStringLiteral("def"), 1), h.color(Category::Comment));
    QCOMPARE(h.colorAt(2, QStringLiteral("return")), h.color(Category::Keyword));
  }

  void blockCommentSpansLines() {
    Highlighted h(QStringLiteral("int a; /* opened\n"
                                 "return inside\n"
                                 "closed */ return a;\n"
                                 "return b;"),
                  QStringLiteral("cpp"));
    QCOMPARE(h.colorAt(0, QStringLiteral("opened")), h.color(Category::Comment));
    QCOMPARE(h.colorAt(1, QStringLiteral("return")), h.color(Category::Comment));
    QCOMPARE(h.colorAt(2, QStringLiteral("closed")), h.color(Category::Comment));
    QCOMPARE(h.colorAt(2, QStringLiteral("return")), h.color(Category::Keyword));
    QCOMPARE(h.colorAt(3, QStringLiteral("return")), h.color(Category::Keyword));
    QVERIFY(h.state(0) != h.state(3));  // the open comment is carried as the block state

    // Editing closes it again: the following lines are re-highlighted.
    QTextCursor c(h.doc.findBlockByNumber(0));
    c.movePosition(QTextCursor::EndOfBlock);
    c.insertText(QStringLiteral(" */"));
    QCOMPARE(h.colorAt(1, QStringLiteral("return")), h.color(Category::Keyword));
  }

  void pythonTripleQuotedStringSpansLines() {
    Highlighted h(QStringLiteral("doc = \"\"\"Start\n"
                                 "def is text here\n"
                                 "end\"\"\"\n"
                                 "def f(): pass"),
                  QStringLiteral("py"));
    QCOMPARE(h.colorAt(1, QStringLiteral("def")), h.color(Category::String));
    QCOMPARE(h.colorAt(2, QStringLiteral("end")), h.color(Category::String));
    QCOMPARE(h.colorAt(3, QStringLiteral("def")), h.color(Category::Keyword));
  }

  void otherLanguages() {
    Highlighted js(QStringLiteral("const n: number = fetch(`a ${b}`); // while"),
                   QStringLiteral("ts"));
    QCOMPARE(js.colorAt(0, QStringLiteral("const")), js.color(Category::Keyword));
    QCOMPARE(js.colorAt(0, QStringLiteral("number")), js.color(Category::Type));
    QCOMPARE(js.colorAt(0, QStringLiteral("a ")), js.color(Category::String));
    QCOMPARE(js.colorAt(0, QStringLiteral("while")), js.color(Category::Comment));

    Highlighted json(QStringLiteral("{\"ok\": true, \"n\": -1.5, \"s\": \"null\"}"),
                     QStringLiteral("json"));
    QCOMPARE(json.colorAt(0, QStringLiteral("true")), json.color(Category::Keyword));
    QCOMPARE(json.colorAt(0, QStringLiteral("1.5")), json.color(Category::Number));
    QCOMPARE(json.colorAt(0, QStringLiteral("null")), json.color(Category::String));

    Highlighted sh(QStringLiteral("if [ $# -gt 0 ]; then echo \"$1\"; fi  # if"),
                   QStringLiteral("bash"));
    QCOMPARE(sh.colorAt(0, QStringLiteral("if")), sh.color(Category::Keyword));
    QCOMPARE(sh.colorAt(0, QStringLiteral("fi")), sh.color(Category::Keyword));
    QVERIFY(sh.colorAt(0, QStringLiteral("$#")) != sh.color(Category::Comment));
    QCOMPARE(sh.colorAt(0, QStringLiteral("if"), 1), sh.color(Category::Comment));
  }

  void unknownLanguageUsesTheFallback() {
    Highlighted h(QStringLiteral("return 42 \"text\" // note\n# also a comment"),
                  QStringLiteral("klingon"));
    QCOMPARE(h.highlighter.language(), Language::Generic);
    QVERIFY(!h.colorAt(0, QStringLiteral("return")).isValid());  // no keywords
    QCOMPARE(h.colorAt(0, QStringLiteral("42")), h.color(Category::Number));
    QCOMPARE(h.colorAt(0, QStringLiteral("text")), h.color(Category::String));
    QCOMPARE(h.colorAt(0, QStringLiteral("note")), h.color(Category::Comment));
    QCOMPARE(h.colorAt(1, QStringLiteral("also")), h.color(Category::Comment));

    // Switching the language re-highlights.
    h.highlighter.setLanguage(QStringLiteral("cpp"));
    QCOMPARE(h.colorAt(0, QStringLiteral("return")), h.color(Category::Keyword));
  }

  void paletteChangesTheColours() {
    Highlighted h(QStringLiteral("return 1;"), QStringLiteral("cpp"));
    CodeHighlighter::Palette p;
    p.keyword = QColor(0x12, 0x34, 0x56);
    h.highlighter.setPalette(p);
    QCOMPARE(h.colorAt(0, QStringLiteral("return")), QColor(0x12, 0x34, 0x56));
  }
};

QTEST_MAIN(TestCodeHighlighter)
#include "test_code_highlighter.moc"
