#pragma once
// `strata-cli bench decode`: decode speed of a container under a memory budget, against the
// limit measured in the same run: per token, t_limit = max(bytes read from disk / disk
// bandwidth, weight bytes read from memory / memory bandwidth), both bandwidths measured here
// (the disk with the same I/O backend and depth, on the model's own expert files; the memory
// between every 8 decoded tokens, each segment of 8 compared with the probes either side).
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
  // The median over segments of 8 tokens of each segment's limit, and of its tok/s over its
  // limit (so ratio is close to, not exactly, tokS / limitTokS).
  double limitTokS = 0;
  double ratio = 0;
  int segments = 0;
  // 1 / the median step time: on a shared machine, steps that another tenant slowed move the
  // mean (tokS) but not this, so it is the better number for comparing two builds.
  double medianTokS = 0;
  double hitRate = 0;               // pinned + RAM hits over all experts needed while decoding
  double bytesReadPerToken = 0;
  double stallSecondsPerToken = 0;
  double diskGbps = 0;              // expert reads, same backend and depth
  double decodeReadGbps = 0;        // bytes read while decoding / decode time
  double memGbps = 0;               // memory read bandwidth, the engine's threads: median probe
  double memGbpsMin = 0, memGbpsMax = 0;  // the slowest and fastest probe
  double prefillSeconds = 0;
  double pinnedLoadSeconds = 0;     // waiting for the pinned set after opening
  double snapshotSeconds = 0;       // one Engine::tierSnapshot() call (median)
  double prefetchPrecision = 0;
  double prefetchRecall = 0;
  double guessesDroppedPerToken = 0;  // predicted experts not read: the layer did not use them
  // Process RSS less the memory probe's buffer (256 MiB, resident from before the model opens).
  int64_t peakRssBytes = 0;      // peak from opening the model to the end
  int64_t baselineRssBytes = 0;  // before opening the model (the program itself)
  int64_t budgetBytes = 0;
  TierSnapshot tiers;               // at the end
};

// `progress` sees a line of text per phase.
DecodeBenchResult benchDecode(const DecodeBenchOptions& options,
                              const std::function<void(const std::string&)>& progress = {});

}  // namespace strata
