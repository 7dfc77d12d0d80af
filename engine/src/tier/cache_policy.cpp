#include "tier/cache_policy.h"

#include <string>

#include "strata/error.h"
#include "tier/policies.h"

namespace strata::tier {

std::string expertKeyName(ExpertKey k) {
  return "layer " + std::to_string(keyLayer(k)) + " expert " + std::to_string(keyExpert(k));
}

const std::vector<CachePolicyKind>& allCachePolicies() {
  static const std::vector<CachePolicyKind> kinds = {
      CachePolicyKind::Lru, CachePolicyKind::Slru, CachePolicyKind::Arc, CachePolicyKind::TinyLfu,
      CachePolicyKind::WindowLfu};
  return kinds;
}

std::string_view cachePolicyName(CachePolicyKind kind) {
  switch (kind) {
    case CachePolicyKind::Lru:
      return "lru";
    case CachePolicyKind::Slru:
      return "slru";
    case CachePolicyKind::Arc:
      return "arc";
    case CachePolicyKind::TinyLfu:
      return "tinylfu";
    case CachePolicyKind::WindowLfu:
      return "wlfu";
  }
  return "?";
}

std::optional<CachePolicyKind> parseCachePolicy(std::string_view name) {
  for (CachePolicyKind kind : allCachePolicies())
    if (cachePolicyName(kind) == name) return kind;
  return std::nullopt;
}

// Window-LFU had the best hit rate, relative to Belady's, on 17 of the 18 traces and
// capacities measured and tied W-TinyLFU on the last (tools/traces/README.md,
// `tools/traces/cache_table.sh`): 0.79-0.95 of Belady's on Zipf routing (skew 0.8-1.2, 10-40%
// capacity) where LRU had 0.70-0.93 and W-TinyLFU 0.77-0.95; 0.81-0.90 on the medium
// synthetic model's decode; 0.66-0.83 on the tiny model's chats where LRU had 0.00-0.61 (a
// step's experts outnumber a 10% cache there: LRU's worst case, a loop larger than the cache).
CachePolicyKind defaultCachePolicy() { return CachePolicyKind::WindowLfu; }

std::unique_ptr<CachePolicy> makeCachePolicy(CachePolicyKind kind, size_t capacityExperts) {
  switch (kind) {
    case CachePolicyKind::Lru:
      return makeLruPolicy();
    case CachePolicyKind::Slru:
      return makeSlruPolicy(capacityExperts);
    case CachePolicyKind::Arc:
      return makeArcPolicy(capacityExperts);
    case CachePolicyKind::TinyLfu:
      return makeTinyLfuPolicy(capacityExperts);
    case CachePolicyKind::WindowLfu:
      return makeWindowLfuPolicy(capacityExperts);
  }
  throw Error("expert cache: unknown policy kind " + std::to_string(int(kind)));
}

}  // namespace strata::tier
