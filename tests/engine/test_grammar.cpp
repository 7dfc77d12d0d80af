// Grammars for constrained output: GBNF notation and its errors, masks against an independent
// recognizer (random sentences must pass token by token, mutated ones must fail at their first
// bad token, and every token of the vocabulary must get the recognizer's verdict), JSON Schema
// outputs that parse and validate, forced bytes, copies and characters split across tokens.
#include <QElapsedTimer>
#include <QtTest>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "engine/error_check.h"
#include "engine/grammar_oracle.h"
#include "engine/json_schema_check.h"
#include "grammar/grammar_rules.h"
#include "strata/grammar.h"
#include "strata/tokenizer.h"

namespace {

using strata::Grammar;
using strata::GrammarMatcher;
using strata::GrammarVocabulary;
using Json = nlohmann::ordered_json;
using grammar_oracle::codePoints;

const char* kArithmetic = R"G(
root ::= expr
expr ::= term (("+" | "-") term)*
term ::= factor (("*" | "/") factor)*
factor ::= "-"? ( [0-9]+ | "(" expr ")" )
)G";

const char* kGreeting = R"G(
# a comment on its own line
root ::= greeting
  | farewell   # alternatives continue on the next line
greeting ::= ("hi" | "hello" | "héllo") " " name "!"?
farewell ::=
  "bye" (" " name)? "\n"
name ::= [A-Z] [a-zé]{1,8}
)G";

const char* kList = R"G(root ::= "[" ( item ( ", " item )* )? "]"
item ::= "\"" [^"\\\n]{0,6} "\"" | [0-9]{1,3} | "🙂"+)G";

const char* kPersonSchema = R"G({
  "title": "Person", "description": "annotations are ignored", "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 12, "examples": ["Ann"]},
    "age": {"type": "integer", "default": 3},
    "email": {"type": "string"},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 3},
    "active": {"type": "boolean"}
  },
  "required": ["name", "age"]
})G";

struct Vocab {
  std::unique_ptr<strata::Tokenizer> tokenizer;
  std::shared_ptr<const GrammarVocabulary> vocabulary;
  std::vector<int32_t> endTokens;
  std::vector<int32_t> byteToken = std::vector<int32_t>(256, -1);  // a token of each lone byte
  int32_t size = 0;
};

// The tiny model's tokenizer; <|endoftext|> and <|user|> end a reply, as in its config.json.
const Vocab& tinyVocab() {
  static const Vocab v = [] {
    Vocab out;
    out.tokenizer = strata::Tokenizer::load(std::string(STRATA_RESOURCES_DIR) +
                                            "/models/strata-tiny/tokenizer.json");
    out.endTokens = {*out.tokenizer->tokenId("<|endoftext|>"), *out.tokenizer->tokenId("<|user|>")};
    out.vocabulary = GrammarVocabulary::build(*out.tokenizer, out.endTokens);
    out.size = out.tokenizer->vocabSize();
    for (int32_t id = 0; id < out.size; ++id) {
      const int32_t one[] = {id};
      const std::string bytes = out.tokenizer->decode(one);
      if (bytes.size() == 1 && !out.tokenizer->isSpecial(id))
        out.byteToken[static_cast<uint8_t>(bytes[0])] = id;
    }
    return out;
  }();
  return v;
}

std::string bytesOf(int32_t id) {
  const int32_t one[] = {id};
  return tinyVocab().tokenizer->decode(one);
}

// Which ids the mask leaves finite (the row is longer than the vocabulary: the ids past it
// must be masked too).
std::vector<bool> maskedAllowed(const GrammarMatcher& m) {
  std::vector<float> logits(static_cast<size_t>(tinyVocab().size) + 7, 0.5f);
  m.mask(logits);
  std::vector<bool> allowed(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) allowed[i] = std::isfinite(logits[i]);
  return allowed;
}

GrammarMatcher matcherFor(std::shared_ptr<const Grammar> g) {
  return GrammarMatcher(std::move(g), tinyVocab().vocabulary);
}

bool acceptsText(const std::shared_ptr<const Grammar>& g, const std::string& text) {
  GrammarMatcher m = matcherFor(g);
  for (char c : text)
    if (!m.accept(tinyVocab().byteToken[static_cast<uint8_t>(c)])) return false;
  return m.complete();
}

bool acceptTokens(GrammarMatcher& m, const std::string& text) {
  for (int32_t id : tinyVocab().tokenizer->encode(text))
    if (!m.accept(id)) return false;
  return true;
}

const strata::grammar::GrammarRules& rulesOf(const Grammar& g) { return g.impl().rules; }

// Every token of `text` must be allowed by the mask and by allows(), in turn; the end must be
// complete and let an end token through. Returns what failed, or empty.
QString walkValid(const std::shared_ptr<const Grammar>& g, const std::string& text) {
  GrammarMatcher m = matcherFor(g);
  const std::vector<int32_t> ids = tinyVocab().tokenizer->encode(text);
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::vector<bool> allowed = maskedAllowed(m);
    if (!allowed[ids[i]] || !m.allows(ids[i]) || !m.accept(ids[i]))
      return QString("token %1 ('%2') of '%3' refused")
          .arg(i)
          .arg(QString::fromStdString(bytesOf(ids[i])), QString::fromStdString(text));
  }
  if (!m.complete()) return "not complete after '" + QString::fromStdString(text) + "'";
  if (!maskedAllowed(m)[tinyVocab().endTokens[0]] || !m.allows(tinyVocab().endTokens[1]))
    return "no end token allowed after '" + QString::fromStdString(text) + "'";
  return {};
}

// Random edits (ASCII, so the first bad character is one byte).
std::string mutate(std::string text, std::mt19937_64& rng) {
  static const std::string alphabet = "{}[]\":,. 0123456789abcehilnrstuxyzABZ-+*/()\\\n";
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  const int edits = std::uniform_int_distribution<int>(1, 2)(rng);
  for (int e = 0; e < edits; ++e) {
    // Edit at a character boundary.
    std::vector<size_t> starts;
    for (size_t i = 0; i <= text.size(); ++i)
      if (i == text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
        starts.push_back(i);
    const size_t at = starts[std::uniform_int_distribution<size_t>(0, starts.size() - 1)(rng)];
    const int kind = std::uniform_int_distribution<int>(0, 2)(rng);
    size_t length = 0;
    while (at + length < text.size() &&
           (length == 0 || (static_cast<unsigned char>(text[at + length]) & 0xC0) == 0x80))
      ++length;
    if (kind == 0) text.insert(at, 1, alphabet[pick(rng)]);
    if (kind == 1 && length) text.erase(at, length);
    if (kind == 2 && length) text.replace(at, length, 1, alphabet[pick(rng)]);
  }
  return text;
}

double medianMicros(const std::function<void()>& work, int runs) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    QElapsedTimer clock;
    clock.start();
    work();
    t.push_back(clock.nsecsElapsed() / 1000.0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

class TestGrammar : public QObject {
  Q_OBJECT

  // The grammars the random tests run on: GBNF ones and JSON Schema ones.
  static std::vector<std::pair<QString, std::shared_ptr<const Grammar>>> sampleGrammars() {
    return {{"arithmetic", Grammar::fromGbnf(kArithmetic)},
            {"greeting", Grammar::fromGbnf(kGreeting)},
            {"list", Grammar::fromGbnf(kList)},
            {"any json object", Grammar::anyJsonObject()},
            {"person schema", Grammar::fromJsonSchema(kPersonSchema)}};
  }

 private slots:
  void notation_data() {
    QTest::addColumn<QString>("grammar");
    QTest::addColumn<QStringList>("accepted");
    QTest::addColumn<QStringList>("rejected");
    QTest::newRow("escapes") << "root ::= \"a\\n\\t\\\\\\\"\\x41\\u00e9\\U0001F600\\[\\]\\-\""
                             << QStringList{"a\n\t\\\"Aé😀[]-"}
                             << QStringList{"a", "a\n\t\\\"A\xc3\xa9", "a\n\t\\\"Ae😀[]-"};
    QTest::newRow("classes") << "root ::= [a-c] [^a-c\\n] [x-] [\\]\\-]"
                             << QStringList{"adx]", "bz--", "cé-]"}
                             << QStringList{"aax]", "a\nx]", "adyx", "adx"};
    QTest::newRow("any character")
        << "root ::= \"<\" . \">\"" << QStringList{"<a>", "<é>", "<>>", "<\n>"}
        << QStringList{"<>", "<ab>"};
    QTest::newRow("exactly") << "root ::= \"a\"{2}" << QStringList{"aa"}
                             << QStringList{"a", "aaa", ""};
    QTest::newRow("at least") << "root ::= \"a\"{2,}" << QStringList{"aa", "aaaaaaa"}
                              << QStringList{"a"};
    QTest::newRow("between") << "root ::= \"a\"{1,3}" << QStringList{"a", "aa", "aaa"}
                             << QStringList{"", "aaaa"};
    QTest::newRow("at most") << "root ::= \"a\"{,2} \"b\"" << QStringList{"b", "ab", "aab"}
                             << QStringList{"aaab", "a"};
    QTest::newRow("star on a group")
        << "root ::= (\"ab\")* \"c\"" << QStringList{"c", "abc", "ababc"}
        << QStringList{"abac", "ac", "ab"};
    QTest::newRow("plus and optional")
        << "root ::= [0-9]+ (\".\" [0-9]+)?" << QStringList{"1", "12.5", "007"}
        << QStringList{".5", "1.", "1..2", ""};
    QTest::newRow("optional") << "root ::= \"x\"?" << QStringList{"", "x"}
                              << QStringList{"xx", "y"};
    QTest::newRow("rules, lines, comments")
        << kGreeting << QStringList{"hi Ann", "héllo Bob!", "bye\n", "bye Zed\n"}
        << QStringList{"hi", "hi ann", "byeBob\n", "bye Zed", "hi Abcdefghij"};
    QTest::newRow("unicode class")
        << "root ::= [ぁ-ゟ]+ \"。\"" << QStringList{"ひらがな。"} << QStringList{"カ。", "ひら"};
    QTest::newRow("empty alternative")
        << "root ::= \"a\" | " << QStringList{"", "a"} << QStringList{"b"};
    QTest::newRow("nested groups")
        << "root ::= (\"a\" (\"b\" | \"c\")+ | \"d\")? \"e\""
        << QStringList{"e", "abe", "acbce", "de"} << QStringList{"ae", "dbe", "abde"};
    QTest::newRow("arithmetic") << kArithmetic << QStringList{"1+2*3", "-(4/2)", "((1))-7*-8"}
                                << QStringList{"1+", "(1", "1++2", "*3"};
  }
  void notation() {
    QFETCH(QString, grammar);
    QFETCH(QStringList, accepted);
    QFETCH(QStringList, rejected);
    const auto g = Grammar::fromGbnf(grammar.toStdString());
    for (const QString& text : accepted)
      QVERIFY2(acceptsText(g, text.toStdString()), qPrintable("refused: " + text));
    for (const QString& text : rejected)
      QVERIFY2(!acceptsText(g, text.toStdString()), qPrintable("accepted: " + text));
    QCOMPARE(QString::fromStdString(g->gbnf()), grammar);  // gbnf() gives the source back
  }

  void otherRootName() {
    const auto g = Grammar::fromGbnf("start ::= \"ok\"", "start");
    QVERIFY(acceptsText(g, "ok"));
    QCOMPARE(errorOf([] { Grammar::fromGbnf("start ::= \"ok\""); }, {"no rule named 'root'"}),
             QString());
  }

  void malformedGrammarsAreNamed_data() {
    QTest::addColumn<QByteArray>("grammar");
    QTest::addColumn<QStringList>("parts");
    QTest::newRow("empty") << QByteArray("  # only a comment\n") << QStringList{"empty"};
    QTest::newRow("undefined rule") << QByteArray("root ::= \"a\" foo")
                                    << QStringList{"line 1, column 14", "undefined rule 'foo'"};
    QTest::newRow("undefined on a later line")
        << QByteArray("root ::= \"a\"\n  x")
        << QStringList{"line 2, column 3", "undefined rule 'x'"};
    QTest::newRow("missing root") << QByteArray("start ::= \"a\"")
                                  << QStringList{"no rule named 'root'"};
    QTest::newRow("unclosed group") << QByteArray("root ::= ( \"a\"")
                                    << QStringList{"line 1, column 10", "'(' is never closed"};
    QTest::newRow("stray close") << QByteArray("root ::= \"a\" )")
                                 << QStringList{"line 1, column 14", "')' without a matching '('"};
    QTest::newRow("bad escape") << QByteArray("root ::= \"a\\q\"")
                                << QStringList{"line 1, column 12", "bad escape '\\q'"};
    QTest::newRow("short hex") << QByteArray("root ::= \"\\x4\"")
                               << QStringList{"line 1, column 11", "2 hex digits"};
    QTest::newRow("surrogate") << QByteArray("root ::= [\\uD800]")
                               << QStringList{"line 1, column 11", "surrogates"};
    QTest::newRow("unclosed string") << QByteArray("root ::= \"abc\nx ::= \"y\"")
                                     << QStringList{"line 1, column 10", "never closed"};
    QTest::newRow("unclosed class")
        << QByteArray("root ::= [abc") << QStringList{"line 1, column 10", "'[' is never closed"};
    QTest::newRow("backwards range")
        << QByteArray("root ::=\n  [z-a]") << QStringList{"line 2, column 4", "backwards"};
    QTest::newRow("empty class") << QByteArray("root ::= []")
                                 << QStringList{"line 1, column 10", "empty character class"};
    QTest::newRow("left recursion")
        << QByteArray("root ::= expr\nexpr ::= expr \"+\" term | term\nterm ::= [0-9]")
        << QStringList{"line 2, column 1", "left-recursive", "expr"};
    QTest::newRow("indirect left recursion")
        << QByteArray("root ::= a\na ::= b? \"x\" | c\nb ::= \"y\"\nc ::= a \"z\"")
        << QStringList{"left-recursive", "a -> c -> a"};
    QTest::newRow("repeating the empty text")
        << QByteArray("root ::= (\"a\"?)* \"b\"")
        << QStringList{"line 1, column 16", "'*' repeats something that can match the empty text"};
    QTest::newRow("never ends") << QByteArray("root ::= \"a\" root")
                                << QStringList{"line 1, column 1", "rule 'root' can never end"};
    QTest::newRow("defined twice")
        << QByteArray("root ::= \"a\"\nroot ::= \"b\"")
        << QStringList{"line 2, column 1", "defined twice", "line 1, column 1"};
    QTest::newRow("max below min")
        << QByteArray("root ::= \"a\"{3,1}")
        << QStringList{"line 1, column 13", "{3,1}", "maximum is below the minimum"};
    QTest::newRow("bad repetition")
        << QByteArray("root ::= \"a\"{x}") << QStringList{"line 1, column 13", "bad repetition"};
    QTest::newRow("huge repetition")
        << QByteArray("root ::= \"a\"{20000}") << QStringList{"line 1, column 13", "above 10000"};
    QTest::newRow("unexpected character")
        << QByteArray("root ::= \"a\" !") << QStringList{"line 1, column 14", "unexpected '!'"};
    QTest::newRow("no ::=") << QByteArray("root := \"a\"")
                            << QStringList{"line 1, column 6", "expected '::='"};
    QTest::newRow("no rule name") << QByteArray("\"a\" ::= \"b\"")
                                  << QStringList{"line 1, column 1", "expected a rule definition"};
    QTest::newRow("operator first")
        << QByteArray("root ::= * \"a\"") << QStringList{"line 1, column 10", "found '*'"};
    QTest::newRow("not UTF-8") << QByteArray("root ::= \"\xff\"")
                               << QStringList{"line 1, column 11", "not valid UTF-8"};
  }
  void deepNestingIsRefused() {
    const std::string deep = "root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')');
    QCOMPARE(
        errorOf([&] { Grammar::fromGbnf(deep); }, {"line 1, column 210", "nested deeper than 200"}),
        QString());
    QVERIFY(acceptsText(
        Grammar::fromGbnf("root ::= " + std::string(150, '(') + "\"a\"" + std::string(150, ')')),
        "a"));
    std::string schema = "{\"type\": \"string\"}";
    for (int i = 0; i < 150; ++i) schema = "{\"type\": \"array\", \"items\": " + schema + "}";
    try {
      Grammar::fromJsonSchema(schema);
      QFAIL("accepted");
    } catch (const strata::JsonSchemaError& e) {
      QVERIFY2(QString(e.what()).contains("nested deeper than 100"), e.what());
      QVERIFY(QString::fromStdString(e.path()).startsWith("items.items.items"));
    }
  }

  void malformedGrammarsAreNamed() {
    QFETCH(QByteArray, grammar);
    QFETCH(QStringList, parts);
    QCOMPARE(errorOf([&] { Grammar::fromGbnf(grammar.toStdString()); }, parts), QString());
  }

  // Random sentences of each grammar pass token by token with the tiny model's tokenizer.
  void randomSentencesAreAllowed() {
    for (const auto& [name, g] : sampleGrammars()) {
      grammar_oracle::RandomWalk walk(rulesOf(*g), 7);
      grammar_oracle::Recognizer recognizer(rulesOf(*g));
      for (int i = 0; i < 60; ++i) {
        const std::string text = walk.sentence(static_cast<size_t>(i % 40));
        QVERIFY2(recognizer.judge(codePoints(text)).complete,
                 qPrintable(name + ": the walk wrote a non-sentence"));
        const QString failure = walkValid(g, text);
        QVERIFY2(failure.isEmpty(), qPrintable(name + ": " + failure));
      }
    }
  }

  // Mutated sentences: every token before the first bad character passes, the token holding it
  // is refused by the mask and by allows().
  void mutatedSentencesFailAtTheFirstBadToken() {
    std::mt19937_64 rng(11);
    for (const auto& [name, g] : sampleGrammars()) {
      grammar_oracle::RandomWalk walk(rulesOf(*g), 3);
      grammar_oracle::Recognizer recognizer(rulesOf(*g));
      int invalid = 0;
      for (int i = 0; i < 80; ++i) {
        const std::string text = mutate(walk.sentence(static_cast<size_t>(i % 30)), rng);
        const std::vector<uint32_t> cps = codePoints(text);
        const size_t goodChars = recognizer.viableLength(cps);
        const size_t goodBytes =
            grammar_oracle::utf8({cps.begin(), cps.begin() + static_cast<long>(goodChars)}).size();
        GrammarMatcher m = matcherFor(g);
        size_t end = 0;
        bool refused = false;
        for (int32_t id : tinyVocab().tokenizer->encode(text)) {
          end += bytesOf(id).size();
          const bool masked = maskedAllowed(m)[id];
          QVERIFY2(masked == m.allows(id), qPrintable(name + ": mask and allows() disagree on '" +
                                                      QString::fromStdString(text) + "'"));
          if (end <= goodBytes) {
            QVERIFY2(masked && m.accept(id), qPrintable(name + ": refused a good token of '" +
                                                        QString::fromStdString(text) + "'"));
          } else {
            QVERIFY2(!masked && !m.accept(id), qPrintable(name + ": allowed a bad token of '" +
                                                          QString::fromStdString(text) + "'"));
            refused = true;
            break;
          }
        }
        if (refused) {
          ++invalid;
        } else {
          QCOMPARE(goodChars, cps.size());
          QCOMPARE(m.complete(), recognizer.judge(cps).complete);
        }
      }
      QVERIFY2(invalid >= 20, qPrintable(name + ": too few mutations broke the text"));
    }
  }

  // At states along random sentences, the mask allows exactly the tokens the recognizer says
  // can follow (tokens ending inside a character: the mask must agree with allows()).
  void everyTokenGetsTheRecognizersVerdict() {
    const Vocab& v = tinyVocab();
    for (const auto& [name, g] : sampleGrammars()) {
      grammar_oracle::RandomWalk walk(rulesOf(*g), 5);
      grammar_oracle::Recognizer recognizer(rulesOf(*g));
      std::mt19937_64 rng(5);
      int allowedSeen = 0;
      for (int state = 0; state < 5; ++state) {
        const std::string text = walk.sentence(static_cast<size_t>(10 + 25 * state));
        const std::vector<int32_t> ids = v.tokenizer->encode(text);
        const size_t cut = std::uniform_int_distribution<size_t>(0, ids.size())(rng);
        GrammarMatcher m = matcherFor(g);
        std::string prefix;
        for (size_t i = 0; i < cut; ++i) {
          QVERIFY(m.accept(ids[i]));
          prefix += bytesOf(ids[i]);
        }
        const std::vector<bool> allowed = maskedAllowed(m);
        const bool complete = recognizer.judge(codePoints(prefix)).complete;
        QCOMPARE(m.complete(), complete);
        for (int32_t id = 0; id < v.size; ++id) {
          bool expected = false;
          const bool end =
              std::find(v.endTokens.begin(), v.endTokens.end(), id) != v.endTokens.end();
          if (end) {
            expected = complete;
          } else if (!v.tokenizer->isSpecial(id)) {
            const std::string candidate = prefix + bytesOf(id);
            if (grammar_oracle::utf8(codePoints(candidate)) !=
                candidate) {  // ends inside a character
              QCOMPARE(allowed[id], m.allows(id));
              continue;
            }
            expected = recognizer.judge(codePoints(candidate)).viable;
          }
          QVERIFY2(allowed[id] == expected,
                   qPrintable(QString("%1: after '%2', token %3 ('%4') %5")
                                  .arg(name, QString::fromStdString(prefix))
                                  .arg(id)
                                  .arg(QString::fromStdString(bytesOf(id)),
                                       expected ? "refused" : "allowed")));
          QCOMPARE(m.allows(id), expected);
          allowedSeen += expected;
        }
        for (int32_t id = v.size; id < static_cast<int32_t>(allowed.size()); ++id)
          QVERIFY(!allowed[id]);
      }
      QVERIFY(allowedSeen > 0);
    }
  }

  void specialTokensAreNeverTextButToolTags() {
    const Vocab& v = tinyVocab();
    const auto g = Grammar::fromGbnf("root ::= .*");  // any text at all
    GrammarMatcher m = matcherFor(g);
    const std::vector<bool> allowed = maskedAllowed(m);
    for (const char* special : {"<|assistant|>", "<think>", "</think>", "[gMASK]", "<tool_response>"}) {
      const int32_t id = *v.tokenizer->tokenId(special);
      QVERIFY2(!allowed[id] && !m.allows(id), special);
      QVERIFY(!m.accept(id));
    }
    // Except the tags GLM writes tool calls with: the reply parser reads them as text, and a
    // grammar of tool calls (tool_choice) spells them.
    for (const char* tag : {"<tool_call>", "</tool_call>", "<arg_key>", "</arg_value>"}) {
      const int32_t id = *v.tokenizer->tokenId(tag);
      QVERIFY2(allowed[id] && m.allows(id), tag);
    }
    QVERIFY(allowed[v.endTokens[0]] && allowed[v.endTokens[1]]);  // `.*` is complete at once
    QVERIFY(allowed[v.tokenizer->encode("Hello")[0]]);
    QVERIFY(allowed[v.byteToken['<']]);
    if (v.byteToken[0xFF] >= 0) QVERIFY(!allowed[v.byteToken[0xFF]]);  // never in UTF-8 text
    for (char c : std::string("<|user|>"))
      QVERIFY(m.accept(v.byteToken[static_cast<uint8_t>(c)]));  // as text
  }

  void endTokensOnlyWhenComplete() {
    const Vocab& v = tinyVocab();
    GrammarMatcher m = matcherFor(Grammar::fromGbnf("root ::= \"ab\" \"c\"?"));
    QVERIFY(!m.allows(v.endTokens[0]) && !maskedAllowed(m)[v.endTokens[1]]);
    QVERIFY(!m.accept(v.endTokens[0]));
    QVERIFY(m.accept(v.byteToken['a']));
    QVERIFY(!m.allows(v.endTokens[0]));
    QVERIFY(m.accept(v.byteToken['b']));
    QVERIFY(m.complete() && !m.finished());
    QVERIFY(m.allows(v.endTokens[0]) && maskedAllowed(m)[v.endTokens[1]]);
    QVERIFY(m.accept(v.byteToken['c']));
    QVERIFY(m.finished());
    const std::vector<bool> allowed = maskedAllowed(m);
    QCOMPARE(static_cast<int>(std::count(allowed.begin(), allowed.end(), true)),
             2);  // only the end tokens
  }

  void forcedBytes() {
    const auto g = Grammar::fromJsonSchema(
        "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}}, \"required\": "
        "[\"name\"]}");
    GrammarMatcher m = matcherFor(g);
    QCOMPARE(m.forcedBytes(), std::string("{\"name\": \""));
    QCOMPARE(m.forcedBytes(3), std::string("{\"n"));
    QVERIFY(acceptTokens(m, "{\""));
    QCOMPARE(m.forcedBytes(), std::string("name\": \""));
    QVERIFY(acceptTokens(m, "name\": \""));
    QCOMPARE(m.forcedBytes(), std::string());  // any character or the closing quote
    QVERIFY(acceptTokens(m, "x\""));
    QCOMPARE(m.forcedBytes(), std::string("}"));
    QVERIFY(acceptTokens(m, "}"));
    QVERIFY(m.finished());
    QCOMPARE(m.forcedBytes(), std::string());

    GrammarMatcher e = matcherFor(Grammar::fromJsonSchema("{\"enum\": [\"alpha\", \"beta\", 7]}"));
    QCOMPARE(e.forcedBytes(), std::string());  // '"' or '7'
    QVERIFY(e.accept(tinyVocab().byteToken['"']));
    QVERIFY(e.accept(tinyVocab().byteToken['b']));
    QCOMPARE(e.forcedBytes(), std::string("eta\""));

    // Optional text is a choice, a forced multi-byte character comes whole.
    GrammarMatcher o =
        matcherFor(Grammar::fromGbnf("root ::= \"ab\" \"c\"? \"d\" | \"ab\" \"é€\""));
    QCOMPARE(o.forcedBytes(), std::string("ab"));
    QVERIFY(acceptTokens(o, "ab"));
    QCOMPARE(o.forcedBytes(), std::string());
    QVERIFY(o.accept(tinyVocab().byteToken[0xC3]));
    QCOMPARE(o.forcedBytes(), std::string("\xA9€"));
  }

  void copiesAreIndependent() {
    const auto g = Grammar::fromJsonSchema(kPersonSchema);
    GrammarMatcher a = matcherFor(g);
    QVERIFY(acceptTokens(a, "{\"name\": \"Al"));
    GrammarMatcher b = a;
    QVERIFY(acceptTokens(b, "\", \"age\": 4}"));
    QVERIFY(b.complete() && !a.complete());
    QVERIFY(
        acceptTokens(a, "ice\", \"age\": 30, \"active\": true}"));  // a went on from where it was
    QVERIFY(a.complete());
    GrammarMatcher c = matcherFor(g);
    QVERIFY(!c.complete());
    c = b;
    QVERIFY(c.complete());
    GrammarMatcher d(std::move(c));
    QVERIFY(d.complete() && d.finished());
    // A refused token leaves the state as it was.
    GrammarMatcher e = matcherFor(g);
    QVERIFY(acceptTokens(e, "{\"name\""));
    QVERIFY(!e.accept(tinyVocab().byteToken['x']));
    QVERIFY(acceptTokens(e, ": \"Z\", \"age\": 1}"));
    QVERIFY(e.complete());
  }

  // A token may end inside a character; the next one finishes it.
  void charactersSplitAcrossTokens() {
    const Vocab& v = tinyVocab();
    const auto g = Grammar::fromGbnf("root ::= \"é\" \"!\" | \"ü\" | \"😀\"+");
    GrammarMatcher m = matcherFor(g);
    QVERIFY(m.accept(v.byteToken[0xC3]));
    QVERIFY(!m.complete());
    std::vector<bool> allowed = maskedAllowed(m);
    QVERIFY(allowed[v.byteToken[0xA9]] && allowed[v.byteToken[0xBC]]);   // é, ü
    QVERIFY(!allowed[v.byteToken[0xB1]] && !allowed[v.byteToken['!']]);  // ñ, a new character
    QVERIFY(!m.accept(v.byteToken[0xB1]));
    QVERIFY(m.accept(v.byteToken[0xBC]));
    QVERIFY(m.finished());

    GrammarMatcher e = matcherFor(g);
    QVERIFY(e.accept(v.byteToken[0xF0]));
    QCOMPARE(e.forcedBytes(), std::string("\x9F\x98\x80"));
    QVERIFY(e.accept(v.byteToken[0x9F]));
    QVERIFY(!maskedAllowed(e)[v.byteToken[0x99]]);
    QVERIFY(e.accept(v.byteToken[0x98]) && e.accept(v.byteToken[0x80]));
    QVERIFY(e.complete() && !e.finished());  // another 😀 may follow
    QVERIFY(acceptTokens(e, "😀😀"));
    QVERIFY(e.complete());
    // Malformed UTF-8 never matches, even where any character is allowed.
    GrammarMatcher any = matcherFor(Grammar::fromGbnf("root ::= .*"));
    QVERIFY(!any.accept(v.byteToken[0xC0]));  // an overlong lead byte
    QVERIFY(any.accept(v.byteToken[0xED]));
    QVERIFY(!any.accept(v.byteToken[0xA0]));  // a surrogate
  }

  void schemaOutputsValidate_data() {
    QTest::addColumn<QString>("schema");
    QTest::newRow("person") << QString(kPersonSchema);
    QTest::newRow("defs, enum of any values, anyOf, maps") << R"({
      "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]}},
      "type": "object",
      "properties": {
        "shape": {"enum": ["circle", "square", null, 3, {"k": [1, "two"]}]},
        "center": {"$ref": "#/$defs/point"},
        "size": {"anyOf": [{"type": "number"}, {"type": "null"}]},
        "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
        "points": {"type": "array", "items": {"$ref": "#/$defs/point"}, "maxItems": 4}
      },
      "required": ["shape", "center"]})";
    QTest::newRow("recursive tree")
        << R"({"type": "object", "properties": {"value": {"type": "integer"},
      "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 3}}, "required": ["value"]})";
    QTest::newRow("type lists, const, oneOf") << R"({"type": "object", "properties": {
      "kind": {"const": "v1"}, "id": {"type": ["string", "integer", "null"]},
      "choice": {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "boolean"}]}},
      "required": ["kind", "id", "choice"], "additionalProperties": false})";
    QTest::newRow("all optional")
        << "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, \"b\": "
           "{\"type\": \"integer\"}, \"c\": {\"type\": \"integer\"}}}";
    QTest::newRow("array root") << "{\"type\": \"array\", \"items\": {\"type\": \"number\"}, "
                                   "\"minItems\": 2, \"maxItems\": 5}";
    QTest::newRow("definitions, unicode keys, required without properties")
        << R"({"definitions": {"name": {"type": "string", "maxLength": 4, "minLength": 2}},
      "type": "object", "properties": {"名前": {"$ref": "#/definitions/name"}}, "required": ["名前", "extra"]})";
    QTest::newRow("any value") << "{}";
  }
  void schemaOutputsValidate() {
    QFETCH(QString, schema);
    const Json parsed = Json::parse(schema.toStdString());
    const auto g = Grammar::fromJsonSchema(schema.toStdString());
    grammar_oracle::RandomWalk walk(rulesOf(*g), 17);
    std::map<std::string, int> seen;  // how many outputs hold each top-level key
    const int count = 60;
    for (int i = 0; i < count; ++i) {
      const std::string text = walk.sentence(static_cast<size_t>(i * 7 % 160));
      Json value;
      try {
        value = Json::parse(text);
      } catch (const std::exception& e) {
        QFAIL(qPrintable("not JSON: " + QString::fromStdString(text) + ": " + e.what()));
      }
      const std::string why = json_schema_check::check(value, parsed, parsed);
      QVERIFY2(why.empty(), qPrintable(QString::fromStdString(text + " -> " + why)));
      if (value.is_object())
        for (const auto& [key, unused] : value.items()) ++seen[key];
      const QString failure = walkValid(g, text);
      QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
    // Optional properties are sometimes written and sometimes left out.
    const Json properties = parsed.value("properties", Json::object());
    for (const auto& [key, propertySchema] : properties.items()) {
      const bool required = parsed.contains("required") &&
                            std::find(parsed["required"].begin(), parsed["required"].end(), key) !=
                                parsed["required"].end();
      QVERIFY2(required ? seen[key] == count : seen[key] > 0 && seen[key] < count, key.c_str());
    }
  }

  // One spelling: separators exactly ": " and ", ", no other white space.
  void schemaOutputsHaveOneSpelling() {
    const auto g = Grammar::fromJsonSchema(kPersonSchema);
    QVERIFY(acceptsText(g, "{\"name\": \"A\", \"age\": -20, \"tags\": [\"a\", \"c\"]}"));
    QVERIFY(!acceptsText(g, "{\"name\":\"A\",\"age\":1}"));                   // spaces required
    QVERIFY(!acceptsText(g, "{ \"name\": \"A\", \"age\": 1}"));               // no space after '{'
    QVERIFY(!acceptsText(g, "{\"name\":  \"A\", \"age\": 1}"));               // exactly one
    QVERIFY(!acceptsText(g, "{\"age\": 1, \"name\": \"A\"}"));                // schema order
    QVERIFY(!acceptsText(g, "{\"name\": \"\", \"age\": 1}"));                 // minLength 1
    QVERIFY(!acceptsText(g, "{\"name\": \"A\", \"age\": 1.5}"));              // an integer
    QVERIFY(!acceptsText(g, "{\"name\": \"A\", \"age\": 1, \"tags\": []}"));  // minItems 1
    QVERIFY(!acceptsText(g, "{\"name\": \"A\", \"age\": 1, \"tags\": [\"d\"]}"));  // the enum
    QVERIFY(!acceptsText(g, "{\"name\": \"A\"}"));                        // age is required
    QVERIFY(!acceptsText(g, "{\"name\": \"A\", \"age\": 1, \"x\": 1}"));  // no other properties
    QVERIFY(acceptsText(g, "{\"name\": \"\\u00e9\\n\\\"\", \"age\": 0}"));
    QVERIFY(!acceptsText(g, "{\"name\": \"\\ud83d\\ude00\", \"age\": 0}"));  // escaped surrogates
    // What the schema became re-parses as GBNF.
    QVERIFY(acceptsText(Grammar::fromGbnf(g->gbnf()), "{\"name\": \"A\", \"age\": 1}"));
  }

  void anyJsonObject() {
    const auto g = Grammar::anyJsonObject();
    QVERIFY(acceptsText(g, "{\"a\": [1, 2.5e-3, {\"b\": null}], \"c\": \"d\", \"e\": true}"));
    QVERIFY(acceptsText(g, "{}"));
    QVERIFY(!acceptsText(g, "[1]"));
    QVERIFY(!acceptsText(g, "\"text\""));
    GrammarMatcher m = matcherFor(g);
    QCOMPARE(m.forcedBytes(), std::string("{"));
    QVERIFY(!m.accept(tinyVocab().byteToken['[']));
  }

  void schemaErrorsNameThePath_data() {
    QTest::addColumn<QString>("schema");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("problem");
    QTest::newRow("unknown type")
        << "{\"type\": \"object\", \"properties\": {\"age\": {\"type\": \"integr\"}}}"
        << "properties.age.type"
        << "unknown type \"integr\"";
    QTest::newRow("pattern")
        << "{\"properties\": {\"x\": {\"type\": \"string\", \"pattern\": \"^a\"}}}"
        << "properties.x.pattern"
        << "'pattern' is not supported";
    QTest::newRow("format in anyOf")
        << "{\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"string\", \"format\": \"date\"}]}"
        << "anyOf[1].format"
        << "not supported";
    QTest::newRow("not") << "{\"not\": {\"type\": \"null\"}}"
                         << "not"
                         << "not supported";
    QTest::newRow("if") << "{\"type\": \"object\", \"if\": {}, \"then\": {}}"
                        << "if"
                        << "not supported";
    QTest::newRow("minimum") << "{\"type\": \"integer\", \"minimum\": 0}"
                             << "minimum"
                             << "not supported";
    QTest::newRow("tuple items") << "{\"type\": \"array\", \"items\": [{\"type\": \"string\"}]}"
                                 << "items"
                                 << "tuple";
    QTest::newRow("missing ref") << "{\"$ref\": \"#/$defs/Missing\"}"
                                 << "$ref"
                                 << "refers to nothing";
    QTest::newRow("remote ref") << "{\"$ref\": \"https://example.com/s.json\"}"
                                << "$ref"
                                << "only references within the schema";
    QTest::newRow("negative minLength") << "{\"type\": \"string\", \"minLength\": -1}"
                                        << "minLength"
                                        << "non-negative integer";
    QTest::newRow("maxItems below minItems")
        << "{\"type\": \"array\", \"minItems\": 3, \"maxItems\": 2}"
        << "maxItems"
        << "below minItems";
    QTest::newRow("false schema") << "false"
                                  << ""
                                  << "accepts no value";
    QTest::newRow("false property") << "{\"properties\": {\"a\": false}, \"required\": [\"a\"]}"
                                    << "properties.a"
                                    << "accepts no value";
    QTest::newRow("not json") << "{bad json"
                              << ""
                              << "not valid JSON";
    QTest::newRow("not a schema") << "{\"items\": 3}"
                                  << "items"
                                  << "expected a schema";
    QTest::newRow("enum outside the type") << "{\"type\": \"string\", \"enum\": [1, 2]}"
                                           << "enum"
                                           << "no listed value";
    QTest::newRow("unique items") << "{\"type\": \"array\", \"uniqueItems\": true}"
                                  << "uniqueItems"
                                  << "not supported";
    QTest::newRow("allOf of two") << "{\"allOf\": [{\"type\": \"string\"}, {\"maxLength\": 2}]}"
                                  << "allOf"
                                  << "exactly one";
    QTest::newRow("keyword beside anyOf")
        << "{\"type\": \"object\", \"anyOf\": [{\"required\": [\"a\"]}]}"
        << "type"
        << "beside 'anyOf'";
    QTest::newRow("in $defs") << "{\"$ref\": \"#/$defs/a\", \"$defs\": {\"a\": {\"type\": "
                                 "\"number\", \"multipleOf\": 2}}}"
                              << "$defs.a.multipleOf"
                              << "not supported";
    QTest::newRow("required but closed")
        << "{\"type\": \"object\", \"required\": [\"z\"], \"additionalProperties\": false}"
        << "required"
        << "'z' is required";
    QTest::newRow("huge maxLength") << "{\"type\": \"string\", \"maxLength\": 100000}"
                                    << "maxLength"
                                    << "at most 10000";
  }
  void schemaErrorsNameThePath() {
    QFETCH(QString, schema);
    QFETCH(QString, path);
    QFETCH(QString, problem);
    try {
      Grammar::fromJsonSchema(schema.toStdString());
      QFAIL("accepted");
    } catch (const strata::JsonSchemaError& e) {
      QCOMPARE(QString::fromStdString(e.path()), path);
      QVERIFY2(QString(e.what()).contains(problem), e.what());
      QVERIFY2(QString(e.what()).startsWith((path.isEmpty() ? "schema" : path) + ": "), e.what());
    }
  }

  void selfReferenceIsAnError() {
    QCOMPARE(errorOf(
                 [] {
                   Grammar::fromJsonSchema(
                       "{\"$ref\": \"#/$defs/a\", \"$defs\": {\"a\": {\"$ref\": \"#/$defs/a\"}}}");
                 },
                 {"schema: cannot be turned into a grammar", "left-recursive", "def-a"}),
             QString());
  }

  // Information only (no timing assertion): the cost of a mask on the tiny vocabulary.
  void maskCostIsLogged() {
    const auto g = Grammar::fromJsonSchema(kPersonSchema);
    GrammarMatcher key = matcherFor(g);
    QVERIFY(acceptTokens(key, "{\"name\": \"Al\", "));
    GrammarMatcher inString = matcherFor(g);
    QVERIFY(acceptTokens(inString, "{\"name\": \""));
    std::vector<float> logits(static_cast<size_t>(tinyVocab().size));
    const double keyMicros = medianMicros([&] { key.mask(logits); }, 15);
    const double stringMicros = medianMicros([&] { inString.mask(logits); }, 15);
    qInfo("mask on %d tokens: %.0f us at a property name, %.0f us inside a string (median of 15)",
          tinyVocab().size, keyMicros, stringMicros);
  }
};

QTEST_GUILESS_MAIN(TestGrammar)
#include "test_grammar.moc"
