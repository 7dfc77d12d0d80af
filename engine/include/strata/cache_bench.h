#pragma once
// Expert-cache policy benchmark, run by `strata-cli bench cache`: replays a routing trace
// (format: engine/src/tier/routing_trace.h) through each replacement policy and through
// Belady's optimal offline policy at one capacity, so each policy's hit rate comes with the
// best any policy could reach on the same accesses, and the best fixed set of experts (the
// best an online policy can do when routing has no order to learn from).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata {

struct CacheBenchOptions {
  std::string tracePath;
  // Capacity in experts; when unset, capacityFraction of all (layer, expert) pairs.
  std::optional<size_t> capacity;
  double capacityFraction = 0.2;
};

struct CachePolicyResult {
  std::string policy;      // "lru", "slru", ...
  bool isDefault = false;  // the policy the expert store uses unless told otherwise
  uint64_t hits = 0;
  double hitRate = 0;        // hits / accesses, cold start
  double ratioToBelady = 0;  // hitRate / Belady's (1 when Belady's is 0 too)
};

struct CacheBenchReport {
  std::string model;
  int layers = 0, expertsPerLayer = 0, steps = 0;
  uint64_t expertBytes = 0;
  size_t capacity = 0;  // experts
  uint64_t accesses = 0;
  uint64_t beladyHits = 0;
  double beladyHitRate = 0;
  // The best fixed set of experts (tier/cache_replay.h, replayBestStatic): on independent
  // routing no online policy beats it, so Belady's lead over it is foresight of the order.
  double staticHitRate = 0;
  std::vector<CachePolicyResult> policies;
};

CacheBenchReport benchCache(const CacheBenchOptions& options);

}  // namespace strata
