#include "chat/code_highlighter.h"

#include <QQuickTextDocument>
#include <QTextDocument>

namespace strata::app {

namespace {

QRegularExpression words(const QStringList& list) {
  return QRegularExpression(QStringLiteral("\\b(?:%1)\\b").arg(list.join(QLatin1Char('|'))));
}

QRegularExpression re(const char* pattern) {
  return QRegularExpression(QString::fromLatin1(pattern));
}

// Numbers: hex, binary, decimals with fraction, exponent and C-style suffixes.
const char* kNumber =
    "\\b(?:0[xX][0-9a-fA-F_']+|0[bB][01_']+|\\d[\\d_']*(?:\\.\\d[\\d_']*)?(?:[eE][+-]?\\d+)?)"
    "[uUlLfFnjJ]*\\b";
// A name followed by "(": a call or a definition.
const char* kFunction = "\\b([A-Za-z_]\\w*)(?=\\s*\\()";
// Strings on one line; an unclosed one runs to the end of the line.
const char* kDoubleQuoted = "\"(?:[^\"\\\\]|\\\\.)*\"?";
const char* kSingleQuoted = "'(?:[^'\\\\]|\\\\.)*'?";

}  // namespace

CodeHighlighter::CodeHighlighter(QTextDocument* document, const QString& language)
    : QSyntaxHighlighter(document), language_(languageFor(language)) {
  buildRules();
}

CodeHighlighter::Language CodeHighlighter::languageFor(const QString& tag) {
  const QString t = tag.trimmed().toLower();
  static const QStringList cpp = {"c",   "cpp", "c++", "cc",  "cxx", "h",
                                  "hpp", "hh",  "hxx", "objc", "cuda", "cu"};
  static const QStringList python = {"python", "py", "python3", "py3"};
  static const QStringList js = {"javascript", "js",  "jsx", "mjs", "cjs",
                                 "typescript", "ts", "tsx", "node"};
  static const QStringList json = {"json", "jsonc", "json5"};
  static const QStringList shell = {"bash", "sh", "shell", "zsh", "console", "shellsession"};
  if (cpp.contains(t)) return Language::Cpp;
  if (python.contains(t)) return Language::Python;
  if (js.contains(t)) return Language::JavaScript;
  if (json.contains(t)) return Language::Json;
  if (shell.contains(t)) return Language::Shell;
  return Language::Generic;
}

void CodeHighlighter::setLanguage(const QString& tag) {
  const Language language = languageFor(tag);
  if (language == language_) return;
  language_ = language;
  buildRules();
  rehighlight();
}

void CodeHighlighter::setPalette(const Palette& palette) {
  palette_ = palette;
  rehighlight();
}

QTextCharFormat CodeHighlighter::formatOf(Category category) const {
  QTextCharFormat f;
  switch (category) {
    case Category::Keyword:
      f.setForeground(palette_.keyword);
      break;
    case Category::String:
      f.setForeground(palette_.string);
      break;
    case Category::Number:
      f.setForeground(palette_.number);
      break;
    case Category::Comment:
      f.setForeground(palette_.comment);
      f.setFontItalic(true);
      break;
    case Category::Type:
      f.setForeground(palette_.type);
      break;
    case Category::Function:
      f.setForeground(palette_.function);
      break;
  }
  return f;
}

void CodeHighlighter::buildRules() {
  delimiters_.clear();
  words_.clear();
  const auto delimiter = [this](const char* pattern, Delimiter kind) {
    delimiters_.append({re(pattern), kind});
  };
  const auto rule = [this](QRegularExpression pattern, Category category, int group = 0) {
    words_.append({std::move(pattern), category, group});
  };

  switch (language_) {
    case Language::Cpp:
      delimiter("//", Delimiter::LineComment);
      delimiter("/\\*", Delimiter::BlockComment);
      delimiter(kDoubleQuoted, Delimiter::String);
      delimiter(kSingleQuoted, Delimiter::String);
      rule(words({"alignas", "alignof", "auto", "break", "case", "catch", "class", "co_await",
                  "co_return", "co_yield", "concept", "const", "consteval", "constexpr",
                  "constinit", "const_cast", "continue", "decltype", "default", "delete", "do",
                  "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
                  "final", "for", "friend", "goto", "if", "inline", "mutable", "namespace",
                  "new", "noexcept", "nullptr", "operator", "override", "private", "protected",
                  "public", "register", "reinterpret_cast", "requires", "return", "sizeof",
                  "static", "static_assert", "static_cast", "struct", "switch", "template",
                  "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
                  "typename", "union", "using", "virtual", "volatile", "while"}),
           Category::Keyword);
      rule(words({"bool", "char", "char8_t", "char16_t", "char32_t", "double", "float", "int",
                  "long", "short", "signed", "unsigned", "void", "wchar_t", "size_t",
                  "ptrdiff_t", "u?int(?:8|16|32|64)_t"}),
           Category::Type);
      rule(re("\\bstd::\\w+"), Category::Type);
      rule(re(kFunction), Category::Function, 1);
      rule(re("^\\s*#\\s*\\w+"), Category::Keyword);
      rule(re("^\\s*#\\s*include\\s*(<[^>]*>)"), Category::String, 1);
      rule(re(kNumber), Category::Number);
      break;
    case Language::Python:
      delimiter("#", Delimiter::LineComment);
      delimiter("\"\"\"", Delimiter::TripleDouble);
      delimiter("'''", Delimiter::TripleSingle);
      delimiter(kDoubleQuoted, Delimiter::String);
      delimiter(kSingleQuoted, Delimiter::String);
      rule(words({"False", "None", "True", "and", "as", "assert", "async", "await", "break",
                  "class", "continue", "def", "del", "elif", "else", "except", "finally", "for",
                  "from", "global", "if", "import", "in", "is", "lambda", "match", "nonlocal",
                  "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
                  "self"}),
           Category::Keyword);
      rule(words({"int", "float", "str", "bytes", "bool", "list", "dict", "set", "tuple",
                  "object", "type", "len", "range", "print", "isinstance", "super"}),
           Category::Type);
      rule(re(kFunction), Category::Function, 1);
      rule(re("@[\\w.]+"), Category::Function);
      rule(re(kNumber), Category::Number);
      break;
    case Language::JavaScript:
      delimiter("//", Delimiter::LineComment);
      delimiter("/\\*", Delimiter::BlockComment);
      delimiter(kDoubleQuoted, Delimiter::String);
      delimiter(kSingleQuoted, Delimiter::String);
      delimiter("`(?:[^`\\\\]|\\\\.)*`?", Delimiter::String);
      rule(words({"abstract", "as", "async", "await", "break", "case", "catch", "class",
                  "const", "continue", "debugger", "declare", "default", "delete", "do", "else",
                  "enum", "export", "extends", "false", "finally", "for", "from", "function",
                  "if", "implements", "import", "in", "instanceof", "interface", "keyof", "let",
                  "namespace", "new", "null", "of", "private", "protected", "public",
                  "readonly", "return", "static", "super", "switch", "this", "throw", "true",
                  "try", "type", "typeof", "undefined", "var", "void", "while", "with",
                  "yield"}),
           Category::Keyword);
      rule(words({"any", "boolean", "never", "number", "string", "symbol", "unknown", "bigint",
                  "object"}),
           Category::Type);
      rule(re("\\b[A-Z][A-Za-z0-9_]*\\b"), Category::Type);
      rule(re(kFunction), Category::Function, 1);
      rule(re(kNumber), Category::Number);
      break;
    case Language::Json:
      delimiter(kDoubleQuoted, Delimiter::String);
      rule(words({"true", "false", "null"}), Category::Keyword);
      rule(re("-?\\b\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?\\b"), Category::Number);
      break;
    case Language::Shell:
      delimiter("(?:^|(?<=\\s))#", Delimiter::LineComment);
      delimiter(kDoubleQuoted, Delimiter::String);
      delimiter("'[^']*'?", Delimiter::String);
      rule(words({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
                  "case", "esac", "in", "function", "return", "export", "local", "readonly",
                  "select", "break", "continue", "exit", "set", "unset", "source", "alias",
                  "echo", "cd", "sudo"}),
           Category::Keyword);
      rule(re("\\$\\{[^}]*\\}|\\$\\w+|\\$[@#?$!*0-9]"), Category::Type);
      rule(re("(?:^|(?<=\\s))--?[A-Za-z][\\w-]*"), Category::Function);
      rule(re(kNumber), Category::Number);
      break;
    case Language::Generic:
      delimiter("//", Delimiter::LineComment);
      delimiter("(?:^|(?<=\\s))#", Delimiter::LineComment);
      delimiter("/\\*", Delimiter::BlockComment);
      delimiter(kDoubleQuoted, Delimiter::String);
      delimiter(kSingleQuoted, Delimiter::String);
      rule(re(kNumber), Category::Number);
      break;
  }
}

int CodeHighlighter::closeMultiLine(const QString& text, int from, State state) {
  const QString end = state == InBlockComment   ? QStringLiteral("*/")
                      : state == InTripleDouble ? QStringLiteral("\"\"\"")
                                                : QStringLiteral("'''");
  const Category category = state == InBlockComment ? Category::Comment : Category::String;
  const int close = text.indexOf(end, from);
  const int stop = close < 0 ? int(text.size()) : close + int(end.size());
  // `from` may sit inside the opening delimiter's own characters; the caller marks those.
  for (int i = from; i < stop; ++i) covered_[i] = true;
  setFormat(from, stop - from, formatOf(category));
  if (close < 0) {
    setCurrentBlockState(state);
    return -1;
  }
  return stop;
}

void CodeHighlighter::highlightBlock(const QString& text) {
  setCurrentBlockState(Normal);
  covered_.fill(false, text.size());

  // Strings and comments, left to right: whichever starts first wins.
  int pos = 0;
  const int previous = previousBlockState();
  if (previous == InBlockComment || previous == InTripleDouble || previous == InTripleSingle)
    pos = closeMultiLine(text, 0, State(previous));
  while (pos >= 0 && pos < text.size()) {
    int best = -1;
    QRegularExpressionMatch bestMatch;
    for (int i = 0; i < delimiters_.size(); ++i) {
      const QRegularExpressionMatch m = delimiters_[i].start.match(text, pos);
      if (m.hasMatch() && (best < 0 || m.capturedStart() < bestMatch.capturedStart())) {
        best = i;
        bestMatch = m;
      }
    }
    if (best < 0) break;
    const int start = int(bestMatch.capturedStart());
    const int length = int(bestMatch.capturedLength());
    switch (delimiters_[best].kind) {
      case Delimiter::LineComment:
        for (int i = start; i < text.size(); ++i) covered_[i] = true;
        setFormat(start, int(text.size()) - start, formatOf(Category::Comment));
        pos = -1;
        break;
      case Delimiter::String:
        for (int i = start; i < start + length; ++i) covered_[i] = true;
        setFormat(start, length, formatOf(Category::String));
        pos = start + qMax(length, 1);
        break;
      case Delimiter::BlockComment:
      case Delimiter::TripleDouble:
      case Delimiter::TripleSingle: {
        const State state = delimiters_[best].kind == Delimiter::BlockComment ? InBlockComment
                            : delimiters_[best].kind == Delimiter::TripleDouble
                                ? InTripleDouble
                                : InTripleSingle;
        for (int i = start; i < start + length; ++i) covered_[i] = true;
        setFormat(start, length,
                  formatOf(state == InBlockComment ? Category::Comment : Category::String));
        pos = closeMultiLine(text, start + length, state);
        break;
      }
    }
  }

  // Keywords, types, names and numbers outside them; later rules win over earlier ones.
  for (const WordRule& rule : words_) {
    auto it = rule.pattern.globalMatch(text);
    while (it.hasNext()) {
      const QRegularExpressionMatch m = it.next();
      const int start = int(m.capturedStart(rule.group));
      const int length = int(m.capturedLength(rule.group));
      if (start < 0 || length <= 0) continue;
      bool inside = false;
      for (int i = start; i < start + length && !inside; ++i) inside = covered_[i];
      if (!inside) setFormat(start, length, formatOf(rule.category));
    }
  }
}

CodeHighlight::CodeHighlight(QObject* parent) : QObject(parent) {}

CodeHighlight::~CodeHighlight() { delete highlighter_.data(); }

void CodeHighlight::setDocument(QQuickTextDocument* document) {
  if (document == document_) return;
  delete highlighter_.data();
  document_ = document;
  if (document_ && document_->textDocument()) {
    highlighter_ = new CodeHighlighter(document_->textDocument(), language_);
    highlighter_->setPalette(palette_);
  }
  emit documentChanged();
}

void CodeHighlight::setLanguage(const QString& language) {
  if (language == language_) return;
  language_ = language;
  if (highlighter_) highlighter_->setLanguage(language_);
  emit languageChanged();
}

void CodeHighlight::setColor(QColor CodeHighlighter::Palette::*member, const QColor& color) {
  if (palette_.*member == color) return;
  palette_.*member = color;
  if (highlighter_) highlighter_->setPalette(palette_);
  emit paletteChanged();
}

}  // namespace strata::app
