#pragma once
// `strata-cli bench serve`: what batching the server's slots buys. For each number of
// concurrent streams, that many sessions generate at once (as `serve --slots N` runs them: one
// thread and session per stream), with the engine batching their steps and, for comparison,
// without (each session running its own steps concurrently, the server before batching).
// Aggregate tokens/s is every stream's generated tokens over the wall time, prompts included;
// the scaling is its ratio to one stream measured in the same run (median over repeats).
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "strata/engine.h"

namespace strata {

struct ServeBenchOptions {
  std::filesystem::path model;     // a Hugging Face folder or a Strata container
  EngineSettings settings;         // threads, memory budget, kernels (speculation is turned off)
  std::vector<int> streams{1, 2, 4};
  int promptTokens = 16;           // random ids, different per stream
  int tokens = 32;                 // generated per stream (end-of-sequence ignored)
  int repeats = 3;
  uint64_t seed = 1;
};

struct ServeBenchRow {
  int streams = 0;
  bool batched = false;
  double tokS = 0;           // aggregate generated tokens per second (median)
  double perStreamTokS = 0;  // tokS / streams
  double scaling = 0;        // tokS over one batched stream's
  double meanBatch = 0;      // sessions per forward step (batched rows), 1 otherwise
  double seconds = 0;        // median wall time of a run
};

std::vector<ServeBenchRow> benchServe(const ServeBenchOptions& options,
                                      const std::function<void(const std::string&)>& progress = {});

}  // namespace strata
