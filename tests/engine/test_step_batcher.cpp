// Sessions generating at the same time share forward steps (EngineSettings::batchSessions):
// the replies are exactly what each session gets alone on an engine that never batches
// (greedy and seeded sampling, speculation on, prompts pruned by the DSA indexer, chunked
// prefill), steps really hold several sessions, a bad request fails only its own session,
// and a cancel is seen between prefill chunks.
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/chat.h"
#include "strata/convert.h"
#include "strata/engine.h"

namespace fs = std::filesystem;
using namespace strata;

namespace {

fs::path tinyModel() { return fs::path(STRATA_RESOURCES_DIR) / "models" / "strata-tiny"; }

std::unique_ptr<Engine> openEngine(bool batch, const SpeculationSettings& speculation, int threads = 1) {
  EngineSettings s;
  s.batchSessions = batch ? SessionBatching::On : SessionBatching::Off;
  s.speculation = speculation;
  s.threads = threads;
  return Engine::open(tinyModel(), s);
}

SpeculationSettings speculationOff() {
  SpeculationSettings s;
  s.mtp = s.ngram = s.grammar = DrafterMode::Off;
  return s;
}

// Eval questions of the bundled model as prompt ids, one per task among the first `count` of
// arithmetic, lookup (longer than index_topk, so the indexer prunes keys), counting, JSON.
std::vector<std::vector<int32_t>> prompts(const Engine& engine, int count) {
  std::ifstream in(tinyModel() / "eval.jsonl");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::map<std::string, std::string> firstOfTask;
  for (const std::string& line : lines)
    firstOfTask.emplace(nlohmann::json::parse(line)["task"].get<std::string>(), line);
  std::vector<std::vector<int32_t>> out;
  ChatOptions chat;
  chat.addGenerationPrompt = true;
  for (const char* task : {"arithmetic", "lookup", "counting", "json"}) {
    if (static_cast<int>(out.size()) == count || !firstOfTask.count(task)) break;
    const std::string& line = firstOfTask[task];
    const auto row = nlohmann::ordered_json::parse(line);
    out.push_back(engine.tokenizer()->encode(renderGlmChat(parseChatMessages(row["messages"]), {}, chat)));
  }
  return out;
}

GenerateOptions options(float temperature, uint64_t seed) {
  GenerateOptions o;
  o.sampling.temperature = temperature;
  o.sampling.seed = seed;
  o.maxNewTokens = 40;
  o.ignoreEos = true;
  o.prefillChunkTokens = 24;
  return o;
}

// Each prompt on its own thread and session, all at once.
std::vector<GenerateResult> concurrently(Engine& engine, const std::vector<std::vector<int32_t>>& ps,
                                         float temperature) {
  std::vector<GenerateResult> results(ps.size());
  std::vector<std::string> errors(ps.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ps.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        results[i] = engine.newSession()->generate(ps[i], options(temperature, 100 + i));
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors)
    if (!e.empty()) throw Error(e);
  return results;
}

class TestStepBatcher : public QObject {
  Q_OBJECT

  void sameRepliesAsAlone(float temperature, const SpeculationSettings& speculation) {
    auto alone = openEngine(false, speculation);
    auto batched = openEngine(true, speculation);
    const auto ps = prompts(*alone, 4);
    QCOMPARE(ps.size(), size_t(4));
    size_t longest = 0;
    for (const auto& p : ps) longest = std::max(longest, p.size());
    QVERIFY2(longest > 3 * 24, "a prompt longer than index_topk and several prefill chunks");

    std::vector<GenerateResult> expected;
    for (size_t i = 0; i < ps.size(); ++i)
      expected.push_back(alone->newSession()->generate(ps[i], options(temperature, 100 + i)));
    QCOMPARE(alone->batchingStats().steps, int64_t(0));

    const std::vector<GenerateResult> got = concurrently(*batched, ps, temperature);
    for (size_t i = 0; i < ps.size(); ++i) {
      QCOMPARE(got[i].tokens.size(), size_t(40));
      QCOMPARE(got[i].tokens, expected[i].tokens);
      QCOMPARE(got[i].text, expected[i].text);
    }
    const BatchingStats stats = batched->batchingStats();
    QVERIFY(stats.steps > 0);
    // Four sessions decoding 40 tokens each: most steps hold several of them.
    const double meanBatch = double(stats.sequences) / double(stats.steps);
    QVERIFY2(meanBatch > 1.5, qPrintable(QString("mean sessions per step %1").arg(meanBatch)));
  }

 private slots:
  void greedyRepliesEqualAlone() { sameRepliesAsAlone(0.0f, speculationOff()); }

  void sampledRepliesWithSpeculationEqualAlone() {
    // Speculation on: verify rows (several per session) are batched as well.
    SpeculationSettings on;
    on.mtp = on.ngram = DrafterMode::On;
    sameRepliesAsAlone(0.8f, on);
  }

  void badRequestFailsOnlyItsSession() {
    auto alone = openEngine(false, speculationOff());
    auto batched = openEngine(true, speculationOff());
    const auto ps = prompts(*alone, 1);
    const GenerateResult expected = alone->newSession()->generate(ps[0], options(0, 1));

    std::vector<int32_t> bad = ps[0];
    bad[bad.size() / 2] = alone->info().vocabSize + 5;
    std::atomic<bool> badFailed{false};
    GenerateResult good;
    std::thread goodThread([&] { good = batched->newSession()->generate(ps[0], options(0, 1)); });
    std::thread badThread([&] {
      try {
        batched->newSession()->generate(bad, options(0, 1));
      } catch (const Error& e) {
        badFailed = std::string(e.what()).find("out of range") != std::string::npos;
      }
    });
    goodThread.join();
    badThread.join();
    QVERIFY(badFailed.load());
    QCOMPARE(good.tokens, expected.tokens);
  }

  // The default (Auto) batches only where experts stream from disk: a model in memory runs
  // its sessions apart (each on its own core), a container under a budget shares steps.
  void autoBatchesOnlyStreamedExperts() {
    EngineSettings resident;
    resident.speculation = speculationOff();
    resident.threads = 1;  // as everywhere here: the ThreadSanitizer run cannot see into OpenMP
    QCOMPARE(resident.batchSessions, SessionBatching::Auto);
    auto inMemory = Engine::open(tinyModel(), resident);
    const auto ps = prompts(*inMemory, 2);
    (void)concurrently(*inMemory, ps, 0);
    QCOMPARE(inMemory->batchingStats().steps, int64_t(0));

    QTemporaryDir dir;
    ConvertOptions convert;
    convert.input = tinyModel();
    convert.output = fs::path(dir.path().toStdString()) / "tiny-int4";
    convert.threads = 1;
    convertModel(convert);
    EngineSettings streamed = resident;
    streamed.memory.sessions = static_cast<int>(ps.size());
    streamed.memory.contextTokens = 512;
    streamed.memory.budgetBytes = int64_t{1} << 40;
    const MemoryPlan all = Engine::plan(convert.output, streamed);
    streamed.memory.budgetBytes =
        all.residentBytes + all.kvBytes + all.scratchBytes + all.expertCount * all.expertBytes / 2;
    auto fromDisk = Engine::open(convert.output, streamed);
    QVERIFY(fromDisk->tierSnapshot().streaming);
    (void)concurrently(*fromDisk, ps, 0);
    QVERIFY(fromDisk->batchingStats().steps > 0);
  }

  void cancelIsSeenBetweenPrefillChunks() {
    auto engine = openEngine(true, speculationOff());
    const auto ps = prompts(*engine, 2);
    const std::vector<int32_t>* longPrompt = &ps[1];  // the lookup
    QVERIFY(longPrompt->size() > 2 * 24);
    std::atomic<bool> cancel{true};
    GenerateOptions o = options(0, 1);
    o.cancel = &cancel;
    auto session = engine->newSession();
    const GenerateResult r = session->generate(*longPrompt, o);
    QCOMPARE(r.finishReason, std::string("cancelled"));
    QVERIFY(r.tokens.empty());
    QCOMPARE(session->evaluatedTokens(), int64_t(24));  // the first chunk only
    // The session continues from what it computed, reporting progress after every chunk.
    cancel = false;
    GenerateOptions more = options(0, 1);
    std::vector<std::pair<int64_t, int64_t>> progress;
    more.onPrefillProgress = [&](int64_t done, int64_t total) { progress.emplace_back(done, total); };
    const GenerateResult resumed = session->generate(*longPrompt, more);
    QCOMPARE(resumed.reusedTokens, int64_t(24));
    QCOMPARE(resumed.tokens.size(), size_t(40));
    const auto total = static_cast<int64_t>(longPrompt->size());
    QCOMPARE(progress.size(), size_t((total - 24 + 23) / 24));
    QCOMPARE(progress.front(), std::make_pair(int64_t(48), total));
    QCOMPARE(progress.back(), std::make_pair(total, total));
  }

  // A prompt longer than kPrefillChunkTokens is evaluated in steps of at most that many
  // whatever was asked (0, or a larger chunk), as the memory plan's scratch assumes; a smaller
  // chunk is kept.
  void prefillStepsNeverPassThePlansSize() {
    auto engine = openEngine(false, speculationOff());
    const int64_t total = kPrefillChunkTokens + 100;
    for (const int asked : {0, static_cast<int>(2 * kPrefillChunkTokens), 300}) {
      std::vector<int32_t> longPrompt;  // a new one each time: nothing reused from the last
      for (int64_t i = 0; i < total; ++i)
        longPrompt.push_back(static_cast<int32_t>(7 + (i + asked) % 500));
      GenerateOptions o = options(0, 1);
      o.maxNewTokens = 1;
      o.prefillChunkTokens = asked;
      std::vector<int64_t> done;
      o.onPrefillProgress = [&](int64_t d, int64_t) { done.push_back(d); };
      engine->newSession()->generate(longPrompt, o);
      const int64_t step = asked == 300 ? 300 : kPrefillChunkTokens;
      QCOMPARE(done.size(), size_t((total + step - 1) / step));
      QCOMPARE(done.front(), step);
      QCOMPARE(done.back(), total);
    }
  }
};

}  // namespace

QTEST_APPLESS_MAIN(TestStepBatcher)
#include "test_step_batcher.moc"
