// The speculation self-tuner on a simulated busy machine: plain steps and verify rounds of
// known mean cost, with seeded jitter, rare hiccups (a step now and then several times
// slower) and slow phases, as on a laptop doing other work. Whatever the drafter's true worth,
// decoding in Auto must come within 3 % of the better of plain decoding and the drafter forced on
// (issue 9: "no configuration slower than plain decoding by more than 3 %"), which needs
// verdicts that a hiccup does not flip.
#include <QTest>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "spec/speculation_tuner.h"

using namespace strata;
using spec::DrafterKind;

namespace {

struct Scenario {
  double acceptance;  // each draft position kept with this chance, given the ones before
  double rowCost;     // a draft token's drafting and verify row, in plain steps
};

// Decode time per token (simulated seconds) of `tokens` tokens: plain only, MTP forced on at
// its setting, or self-tuned. Each mode's noise comes from the same seeded processes, and its
// slow phases fall on the same tokens.
class Simulation {
 public:
  Simulation(Scenario scenario, unsigned seed)
      : scenario_(scenario), random_(seed), phases_(seed + 1000) {}

  double secondsPerToken(DrafterMode mode, int tokens) {
    SpeculationSettings s;
    s.mtp = mode;
    s.ngram = DrafterMode::Off;
    s.grammar = DrafterMode::Off;
    spec::SpeculationTuner tuner(s);
    tuner.recordPlain(10 * kPlainSeconds);  // the engine's first step (one-time costs)
    double seconds = 0;
    int produced = 0;
    while (produced < tokens) {
      const bool draft =
          mode != DrafterMode::Off && !tuner.wantsPlainSample() && tuner.allows(DrafterKind::Mtp);
      if (!draft) {
        const double step = kPlainSeconds * noise(produced);
        tuner.recordPlain(step);
        seconds += step;
        ++produced;
        continue;
      }
      const int drafted = tuner.draftSettings().mtpDepth;
      int accepted = 0;
      while (accepted < drafted && chance(random_) < scenario_.acceptance) ++accepted;
      const double round = kPlainSeconds * (1 + scenario_.rowCost * drafted) * noise(produced);
      tuner.recordRound(DrafterKind::Mtp, drafted, accepted, accepted + 1, round);
      seconds += round;
      produced += accepted + 1;
    }
    return seconds / produced;
  }

 private:
  static constexpr double kPlainSeconds = 0.001;

  // +-10 % jitter; one step in 50 is 3-10x slower; and phases: the whole machine 1.7x slower
  // for 200-800 tokens (another program busy), then as long at full speed. Phases follow the
  // tokens, so every mode meets the same ones.
  double noise(int token) {
    while (token >= phaseEnd_) {
      slowPhase_ = !slowPhase_;
      phaseEnd_ += std::uniform_int_distribution<int>(200, 800)(phases_);
    }
    const double jitter = std::exp(0.1 * normal_(random_)) * (slowPhase_ ? 1.7 : 1.0);
    return chance(random_) < 0.02 ? jitter * (3 + 7 * chance(random_)) : jitter;
  }

  Scenario scenario_;
  std::mt19937 random_;
  std::uniform_real_distribution<double> chance{0.0, 1.0};
  std::normal_distribution<double> normal_{0.0, 1.0};
  std::mt19937 phases_;
  bool slowPhase_ = true;
  int phaseEnd_ = 0;
};

}  // namespace

class TestTunerUnderNoise : public QObject {
  Q_OBJECT

 private slots:
  void autoIsNearTheBetterChoice_data() {
    QTest::addColumn<double>("acceptance");
    QTest::addColumn<double>("rowCost");
    // Speed-ups with 1 / 2 / 3 draft tokens (forced on drafts 3).
    QTest::newRow("clear winner") << 0.86 << 0.25;             // 1.49 / 1.73 / 1.85x
    QTest::newRow("modest winner") << 0.86 << 0.65;            // 1.13 / 1.13 / 1.10x
    QTest::newRow("wins with shorter drafts") << 0.6 << 0.35;  // 1.19 / 1.15 / 1.06x
    QTest::newRow("break-even") << 0.86 << 0.86;               // 1.00 / 0.96 / 0.90x
    QTest::newRow("modest loser") << 0.5 << 0.6;               // 0.94 / 0.80 / 0.67x
    QTest::newRow("clear loser") << 0.3 << 1.0;                // 0.65 / 0.46 / 0.36x
  }
  void autoIsNearTheBetterChoice() {
    QFETCH(double, acceptance);
    QFETCH(double, rowCost);
    constexpr int kTokens = 40000;
    std::vector<double> ratios;
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const Scenario scenario{acceptance, rowCost};
      const double plain = Simulation(scenario, seed).secondsPerToken(DrafterMode::Off, kTokens);
      const double forced = Simulation(scenario, seed).secondsPerToken(DrafterMode::On, kTokens);
      const double tuned = Simulation(scenario, seed).secondsPerToken(DrafterMode::Auto, kTokens);
      ratios.push_back(std::min(plain, forced) / tuned);  // speed relative to the better choice
      qInfo("seed %u: forced %.2fx, auto %.2fx of plain", seed, plain / forced, plain / tuned);
    }
    for (const double r : ratios) QVERIFY2(r >= 0.97, qPrintable(QString::number(r)));
  }
};

QTEST_GUILESS_MAIN(TestTunerUnderNoise)
#include "test_tuner_under_noise.moc"
