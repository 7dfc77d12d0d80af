#pragma once
// Syntax highlighting for the chat's code blocks: a QSyntaxHighlighter with regular-expression
// rules chosen by the fence's language tag (C/C++, Python, JavaScript/TypeScript, JSON, shell,
// and a generic fallback with strings, numbers and comments). Each line is scanned left to right
// for strings and comments first, so a keyword inside either is not coloured; block comments
// (/* */) and Python's triple-quoted strings continue across lines through block states.
// CodeHighlight attaches one to a QML TextEdit's document:
//   CodeHighlight { document: codeText.textDocument; language: "cpp"; keywordColor: ... }
#include <QtQml/qqmlregistration.h>

#include <QColor>
#include <QList>
#include <QPointer>
#include <QQuickTextDocument>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace strata::app {

class CodeHighlighter : public QSyntaxHighlighter {
  Q_OBJECT

 public:
  enum class Language { Generic, Cpp, Python, JavaScript, Json, Shell };
  enum class Category { Keyword, String, Number, Comment, Type, Function };

  struct Palette {
    QColor keyword{0xc6, 0x92, 0xf0};
    QColor string{0x9f, 0xd3, 0x8a};
    QColor number{0xf0, 0xa8, 0x6a};
    QColor comment{0x6f, 0x78, 0x8c};
    QColor type{0x6f, 0xc8, 0xd8};
    QColor function{0x8a, 0xb4, 0xff};
  };

  explicit CodeHighlighter(QTextDocument* document, const QString& language = {});

  // The language for a fence tag ("cpp", "c++", "py", "ts", "sh", ...); Generic if unknown.
  static Language languageFor(const QString& tag);

  Language language() const { return language_; }
  void setLanguage(const QString& tag);  // rehighlights when the language changes
  void setPalette(const Palette& palette);
  QTextCharFormat formatOf(Category category) const;

 protected:
  void highlightBlock(const QString& text) override;

 private:
  enum State { Normal = -1, InBlockComment = 1, InTripleDouble = 2, InTripleSingle = 3 };
  enum class Delimiter { LineComment, BlockComment, String, TripleDouble, TripleSingle };
  struct DelimiterRule {
    QRegularExpression start;
    Delimiter kind;
  };
  struct WordRule {
    QRegularExpression pattern;
    Category category;
    int group = 0;  // the capture group that gets the format
  };

  void buildRules();
  // Marks [from, end of the closing delimiter) and returns where scanning goes on, or -1 when
  // the construct runs past the end of the line (the block state is set then).
  int closeMultiLine(const QString& text, int from, State state);

  Language language_ = Language::Generic;
  Palette palette_;
  QList<DelimiterRule> delimiters_;
  QList<WordRule> words_;
  QList<bool> covered_;  // characters of the current line inside a string or comment
};

// The QML side: give it a TextEdit's textDocument and the fence's language.
class CodeHighlight : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QQuickTextDocument* document READ document WRITE setDocument NOTIFY documentChanged)
  Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)
  Q_PROPERTY(QColor keywordColor READ keywordColor WRITE setKeywordColor NOTIFY paletteChanged)
  Q_PROPERTY(QColor stringColor READ stringColor WRITE setStringColor NOTIFY paletteChanged)
  Q_PROPERTY(QColor numberColor READ numberColor WRITE setNumberColor NOTIFY paletteChanged)
  Q_PROPERTY(QColor commentColor READ commentColor WRITE setCommentColor NOTIFY paletteChanged)
  Q_PROPERTY(QColor typeColor READ typeColor WRITE setTypeColor NOTIFY paletteChanged)
  Q_PROPERTY(QColor functionColor READ functionColor WRITE setFunctionColor NOTIFY paletteChanged)

 public:
  explicit CodeHighlight(QObject* parent = nullptr);
  ~CodeHighlight() override;

  QQuickTextDocument* document() const { return document_; }
  void setDocument(QQuickTextDocument* document);
  QString language() const { return language_; }
  void setLanguage(const QString& language);
  CodeHighlighter* highlighter() const { return highlighter_; }

  QColor keywordColor() const { return palette_.keyword; }
  QColor stringColor() const { return palette_.string; }
  QColor numberColor() const { return palette_.number; }
  QColor commentColor() const { return palette_.comment; }
  QColor typeColor() const { return palette_.type; }
  QColor functionColor() const { return palette_.function; }
  void setKeywordColor(const QColor& c) { setColor(&CodeHighlighter::Palette::keyword, c); }
  void setStringColor(const QColor& c) { setColor(&CodeHighlighter::Palette::string, c); }
  void setNumberColor(const QColor& c) { setColor(&CodeHighlighter::Palette::number, c); }
  void setCommentColor(const QColor& c) { setColor(&CodeHighlighter::Palette::comment, c); }
  void setTypeColor(const QColor& c) { setColor(&CodeHighlighter::Palette::type, c); }
  void setFunctionColor(const QColor& c) { setColor(&CodeHighlighter::Palette::function, c); }

 signals:
  void documentChanged();
  void languageChanged();
  void paletteChanged();

 private:
  void setColor(QColor CodeHighlighter::Palette::*member, const QColor& color);

  QPointer<QQuickTextDocument> document_;
  QPointer<CodeHighlighter> highlighter_;
  QString language_;
  CodeHighlighter::Palette palette_;
};

}  // namespace strata::app
