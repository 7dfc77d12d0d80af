// GenerateOptions::topLogprobs: each generated token's log probability is the log-softmax of
// the model's logits at its position (checked against logits from a separate teacher-forced
// pass, summed in long double here), its alternatives are that row's most likely tokens in
// order, speculative decoding reports exactly what plain decoding reports, and sampling settings
// do not change the numbers (they are the model's, before temperature).
#include <QTest>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "strata/chat.h"
#include "strata/engine.h"

namespace fs = std::filesystem;
using namespace strata;

namespace {

fs::path tinyModel() { return fs::path(STRATA_RESOURCES_DIR) / "models" / "strata-tiny"; }

std::unique_ptr<Engine> openTiny(bool speculate) {
  EngineSettings settings;
  settings.speculation.mtp = settings.speculation.ngram = speculate ? DrafterMode::On : DrafterMode::Off;
  return Engine::open(tinyModel(), settings);
}

std::vector<int32_t> prompt(const Engine& engine, const std::string& question) {
  ChatOptions chat;
  chat.addGenerationPrompt = true;
  ChatMessage user;
  user.content = question;  // a user message by default
  return engine.tokenizer()->encode(renderGlmChat({user}, {}, chat));
}

GenerateOptions withLogprobs(int top, float temperature) {
  GenerateOptions o;
  o.sampling.temperature = temperature;
  o.sampling.seed = 11;
  o.maxNewTokens = 24;
  o.topLogprobs = top;
  return o;
}

// log softmax(row)[id], independently of the engine's code.
double referenceLogprob(const float* row, int vocab, int32_t id) {
  long double sum = 0;
  for (int i = 0; i < vocab; ++i) sum += std::exp(static_cast<long double>(row[i]));
  return static_cast<double>(row[id] - std::log(sum));
}

}  // namespace

class TestLogprobs : public QObject {
  Q_OBJECT

 private slots:
  void logprobsAreTheModelsDistribution_data() {
    QTest::addColumn<float>("temperature");
    QTest::newRow("greedy") << 0.0f;
    QTest::newRow("sampled") << 1.3f;
  }
  void logprobsAreTheModelsDistribution() {
    QFETCH(float, temperature);
    auto engine = openTiny(false);
    const int vocab = engine->info().vocabSize;
    const auto context = prompt(*engine, "What is the capital of Kenya?");
    const GenerateResult r = engine->newSession()->generate(context, withLogprobs(5, temperature));
    QCOMPARE(r.logprobs.size(), r.tokens.size());

    // The same positions, teacher-forced in a fresh session: row k of this pass chose token k.
    auto session = engine->newSession();
    std::vector<float> rows = session->append(context).logits;
    rows.erase(rows.begin(), rows.end() - vocab);
    const std::vector<int32_t> forced(r.tokens.begin(), r.tokens.end() - 1);
    const std::vector<float> more = session->append(forced).logits;
    rows.insert(rows.end(), more.begin(), more.end());

    for (size_t k = 0; k < r.tokens.size(); ++k) {
      const TokenLogprob& lp = r.logprobs[k];
      const float* row = rows.data() + k * vocab;
      QCOMPARE(lp.token, r.tokens[k]);
      QVERIFY2(std::abs(lp.logprob - referenceLogprob(row, vocab, lp.token)) < 2e-4,
               qPrintable(QString("token %1: %2 vs %3").arg(k).arg(lp.logprob).arg(referenceLogprob(row, vocab, lp.token))));
      QCOMPARE(lp.top.size(), size_t{5});
      // The row's five largest logits, in order.
      std::vector<int32_t> ids(static_cast<size_t>(vocab));
      for (int i = 0; i < vocab; ++i) ids[static_cast<size_t>(i)] = i;
      std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
      for (size_t j = 0; j < 5; ++j) {
        QCOMPARE(lp.top[j].first, ids[j]);
        QVERIFY(std::abs(lp.top[j].second - referenceLogprob(row, vocab, ids[j])) < 2e-4);
      }
      if (temperature == 0.0f) QCOMPARE(lp.token, lp.top[0].first);  // greedy takes the argmax
      QVERIFY(lp.logprob <= lp.top[0].second);
    }
  }

  // Verify passes compute each row exactly as a plain step does, so the numbers are the same.
  void speculationReportsWhatPlainDecodingReports() {
    auto plain = openTiny(false);
    auto speculative = openTiny(true);
    for (const char* q : {"Count the items: desk, rabbit, lamp.", "Give me a JSON object with name Ada and age 36."}) {
      const auto context = prompt(*plain, q);
      const GenerateResult a = plain->newSession()->generate(context, withLogprobs(3, 0));
      const GenerateResult b = speculative->newSession()->generate(context, withLogprobs(3, 0));
      QVERIFY(b.speculation.drafted > 0);
      QCOMPARE(b.tokens, a.tokens);
      QCOMPARE(b.logprobs.size(), a.logprobs.size());
      for (size_t k = 0; k < a.logprobs.size(); ++k) {
        QCOMPARE(b.logprobs[k].logprob, a.logprobs[k].logprob);
        QVERIFY(b.logprobs[k].top == a.logprobs[k].top);
      }
    }
  }

  // Live: onLogprob sees each token's entry as it is chosen, the same as the result's.
  void streamedAsTheyComeAndOffByDefault() {
    auto engine = openTiny(false);
    const auto context = prompt(*engine, "Hi");
    GenerateOptions o = withLogprobs(0, 0);
    std::vector<TokenLogprob> seen;
    auto session = engine->newSession();
    o.onLogprob = [&](const TokenLogprob& lp) { seen.push_back(lp); };
    const GenerateResult r = session->generate(context, o);
    QCOMPARE(seen.size(), r.logprobs.size());
    for (size_t k = 0; k < seen.size(); ++k) {
      QCOMPARE(seen[k].token, r.tokens[k]);
      QVERIFY(seen[k].top.empty());
    }
    QVERIFY(engine->newSession()->generate(context, withLogprobs(-1, 0)).logprobs.empty());
    try {
      engine->newSession()->generate(context, withLogprobs(kMaxTopLogprobs + 1, 0));
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("topLogprobs") != std::string::npos, e.what());
    }
  }

  // promptLogprobs: context token k+1 scored by row k of a teacher-forced pass over the
  // context, also when the session already holds that context (reuse would keep no logits)
  // and when the prefill runs in chunks; maxNewTokens 0 scores without generating (and a
  // negative count is refused).
  void promptLogprobsScoreTheContext() {
    auto engine = openTiny(false);
    const int vocab = engine->info().vocabSize;
    const auto context = prompt(*engine, "What is the capital of Kenya?");
    const std::vector<float> rows = engine->newSession()->append(context).logits;
    GenerateOptions o = withLogprobs(2, 0);
    o.promptLogprobs = true;
    o.maxNewTokens = 0;
    for (const int chunk : {0, 5}) {
      auto session = engine->newSession();
      session->generate(context, withLogprobs(-1, 0));  // the session now holds the context
      o.prefillChunkTokens = chunk;
      const GenerateResult r = session->generate(context, o);
      QVERIFY(r.tokens.empty());
      QCOMPARE(r.finishReason, std::string("length"));
      QCOMPARE(r.reusedTokens, int64_t{0});
      QCOMPARE(r.promptLogprobs.size(), context.size() - 1);
      for (size_t k = 0; k + 1 < context.size(); ++k) {
        const TokenLogprob& lp = r.promptLogprobs[k];
        const float* row = rows.data() + k * vocab;
        QCOMPARE(lp.token, context[k + 1]);
        QVERIFY2(std::abs(lp.logprob - referenceLogprob(row, vocab, lp.token)) < 2e-4,
                 qPrintable(QString("chunk %1, token %2: %3 vs %4")
                                .arg(chunk)
                                .arg(k + 1)
                                .arg(lp.logprob)
                                .arg(referenceLogprob(row, vocab, lp.token))));
        QCOMPARE(lp.top.size(), size_t{2});
        QCOMPARE(lp.top[0].first, static_cast<int32_t>(std::max_element(row, row + vocab) - row));
      }
    }
    try {
      GenerateOptions none = withLogprobs(-1, 0);
      none.maxNewTokens = -1;
      engine->newSession()->generate(context, none);
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("maxNewTokens") != std::string::npos, e.what());
    }
  }

  // Scoring continuations of one context on one session (a harness's multiple choice) reuses
  // the context's rows and their kept scores: the numbers a fresh session computes, trimmed to
  // the alternatives asked; more alternatives than were kept means computing them again.
  void promptLogprobsReuseTheScoredContext() {
    auto engine = openTiny(false);
    const auto question = prompt(*engine, "What is the capital of Kenya?");
    auto scoring = [](int top) {
      GenerateOptions o = withLogprobs(top, 0);
      o.promptLogprobs = true;
      o.maxNewTokens = 0;
      return o;
    };
    auto session = engine->newSession();
    session->generate(question, scoring(2));
    for (const auto& [answer, top, reused] :
         {std::tuple{"</think>Nairobi.", 2, question.size() - 1},
          std::tuple{"</think>Lima.", 1, question.size()},  // `</think>` shared too
          std::tuple{"</think>Paris.", 3, size_t{0}}}) {
      std::vector<int32_t> context = question;
      const auto tail = engine->tokenizer()->encode(answer);
      context.insert(context.end(), tail.begin(), tail.end());
      const GenerateResult again = session->generate(context, scoring(top));
      const GenerateResult fresh = engine->newSession()->generate(context, scoring(top));
      QCOMPARE(again.reusedTokens, static_cast<int64_t>(reused));
      QCOMPARE(again.promptLogprobs.size(), fresh.promptLogprobs.size());
      for (size_t k = 0; k < fresh.promptLogprobs.size(); ++k) {
        const TokenLogprob& a = again.promptLogprobs[k];
        const TokenLogprob& f = fresh.promptLogprobs[k];
        QCOMPARE(a.token, f.token);
        QVERIFY2(std::abs(a.logprob - f.logprob) < 1e-4,
                 qPrintable(QString("%1, token %2: %3 vs %4").arg(answer).arg(k).arg(a.logprob).arg(f.logprob)));
        QCOMPARE(a.top.size(), static_cast<size_t>(top));
        for (size_t j = 0; j < a.top.size(); ++j) QCOMPARE(a.top[j].first, f.top[j].first);
      }
    }
  }

  // What evaluation harnesses do with it: the model's own answer scores higher than a wrong one.
  void promptLogprobsPreferTheRightAnswer() {
    auto engine = openTiny(false);
    const auto question = prompt(*engine, "What is the capital of Kenya?");
    auto score = [&](const std::string& answer) {
      std::vector<int32_t> context = question;
      const std::vector<int32_t> tail = engine->tokenizer()->encode("</think>" + answer);
      context.insert(context.end(), tail.begin(), tail.end());
      GenerateOptions o = withLogprobs(-1, 0);
      o.promptLogprobs = true;
      o.maxNewTokens = 0;
      const GenerateResult r = engine->newSession()->generate(context, o);
      double sum = 0;
      for (size_t k = question.size() - 1; k < r.promptLogprobs.size(); ++k)
        sum += r.promptLogprobs[k].logprob;
      return sum;
    };
    const double right = score("The capital of Kenya is Nairobi.");
    const double wrong = score("The capital of Kenya is Lima.");
    QVERIFY2(right > wrong + 1.0, qPrintable(QString("%1 vs %2").arg(right).arg(wrong)));
  }
};

QTEST_GUILESS_MAIN(TestLogprobs)
#include "test_logprobs.moc"
