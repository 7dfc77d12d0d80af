// Router choices as the app sees them (Engine::routingSnapshot): heat decays with a half-life of
// 32 steps and counts an expert once per step; the trail holds the latest rows' experts by gate
// weight. Checked against the expert store's own record of what each step fetched.
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "fixtures.h"
#include "model/routing_recorder.h"
#include "strata/convert.h"
#include "strata/engine.h"

namespace fs = std::filesystem;
using strata::model::RoutingDecision;
using strata::model::RoutingRecorder;

namespace {

const std::vector<int32_t> kPrompt = {3, 17, 42, 99, 5, 200, 7, 64, 128, 31};
const std::vector<int32_t> kDecoded = {11, 250, 90};

// Every step: one append of the prompt, then one per decoded token.
void runSteps(strata::Session& session) {
  session.append(kPrompt);
  for (int32_t t : kDecoded) session.append(std::vector<int32_t>{t});
}

// Records a step of one conversation (`sequence`) whose rows start at `start`.
void record(RoutingRecorder& r, const void* sequence, int64_t start,
            const std::vector<int32_t>& tokens,
            const std::vector<std::vector<RoutingDecision>>& routes) {
  const std::vector<const void*> sequences(tokens.size(), sequence);
  std::vector<int64_t> positions(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) positions[i] = start + static_cast<int64_t>(i);
  r.record(tokens, sequences, positions, routes);
}

std::set<int> layerExperts(const strata::RoutedToken& t, size_t layer, int perToken) {
  const auto first = t.experts.begin() + static_cast<std::ptrdiff_t>(layer * perToken);
  return {first, first + perToken};
}

}  // namespace

class TestRouting : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  void recorderCountsAnExpertOncePerStepAndDecays() {
    RoutingRecorder recorder({1}, 4, 2);
    const int conversation = 0;
    const void* seq = &conversation;
    // Two rows both choosing expert 1: heat 1, not 2.
    const RoutingDecision a{{1, 2}, {0.4f, 0.6f}};
    const RoutingDecision b{{3, 1}, {0.7f, 0.3f}};
    record(recorder, seq, 0, {5, 6}, {{a, b}});
    strata::RoutingSnapshot s = recorder.snapshot();
    QCOMPARE(s.steps, int64_t{1});
    QCOMPARE(s.heat, (std::vector<float>{0, 1, 1, 1}));
    QCOMPARE(s.trail.size(), size_t{2});
    QCOMPARE(s.trail[0].experts, (std::vector<int>{2, 1}));  // by descending weight
    QCOMPARE(s.trail[0].weights, (std::vector<float>{0.6f, 0.4f}));
    QCOMPARE(s.trail[1].token, 6);
    QCOMPARE(s.trail[1].position, int64_t{1});

    // 32 steps without expert 1: half its heat; expert 3 used again: decayed + 1.
    for (int i = 0; i < 31; ++i) record(recorder, seq, 2, {}, {{}});
    record(recorder, seq, 2, {9}, {{RoutingDecision{{3, 0}, {0.5f, 0.5f}}}});
    s = recorder.snapshot();
    QCOMPARE(s.steps, int64_t{33});
    QVERIFY(std::abs(s.heat[1] - 0.5f) < 1e-5f);
    QVERIFY(std::abs(s.heat[3] - 1.5f) < 1e-5f);
    QCOMPARE(s.trail.back().step, int64_t{32});

    // A long step keeps only its last rows, oldest first.
    std::vector<int32_t> tokens(20);
    std::vector<RoutingDecision> rows(20, a);
    for (int i = 0; i < 20; ++i) tokens[i] = 100 + i;
    record(recorder, seq, 3, tokens, {rows});
    s = recorder.snapshot();
    QCOMPARE(s.trail.size(), RoutingRecorder::kTrailLength);
    QCOMPARE(s.trail.front().token, 104);
    QCOMPARE(s.trail.back().token, 119);
    QCOMPARE(s.trail.back().position, int64_t{22});

    QVERIFY_THROWS_EXCEPTION(std::exception, record(recorder, seq, 0, {1}, {{a}, {a}}));
    QVERIFY_THROWS_EXCEPTION(std::exception, record(recorder, seq, 0, {1, 2}, {{a}}));
  }

  // A conversation cut back (rejected drafts, an edit) takes its later rows out of the trail,
  // and only its own; the heat keeps them.
  void forgetRemovesOnlyThatConversationsLaterRows() {
    RoutingRecorder recorder({1}, 4, 2);
    const int one = 0, two = 0;
    const RoutingDecision a{{1, 2}, {0.5f, 0.5f}};
    record(recorder, &one, 10, {1, 2, 3}, {{a, a, a}});
    record(recorder, &two, 10, {7, 8}, {{a, a}});
    recorder.forget(&one, 11);
    const strata::RoutingSnapshot s = recorder.snapshot();
    std::vector<int32_t> left;
    for (const strata::RoutedToken& t : s.trail) left.push_back(t.token);
    QCOMPARE(left, (std::vector<int32_t>{1, 7, 8}));
    QVERIFY(s.heat[1] > 1.9f);  // two steps used expert 1
  }

  // Each conversation keeps its own trail of its latest rows, however many rows others add;
  // a conversation that ends (cut to nothing, or its session closed) leaves every trail.
  void eachConversationHasItsOwnTrail() {
    RoutingRecorder recorder({1}, 4, 2);
    const int chat = 0, api = 0;
    const RoutingDecision a{{1, 2}, {0.5f, 0.5f}};
    record(recorder, &chat, 0, {1, 2, 3}, {{a, a, a}});
    std::vector<int32_t> many(20);
    for (size_t i = 0; i < many.size(); ++i) many[i] = 100 + static_cast<int32_t>(i);
    record(recorder, &api, 0, many, {std::vector<RoutingDecision>(many.size(), a)});
    const auto tokens = [](const strata::RoutingSnapshot& s) {
      std::vector<int32_t> out;
      for (const strata::RoutedToken& t : s.trail) out.push_back(t.token);
      return out;
    };
    const auto all = recorder.snapshot();
    QCOMPARE(all.trail.size(), RoutingRecorder::kTrailLength);
    QCOMPARE(all.trail.front().token, 104);  // the chat's rows were pushed out of the shared trail
    QCOMPARE(tokens(recorder.snapshot(RoutingRecorder::Trail::Include, &chat)),
             (std::vector<int32_t>{1, 2, 3}));
    QCOMPARE(recorder.snapshot(RoutingRecorder::Trail::Include, &api).trail.size(),
             RoutingRecorder::kTrailLength);
    recorder.forget(&chat, 2);
    QCOMPARE(tokens(recorder.snapshot(RoutingRecorder::Trail::Include, &chat)),
             (std::vector<int32_t>{1, 2}));
    recorder.forget(&chat, 0);
    QVERIFY(recorder.snapshot(RoutingRecorder::Trail::Include, &chat).trail.empty());
    // One step holding a long prefill of one conversation and a decode row of another: each
    // keeps its own latest rows.
    std::vector<const void*> owners(many.size(), &chat);
    std::vector<int32_t> step = many;
    step.push_back(7);
    owners.push_back(&api);
    std::vector<int64_t> positions(step.size());
    for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int64_t>(i);
    recorder.record(step, owners, positions, {std::vector<RoutingDecision>(step.size(), a)});
    const auto chatRows = tokens(recorder.snapshot(RoutingRecorder::Trail::Include, &chat));
    QCOMPARE(chatRows.size(), RoutingRecorder::kTrailLength);
    QCOMPARE(chatRows.back(), 119);
    QCOMPARE(tokens(recorder.snapshot()).back(), 7);
    QCOMPARE(recorder.snapshot(RoutingRecorder::Trail::Omit).trail.size(), size_t{0});

    // Through the engine: two sessions, each snapshot holds only its own session's tokens.
    auto engine = strata::Engine::open(fixtures::dataDir() / "tiny-dsa");
    auto first = engine->newSession();
    auto second = engine->newSession();
    first->append(std::vector<int32_t>{3, 17, 42});
    second->append(std::vector<int32_t>{5, 6});
    first->append(std::vector<int32_t>{99});
    QCOMPARE(tokens(engine->routingSnapshot(*first)), (std::vector<int32_t>{3, 17, 42, 99}));
    QCOMPARE(tokens(engine->routingSnapshot(*second)), (std::vector<int32_t>{5, 6}));
    QCOMPARE(engine->routingSnapshot().trail.size(), size_t{6});
    second.reset();  // a closed session's rows leave every trail
    QCOMPARE(tokens(engine->routingSnapshot()), (std::vector<int32_t>{3, 17, 42, 99}));
    QCOMPARE(tokens(engine->routingSnapshot(*first)), (std::vector<int32_t>{3, 17, 42, 99}));
  }

  // A model with every expert resident: the trail is the rows fed, each MoE layer routes to
  // top-k distinct experts whose gates sum to routed_scaling_factor (norm_topk_prob), and the
  // heat is the decayed count of steps that used each expert - recomputed here from the trail.
  void residentModelRecordsEveryStep() {
    const fs::path model = fixtures::dataDir() / "tiny-dsa";
    const nlohmann::json config = fixtures::readJson(model / "config.json");
    const int experts = config["n_routed_experts"];
    const int perToken = config["num_experts_per_tok"];
    const float scaling = config["routed_scaling_factor"];
    QVERIFY(config["norm_topk_prob"].get<bool>());

    auto engine = strata::Engine::open(model);
    QCOMPARE(engine->routingSnapshot().steps, int64_t{0});
    auto session = engine->newSession();
    runSteps(*session);

    const strata::RoutingSnapshot s = engine->routingSnapshot();
    QCOMPARE(s.layers, (std::vector<int>{1, 2, 3}));  // first_k_dense_replace 1, 4 layers
    QCOMPARE(s.expertsPerLayer, experts);
    QCOMPARE(s.expertsPerToken, perToken);
    QCOMPARE(s.steps, int64_t{4});
    std::vector<int32_t> fed = kPrompt;
    fed.insert(fed.end(), kDecoded.begin(), kDecoded.end());
    QCOMPARE(s.trail.size(), fed.size());
    std::map<int64_t, std::vector<std::set<int>>> usedByStep;
    for (size_t i = 0; i < fed.size(); ++i) {
      const strata::RoutedToken& t = s.trail[i];
      QCOMPARE(t.token, fed[i]);
      QCOMPARE(t.position, static_cast<int64_t>(i));
      QCOMPARE(t.step,
               i < kPrompt.size() ? int64_t{0} : static_cast<int64_t>(i - kPrompt.size() + 1));
      QCOMPARE(t.experts.size(), s.layers.size() * perToken);
      auto& used = usedByStep[t.step];
      used.resize(s.layers.size());
      for (size_t l = 0; l < s.layers.size(); ++l) {
        const std::set<int> chosen = layerExperts(t, l, perToken);
        QCOMPARE(chosen.size(), size_t(perToken));
        QVERIFY(*chosen.begin() >= 0 && *chosen.rbegin() < experts);
        float sum = 0;
        for (int k = 0; k < perToken; ++k) {
          const float w = t.weights[l * perToken + k];
          if (k > 0) QVERIFY(w <= t.weights[l * perToken + k - 1]);
          sum += w;
        }
        QVERIFY2(std::abs(sum - scaling) < 1e-4f, qPrintable(QString::number(sum)));
        used[l].insert(chosen.begin(), chosen.end());
      }
    }
    for (size_t l = 0; l < s.layers.size(); ++l)
      for (int e = 0; e < experts; ++e) {
        double expected = 0;
        for (const auto& [step, used] : usedByStep)
          if (used[l].count(e)) expected += std::pow(0.5, double(s.steps - 1 - step) / 32.0);
        QVERIFY(std::abs(s.heat[l * experts + e] - expected) < 1e-5);
      }

    // The tier snapshot of a resident model shows the same heat, every expert in RAM.
    const strata::TierSnapshot tiers = engine->tierSnapshot();
    QVERIFY(!tiers.streaming);
    QCOMPARE(tiers.layers, s.layers);
    QCOMPARE(tiers.expertsPerLayer, experts);
    QCOMPARE(tiers.heat, s.heat);
    QCOMPARE(tiers.tiers.size(), s.heat.size());
    QVERIFY(std::all_of(tiers.tiers.begin(), tiers.tiers.end(),
                        [](strata::ExpertTier t) { return t == strata::ExpertTier::Ram; }));
  }

  // With speculative decoding the verify passes compute draft rows that may be rejected; the
  // trail keeps only what the conversation holds: its latest tokens, at their positions.
  void trailHoldsOnlyTheConversationsTokens() {
    strata::EngineSettings settings;
    settings.speculation.mtp = settings.speculation.ngram = strata::DrafterMode::On;
    auto engine =
        strata::Engine::open(fs::path(STRATA_RESOURCES_DIR) / "models" / "strata-tiny", settings);
    auto session = engine->newSession();
    const std::vector<int32_t> prompt = engine->tokenizer()->encode(
        "[gMASK]<sop><|user|>Count the letters in banana.<|assistant|><think>");
    strata::GenerateOptions options;
    options.sampling.temperature = 0;
    options.maxNewTokens = 24;
    options.ignoreEos = true;
    const strata::GenerateResult result = session->generate(prompt, options);
    QVERIFY(result.speculation.drafted > result.speculation.accepted);  // some drafts were rejected

    const strata::RoutingSnapshot s = engine->routingSnapshot();
    const std::vector<int32_t>& held = session->tokens();
    QCOMPARE(s.trail.size(), RoutingRecorder::kTrailLength);
    QCOMPARE(s.trail.back().position, static_cast<int64_t>(held.size()) - 1);
    for (size_t i = 0; i < s.trail.size(); ++i) {
      const strata::RoutedToken& t = s.trail[i];
      QCOMPARE(t.position, s.trail.back().position - static_cast<int64_t>(s.trail.size() - 1 - i));
      QCOMPARE(t.token, held[static_cast<size_t>(t.position)]);
    }
  }

  // Streaming: the experts each decode step's trail row names are exactly the ones the store
  // was asked for in that step's layers (its own record, taken where experts are fetched).
  void streamingTrailMatchesWhatTheStoreFetched() {
    const fs::path container = fs::path(tmp_.path().toStdString()) / "container";
    strata::ConvertOptions o;
    o.input = fixtures::dataDir() / "tiny-dsa";
    o.output = container;
    strata::convertModel(o);
    strata::EngineSettings settings;
    settings.memory.budgetBytes =
        strata::Engine::plan(container).totalBytes();  // all fits; still streams
    settings.memory.contextTokens = 64;
    settings.memory.prefetch = false;
    auto engine = strata::Engine::open(container, settings);
    QVERIFY(engine->info().plan.streaming);
    std::vector<std::map<int, std::set<int>>> fetched;  // per store step: layer -> experts
    int64_t lastStep = -1;
    engine->observeRouting([&](int64_t step, int layer, std::span<const int> experts) {
      if (step != lastStep) fetched.emplace_back();
      lastStep = step;
      fetched.back()[layer].insert(experts.begin(), experts.end());
    });
    auto session = engine->newSession();
    runSteps(*session);
    engine->observeRouting({});

    const strata::RoutingSnapshot s = engine->routingSnapshot();
    QCOMPARE(fetched.size(), size_t(s.steps));
    for (size_t d = 0; d < kDecoded.size(); ++d) {
      const strata::RoutedToken& t = s.trail[kPrompt.size() + d];
      const auto& step = fetched[static_cast<size_t>(t.step)];
      for (size_t l = 0; l < s.layers.size(); ++l)
        QCOMPARE(layerExperts(t, l, s.expertsPerToken), step.at(s.layers[l]));
    }
  }
};

QTEST_GUILESS_MAIN(TestRouting)
#include "test_routing.moc"
