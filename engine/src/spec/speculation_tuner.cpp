#include "spec/speculation_tuner.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "strata/error.h"

namespace strata {

void validateSpeculationSettings(const SpeculationSettings& s) {
  auto require = [](bool ok, const char* name, const char* range, int value) {
    if (!ok) throw Error(std::string(name) + ": must be " + range + ", got " + std::to_string(value));
  };
  require(s.mtpDepth >= 1 && s.mtpDepth <= spec::SpeculationTuner::kMaxMtpDepth, "mtp depth",
          "in [1, 8]", s.mtpDepth);
  require(s.ngramMaxDraft >= 1 && s.ngramMaxDraft <= spec::SpeculationTuner::kMaxDraftLength,
          "n-gram draft length", "in [1, 32]", s.ngramMaxDraft);
  require(s.ngramMinMatch >= 1 && s.ngramMinMatch <= 8, "n-gram match length", "in [1, 8]",
          s.ngramMinMatch);
  if (!(s.mtpMinProbability >= 0.0 && s.mtpMinProbability <= 1.0))
    throw Error("mtp minimum probability: must be in [0, 1], got " + std::to_string(s.mtpMinProbability));
  if (!(s.mtpDraftVocabulary >= 0.0 && s.mtpDraftVocabulary <= 1.0))
    throw Error("mtp draft vocabulary: must be a share in [0, 1], got " +
                std::to_string(s.mtpDraftVocabulary));
}

double SpeculationSummary::tokensPerForward() const {
  return forwards > 0 ? static_cast<double>(forwards + accepted) / static_cast<double>(forwards) : 0.0;
}

namespace spec {
namespace {
constexpr double kSmoothing = 0.1;        // weight of the newest sample in the moving averages
// A drafter's rounds are averaged over more of them: their tokens vary from 1 to the draft's
// length + 1, so ten rounds left a 1.1x winner's measured speed-up ~8 % noisy and its verdict
// flipping (a simulated busy machine, tests/engine/test_tuner_under_noise.cpp).
constexpr double kRoundSmoothing = 1.0 / 32;
constexpr int64_t kFirstPause = 128;      // tokens before the first probe
constexpr int64_t kLongestPause = 4096;
constexpr int64_t kPlainSampleEvery = 128;  // tokens between plain measurements
// Plain steps measured before any drafting, after one more that is not measured: an engine's
// first decode step pays one-time costs (the tiny model's: ~850 us against ~520 later), and as
// the only sample it made a losing MTP head look 1.1-1.4x faster than plain decoding in a
// fresh `strata-cli run`.
constexpr int64_t kFirstPlainSamples = 3;
constexpr double kDepthDecay = 0.97;        // per round: position counts remember ~30 rounds
constexpr double kDepthEvidence = 3.0;      // (decayed) verifications before a position counts

// A running mean of the first 1 / smoothing samples, then an exponential moving average, so
// every early sample weighs the same. An average seeded with the first sample alone let that
// one decide the first verdicts (after 4 rounds it still weighed 73 %), and a reply's first
// round is its least typical: it pays the MTP layer's catch-up on the prompt and cold caches.
void average(double& mean, double sample, int64_t samples, double smoothing = kSmoothing) {
  const double weight = std::max(smoothing, 1.0 / static_cast<double>(samples + 1));
  mean += weight * (sample - mean);
}

// The same for a duration, with a sample counted as at most kLongestSample times the mean so
// far: a hiccup (the machine busy elsewhere for a moment, a page fault, another thread's
// burst) then moves a mean by at most kSmoothing x (kLongestSample - 1), not by its whole
// excess, and no longer flips a verdict (a step 10x the mean moved it 90 %). A real change of
// speed still comes through: each sample moves the mean by up to that much.
constexpr double kLongestSample = 2.0;
void averageTime(double& mean, double seconds, int64_t samples, double smoothing = kSmoothing) {
  average(mean, samples > 0 ? std::min(seconds, kLongestSample * mean) : seconds, samples,
          smoothing);
}

// The measured speed-up below which a drafter in Auto is paused, `rounds` (>= 2) rounds after
// it started or a probe of it did. The verdict comes at kVerdictRounds; before that only a
// clear loss ends it (from the second round: 0.65x, after 4: 0.75x, after 8: 0.82x), so a
// probe of a hopeless drafter costs a round or two and a modest winner is not judged on a few
// rounds' luck. Later it stays on until it measures below 0.98x: near break-even, noise would
// otherwise pause a winner every few hundred rounds.
double pausedBelow(int64_t rounds) {
  constexpr int64_t kVerdict = SpeculationTuner::kVerdictRounds;
  if (rounds < kVerdict) return 1.0 - 0.5 / std::sqrt(static_cast<double>(rounds));
  return rounds == kVerdict ? 1.0 : 0.98;
}
}  // namespace

const char* drafterName(DrafterKind kind) {
  switch (kind) {
    case DrafterKind::Mtp: return "mtp";
    case DrafterKind::Ngram: return "ngram";
    case DrafterKind::Grammar: return "grammar";
  }
  return "?";
}

SpeculationTuner::SpeculationTuner(const SpeculationSettings& settings) { setSettings(settings); }

void SpeculationTuner::setSettings(const SpeculationSettings& settings) {
  validateSpeculationSettings(settings);
  std::lock_guard lock(mutex_);
  settings_ = settings;
}

SpeculationSettings SpeculationTuner::settings() const {
  std::lock_guard lock(mutex_);
  return settings_;
}

DrafterMode SpeculationTuner::modeLocked(DrafterKind kind) const {
  switch (kind) {
    case DrafterKind::Mtp: return settings_.mtp;
    case DrafterKind::Ngram: return settings_.ngram;
    case DrafterKind::Grammar: return settings_.grammar;
  }
  return DrafterMode::Off;
}

bool SpeculationTuner::allowsLocked(DrafterKind kind) const {
  const DrafterMode mode = modeLocked(kind);
  if (mode != DrafterMode::Auto) return mode == DrafterMode::On;
  const Drafter& d = drafters_[static_cast<size_t>(kind)];
  return d.enabled || tokens_ >= d.pausedUntil;
}

bool SpeculationTuner::allows(DrafterKind kind) const {
  std::lock_guard lock(mutex_);
  return allowsLocked(kind);
}

int SpeculationTuner::lengthInUseLocked(DrafterKind kind) const {
  const int most = kind == DrafterKind::Mtp ? settings_.mtpDepth : settings_.ngramMaxDraft;
  return modeLocked(kind) == DrafterMode::Auto ? tunedDepthLocked(kind, most) : most;
}

SpeculationSettings SpeculationTuner::draftSettings() const {
  std::lock_guard lock(mutex_);
  SpeculationSettings s = settings_;
  auto probing = [&](DrafterKind kind) {
    return drafters_[static_cast<size_t>(kind)].rounds % kDepthProbeEvery == kDepthProbeEvery - 1;
  };
  if (!probing(DrafterKind::Mtp)) s.mtpDepth = lengthInUseLocked(DrafterKind::Mtp);
  if (!probing(DrafterKind::Ngram)) s.ngramMaxDraft = lengthInUseLocked(DrafterKind::Ngram);
  return s;
}

void SpeculationTuner::recordDepthLocked(DrafterKind kind, int drafted, int accepted, int produced,
                                         double seconds) {
  DepthStats& depth = depth_[static_cast<size_t>(kind)];
  const int n = std::clamp(drafted, 1, kMaxDraftLength);
  for (size_t i = 0; i < kMaxDraftLength; ++i) {
    depth.reached[i] *= kDepthDecay;
    depth.kept[i] *= kDepthDecay;
  }
  // Draft position i (1-based) was verified when the pass got to its row: all before it were
  // kept and generation had not ended (produced counts the rows used).
  for (int i = 1; i <= n; ++i) {
    if (produced < i) break;
    depth.reached[static_cast<size_t>(i - 1)] += 1;
    if (accepted >= i) depth.kept[static_cast<size_t>(i - 1)] += 1;
  }
  const auto at = static_cast<size_t>(n - 1);
  averageTime(depth.seconds[at], seconds, depth.lengthRounds[at]++);
}

// Tokens per second for drafts capped at d: (1 + sum over i <= d of the chance that the first
// i drafts are kept) / (round time of a d-token draft). Times come from the lengths measured,
// a least-squares line through them for the others (a longer draft adds verify rows, and for
// MTP a chain step, each). Positions without enough evidence are assumed as good as the last
// known one, so the length only comes down on measurement.
int SpeculationTuner::tunedDepthLocked(DrafterKind kind, int most) const {
  const DepthStats& depth = depth_[static_cast<size_t>(kind)];
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < kMaxDraftLength; ++i) {
    if (depth.lengthRounds[i] < 2) continue;
    const double x = static_cast<double>(i + 1), y = depth.seconds[i];
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  // One length measured (MTP chains that never stop early): the line through it and a plain
  // step, whose work every round includes, until the length it picks gives a second point.
  if (n == 1 && plainSteps_ > 0) n += 1, sy += plainSeconds_;
  if (n < 2) return most;
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / n;
  auto verifySeconds = [&](int d) {
    const auto i = static_cast<size_t>(d - 1);
    return depth.lengthRounds[i] >= 2 ? depth.seconds[i] : intercept + slope * d;
  };
  int best = most;
  double bestRate = 0, keptSoFar = 1, expected = 1, rate = 1;
  for (int d = 1; d <= most; ++d) {
    const auto i = static_cast<size_t>(d - 1);
    if (depth.reached[i] >= kDepthEvidence) rate = depth.kept[i] / depth.reached[i];
    keptSoFar *= rate;
    expected += keptSoFar;
    const double seconds = verifySeconds(d);
    if (seconds <= 0) continue;
    const double tokensPerSecond = expected / seconds;
    if (tokensPerSecond > bestRate) bestRate = tokensPerSecond, best = d;
  }
  return best;
}

bool SpeculationTuner::wantsPlainSample() const {
  std::lock_guard lock(mutex_);
  return plainSteps_ < kFirstPlainSamples || tokens_ - lastPlainAt_ >= kPlainSampleEvery;
}

void SpeculationTuner::recordPlain(double seconds) {
  std::lock_guard lock(mutex_);
  // The clock that ends pauses runs only while speculation is allowed at all.
  if (settings_.mtp != DrafterMode::Off || settings_.ngram != DrafterMode::Off ||
      settings_.grammar != DrafterMode::Off)
    ++tokens_;
  if (!warmedUp_) {
    warmedUp_ = true;
    return;
  }
  averageTime(plainSeconds_, seconds, plainSteps_++);
  lastPlainAt_ = tokens_;
}

double SpeculationTuner::speedupLocked(const Drafter& d) const {
  if (plainSteps_ == 0 || d.rounds == 0 || d.secondsPerRound <= 0) return 0.0;
  return d.tokensPerRound / d.secondsPerRound * plainSeconds_;
}

void SpeculationTuner::recordRound(DrafterKind kind, int drafted, int accepted, int produced,
                                   double seconds) {
  std::lock_guard lock(mutex_);
  Drafter& d = drafters_[static_cast<size_t>(kind)];
  if (lengthTuned(kind)) recordDepthLocked(kind, drafted, accepted, produced, seconds);
  if (!d.enabled && tokens_ >= d.pausedUntil) {  // a probe starts
    d.enabled = true;
    d.recentRounds = 0;
  }
  averageTime(d.secondsPerRound, seconds, d.recentRounds, kRoundSmoothing);
  average(d.tokensPerRound, produced, d.recentRounds, kRoundSmoothing);
  ++d.recentRounds;
  ++d.rounds;
  d.drafted += drafted;
  d.accepted += accepted;
  d.firstAccepted += accepted > 0 ? 1 : 0;
  d.produced += produced;
  tokens_ += produced;
  if (modeLocked(kind) != DrafterMode::Auto || d.recentRounds < 2 || plainSteps_ == 0) return;
  if (speedupLocked(d) <
      pausedBelow(d.recentRounds)) {  // losing: pause, longer after every failed probe
    d.enabled = false;
    d.pausedUntil = tokens_ + std::min(kLongestPause, kFirstPause << std::min(d.failedProbes, 10));
    ++d.failedProbes;
  } else if (d.recentRounds == kVerdictRounds) {
    d.failedProbes = 0;
  }
}

std::vector<DrafterStats> SpeculationTuner::stats() const {
  std::lock_guard lock(mutex_);
  std::vector<DrafterStats> out;
  for (int k = 0; k < kDrafterKinds; ++k) {
    const auto kind = static_cast<DrafterKind>(k);
    const Drafter& d = drafters_[static_cast<size_t>(k)];
    DrafterStats s;
    s.name = drafterName(kind);
    s.mode = modeLocked(kind);
    s.active = allowsLocked(kind);
    s.rounds = d.rounds;
    s.drafted = d.drafted;
    s.accepted = d.accepted;
    s.firstAccepted = d.firstAccepted;
    s.acceptance = d.rounds ? static_cast<double>(d.firstAccepted) / static_cast<double>(d.rounds) : 0.0;
    s.tokensPerForward = d.rounds ? static_cast<double>(d.produced) / static_cast<double>(d.rounds) : 0.0;
    s.speedup = speedupLocked(d);
    if (lengthTuned(kind)) s.depth = lengthInUseLocked(kind);
    out.push_back(s);
  }
  return out;
}

}  // namespace spec
}  // namespace strata
