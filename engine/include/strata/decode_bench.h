#pragma once
// `strata-cli bench decode`: decode speed of a container under a memory budget, against the
// limit measured in the same run: per token, t_limit = max(bytes read from disk / disk
// bandwidth, weight bytes read from memory / memory bandwidth), both bandwidths measured here
// (the disk with the same I/O backend and depth, on the model's own expert files).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "strata/engine.h"

namespace strata {

struct DecodeBenchOptions {
  std::filesystem::path model;   // a Strata container
  EngineSettings settings;       // settings.memory.budgetBytes: the budget (0: see cacheFraction)
  // When >= 0: the budget is what the model needs besides experts plus this fraction of all
  // expert bytes (so "cache at 20 % of the experts" is 0.2 on any model).
  double expertFraction = -1;
  int promptTokens = 16;
  int tokens = 32;               // decode steps timed
  int warmupTokens = 0;          // decode steps before the timed ones (cache warm-up)
  std::filesystem::path recordTrace;  // routing trace (tier/routing_trace.h format); empty: none
  uint64_t seed = 1;
};

struct DecodeBenchResult {
  MemoryPlan plan;
  double tokS = 0;
  double limitTokS = 0;
  double ratio = 0;                 // tokS / limitTokS
  // 1 / the median step time: on a shared machine, steps that another tenant slowed move the
  // mean (tokS) but not this, so it is the better number for comparing two builds.
  double medianTokS = 0;
  double hitRate = 0;               // pinned + RAM hits over all experts needed while decoding
  double bytesReadPerToken = 0;
  double stallSecondsPerToken = 0;
  double diskGbps = 0;              // expert reads, same backend and depth
  double decodeReadGbps = 0;        // bytes read while decoding / decode time
  double memGbps = 0;               // memory read bandwidth, the engine's threads
  double prefillSeconds = 0;
  double pinnedLoadSeconds = 0;     // waiting for the pinned set after opening
  double snapshotSeconds = 0;       // one Engine::tierSnapshot() call (median)
  double prefetchPrecision = 0;
  double prefetchRecall = 0;
  double guessesDroppedPerToken = 0;  // predicted experts not read: the layer did not use them
  int64_t peakRssBytes = 0;         // process peak RSS from opening the model to the end
  int64_t baselineRssBytes = 0;     // RSS before opening the model (the program itself)
  int64_t budgetBytes = 0;
  TierSnapshot tiers;               // at the end
};

// `progress` sees a line of text per phase.
DecodeBenchResult benchDecode(const DecodeBenchOptions& options,
                              const std::function<void(const std::string&)>& progress = {});

}  // namespace strata
