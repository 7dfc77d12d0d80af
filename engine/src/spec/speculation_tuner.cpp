#include "spec/speculation_tuner.h"

#include <algorithm>
#include <string>

#include "strata/error.h"

namespace strata {

void validateSpeculationSettings(const SpeculationSettings& s) {
  auto require = [](bool ok, const char* name, const char* range, int value) {
    if (!ok) throw Error(std::string(name) + ": must be " + range + ", got " + std::to_string(value));
  };
  require(s.mtpDepth >= 1 && s.mtpDepth <= 8, "mtp depth", "in [1, 8]", s.mtpDepth);
  require(s.ngramMaxDraft >= 1 && s.ngramMaxDraft <= 32, "n-gram draft length", "in [1, 32]",
          s.ngramMaxDraft);
  require(s.ngramMinMatch >= 1 && s.ngramMinMatch <= 8, "n-gram match length", "in [1, 8]",
          s.ngramMinMatch);
  if (!(s.mtpMinProbability >= 0.0 && s.mtpMinProbability <= 1.0))
    throw Error("mtp minimum probability: must be in [0, 1], got " + std::to_string(s.mtpMinProbability));
}

double SpeculationSummary::tokensPerForward() const {
  return forwards > 0 ? static_cast<double>(forwards + accepted) / static_cast<double>(forwards) : 0.0;
}

namespace spec {
namespace {
constexpr double kSmoothing = 0.1;        // weight of the newest sample in the moving averages
constexpr int64_t kWarmRounds = 4;        // rounds before the first verdict
constexpr int64_t kProbeRounds = 2;       // rounds before a verdict on a drafter that lost before
constexpr int64_t kFirstPause = 128;      // tokens before the first probe
constexpr int64_t kLongestPause = 4096;
constexpr int64_t kPlainSampleEvery = 128;  // tokens between plain measurements

void average(double& mean, double sample, int64_t samples) {
  mean = samples == 0 ? sample : mean + kSmoothing * (sample - mean);
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

bool SpeculationTuner::wantsPlainSample() const {
  std::lock_guard lock(mutex_);
  return plainSteps_ == 0 || tokens_ - lastPlainAt_ >= kPlainSampleEvery;
}

void SpeculationTuner::recordPlain(double seconds) {
  std::lock_guard lock(mutex_);
  average(plainSeconds_, seconds, plainSteps_++);
  // The clock that ends pauses runs only while speculation is allowed at all.
  if (settings_.mtp != DrafterMode::Off || settings_.ngram != DrafterMode::Off ||
      settings_.grammar != DrafterMode::Off)
    ++tokens_;
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
  if (!d.enabled && tokens_ >= d.pausedUntil) {  // a probe starts
    d.enabled = true;
    d.recentRounds = 0;
  }
  average(d.secondsPerRound, seconds, d.recentRounds);
  average(d.tokensPerRound, produced, d.recentRounds);
  ++d.recentRounds;
  ++d.rounds;
  d.drafted += drafted;
  d.accepted += accepted;
  d.firstAccepted += accepted > 0 ? 1 : 0;
  d.produced += produced;
  tokens_ += produced;
  const int64_t verdictAfter = d.failedProbes > 0 ? kProbeRounds : kWarmRounds;
  if (modeLocked(kind) != DrafterMode::Auto || d.recentRounds < verdictAfter || plainSteps_ == 0)
    return;
  if (speedupLocked(d) < 1.0) {  // losing: pause, longer after every failed probe
    d.enabled = false;
    d.pausedUntil = tokens_ + std::min(kLongestPause, kFirstPause << std::min(d.failedProbes, 10));
    ++d.failedProbes;
  } else if (d.recentRounds == verdictAfter) {
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
    out.push_back(s);
  }
  return out;
}

}  // namespace spec
}  // namespace strata
