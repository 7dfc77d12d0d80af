#include "grammar/gbnf_lexer.h"

#include <string>

#include "grammar/utf8_step.h"
#include "strata/error.h"

namespace strata::grammar {
namespace {

using Kind = GbnfToken::Kind;

bool isNameChar(uint32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

int hexValue(uint32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

std::string shown(uint32_t c) {
  if (c == '\n') return "a newline";
  if (c < 0x20 || c == 0x7F) return "control character " + std::to_string(c);
  std::string s = "'";
  appendUtf8(s, c);
  return s + "'";
}

// Walks the text one character at a time, tracking line and column (in characters).
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) { decodeNext(); }

  std::vector<GbnfToken> run() {
    std::vector<GbnfToken> tokens;
    while (true) {
      skipSpaceAndComments();
      GbnfToken t;
      t.pos = pos_;
      if (atEnd()) {
        tokens.push_back(t);
        return tokens;
      }
      const uint32_t c = peek();
      if (isNameChar(c)) {
        t.kind = Kind::Name;
        while (!atEnd() && isNameChar(peek())) appendUtf8(t.text, take());
      } else if (c == ':') {
        take();
        if (atEnd() || take() != ':' || atEnd() || take() != '=')
          fail(t.pos, "expected '::=' (a rule is written name ::= ...)");
        t.kind = Kind::Define;
        t.text = "::=";
      } else if (c == '"') {
        t.kind = Kind::Literal;
        readLiteral(t);
      } else if (c == '[') {
        t.kind = Kind::Class;
        readClass(t);
      } else if (c == '{') {
        t.kind = Kind::Repeat;
        readRepeat(t);
      } else {
        take();
        switch (c) {
          case '.':
            t.kind = Kind::Dot;
            break;
          case '|':
            t.kind = Kind::Bar;
            break;
          case '(':
            t.kind = Kind::Open;
            break;
          case ')':
            t.kind = Kind::Close;
            break;
          case '*':
            t.kind = Kind::Star;
            break;
          case '+':
            t.kind = Kind::Plus;
            break;
          case '?':
            t.kind = Kind::Question;
            break;
          default:
            fail(t.pos, "unexpected " + shown(c));
        }
        appendUtf8(t.text, c);
      }
      tokens.push_back(std::move(t));
    }
  }

 private:
  [[noreturn]] static void fail(SourcePos pos, const std::string& problem) {
    throw Error(describe(pos) + ": " + problem);
  }

  bool atEnd() const { return next_ == kEndOfText; }
  uint32_t peek() const { return next_; }

  uint32_t take() {
    const uint32_t c = next_;
    if (c == '\n') {
      ++pos_.line;
      pos_.column = 1;
    } else {
      ++pos_.column;
    }
    decodeNext();
    return c;
  }

  void decodeNext() {
    if (offset_ >= text_.size()) {
      next_ = kEndOfText;
      return;
    }
    Utf8Partial partial;
    uint32_t c = 0;
    while (offset_ < text_.size()) {
      const Utf8Result r = feedUtf8(partial, static_cast<uint8_t>(text_[offset_++]), c);
      if (r == Utf8Result::Complete) {
        next_ = c;
        return;
      }
      if (r == Utf8Result::Malformed) break;
    }
    fail(pos_, "the grammar is not valid UTF-8 text");
  }

  void skipSpaceAndComments() {
    while (!atEnd()) {
      const uint32_t c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        take();
      } else if (c == '#') {
        while (!atEnd() && peek() != '\n') take();
      } else {
        return;
      }
    }
  }

  // After a backslash: one escaped character.
  uint32_t readEscape(SourcePos at) {
    if (atEnd()) fail(at, "a backslash at the end of the grammar");
    const uint32_t c = take();
    switch (c) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-':
        return c;
      case 'x':
        return readHex(at, 2, "\\x");
      case 'u':
        return readHex(at, 4, "\\u");
      case 'U':
        return readHex(at, 8, "\\U");
      default: {
        std::string written = "\\";
        appendUtf8(written, c);
        fail(at, "bad escape '" + written +
                     "' (known: \\n \\r \\t \\\\ \\\" \\[ \\] \\- \\xHH \\uHHHH \\UHHHHHHHH)");
      }
    }
  }

  uint32_t readHex(SourcePos at, int digits, const char* escape) {
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const int d = atEnd() ? -1 : hexValue(peek());
      if (d < 0)
        fail(at, std::string("bad escape: ") + escape + " needs " + std::to_string(digits) +
                     " hex digits");
      take();
      value = value * 16 + static_cast<uint32_t>(d);
    }
    if (value > kMaxCodePoint)
      fail(at, "bad escape: " + std::to_string(value) + " is past U+10FFFF");
    if (value >= 0xD800 && value <= 0xDFFF)
      fail(at, "bad escape: U+D800..U+DFFF are surrogates, not characters");
    return value;
  }

  // One character of a literal or class, escapes decoded.
  uint32_t readChar() {
    const SourcePos at = pos_;
    const uint32_t c = take();
    return c == '\\' ? readEscape(at) : c;
  }

  void readLiteral(GbnfToken& t) {
    take();  // "
    while (true) {
      if (atEnd() || peek() == '\n')
        fail(t.pos, "the string literal is never closed (a literal ends on its own line)");
      if (peek() == '"') break;
      t.literal.push_back(readChar());
    }
    take();
  }

  void readClass(GbnfToken& t) {
    take();  // [
    if (!atEnd() && peek() == '^') {
      take();
      t.negated = true;
    }
    while (true) {
      if (atEnd()) fail(t.pos, "'[' is never closed by ']'");
      if (peek() == ']') break;
      const SourcePos at = pos_;
      const uint32_t first = readChar();
      uint32_t last = first;
      if (!atEnd() && peek() == '-') {
        take();
        if (atEnd()) fail(t.pos, "'[' is never closed by ']'");
        if (peek() == ']') {  // a '-' before ']' is itself a member
          t.ranges.push_back({first, first});
          t.ranges.push_back({'-', '-'});
          break;
        }
        last = readChar();
        if (last < first)
          fail(at, "the range " + shown(first) + "-" + shown(last) + " is backwards");
      }
      t.ranges.push_back({first, last});
    }
    take();  // ]
    if (t.ranges.empty()) fail(t.pos, "an empty character class matches nothing");
  }

  int readNumber() {
    int value = -1;
    while (!atEnd() && peek() >= '0' && peek() <= '9') {
      value = (value < 0 ? 0 : value) * 10 + static_cast<int>(take() - '0');
      if (value > 1000000) fail(pos_, "repetition count too large");
    }
    return value;
  }

  void skipBlanks() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t')) take();
  }

  // {m}, {m,}, {m,n} or {,n}
  void readRepeat(GbnfToken& t) {
    take();  // {
    skipBlanks();
    const int first = readNumber();
    skipBlanks();
    int last = first;
    if (!atEnd() && peek() == ',') {
      take();
      skipBlanks();
      last = readNumber();
      if (last < 0) last = kUnbounded;
      skipBlanks();
    }
    if (atEnd() || peek() != '}' || (first < 0 && last == kUnbounded) || (first < 0 && last < 0))
      fail(t.pos, "bad repetition: expected {m}, {m,}, {m,n} or {,n}");
    take();
    t.min = first < 0 ? 0 : first;
    t.max = last;
    t.text = "{";  // (appended piece by piece: GCC 12 warns falsely on "{" + to_string)
    t.text += std::to_string(t.min);
    if (t.max != t.min) t.text += ',';
    if (t.max != t.min && t.max != kUnbounded) t.text += std::to_string(t.max);
    t.text += '}';
    if (t.max != kUnbounded && t.max < t.min)
      fail(t.pos, "bad repetition " + t.text + ": the maximum is below the minimum");
  }

  static constexpr uint32_t kEndOfText = 0xFFFFFFFF;
  std::string_view text_;
  size_t offset_ = 0;
  uint32_t next_ = kEndOfText;
  SourcePos pos_;
};

}  // namespace

std::string describe(SourcePos pos) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column);
}

std::vector<GbnfToken> lexGbnf(std::string_view text) { return Lexer(text).run(); }

}  // namespace strata::grammar
