// strata::Tokenizer against the independent Python reference (tools/tokenizer/bpe_reference.py)
// and against behaviours documented by Hugging Face tokenizers, plus round trips, special
// tokens, the streaming decoder and the errors of malformed files.
#include <QtTest>
#include <random>
#include <thread>

#include "fixtures.h"
#include "strata/tokenizer.h"
#include "tokenizer/pcre_regex.h"
#include "tokenizer/pre_tokenizer.h"

using strata::Tokenizer;
using strata::tokenizer::PreTokenizer;
using strata::tokenizer::PreTokenizerStep;
using strata::tokenizer::Regex;
using strata::tokenizer::SplitBehavior;
using Json = nlohmann::json;

namespace {

std::filesystem::path tokenizerDir() { return fixtures::dataDir() / "tokenizer"; }

std::vector<Json> readJsonLines(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path.string());
  std::vector<Json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
  return lines;
}

QList<int> toList(const std::vector<int32_t>& ids) { return QList<int>(ids.begin(), ids.end()); }

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// GPT-2's byte-level alphabet, written out here from its definition (bytes_to_unicode).
std::string byteCharacter(int byte) {
  const auto printable = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
  };
  int codepoint = byte;
  if (!printable(byte)) {
    codepoint = 0x100;
    for (int b = 0; b < byte; ++b) codepoint += printable(b) ? 0 : 1;
  }
  return QString(QChar(codepoint)).toStdString();
}

std::vector<std::string> preTokenize(const std::vector<PreTokenizerStep>& steps,
                                     const std::string& text) {
  PreTokenizer preTokenizer(steps, "test");
  std::vector<std::string> pieces;
  preTokenizer.split(text, pieces);
  return pieces;
}

PreTokenizerStep splitStep(const std::string& regex, SplitBehavior behavior, bool invert) {
  PreTokenizerStep step;
  step.kind = PreTokenizerStep::Kind::Split;
  step.regex = regex;
  step.behavior = behavior;
  step.invert = invert;
  return step;
}

// A small valid tokenizer.json that the error tests break one field at a time.
Json minimalTokenizer() {
  return Json::parse(R"({
    "added_tokens": [],
    "normalizer": null,
    "pre_tokenizer": null,
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}
  })");
}

const char* kGlmSpecialTokens[] = {
    "<|endoftext|>",    "[gMASK]",   "<sop>",      "<|system|>",  "<|user|>",     "<|assistant|>",
    "<|observation|>",  "<think>",   "</think>",   "<tool_call>", "</tool_call>", "<tool_response>",
    "</tool_response>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"};

}  // namespace

class TestTokenizer : public QObject {
  Q_OBJECT

  std::unique_ptr<Tokenizer> glm_;
  std::unique_ptr<Tokenizer> features_;

  const Tokenizer& byName(const QString& name) const { return name == "glm" ? *glm_ : *features_; }

 private slots:
  void initTestCase() {
    glm_ = Tokenizer::load(tokenizerDir() / "glm_tokenizer.json");
    features_ = Tokenizer::load(tokenizerDir() / "features_tokenizer.json");
  }

  void idsEqualThePythonReference_data() {
    QTest::addColumn<QString>("tokenizer");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QList<int>>("expected");
    const auto texts = readJsonLines(tokenizerDir() / "texts.jsonl");
    for (const char* name : {"glm", "features"}) {
      const auto ids = readJsonLines(tokenizerDir() / (std::string(name) + "_ids.jsonl"));
      QCOMPARE(ids.size(), texts.size());
      for (size_t i = 0; i < texts.size(); ++i)
        QTest::addRow("%s:%zu", name, i + 1)
            << QString(name) << QByteArray::fromStdString(texts[i].get<std::string>())
            << toList(ids[i].get<std::vector<int32_t>>());
    }
  }
  void idsEqualThePythonReference() {
    QFETCH(QString, tokenizer);
    QFETCH(QByteArray, text);
    QFETCH(QList<int>, expected);
    QCOMPARE(toList(byName(tokenizer).encode(text.toStdString())), expected);
  }

  void vocabularyMatchesTheFile() {
    // train_bpe.py was asked for 3000 ids in all (tools/tokenizer/make_fixtures.sh).
    QCOMPARE(glm_->vocabSize(), 3000);
    const Json file = fixtures::readJson(tokenizerDir() / "glm_tokenizer.json");
    for (const Json& added : file.at("added_tokens"))
      QCOMPARE(glm_->tokenId(added.at("content").get<std::string>()),
               std::optional<int32_t>(added.at("id").get<int32_t>()));
    QCOMPARE(glm_->tokenId("Ġ"),
             std::optional<int32_t>(file.at("model").at("vocab").at("Ġ").get<int32_t>()));
    QVERIFY(!glm_->tokenId("no such token").has_value());
    // specialIds(): the added tokens the file marks "special", ascending.
    std::vector<int32_t> special;
    for (const Json& added : file.at("added_tokens"))
      if (added.value("special", false)) special.push_back(added.at("id").get<int32_t>());
    std::sort(special.begin(), special.end());
    QVERIFY(!special.empty());
    QCOMPARE(glm_->specialIds(), special);
  }

  void specialTokensAreSingleIdsNeverSplit_data() {
    QTest::addColumn<QString>("token");
    for (const char* token : kGlmSpecialTokens) QTest::newRow(token) << QString(token);
  }
  void specialTokensAreSingleIdsNeverSplit() {
    QFETCH(QString, token);
    const std::string t = token.toStdString();
    const std::optional<int32_t> id = glm_->tokenId(t);
    QVERIFY(id.has_value());
    QCOMPARE(toList(glm_->encode(t)), QList<int>{*id});
    // Inside text, the token cuts the text: the parts around it encode on their own.
    QCOMPARE(toList(glm_->encode("Hi there" + t + "again, " + t + t)),
             toList(concat(concat(glm_->encode("Hi there"), {*id}),
                           concat(glm_->encode("again, "), {*id, *id}))));
    // Missing its last character it is ordinary text.
    const auto partial = glm_->encode(t.substr(0, t.size() - 1));
    QVERIFY(std::find(partial.begin(), partial.end(), *id) == partial.end());
    QCOMPARE(glm_->decode(glm_->encode("x" + t + "y")), "x" + t + "y");
  }

  void roundTripsRandomUnicode() {
    // Code point pools: ASCII, Latin accents, combining marks, CJK, Hangul, emoji with ZWJ and
    // skin tones, RTL scripts, unusual spaces, and pieces of special tokens.
    const std::vector<std::pair<char32_t, char32_t>> ranges = {
        {0x20, 0x7E},       {0x09, 0x0D},     {0xC0, 0x17F},    {0x300, 0x36F},
        {0x4E00, 0x9FFF},   {0xAC00, 0xD7A3}, {0x3040, 0x30FF}, {0x1F300, 0x1F64F},
        {0x1F3FB, 0x1F3FF}, {0x200B, 0x200D}, {0x5D0, 0x5EA},   {0x627, 0x64A},
        {0x2000, 0x200A},   {0x3000, 0x3000}, {0xFE0F, 0xFE0F}, {0x10000, 0x1000F}};
    const std::vector<std::string> fragments = {"<|user|>", "<think>", "[gMASK]", "<|",
                                                "|>",       "'s",      "\r\n"};
    std::mt19937 rng(20260509);
    for (int round = 0; round < 400; ++round) {
      std::string text;
      const int length = std::uniform_int_distribution<int>(0, 40)(rng);
      for (int i = 0; i < length; ++i) {
        if (rng() % 10 == 0) {
          text += fragments[rng() % fragments.size()];
          continue;
        }
        const auto& [lo, hi] = ranges[rng() % ranges.size()];
        const char32_t c = lo + static_cast<char32_t>(rng() % (hi - lo + 1));
        text += QString::fromUcs4(&c, 1).toStdString();
      }
      const auto ids = glm_->encode(text);
      for (int32_t id : ids) QVERIFY(id >= 0 && id < glm_->vocabSize());
      QCOMPARE(QByteArray::fromStdString(glm_->decode(ids)), QByteArray::fromStdString(text));
    }
  }

  void roundTripsArbitraryBytes() {
    std::mt19937 rng(7);
    for (int round = 0; round < 400; ++round) {
      std::string bytes(std::uniform_int_distribution<size_t>(0, 64)(rng), '\0');
      // Half the strings mostly high bytes, so that broken multi-byte sequences are common.
      const bool high = round % 2;
      for (char& b : bytes)
        b = static_cast<char>(high && rng() % 4 ? 0x80 + rng() % 128 : rng() % 256);
      const auto ids = glm_->encode(bytes);
      QCOMPARE(toList(glm_->encode(bytes)), toList(ids));  // deterministic
      QCOMPARE(QByteArray::fromStdString(glm_->decode(ids)), QByteArray::fromStdString(bytes));
    }
  }

  void invalidBytesBecomeTheirByteTokens() {
    const auto byteId = [&](int b) { return *glm_->tokenId(byteCharacter(b)); };
    QCOMPARE(toList(glm_->encode("\xFF")), QList<int>{byteId(0xFF)});
    QCOMPARE(toList(glm_->encode("\xC3")), QList<int>{byteId(0xC3)});  // truncated é
    QCOMPARE(toList(glm_->encode("hello\x80")),
             toList(concat(glm_->encode("hello"), {byteId(0x80)})));
    QCOMPARE(toList(glm_->encode(std::string("\0", 1))), QList<int>{byteId(0)});
  }

  void streamDecoderEmitsOnlyCompleteCharacters() {
    const auto byteId = [&](int b) { return *glm_->tokenId(byteCharacter(b)); };
    Tokenizer::StreamDecoder stream(*glm_);
    QCOMPARE(stream.push(byteId(0xC3)), std::string());  // é = C3 A9
    QCOMPARE(stream.push(byteId(0xA9)), std::string("é"));
    for (int b : {0xF0, 0x9F, 0x98}) QCOMPARE(stream.push(byteId(b)), std::string());  // 😀
    QCOMPARE(stream.push(byteId(0x80)), std::string("😀"));
    const auto hello = glm_->encode("Hello");
    std::string text;
    for (int32_t id : hello) text += stream.push(id);
    QCOMPARE(text, std::string("Hello"));
    QCOMPARE(stream.flush(), std::string());

    // A character that never completes is one U+FFFD at flush; a byte that cannot continue
    // it ends it at once.
    QCOMPARE(stream.push(byteId(0xE6)), std::string());
    QCOMPARE(stream.flush(), std::string("\uFFFD"));
    QCOMPARE(stream.push(byteId(0xE6)), std::string());
    QCOMPARE(stream.push(byteId('A')), std::string("\uFFFDA"));
    QCOMPARE(stream.push(byteId(0xFF)), std::string("\uFFFD"));

    // Whole fixture texts stream to exactly what decode() gives.
    for (const Json& line : readJsonLines(tokenizerDir() / "texts.jsonl")) {
      Tokenizer::StreamDecoder s(*glm_);
      std::string streamed;
      for (int32_t id : glm_->encode(line.get<std::string>())) streamed += s.push(id);
      streamed += s.flush();
      QCOMPARE(streamed, line.get<std::string>());
    }
  }

  void decodeRejectsUnknownIds() {
    for (int32_t bad : {glm_->vocabSize(), -1, 1 << 30}) {
      const std::vector<int32_t> ids{5, bad};
      try {
        glm_->decode(ids);
        QFAIL("decode accepted an unknown id");
      } catch (const strata::Error& e) {
        QVERIFY2(QString(e.what()).contains(QString("token id %1 is out of range").arg(bad)),
                 e.what());
      }
    }
  }

  void featureTokenizerHonoursItsOptions() {
    const Tokenizer& t = *features_;
    const auto id = [&](const char* token) { return *t.tokenId(token); };
    // NFKC: ligatures and fullwidth forms become their plain letters.
    QCOMPARE(toList(t.encode("ﬁnd ＡＢＣ")), toList(t.encode("find ABC")));
    // ignore_merges: a pre-token that is in the vocab is that one token.
    QCOMPARE(toList(t.encode(" tokenizer")), QList<int>{id("Ġtokenizer")});
    // lstrip + rstrip: the spaces around <mask> belong to it.
    QCOMPARE(toList(t.encode("a   <mask>   b")),
             toList(concat(concat(t.encode("a"), {id("<mask>")}), t.encode("b"))));
    // rstrip only / lstrip only.
    QCOMPARE(toList(t.encode("x <sep>  y")),
             toList(concat(concat(t.encode("x "), {id("<sep>")}), t.encode("y"))));
    QCOMPARE(toList(t.encode("x  <cls> y")),
             toList(concat(concat(t.encode("x"), {id("<cls>")}), t.encode(" y"))));
    // single_word: only between non-word characters.
    QCOMPARE(toList(t.encode("(<tag>)")),
             toList(concat(concat(t.encode("("), {id("<tag>")}), t.encode(")"))));
    const auto glued = t.encode("a<tag>b");
    QVERIFY(std::find(glued.begin(), glued.end(), id("<tag>")) == glued.end());
    // A normalized added token matches the normalized text.
    QCOMPARE(toList(t.encode("ＡＣＭＥ")), QList<int>{id("ACME")});
  }

  void splitBehavioursMatchHuggingFaceDocs_data() {
    QTest::addColumn<int>("behavior");
    QTest::addColumn<QStringList>("expected");
    // The SplitDelimiterBehavior table of tokenizers' normalizer.rs: '-' in "the-final--countdown".
    QTest::newRow("Removed") << int(SplitBehavior::Removed)
                             << QStringList{"the", "final", "countdown"};
    QTest::newRow("Isolated") << int(SplitBehavior::Isolated)
                              << QStringList{"the", "-", "final", "-", "-", "countdown"};
    QTest::newRow("MergedWithPrevious") << int(SplitBehavior::MergedWithPrevious)
                                        << QStringList{"the-", "final-", "-", "countdown"};
    QTest::newRow("MergedWithNext")
        << int(SplitBehavior::MergedWithNext) << QStringList{"the", "-final", "-", "-countdown"};
    QTest::newRow("Contiguous") << int(SplitBehavior::Contiguous)
                                << QStringList{"the", "-", "final", "--", "countdown"};
  }
  void splitBehavioursMatchHuggingFaceDocs() {
    QFETCH(int, behavior);
    QFETCH(QStringList, expected);
    QStringList got;
    for (const auto& p :
         preTokenize({splitStep("-", SplitBehavior(behavior), false)}, "the-final--countdown"))
      got << QString::fromStdString(p);
    QCOMPARE(got, expected);
  }

  void invertedSplitMatchesHuggingFaceTests() {
    // tokenizers' pre_tokenizers/split.rs test: \w+|[^\w\s]+ with invert on "How are you doing?".
    const std::string text = "How are you doing?";
    const std::string words = R"(\w+|[^\w\s]+)";
    using V = std::vector<std::string>;
    QCOMPARE(preTokenize({splitStep(words, SplitBehavior::Removed, true)}, text),
             (V{"How", "are", "you", "doing", "?"}));
    QCOMPARE(preTokenize({splitStep(words, SplitBehavior::MergedWithPrevious, true)}, text),
             (V{"How ", "are ", "you ", "doing", "?"}));
    QCOMPARE(preTokenize({splitStep(words, SplitBehavior::MergedWithNext, true)}, text),
             (V{"How", " are", " you", " doing", "?"}));
    QCOMPARE(preTokenize({splitStep(words, SplitBehavior::Contiguous, true)}, text),
             (V{"How", " ", "are", " ", "you", " ", "doing?"}));
  }

  void digitsAndByteLevelMatchHuggingFaceTests() {
    using V = std::vector<std::string>;
    PreTokenizerStep digits;
    digits.kind = PreTokenizerStep::Kind::Digits;
    QCOMPARE(preTokenize({digits}, "Hey 123 friend!"), (V{"Hey ", "123", " friend!"}));
    digits.individualDigits = true;
    QCOMPARE(preTokenize({digits}, "Hey 123 friend!"), (V{"Hey ", "1", "2", "3", " friend!"}));

    // tokenizers' pre_tokenizers/byte_level.rs tests.
    PreTokenizerStep byteLevel;
    byteLevel.kind = PreTokenizerStep::Kind::ByteLevel;
    byteLevel.addPrefixSpace = false;
    QCOMPARE(preTokenize({byteLevel}, "Hello my friend, how is your day going?"),
             (V{"Hello", "Ġmy", "Ġfriend", ",", "Ġhow", "Ġis", "Ġyour", "Ġday", "Ġgoing", "?"}));
    QCOMPARE(preTokenize({byteLevel}, "Hello there       dear"),
             (V{"Hello", "Ġthere", "ĠĠĠĠĠĠ", "Ġdear"}));
    QCOMPARE(preTokenize({byteLevel}, "Hello there\nHello there"),
             (V{"Hello", "Ġthere", "Ċ", "Hello", "Ġthere"}));
    QCOMPARE(preTokenize({byteLevel}, "i⭢j"), (V{"i", "âŃ¢", "j"}));
    byteLevel.addPrefixSpace = true;
    QCOMPARE(preTokenize({byteLevel}, "Hello my friend,").front(), std::string("ĠHello"));
  }

  void glmRegexSplitsLikePythonRegex() {
    const Json fixture = fixtures::readJson(tokenizerDir() / "glm_regex_splits.json");
    const Regex regex(fixture.at("pattern").get<std::string>(), "GLM pattern");
    QVERIFY(!fixture.at("cases").empty());
    for (const Json& c : fixture.at("cases")) {
      const std::string text = c.at("text").get<std::string>();
      std::vector<std::string> pieces;
      for (const Regex::Span& s : regex.findAll(text))
        pieces.push_back(text.substr(s.begin, s.end - s.begin));
      QCOMPARE(pieces, c.at("pieces").get<std::vector<std::string>>());
    }
  }

  void longRunsEncodeAndRoundTrip() {
    for (const std::string& text : {std::string(200000, ' '), std::string(200000, 'a'),
                                    std::string(50000, '\n') + "x", std::string(30000, '1')}) {
      QCOMPARE(glm_->decode(glm_->encode(text)), text);
    }
  }

  void encodesFromSeveralThreadsAtOnce() {
    const auto lines = readJsonLines(tokenizerDir() / "texts.jsonl");
    const auto expected = readJsonLines(tokenizerDir() / "glm_ids.jsonl");
    auto fresh = Tokenizer::load(tokenizerDir() / "glm_tokenizer.json");  // empty word cache
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 20; ++round)
          for (size_t i = 0; i < lines.size(); ++i)
            if (fresh->encode(lines[i].get<std::string>()) !=
                expected[i].get<std::vector<int32_t>>())
              ++mismatches[t];
      });
    for (auto& thread : threads) thread.join();
    QCOMPARE(mismatches, std::vector<int>(4, 0));
  }

  void malformedFilesNameTheProblem_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* name, const Json& j, const char* message) {
      QTest::newRow(name) << QByteArray::fromStdString(j.dump()) << QString(message);
    };
    QTest::newRow("not JSON") << QByteArray("{model: oops") << "bad.json: not valid JSON";
    row("not an object", Json::array(), "bad.json: top level: expected a JSON object");
    Json j = minimalTokenizer();
    j.erase("model");
    row("missing model", j, "bad.json: model: the \"model\" section is missing");
    j = minimalTokenizer();
    j["model"]["type"] = "WordPiece";
    row("not BPE", j, "model type WordPiece is not supported; only BPE is");
    j = minimalTokenizer();
    j["model"]["merges"] = {"a c"};
    row("merge of unknown token", j,
        "the merge 'a c' (rank 0) refers to 'c', which is not in the vocab");
    j = minimalTokenizer();
    j["model"]["merges"] = Json::array({Json::array({"b", "a"})});
    row("merge result unknown", j,
        "the merge 'b a' (rank 0) makes 'ba', which is not in the vocab");
    j = minimalTokenizer();
    j["model"]["merges"] = {"a b", "ab"};
    row("merge not two tokens", j,
        "model.merges[1]: 'ab' is not two tokens separated by one space");
    j = minimalTokenizer();
    j["model"]["vocab"]["ba"] = 1;
    row("duplicate vocab id", j, "model.vocab: ids are not unique: 'b' and 'ba' both have id 1");
    j = minimalTokenizer();
    j["added_tokens"] =
        Json::parse(R"([{"id": 3, "content": "<x>"}, {"id": 3, "content": "<y>"}])");
    row("duplicate added id", j,
        "added_tokens: ids are not unique: '<x>' and '<y>' both have id 3");
    j = minimalTokenizer();
    j["added_tokens"] = Json::parse(R"([{"id": 2, "content": "<x>"}])");
    row("added id of a vocab token", j,
        "added_tokens: ids are not unique: 'ab' and '<x>' both have id 2");
    j = minimalTokenizer();
    j["normalizer"] = {{"type", "Lowercase"}};
    row("unsupported normalizer", j, "normalizer: unsupported normalizer Lowercase");
    j = minimalTokenizer();
    j["normalizer"] =
        Json::parse(R"({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Strip"}]})");
    row("unsupported normalizer in sequence", j,
        "normalizer.normalizers[1]: unsupported normalizer Strip");
    j = minimalTokenizer();
    j["pre_tokenizer"] = {{"type", "Metaspace"}};
    row("unsupported pre-tokenizer", j, "pre_tokenizer: unsupported pre-tokenizer Metaspace");
    j = minimalTokenizer();
    j["pre_tokenizer"] =
        Json{{"type", "Split"}, {"pattern", {{"Regex", "(ab"}}}, {"behavior", "Isolated"}};
    row("bad regex", j,
        "pre_tokenizer.pattern: the regex '(ab' does not compile: missing closing parenthesis at "
        "offset 3");
    j = minimalTokenizer();
    j["pre_tokenizer"] =
        Json{{"type", "Split"}, {"pattern", {{"String", "x"}}}, {"behavior", "Sideways"}};
    row("bad behavior", j, "pre_tokenizer.behavior: unknown split behavior 'Sideways'");
    j = minimalTokenizer();
    j["decoder"] = {{"type", "WordPiece"}};
    row("unsupported decoder", j, "decoder: unsupported decoder WordPiece");
    j = minimalTokenizer();
    j.erase("decoder");
    row("no decoder", j, "decoder: no decoder");
    j = minimalTokenizer();
    j["model"]["vocab"] = Json::object();
    j["model"]["merges"] = Json::array();
    row("empty vocab", j, "model.vocab: the vocab is empty");
    j = minimalTokenizer();
    j["model"]["dropout"] = 0.1;
    row("dropout", j, "model.dropout: BPE dropout is not supported");
    j = minimalTokenizer();
    j["model"]["unk_token"] = "<unk>";
    row("unk not in vocab", j, "model.unk_token '<unk>' is not in the vocab");
  }
  void malformedFilesNameTheProblem() {
    QFETCH(QByteArray, json);
    QFETCH(QString, message);
    try {
      Tokenizer::fromJson(json.toStdString(), "bad.json");
      QFAIL("the file was accepted");
    } catch (const strata::Error& e) {
      QVERIFY2(QString(e.what()).startsWith("bad.json: "), e.what());
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }

  void minimalTokenizerLoadsAndMerges() {
    // The base of the error cases is itself valid, so each error above is the one change's.
    const auto t = Tokenizer::fromJson(minimalTokenizer().dump());
    QCOMPARE(toList(t->encode("ab")), QList<int>{2});
    QCOMPARE(toList(t->encode("bab")), (QList<int>{1, 2}));
    try {
      t->encode("c");
      QFAIL("encoded a character outside the vocab");
    } catch (const strata::Error& e) {
      QVERIFY2(QString(e.what()).contains("cannot encode the character U+0063"), e.what());
    }
  }

  void loadNamesTheMissingFile() {
    try {
      Tokenizer::load("/nonexistent/tokenizer.json");
      QFAIL("loaded a missing file");
    } catch (const strata::Error& e) {
      QVERIFY2(QString(e.what()).contains("/nonexistent/tokenizer.json: cannot open"), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
