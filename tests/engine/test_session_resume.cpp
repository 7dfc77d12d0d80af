// Saved sessions (Session::save, Engine::resumeSession): a resumed conversation continues with
// exactly the tokens an uninterrupted one produces, without recomputing what was saved; edits
// are saved; a 16-bit KV cache is really 16-bit; a file from another model or a damaged one is
// refused with a reason, and `chat --session` then recomputes the conversation instead.
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "error_check.h"
#include "fixtures.h"
#include "strata/engine.h"

namespace fs = std::filesystem;
using namespace strata;

namespace {

std::vector<int32_t> prompt(int n, int salt = 0) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 37 + 11 + salt) % 250);
  return ids;
}

GenerateOptions greedy(int tokens) {
  GenerateOptions o;
  o.sampling.temperature = 0;
  o.maxNewTokens = tokens;
  return o;
}

std::vector<int32_t> joined(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

QString path(const fs::path& p) { return QString::fromStdString(p.string()); }

// evaluatedTokens() counts every row the model computed; speculative decoding adds the rows of
// rejected drafts, so the tests that count rows decode plainly.
EngineSettings plainDecoding() {
  EngineSettings s;
  s.speculation.mtp = s.speculation.ngram = s.speculation.grammar = DrafterMode::Off;
  return s;
}

}  // namespace

class TestSessionResume : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  fs::path file(const std::string& name) { return fs::path(tmp_.path().toStdString()) / name; }
  static fs::path model(const std::string& name) { return fixtures::dataDir() / name; }

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  // Two turns uninterrupted versus: first turn, save, a new session resumed from the file,
  // second turn. Same tokens, and the resumed session computed only the new ones.
  void resumedContinuesExactly_data() {
    QTest::addColumn<int>("precision");
    QTest::addColumn<int>("kv");
    QTest::newRow("f32 weights, f32 KV") << int(Precision::F32) << int(KvPrecision::F32);
    QTest::newRow("native weights, f32 KV") << int(Precision::Native) << int(KvPrecision::F32);
    QTest::newRow("f32 weights, bf16 KV") << int(Precision::F32) << int(KvPrecision::BF16);
    QTest::newRow("f32 weights, f16 KV") << int(Precision::F32) << int(KvPrecision::F16);
  }
  void resumedContinuesExactly() {
    QFETCH(int, precision);
    QFETCH(int, kv);
    EngineSettings s = plainDecoding();
    s.precision = static_cast<Precision>(precision);
    s.kvPrecision = static_cast<KvPrecision>(kv);
    const auto engine = Engine::open(model("tiny-dsa"), s);
    const fs::path saved = file("turns-" + std::to_string(precision) + "-" + std::to_string(kv) + ".kv");

    auto first = engine->newSession();
    const std::vector<int32_t> turn1 = prompt(40);
    const GenerateResult reply1 = first->generate(turn1, greedy(6));
    first->save(saved);
    const std::vector<int32_t> turn2 = joined(joined(turn1, reply1.tokens), prompt(9, 5));
    const GenerateResult expected = first->generate(turn2, greedy(12));

    auto resumed = engine->resumeSession(saved);
    QCOMPARE(resumed->evaluatedTokens(), int64_t{0});
    // The cache holds turn 1 and the reply but its last token (sampled, never fed back).
    const int64_t savedLength = int64_t(turn1.size() + reply1.tokens.size() - 1);
    QCOMPARE(resumed->length(), savedLength);
    const GenerateResult actual = resumed->generate(turn2, greedy(12));
    QCOMPARE(actual.tokens, expected.tokens);
    QCOMPARE(actual.reusedTokens, savedLength);
    // Only the new part of turn 2 and the decode steps ran through the model.
    QCOMPARE(resumed->evaluatedTokens(),
             int64_t(turn2.size()) - savedLength + int64_t(actual.tokens.size()) - 1);
  }

  // A 16-bit cache changes the logits (the rounding is real) but only a little. Dense
  // attention: on this random model the indexer's top-k flips near-ties under any perturbation,
  // which would hide the size of the rounding error (the tiny model's task accuracy is the
  // end-to-end measure: README).
  void sixteenBitKvIsRoundedButClose() {
    EngineSettings f32;
    f32.denseAttention = true;
    const auto exactEngine = Engine::open(model("tiny-dsa"), f32);
    const std::vector<float> exact = exactEngine->newSession()->append(prompt(40)).logits;
    for (KvPrecision p : {KvPrecision::BF16, KvPrecision::F16}) {
      EngineSettings s = f32;
      s.kvPrecision = p;
      const auto engine = Engine::open(model("tiny-dsa"), s);
      const std::vector<float> rounded = engine->newSession()->append(prompt(40)).logits;
      QCOMPARE(rounded.size(), exact.size());
      double sumDiff = 0, sumAbs = 0;
      for (size_t i = 0; i < exact.size(); ++i) {
        sumDiff += std::abs(exact[i] - rounded[i]);
        sumAbs += std::abs(exact[i]);
      }
      QVERIFY(sumDiff > 0);
      // bf16 keeps 8 mantissa bits (relative error <= 2^-9), f16 11 bits.
      const double bound = p == KvPrecision::BF16 ? 2e-2 : 3e-3;
      QVERIFY2(sumDiff < bound * sumAbs,
               qPrintable(QString("%1: mean |diff| / mean |logit| = %2").arg(kvPrecisionName(p).data()).arg(sumDiff / sumAbs)));
    }
  }

  // A 16-bit cache holds half the bytes of an f32 one (rows are stored as 16-bit words, not as
  // rounded floats), in a session and in the memory plan that sizes it.
  void sixteenBitKvHalvesMemory() {
    std::vector<int64_t> held, planned;
    for (KvPrecision p : {KvPrecision::F32, KvPrecision::BF16, KvPrecision::F16}) {
      EngineSettings s = plainDecoding();
      s.kvPrecision = p;
      const auto engine = Engine::open(model("tiny-dsa"), s);
      auto session = engine->newSession();
      session->append(prompt(40));
      held.push_back(session->kvBytes());
      planned.push_back(Engine::plan(model("tiny-dsa"), s).kvBytesPerToken);
    }
    QVERIFY(held[0] > 0);
    QCOMPARE(held[1] * 2, held[0]);
    QCOMPARE(held[2] * 2, held[0]);
    QCOMPARE(planned[1] * 2, planned[0]);
    QCOMPARE(planned[2] * 2, planned[0]);
  }

  // The plan's KV bytes per token are what a session holds: every layer's latent (kv_lora_rank)
  // and RoPE key, an indexer key only on layers with their own indexer, and the MTP layer's row
  // (its cache stays empty without speculation). Counts from the fixtures' config.json files:
  // tiny-dsa 4 layers, all with an indexer; tiny-indexshare 5 layers, index_topk_freq 2 with
  // offset 1 -> layers 0, 2 and 4 have one.
  void planCountsWhatASessionHolds_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("indexerLayers");
    QTest::addColumn<int>("latentAndRope");
    QTest::newRow("tiny-dsa") << "tiny-dsa" << 4 << 4 << 32 + 8;
    QTest::newRow("tiny-indexshare") << "tiny-indexshare" << 5 << 3 << 24 + 8;
  }
  void planCountsWhatASessionHolds() {
    QFETCH(QString, name);
    QFETCH(int, layers);
    QFETCH(int, indexerLayers);
    QFETCH(int, latentAndRope);
    const int indexDim = 16;
    const int64_t mainRow = 4 * (int64_t{layers} * latentAndRope + int64_t{indexerLayers} * indexDim);
    const int64_t mtpRow = 4 * int64_t{latentAndRope + indexDim};
    const EngineSettings s = plainDecoding();  // f32 KV
    QCOMPARE(Engine::plan(model(name.toStdString()), s).kvBytesPerToken, mainRow + mtpRow);
    const auto engine = Engine::open(model(name.toStdString()), s);
    std::vector<int32_t> tokens = prompt(40);
    for (int32_t& t : tokens) t %= engine->info().vocabSize;  // tiny-indexshare has 128
    auto session = engine->newSession();
    session->append(tokens);
    QCOMPARE(session->kvBytes(), 40 * mainRow);
  }

  // Edit: truncate, save, resume; continuing equals a fresh session on the shortened tokens.
  void truncatedThenSavedEqualsFresh() {
    const auto engine = Engine::open(model("tiny-dsa"));
    const fs::path saved = file("edit.kv");
    auto session = engine->newSession();
    session->append(prompt(40));
    session->save(saved);
    session->truncate(25);
    session->append(prompt(5, 9));
    session->save(saved);

    auto resumed = engine->resumeSession(saved);
    const std::vector<int32_t> opening = prompt(40);
    const std::vector<int32_t> tokens =
        joined(std::vector<int32_t>(opening.begin(), opening.begin() + 25), prompt(5, 9));
    QCOMPARE(resumed->tokens(), tokens);
    const std::vector<float> actual = resumed->append(prompt(3, 4)).logits;
    // Bit for bit what the edited session itself computes next...
    QVERIFY(actual == session->append(prompt(3, 4)).logits);
    // ...and, to rounding (batches of other sizes add in another order), what a fresh session
    // on the shortened conversation computes.
    const std::vector<float> fresh = engine->newSession()->append(joined(tokens, prompt(3, 4))).logits;
    double maxDiff = 0, maxAbs = 0;
    for (size_t i = 0; i < actual.size(); ++i) {
      maxDiff = std::max(maxDiff, double(std::abs(actual[i] - fresh[fresh.size() - actual.size() + i])));
      maxAbs = std::max(maxAbs, double(std::abs(actual[i])));
    }
    QVERIFY2(maxDiff <= 1e-4 * maxAbs, qPrintable(QString::number(maxDiff)));
  }

  // Two conversations opening with the same 30 tokens (a system prompt): the second copies
  // them from the first instead of computing them, and answers as if alone.
  void sharedOpeningIsComputedOnce() {
    const auto engine = Engine::open(model("tiny-dsa"), plainDecoding());
    const std::vector<int32_t> system = prompt(30);
    engine->newSession()->generate(joined(system, prompt(6, 1)), greedy(4));
    auto second = engine->newSession();
    const std::vector<int32_t> context = joined(system, prompt(6, 2));
    const GenerateResult r = second->generate(context, greedy(4));
    QCOMPARE(r.reusedTokens, int64_t{30});
    QCOMPARE(second->evaluatedTokens(), int64_t(context.size()) - 30 + int64_t(r.tokens.size()) - 1);
    const GenerateResult alone = Engine::open(model("tiny-dsa"))->newSession()->generate(context, greedy(4));
    QCOMPARE(r.tokens, alone.tokens);
  }

  void anotherModelsFileIsRefused() {
    const fs::path saved = file("other.kv");
    const auto engine = Engine::open(model("tiny-dsa"));
    auto session = engine->newSession();
    session->append(prompt(10));
    session->save(saved);
    const auto other = Engine::open(model("tiny-indexshare"));
    const QString error = errorOf([&] { other->resumeSession(saved); }, {"other.kv"});
    QVERIFY2(error.isEmpty(), qPrintable(error));
  }

  // Across processes with the real tiny model: a chat continued from its saved session gives
  // the same second answer as the chat held in one process; with the KV file damaged, it says
  // so, recomputes, and still gives that answer.
  void chatSessionAcrossProcesses() {
    const QString tiny = QString(STRATA_RESOURCES_DIR) + "/models/strata-tiny";
    const QStringList options = {"chat", "--model", tiny, "--temperature", "0", "--no-think", "--max-new", "24"};
    const QByteArray first = "What is the capital of France?\n";
    const QByteArray second = "How many items are in this list: cat, dog, cup?\n";
    const CliRun whole = runCli(options, first + second);
    QVERIFY2(whole.exitCode == 0, qPrintable(whole.err));
    const QList<QByteArray> answers = whole.out.split('\n');
    QVERIFY(answers.size() >= 2);

    const fs::path chat = file("chat.json");
    const CliRun one = runCli(options + QStringList{"--session", path(chat)}, first);
    QVERIFY2(one.exitCode == 0, qPrintable(one.err));
    QVERIFY(fs::exists(chat) && fs::exists(chat.string() + ".kv"));
    const CliRun two = runCli(options + QStringList{"--session", path(chat)}, second);
    QVERIFY2(two.exitCode == 0, qPrintable(two.err));
    QVERIFY2(two.err.contains("[resumed"), qPrintable(two.err));
    QCOMPARE(two.out.split('\n').first(), answers[1]);

    // A second conversation with its KV file damaged after the first turn: the chat goes on,
    // recomputed, with the same answer.
    const CliRun fresh = runCli(options + QStringList{"--session", path(file("chat3.json"))}, first);
    QVERIFY2(fresh.exitCode == 0, qPrintable(fresh.err));
    std::fstream f(file("chat3.json").string() + ".kv", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const auto size = static_cast<std::streamoff>(f.tellg());
    f.seekp(size / 2);  // inside the committed KV vectors
    const char old = static_cast<char>(f.peek());
    f.seekp(size / 2);
    f.put(static_cast<char>(old ^ 0x10));
    f.close();
    const CliRun damaged = runCli(options + QStringList{"--session", path(file("chat3.json"))}, second);
    QVERIFY2(damaged.exitCode == 0, qPrintable(damaged.err));
    QVERIFY2(damaged.err.contains("cannot be used"), qPrintable(damaged.err));
    QCOMPARE(damaged.out.split('\n').first(), answers[1]);
  }
};

QTEST_APPLESS_MAIN(TestSessionResume)
#include "test_session_resume.moc"
