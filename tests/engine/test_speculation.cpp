// Speculative decoding is lossless: the same tokens with each drafter on as with every drafter
// off (greedy and seeded sampling, f32 and native weights), the KV cache left exactly as plain
// decoding leaves it, and rejection sampling (MTP drafts at temperature > 0) draws exactly
// the target distribution (chi-square). Also: n-gram drafts, the self-tuning verdicts, and
// that the MTP head of the bundled model really predicts (acceptance far above chance).
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "fixtures.h"
#include "spec/draft_vocabulary.h"
#include "spec/ngram_drafter.h"
#include "spec/speculation_tuner.h"
#include "strata/chat.h"
#include "strata/engine.h"

namespace fs = std::filesystem;
using namespace strata;

namespace {

fs::path tinyModel() { return fs::path(STRATA_RESOURCES_DIR) / "models" / "strata-tiny"; }

SpeculationSettings only(const std::string& drafter, int depth = 3) {
  SpeculationSettings s;
  s.mtp = drafter == "mtp" ? DrafterMode::On : DrafterMode::Off;
  s.ngram = drafter == "ngram" ? DrafterMode::On : DrafterMode::Off;
  s.grammar = drafter == "grammar" ? DrafterMode::On : DrafterMode::Off;
  s.mtpDepth = depth;
  return s;
}

// The first `count` eval questions of the bundled model, as prompt token ids.
std::vector<std::vector<int32_t>> evalPrompts(const Engine& engine, int count, int stride = 7) {
  std::ifstream in(tinyModel() / "eval.jsonl");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<std::vector<int32_t>> prompts;
  ChatOptions chat;
  chat.addGenerationPrompt = true;
  for (size_t i = 0; i < lines.size() && static_cast<int>(prompts.size()) < count; i += stride) {
    const auto row = nlohmann::ordered_json::parse(lines[i]);
    prompts.push_back(engine.tokenizer()->encode(renderGlmChat(parseChatMessages(row["messages"]), {}, chat)));
  }
  return prompts;
}

GenerateOptions options(float temperature, int tokens, uint64_t seed = 7) {
  GenerateOptions o;
  o.sampling.temperature = temperature;
  o.sampling.topP = temperature > 0 ? 0.95f : 1.0f;
  o.sampling.seed = seed;
  o.maxNewTokens = tokens;
  o.ignoreEos = true;  // long outputs: more rounds, more chances to differ
  return o;
}

std::unique_ptr<Engine> openTiny(const SpeculationSettings& speculation,
                                 Precision precision = Precision::F32) {
  EngineSettings settings;
  settings.precision = precision;
  settings.speculation = speculation;
  return Engine::open(tinyModel(), settings);
}

// The engine's first plain step is not a sample (a slow one here: were it counted, every
// verdict below would change); then plain steps of `seconds`.
void measurePlain(spec::SpeculationTuner& tuner, double seconds) {
  tuner.recordPlain(1.0);
  tuner.recordPlain(seconds);
}

std::vector<char> fileBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

class TestSpeculation : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  // Each drafter forced on gives exactly the tokens of plain decoding, and really drafted.
  void sameTokensAsPlainDecoding_data() {
    QTest::addColumn<QString>("drafter");
    QTest::addColumn<int>("precision");
    QTest::addColumn<float>("temperature");
    for (const char* d : {"mtp", "ngram"}) {
      QTest::addRow("%s greedy f32", d) << QString(d) << int(Precision::F32) << 0.0f;
      QTest::addRow("%s greedy native", d) << QString(d) << int(Precision::Native) << 0.0f;
    }
    // Sampling: deterministic drafts are verified by sampling each row as plain decoding
    // would, so even the random draws are the same.
    QTest::addRow("ngram sampled f32") << QString("ngram") << int(Precision::F32) << 0.8f;
  }
  void sameTokensAsPlainDecoding() {
    QFETCH(QString, drafter);
    QFETCH(int, precision);
    QFETCH(float, temperature);
    auto plain = openTiny(only("none"), static_cast<Precision>(precision));
    auto spec = openTiny(only(drafter.toStdString()), static_cast<Precision>(precision));
    int64_t drafted = 0, accepted = 0;
    for (const auto& prompt : evalPrompts(*plain, 4)) {
      const GenerateResult a = plain->newSession()->generate(prompt, options(temperature, 48));
      const GenerateResult b = spec->newSession()->generate(prompt, options(temperature, 48));
      QCOMPARE(b.tokens, a.tokens);
      QCOMPARE(a.speculation.drafted, int64_t{0});
      QVERIFY(b.speculation.forwards < a.speculation.forwards || b.speculation.accepted == 0);
      drafted += b.speculation.drafted;
      accepted += b.speculation.accepted;
      // Drafting is timed (bench spec splits a round's time into drafting and verifying).
      QVERIFY(b.speculation.drafted == 0 || b.speculation.draftSeconds > 0);
      QVERIFY(b.speculation.draftSeconds < b.decodeSeconds);
    }
    QVERIFY2(drafted > 0, "the drafter never proposed anything");
    QVERIFY2(accepted > 0, "no draft token was ever accepted");
  }

  // Under a JSON Schema the grammar drafter proposes the forced keys and separators: the same
  // tokens as plain constrained decoding, in fewer forward passes.
  void grammarDraftsAreLossless() {
    auto plain = openTiny(only("none"));
    auto spec = openTiny(only("grammar"));
    ChatOptions chat;
    chat.addGenerationPrompt = true;
    chat.enableThinking = false;
    const auto messages = parseChatMessages(nlohmann::ordered_json::parse(
        R"([{"role": "user", "content": "Write a JSON object where name is Otto and city is Jerusalem."}])"));
    const auto prompt = plain->tokenizer()->encode(renderGlmChat(messages, {}, chat));
    GenerateOptions o = options(0, 40);
    o.ignoreEos = false;
    o.grammar = Grammar::fromJsonSchema(R"({"type": "object", "properties": {"name": {"type": "string"},
        "city": {"type": "string"}}, "required": ["name", "city"], "additionalProperties": false})");
    const GenerateResult a = plain->newSession()->generate(prompt, o);
    const GenerateResult b = spec->newSession()->generate(prompt, o);
    QCOMPARE(b.tokens, a.tokens);
    QCOMPARE(b.text, a.text);
    QVERIFY(nlohmann::json::parse(b.text).contains("city"));
    QVERIFY2(b.speculation.forwards < a.speculation.forwards,
             qPrintable(QString("%1 vs %2 passes").arg(b.speculation.forwards).arg(a.speculation.forwards)));
  }

  // GenerateOptions::grammarAfterToken = `</think>`: the thinking is exactly what unconstrained
  // decoding writes, the answer after it follows the grammar, and the drafters (grammar drafts
  // only once the grammar is in force) change nothing.
  void grammarStartsAfterThinking() {
    auto plain = openTiny(only("none"));
    SpeculationSettings all;
    all.mtp = all.ngram = all.grammar = DrafterMode::On;
    auto spec = openTiny(all);
    ChatOptions chat;
    chat.addGenerationPrompt = true;
    chat.enableThinking = true;  // the prompt ends inside <think>
    const auto messages = parseChatMessages(nlohmann::ordered_json::parse(
        R"([{"role": "user", "content": "Tell me about Paris as JSON."}])"));
    const auto prompt = plain->tokenizer()->encode(renderGlmChat(messages, {}, chat));
    const int32_t close = plain->tokenizer()->tokenId("</think>").value();

    GenerateOptions free = options(0, 60);
    free.ignoreEos = false;
    const GenerateResult unconstrained = plain->newSession()->generate(prompt, free);
    const auto freeClose = std::find(unconstrained.tokens.begin(), unconstrained.tokens.end(), close);
    QVERIFY2(freeClose != unconstrained.tokens.end(), "the tiny model did not close its thinking");
    QVERIFY2(freeClose != unconstrained.tokens.begin(), "the tiny model did not think");

    GenerateOptions o = free;
    o.grammar = Grammar::fromJsonSchema(R"({"type": "object", "properties": {"name": {"type": "string"},
        "city": {"type": "string"}}, "required": ["name", "city"], "additionalProperties": false})");
    o.grammarAfterToken = close;
    const GenerateResult a = plain->newSession()->generate(prompt, o);
    const auto thinkEnd = std::find(a.tokens.begin(), a.tokens.end(), close);
    QVERIFY(thinkEnd != a.tokens.end());
    QCOMPARE(std::vector<int32_t>(a.tokens.begin(), thinkEnd + 1),
             std::vector<int32_t>(unconstrained.tokens.begin(), freeClose + 1));
    const std::string thinking = plain->tokenizer()->decode(std::vector<int32_t>(a.tokens.begin(), thinkEnd));
    QVERIFY2(thinking.find('{') != 0, thinking.c_str());  // text the grammar would not allow
    const std::string answer = a.text.substr(a.text.find("</think>") + std::string("</think>").size());
    const auto json = nlohmann::json::parse(answer, nullptr, false);
    QVERIFY2(json.is_object() && json.contains("name") && json.contains("city"), answer.c_str());
    QCOMPARE(a.finishReason, std::string("stop"));

    const GenerateResult b = spec->newSession()->generate(prompt, o);
    QCOMPARE(b.tokens, a.tokens);
    QVERIFY(b.speculation.accepted > 0);

    GenerateOptions bad = o;
    bad.grammarAfterToken = plain->info().vocabSize;
    QVERIFY_THROWS_EXCEPTION(Error, (void)plain->newSession()->generate(prompt, bad));
  }

  // After speculative generation the saved KV cache is byte-for-byte what plain decoding
  // leaves: rejected drafts were rolled back in every layer, indexer keys included.
  void rollbackLeavesThePlainCache() {
    auto plain = openTiny(only("none"));
    auto spec = openTiny(only("mtp", 4));
    // Long enough that the DSA indexer prunes (index_topk 32) while drafts are verified.
    const auto prompt = evalPrompts(*plain, 1).front();
    auto a = plain->newSession();
    auto b = spec->newSession();
    const GenerateResult ra = a->generate(prompt, options(0, 60));
    const GenerateResult rb = b->generate(prompt, options(0, 60));
    QCOMPARE(rb.tokens, ra.tokens);
    QVERIFY(rb.speculation.drafted > rb.speculation.accepted);  // something was rolled back
    QCOMPARE(b->length(), a->length());
    QCOMPARE(b->tokens(), a->tokens());
    const fs::path fa = fs::path(tmp_.path().toStdString()) / "plain.kv";
    const fs::path fb = fs::path(tmp_.path().toStdString()) / "spec.kv";
    a->save(fa);
    b->save(fb);
    QVERIFY(fileBytes(fa) == fileBytes(fb));
    // And the next turn continues identically.
    std::vector<int32_t> next = prompt;
    next.insert(next.end(), ra.tokens.begin(), ra.tokens.end());
    QCOMPARE(b->generate(next, options(0, 20)).tokens, a->generate(next, options(0, 20)).tokens);
  }

  // A verify pass computes each of its rows exactly as a decode step of that row alone (each
  // with its own DSA key selection: prompt plus reply run past index_topk 32), so every
  // token's log probability and alternatives, read from its verify row, are plain decoding's
  // bits.
  void verifyRowsEqualDecodeSteps() {
    auto plain = openTiny(only("none"));
    for (const char* drafter : {"mtp", "ngram"}) {
      auto spec = openTiny(only(drafter, 4));
      for (const auto& prompt : evalPrompts(*plain, 2)) {
        GenerateOptions o = options(0, 80);
        o.topLogprobs = 5;
        const GenerateResult a = plain->newSession()->generate(prompt, o);
        const GenerateResult b = spec->newSession()->generate(prompt, o);
        QVERIFY(b.speculation.accepted > 0);
        QCOMPARE(b.logprobs.size(), a.logprobs.size());
        for (size_t i = 0; i < a.logprobs.size(); ++i) {
          const QString where = QString("%1, token %2").arg(drafter).arg(i);
          QVERIFY2(b.logprobs[i].token == a.logprobs[i].token, qPrintable(where));
          QVERIFY2(std::memcmp(&b.logprobs[i].logprob, &a.logprobs[i].logprob, sizeof(float)) == 0,
                   qPrintable(where + ": log probability differs"));
          QVERIFY2(b.logprobs[i].top == a.logprobs[i].top,
                   qPrintable(where + ": alternatives differ"));
        }
      }
    }
  }

  // The bundled model's MTP head was trained with an MTP loss: its first draft token agrees
  // with the model's own greedy choice far more often than chance (1 in 3072).
  void mtpHeadPredicts() {
    auto engine = openTiny(only("mtp", 1));
    int64_t drafted = 0, accepted = 0;
    for (const auto& prompt : evalPrompts(*engine, 6)) {
      const GenerateResult r = engine->newSession()->generate(prompt, options(0, 24));
      drafted += r.speculation.drafted;
      accepted += r.speculation.accepted;
    }
    QVERIFY(drafted >= 60);
    const double acceptance = static_cast<double>(accepted) / static_cast<double>(drafted);
    qInfo("MTP depth-1 acceptance on eval prompts: %.3f (%lld of %lld)", acceptance,
          static_cast<long long>(accepted), static_cast<long long>(drafted));
    QVERIFY2(acceptance > 0.5, qPrintable(QString("acceptance %1").arg(acceptance)));
    bool listed = false;
    for (const DrafterStats& d : engine->speculationStats())
      if (d.name == "mtp") {
        listed = true;
        QCOMPARE(d.drafted, drafted);
        QCOMPARE(d.accepted, accepted);
      }
    QVERIFY(listed);
  }

  // Before its first draft the MTP layer runs over a short prompt whole, but over only the
  // newest 32 positions of a long one (its cache then starts there).
  void mtpCatchesUpOnRecentPositionsOnly() {
    auto engine = openTiny(only("mtp", 2));
    auto prompts = evalPrompts(*engine, 1000, 1);  // every held-out question
    std::sort(prompts.begin(), prompts.end(),
              [](const auto& a, const auto& b) { return a.size() < b.size(); });
    const std::vector<int32_t>& shortest = prompts.front();
    const std::vector<int32_t>& longest = prompts.back();
    QVERIFY2(shortest.size() < 32 && longest.size() > 100,
             qPrintable(QString("%1 / %2 tokens").arg(shortest.size()).arg(longest.size())));
    const int generated = 8;
    for (const auto* prompt : {&shortest, &longest}) {
      auto session = engine->newSession();
      const GenerateResult r = session->generate(*prompt, options(0, generated));
      QVERIFY(r.speculation.drafted > 0);
      const auto length = session->mtpLength();
      if (prompt == &shortest)
        QVERIFY2(length >= static_cast<int64_t>(prompt->size()),
                 qPrintable(QString::number(length)));
      else
        QVERIFY2(length >= 32 && length <= 32 + generated, qPrintable(QString::number(length)));
    }
  }

  // A draft vocabulary lists the ids below its common share, the special ids and the
  // conversation's, as sorted disjoint ranges; it reads only new tokens, and again those after
  // a forgotten point.
  void draftVocabularyListsItsTokens() {
    using Ranges = std::vector<std::pair<int64_t, int64_t>>;
    const auto ranges = [](std::span<const kernels::RowRange> rows) {
      Ranges out;
      for (const kernels::RowRange& r : rows) out.emplace_back(r.begin, r.end);
      return out;
    };
    spec::DraftVocabulary vocabulary(100, {99, 42, 5});
    std::vector<int32_t> sequence{3, 50, 51, 12, 50};
    QCOMPARE(ranges(vocabulary.rows(sequence, 10)),
             (Ranges{{0, 10}, {12, 13}, {42, 43}, {50, 52}, {99, 100}}));
    sequence.insert(sequence.end(), {52, 70, 7});
    QCOMPARE(ranges(vocabulary.rows(sequence, 10)),
             (Ranges{{0, 10}, {12, 13}, {42, 43}, {50, 53}, {70, 71}, {99, 100}}));
    QCOMPARE(ranges(vocabulary.rows(sequence, 0)),
             (Ranges{{3, 4}, {5, 6}, {7, 8}, {12, 13}, {42, 43}, {50, 53}, {70, 71}, {99, 100}}));
    QCOMPARE(ranges(vocabulary.rows(sequence, 100)), (Ranges{{0, 100}}));
    // The conversation is cut to 2 tokens and goes on differently.
    vocabulary.rows(sequence, 10);
    sequence.resize(2);
    vocabulary.forget(2);
    sequence.push_back(80);
    QCOMPARE(ranges(vocabulary.rows(sequence, 10)),
             (Ranges{{0, 10}, {12, 13}, {42, 43}, {50, 53}, {70, 71}, {80, 81}, {99, 100}}));
  }

  // MTP drafts come from the draft vocabulary. With a share of 0 that is the special tokens and
  // the conversation's, so a depth-1 draft is kept only where the reply repeats one of those;
  // with the whole vocabulary the head's guesses of new tokens are kept too (greedy drafts are
  // deterministic: the same drafts would keep the same count). The reply is plain decoding's
  // either way.
  void mtpDraftsFromItsVocabulary() {
    auto plain = openTiny(only("none"));
    const auto prompts = evalPrompts(*plain, 6);
    const Tokenizer& tokenizer = *plain->tokenizer();
    int64_t repeats = 0;  // reply tokens that are special or were in the conversation before
    std::vector<std::vector<int32_t>> expected;
    for (const auto& prompt : prompts) {
      expected.push_back(plain->newSession()->generate(prompt, options(0, 24)).tokens);
      std::vector<int32_t> seen = prompt;
      for (int32_t t : expected.back()) {
        if (tokenizer.isSpecial(t) || std::find(seen.begin(), seen.end(), t) != seen.end())
          ++repeats;
        seen.push_back(t);
      }
    }
    std::vector<int64_t> accepted;
    for (const double share : {0.0, 1.0}) {
      SpeculationSettings s = only("mtp", 1);
      s.mtpDraftVocabulary = share;
      auto engine = openTiny(s);
      int64_t kept = 0;
      for (size_t i = 0; i < prompts.size(); ++i) {
        const GenerateResult r = engine->newSession()->generate(prompts[i], options(0, 24));
        QCOMPARE(r.tokens, expected[i]);
        kept += r.speculation.accepted;
      }
      accepted.push_back(kept);
    }
    qInfo("kept drafts: %lld from the conversation's tokens, %lld from all; %lld repeats",
          static_cast<long long>(accepted[0]), static_cast<long long>(accepted[1]),
          static_cast<long long>(repeats));
    QVERIFY(accepted[0] > 0);
    QVERIFY(accepted[0] <= repeats);
    QVERIFY(accepted[1] > accepted[0]);
  }

  // The MTP chain stops at a draft token the head is unsure of: with the minimum probability at
  // 1 every round drafts one token; at 0 every round drafts the full depth (but where fewer
  // tokens were left to generate); in between, fewer than at 0. Output is plain decoding's
  // in every case.
  void mtpChainStopsAtUnsureDrafts() {
    auto plain = openTiny(only("none"));
    const auto prompts = evalPrompts(*plain, 4);
    std::vector<std::vector<int32_t>> expected;
    for (const auto& prompt : prompts) expected.push_back(plain->newSession()->generate(prompt, options(0, 32)).tokens);
    std::vector<double> perRound;
    for (const double minimum : {1.0, 0.0, 0.5}) {
      SpeculationSettings s = only("mtp", 4);
      s.mtpMinProbability = minimum;
      auto engine = openTiny(s);
      for (size_t i = 0; i < prompts.size(); ++i)
        QCOMPARE(engine->newSession()->generate(prompts[i], options(0, 32)).tokens, expected[i]);
      for (const DrafterStats& d : engine->speculationStats())
        if (d.name == "mtp") {
          QVERIFY(d.rounds > 10);
          perRound.push_back(static_cast<double>(d.drafted) / static_cast<double>(d.rounds));
        }
    }
    QCOMPARE(perRound.size(), size_t{3});
    QCOMPARE(perRound[0], 1.0);
    QVERIFY2(perRound[1] > 3.5, qPrintable(QString::number(perRound[1])));
    QVERIFY2(perRound[2] > 1.0 && perRound[2] < perRound[1],
             qPrintable(QString("%1 vs %2").arg(perRound[2]).arg(perRound[1])));
  }

  // At temperature > 0 a seed fixes the reply with MTP drafting as without it (argmax drafts,
  // verified by sampling); with sampledMtpDrafts the drafts are drawn and verified by
  // rejection sampling, and some are kept.
  void sampledDecodingWithMtp() {
    SpeculationSettings mtp = only("mtp", 2);
    auto plain = openTiny(only("none"));
    auto engine = openTiny(mtp);
    const auto prompt = evalPrompts(*engine, 1, 11).front();
    const GenerateResult a = engine->newSession()->generate(prompt, options(0.7f, 40, 3));
    QCOMPARE(a.tokens, plain->newSession()->generate(prompt, options(0.7f, 40, 3)).tokens);
    QVERIFY(a.speculation.accepted > 0);
    mtp.sampledMtpDrafts = true;
    engine->setSpeculation(mtp);
    const GenerateResult b = engine->newSession()->generate(prompt, options(0.7f, 40, 3));
    QCOMPARE(static_cast<int>(b.tokens.size()), 40);
    QVERIFY(b.speculation.accepted > 0);
  }

  // Rejection sampling keeps the target distribution: drafts drawn from a different q, the
  // verified tokens' histogram against p by chi-square (6 tokens, 5 degrees of freedom). Also
  // with q zero where p is not, as an MTP head drafting from its draft vocabulary gives.
  void rejectionSamplingIsExact_data() {
    QTest::addColumn<int>("topK");
    QTest::addColumn<float>("temperature");
    QTest::addColumn<QList<double>>("draftWeights");  // q, favouring what p does not
    const QList<double> unlike{0.05, 0.3, 0.3, 0.05, 0.2, 0.1};
    QTest::newRow("full distribution") << 0 << 1.0f << unlike;
    QTest::newRow("top-k 4, temperature 0.7") << 4 << 0.7f << unlike;
    QTest::newRow("q on three tokens, not p's likeliest")
        << 0 << 1.0f << QList<double>{0.0, 0.5, 0.3, 0.0, 0.2, 0.0};
  }
  void rejectionSamplingIsExact() {
    QFETCH(int, topK);
    QFETCH(float, temperature);
    QFETCH(QList<double>, draftWeights);
    const std::vector<float> logits{1.2f, 0.3f, -0.5f, 2.0f, 0.0f, -1.5f};
    SamplingParams params;
    params.temperature = temperature;
    params.topK = topK;
    params.seed = 42;
    Sampler target(params);
    const std::vector<TokenProbability> p = target.distribution(logits, {});
    std::vector<double> expected(logits.size(), 0.0);
    for (const TokenProbability& t : p) expected[t.id] = t.p;
    std::vector<TokenProbability> q;  // the tokens q can draw
    for (int t = 0; t < draftWeights.size(); ++t)
      if (draftWeights[t] > 0) q.push_back({t, draftWeights[t]});
    std::mt19937_64 rng(1);
    std::discrete_distribution<int> drawDraft(draftWeights.begin(), draftWeights.end());
    const int draws = 200000;
    std::vector<double> seen(logits.size(), 0.0);
    int accepted = 0;
    for (int i = 0; i < draws; ++i) {
      const int32_t draft = drawDraft(rng);
      bool kept = false;
      const int32_t token = target.verifyDraft(logits, {}, draft, q, kept);
      QCOMPARE(kept, token == draft);
      seen[token] += 1;
      accepted += kept;
    }
    double chi2 = 0;
    for (size_t t = 0; t < logits.size(); ++t) {
      if (expected[t] == 0) {
        QCOMPARE(seen[t], 0.0);  // excluded by top-k: never emitted
        continue;
      }
      const double e = expected[t] * draws;
      chi2 += (seen[t] - e) * (seen[t] - e) / e;
    }
    // 99.9th percentile of chi-square with 5 (or 3) degrees of freedom: 20.5 (16.3).
    const double limit = topK == 4 ? 16.3 : 20.5;
    qInfo("chi-square %.2f (limit %.1f), acceptance %.3f", chi2, limit, double(accepted) / draws);
    QVERIFY2(chi2 < limit, qPrintable(QString("chi-square %1").arg(chi2)));
    // Acceptance is sum(min(p, q)) in expectation.
    double overlap = 0;
    for (const TokenProbability& t : q) overlap += std::min(t.p, expected[t.id]);
    QVERIFY(std::abs(double(accepted) / draws - overlap) < 0.01);
  }

  void ngramDraftsFollowEarlierText() {
    using spec::ngramDraft;
    const std::vector<int32_t> seq{5, 6, 7, 8, 9, 1, 2, 5, 6, 7};
    QCOMPARE(ngramDraft(seq, 2, 8, 3), (std::vector<int32_t>{8, 9, 1}));
    QCOMPARE(ngramDraft(seq, 2, 8, 10), (std::vector<int32_t>{8, 9, 1, 2, 5, 6, 7}));
    QVERIFY(ngramDraft(seq, 4, 8, 3).empty());  // "5 6 7" is only 3 tokens long
    // The longest match wins over a later, shorter one.
    const std::vector<int32_t> two{1, 2, 3, 40, 9, 3, 50, 1, 2, 3};
    QCOMPARE(ngramDraft(two, 1, 8, 1), (std::vector<int32_t>{40}));
    QVERIFY(ngramDraft(std::vector<int32_t>{1, 2, 3, 4}, 1, 8, 4).empty());
  }

  // Self-tuning: a drafter slower than plain decoding is paused at its verdict (a clear loser
  // sooner), probed again later, and one that wins stays on until it loses by more than the
  // margin; forced modes are never paused.
  void tunerPausesLosersAndProbesAgain() {
    SpeculationSettings s;
    spec::SpeculationTuner tuner(s);
    using spec::DrafterKind;
    measurePlain(tuner, 0.010);
    constexpr int kVerdict = spec::SpeculationTuner::kVerdictRounds;
    // A modest loser (1 token / 11.1 ms: 0.9x) runs until its verdict, then is paused.
    for (int i = 0; i < kVerdict; ++i) {
      QVERIFY(tuner.allows(DrafterKind::Ngram));
      tuner.recordRound(DrafterKind::Ngram, 4, 0, 1, 0.0111);
    }
    QVERIFY(!tuner.allows(DrafterKind::Ngram));
    for (int i = 0; i < kVerdict; ++i)
      tuner.recordRound(DrafterKind::Mtp, 3, 2, 3, 0.014);  // 3 / 14 ms
    QVERIFY(tuner.allows(DrafterKind::Mtp));
    for (const DrafterStats& d : tuner.stats())
      if (d.name == "mtp") QVERIFY(std::abs(d.speedup - 3 / 0.014 * 0.010) < 1e-6);
    // Once on, a drafter near break-even (0.99x) stays on; a loss beyond the margin pauses it.
    for (int i = 0; i < 300; ++i) tuner.recordRound(DrafterKind::Mtp, 3, 2, 3, 0.0303);
    QVERIFY(tuner.allows(DrafterKind::Mtp));
    for (int i = 0; i < 300 && tuner.allows(DrafterKind::Mtp); ++i)
      tuner.recordRound(DrafterKind::Mtp, 3, 2, 3, 0.0330);  // 0.91x
    QVERIFY(!tuner.allows(DrafterKind::Mtp));
    for (int i = 0; i < 4096 && !tuner.allows(DrafterKind::Ngram); ++i) tuner.recordPlain(0.010);
    QVERIFY2(tuner.allows(DrafterKind::Ngram), "a paused drafter is probed again");
    // A clear loser (1 token / 40 ms: 0.25x) is paused after its second round.
    tuner.recordRound(DrafterKind::Ngram, 4, 0, 1, 0.040);
    QVERIFY(tuner.allows(DrafterKind::Ngram));
    tuner.recordRound(DrafterKind::Ngram, 4, 0, 1, 0.040);
    QVERIFY(!tuner.allows(DrafterKind::Ngram));

    s.ngram = DrafterMode::On;
    spec::SpeculationTuner forced(s);
    measurePlain(forced, 0.010);
    for (int i = 0; i < 20; ++i) forced.recordRound(DrafterKind::Ngram, 4, 0, 1, 0.050);
    QVERIFY(forced.allows(DrafterKind::Ngram));
    s.mtp = DrafterMode::Off;
    QVERIFY(!spec::SpeculationTuner(s).allows(DrafterKind::Mtp));
  }

  // The first verdict weighs the warm-up rounds alike: one slow first round (a prompt's MTP
  // catch-up, cold caches) among fast ones does not pause a drafter that wins on the rest.
  void tunerWeighsEarlyRoundsAlike() {
    SpeculationSettings s;
    spec::SpeculationTuner tuner(s);
    using spec::DrafterKind;
    measurePlain(tuner, 0.010);
    tuner.recordRound(DrafterKind::Mtp, 3, 2, 3, 0.060);
    for (int i = 0; i < 3; ++i) tuner.recordRound(DrafterKind::Mtp, 3, 2, 3, 0.005);
    // 3 tokens per (60 + 3 x 5) / 4 ms against 10 ms a token: 1.6x.
    QVERIFY(tuner.allows(DrafterKind::Mtp));
    for (const DrafterStats& d : tuner.stats())
      if (d.name == "mtp")
        QVERIFY2(std::abs(d.speedup - 1.6) < 1e-9, qPrintable(QString::number(d.speedup)));
  }

  // Drafting waits for three plain steps after the engine's first (one-time costs), which
  // does not count: ten times slower, it would make every drafter look faster.
  void tunerMeasuresPlainStepsAfterTheFirst() {
    SpeculationSettings s;
    spec::SpeculationTuner tuner(s);
    using spec::DrafterKind;
    QVERIFY(tuner.wantsPlainSample());
    tuner.recordPlain(0.100);
    for (int i = 0; i < 3; ++i) {
      QVERIFY(tuner.wantsPlainSample());
      tuner.recordPlain(0.010);
    }
    QVERIFY(!tuner.wantsPlainSample());
    for (int i = 0; i < spec::SpeculationTuner::kVerdictRounds; ++i)
      tuner.recordRound(DrafterKind::Mtp, 3, 2, 3, 0.040);  // 0.75x
    QVERIFY(!tuner.allows(DrafterKind::Mtp));
  }

  // Draft length (the MTP chain's depth, the n-grams' longest draft): in Auto it is capped
  // where measured acceptance per draft position and measured round time per draft length give
  // the most tokens per second; every kDepthProbeEvery-th round of the drafter drafts the full
  // length to keep measuring; On keeps the setting.
  void tunerPicksTheDraftLengthByMeasurement_data() {
    QTest::addColumn<QString>("drafter");
    QTest::newRow("mtp") << "mtp";
    QTest::newRow("ngram") << "ngram";
  }
  void tunerPicksTheDraftLengthByMeasurement() {
    using spec::DrafterKind;
    QFETCH(QString, drafter);
    const bool mtp = drafter == "mtp";
    const DrafterKind kind = mtp ? DrafterKind::Mtp : DrafterKind::Ngram;
    SpeculationSettings s;
    s.mtpDepth = 4;
    s.ngramMaxDraft = 4;
    auto lengthNow = [&](const spec::SpeculationTuner& t) {
      return mtp ? t.draftSettings().mtpDepth : t.draftSettings().ngramMaxDraft;
    };
    auto statsOf = [&](const spec::SpeculationTuner& t) {
      for (const DrafterStats& d : t.stats())
        if (d.name == drafter.toStdString()) return d;
      return DrafterStats{};
    };
    QCOMPARE(lengthNow(spec::SpeculationTuner(s)), 4);  // nothing measured: the setting

    // Rounds of every length 1..4: the first draft kept 9 times in 10, a second one only in
    // 1 of 10 of those; a pass costs 10 ms + 5 ms per draft token. Length 1: 1.9 tokens per
    // 15 ms (127/s); length 2: ~1.99 per 20 ms (100/s); longer is slower still.
    auto feed = [&](spec::SpeculationTuner& t, int rounds, double keepFirst, double keepNext,
                    double msPerToken) {
      for (int r = 0; r < rounds; ++r) {
        const int length = 1 + r % 4;
        int accepted = 0;
        // Deterministic patterns with the stated frequencies.
        if ((r * 7919 % 100) < int(100 * keepFirst)) {
          accepted = 1;
          while (accepted < length && ((r + accepted) * 104729 % 100) < int(100 * keepNext)) ++accepted;
        }
        t.recordRound(kind, length, accepted, accepted + 1, 0.010 + msPerToken / 1000 * length);
      }
    };
    spec::SpeculationTuner tuner(s);
    measurePlain(tuner, 0.010);
    feed(tuner, 40, 0.9, 0.1, 5);
    QCOMPARE(lengthNow(tuner), 1);
    QCOMPARE(statsOf(tuner).depth, 1);
    // The other drafter's length is its own: still the setting.
    QCOMPARE(mtp ? tuner.draftSettings().ngramMaxDraft : tuner.draftSettings().mtpDepth, 4);
    // The full length comes back once in every kDepthProbeEvery rounds.
    int full = 0;
    for (int r = 0; r < spec::SpeculationTuner::kDepthProbeEvery; ++r) {
      const int length = lengthNow(tuner);
      QVERIFY(length == 1 || length == 4);
      full += length == 4;
      tuner.recordRound(kind, length, 0, 1, 0.010 + 0.005 * length);
    }
    QCOMPARE(full, 1);

    // Drafts nearly always kept and cheap extra rows: the whole length pays.
    spec::SpeculationTuner good(s);
    measurePlain(good, 0.010);
    feed(good, 40, 0.95, 0.95, 1);
    QCOMPARE(lengthNow(good), 4);

    // Forced on: the setting, whatever was measured.
    (mtp ? s.mtp : s.ngram) = DrafterMode::On;
    spec::SpeculationTuner forced(s);
    measurePlain(forced, 0.010);
    feed(forced, 40, 0.9, 0.1, 5);
    QCOMPARE(lengthNow(forced), 4);
    QCOMPARE(statsOf(forced).depth, 4);
  }

  // strata-cli: --speculate forces drafters and the speed line reports them; the answer is
  // the same as with --speculate off; bad values are usage errors naming the option.
  void cliReportsSpeculation() {
    const QString model = QString::fromStdString(tinyModel().string());
    const QStringList common{"run", "--model", model, "--prompt", "What is the capital of France?",
                             "--temperature", "0"};
    const CliRun on = runCli(common + QStringList{"--speculate", "mtp,ngram", "--mtp-depth", "2"});
    QCOMPARE(on.exitCode, 0);
    QVERIFY2(on.err.contains("tokens/pass") && on.err.contains("drafts kept") && on.err.contains("mtp "),
             qPrintable(on.err));
    const CliRun off = runCli(common + QStringList{"--speculate", "off"});
    QCOMPARE(off.exitCode, 0);
    QVERIFY(!off.err.contains("tokens/pass"));
    QCOMPARE(on.out, off.out);
    const CliRun bad = runCli(common + QStringList{"--speculate", "mtp,oracle"});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("--speculate") && bad.err.contains("oracle"), qPrintable(bad.err));
    const CliRun deep = runCli(common + QStringList{"--mtp-depth", "9"});
    QCOMPARE(deep.exitCode, 2);
    QVERIFY2(deep.err.contains("--mtp-depth"), qPrintable(deep.err));
  }

  void settingsAreValidated() {
    SpeculationSettings s;
    s.mtpDepth = 0;
    QVERIFY_THROWS_EXCEPTION(Error, validateSpeculationSettings(s));
    s = {};
    s.mtpMinProbability = 1.5;
    QVERIFY_THROWS_EXCEPTION(Error, validateSpeculationSettings(s));
    s = {};
    s.mtpDraftVocabulary = -0.1;
    QVERIFY_THROWS_EXCEPTION(Error, validateSpeculationSettings(s));
    s = {};
    s.ngramMaxDraft = 100;
    try {
      validateSpeculationSettings(s);
      QFAIL("accepted a 100-token n-gram draft");
    } catch (const Error& e) {
      QVERIFY(std::string(e.what()).find("n-gram draft length") != std::string::npos);
    }
  }
};

QTEST_GUILESS_MAIN(TestSpeculation)
#include "test_speculation.moc"
