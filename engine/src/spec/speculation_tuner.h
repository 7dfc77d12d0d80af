#pragma once
// Self-tuning speculation: per drafter, measured acceptance and net speed against plain
// decoding measured in the same run; a drafter in Auto mode that loses is switched off and
// probed again after a pause that doubles with every failed probe. Timings are averaged so
// that a hiccup of the machine does not flip a verdict. The MTP chain's length and
// the n-gram drafts' length are tuned too: from each draft position's measured acceptance and
// each draft length's measured round time, the length (up to the setting) with the most tokens
// per second. Shared by an
// engine's sessions (thread-safe), so what one conversation learns the next one uses.
#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

#include "strata/speculation.h"

namespace strata::spec {

enum class DrafterKind { Mtp = 0, Ngram = 1, Grammar = 2 };
constexpr int kDrafterKinds = 3;
const char* drafterName(DrafterKind kind);

class SpeculationTuner {
 public:
  explicit SpeculationTuner(const SpeculationSettings& settings);

  void setSettings(const SpeculationSettings& settings);
  SpeculationSettings settings() const;

  // Whether `kind` may propose drafts now.
  bool allows(DrafterKind kind) const;
  // The settings the drafters use now: the configured ones, with mtpDepth and ngramMaxDraft
  // lowered to the measured best for a drafter in Auto (every kDepthProbeEvery-th round of it
  // drafts the full length, so the later positions stay measured).
  SpeculationSettings draftSettings() const;
  // A plain decoding step took `seconds` (one token). The engine's first is not a sample.
  void recordPlain(double seconds);
  // Plain decoding has no recent measurement while drafters keep proposing: the caller should
  // run one plain step so the comparison stays fair as the context grows.
  bool wantsPlainSample() const;
  // A verify pass with `kind`'s drafts: `drafted` proposed, `accepted` kept (a prefix),
  // `produced` tokens emitted by it (accepted + 1 unless generation ended), drafting included.
  void recordRound(DrafterKind kind, int drafted, int accepted, int produced, double seconds);

  std::vector<DrafterStats> stats() const;

  // Rounds a drafter in Auto runs before its verdict (unless it loses clearly sooner).
  static constexpr int kVerdictRounds = 16;
  static constexpr int kDepthProbeEvery = 16;
  static constexpr int kMaxMtpDepth = 8;      // SpeculationSettings::mtpDepth's upper bound
  static constexpr int kMaxDraftLength = 32;  // ngramMaxDraft's: the longest draft of any drafter

 private:
  struct Drafter {
    int64_t rounds = 0, drafted = 0, accepted = 0, firstAccepted = 0, produced = 0;
    // Exponential moving averages of the recent rounds (the context keeps growing).
    double secondsPerRound = 0, tokensPerRound = 0;
    int64_t recentRounds = 0;   // rounds since it was (re)enabled
    bool enabled = true;        // Auto: winning or on probation
    int64_t pausedUntil = 0;    // plain tokens count at which a paused drafter is probed
    int failedProbes = 0;
  };
  // MTP and n-grams: per draft position, rounds that verified it and kept it (decayed, recent
  // rounds count most); per draft length, the mean round time. Index 0 = position / length 1.
  struct DepthStats {
    std::array<double, kMaxDraftLength> reached{}, kept{};
    std::array<double, kMaxDraftLength> seconds{};
    std::array<int64_t, kMaxDraftLength> lengthRounds{};
  };
  static bool lengthTuned(DrafterKind kind) { return kind != DrafterKind::Grammar; }
  void recordDepthLocked(DrafterKind kind, int drafted, int accepted, int produced, double seconds);
  int tunedDepthLocked(DrafterKind kind, int most) const;
  int lengthInUseLocked(DrafterKind kind) const;  // what draftSettings() gives outside probes
  double speedupLocked(const Drafter& d) const;
  bool allowsLocked(DrafterKind kind) const;
  DrafterMode modeLocked(DrafterKind kind) const;

  mutable std::mutex mutex_;
  SpeculationSettings settings_;
  std::array<Drafter, kDrafterKinds> drafters_;
  std::array<DepthStats, 2> depth_;  // MTP, n-grams (DrafterKind order)
  double plainSeconds_ = 0;      // EMA of a plain step
  int64_t plainSteps_ = 0;
  bool warmedUp_ = false;        // the first plain step (one-time costs) has passed
  int64_t tokens_ = 0;           // tokens produced, plain or speculative (the tuner's clock)
  int64_t lastPlainAt_ = 0;      // tokens_ at the latest plain measurement
};

}  // namespace strata::spec
