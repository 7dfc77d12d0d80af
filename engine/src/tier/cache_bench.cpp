// benchCache: every policy and Belady's on one trace at one capacity.
#include "strata/cache_bench.h"

#include <string>

#include "strata/error.h"
#include "tier/cache_policy.h"
#include "tier/cache_replay.h"
#include "tier/routing_trace.h"

namespace strata {

CacheBenchReport benchCache(const CacheBenchOptions& options) {
  using namespace tier;
  const RoutingTrace trace = readRoutingTrace(options.tracePath);
  if (!options.capacity && !(options.capacityFraction > 0 && options.capacityFraction <= 1))
    throw Error("cache bench: capacity fraction must be in (0, 1], got " +
                std::to_string(options.capacityFraction));
  CacheBenchReport report;
  report.model = trace.header.model;
  report.layers = int(trace.header.layers.size());
  report.expertsPerLayer = trace.header.expertsPerLayer;
  report.expertBytes = trace.header.expertBytes;
  report.steps = trace.stepCount();
  report.capacity = options.capacity ? *options.capacity
                                     : capacityFromFraction(trace.header, options.capacityFraction);
  const std::vector<ExpertKey> accesses = traceAccesses(trace);
  report.accesses = accesses.size();
  const ReplayResult best = replayBelady(accesses, report.capacity);
  report.beladyHits = best.hits;
  report.beladyHitRate = best.hitRate();
  report.staticHitRate = replayBestStatic(accesses, report.capacity).hitRate();
  for (CachePolicyKind kind : allCachePolicies()) {
    const auto policy = makeCachePolicy(kind, report.capacity);
    const ReplayResult r = replayPolicy(accesses, *policy, report.capacity);
    CachePolicyResult result;
    result.policy = std::string(cachePolicyName(kind));
    result.isDefault = kind == defaultCachePolicy();
    result.hits = r.hits;
    result.hitRate = r.hitRate();
    // Belady's hits bound every policy's; with none to be had, every policy is optimal.
    result.ratioToBelady = best.hits ? double(r.hits) / double(best.hits) : 1.0;
    report.policies.push_back(result);
  }
  return report;
}

}  // namespace strata
