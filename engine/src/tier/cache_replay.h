#pragma once
// Replays a sequence of expert accesses through a cache of a fixed capacity, under an online
// policy or under Belady's optimal offline policy, and counts hits. Both follow the store's
// protocol (cache_policy.h): every miss is inserted after evicting down to capacity, so
// Belady's result is the best any policy of that kind can do on the sequence.
//
// The cache starts empty and the hit rate is over all accesses: cold misses count, so
// short traces understate what a warm cache achieves, equally for every policy.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tier/cache_policy.h"
#include "tier/routing_trace.h"

namespace strata::tier {

struct ReplayResult {
  size_t capacity = 0;
  uint64_t accesses = 0;
  uint64_t hits = 0;
  size_t peakResident = 0;  // most keys resident at once; never above capacity
  double hitRate() const { return accesses ? double(hits) / double(accesses) : 0.0; }
};

// The trace's accesses in replay order: line by line, ascending experts within a line.
std::vector<ExpertKey> traceAccesses(const RoutingTrace& trace);

// Default capacity: `fraction` of all (layer, expert) pairs, at least 1.
size_t capacityFromFraction(const RoutingTraceHeader& header, double fraction);

// Keeps its own record of what is resident (the store's view) and throws strata::Error if
// the policy disagrees with it: evicts a key that is not resident, reports a wrong size or
// lets the cache grow past capacity.
ReplayResult replayPolicy(std::span<const ExpertKey> accesses, CachePolicy& policy,
                          size_t capacity);

// Belady's MIN: on a miss with a full cache, evict the resident key whose next use is
// furthest away (never used again counts as furthest). O(n log n) with precomputed next
// uses and a lazily cleaned max-heap.
ReplayResult replayBelady(std::span<const ExpertKey> accesses, size_t capacity);

// The best fixed set: the (capacity - 1) keys used most in the whole sequence stay once
// loaded (ties: the lower key), every other key passes through the one slot left. It knows
// each key's count in advance but nothing of the order. When keys are used independently of
// one another (the independent reference model) keeping the most probable keys is the best
// any online policy can do (Aho, Denning & Ullman, 1971), so on such routing the gap from
// this to Belady's is what only foresight of the order wins; an online policy can beat this
// bound only where the order carries information (consecutive tokens routing alike).
ReplayResult replayBestStatic(std::span<const ExpertKey> accesses, size_t capacity);

}  // namespace strata::tier
