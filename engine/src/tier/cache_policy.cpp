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
      CachePolicyKind::Lru, CachePolicyKind::Slru, CachePolicyKind::Arc, CachePolicyKind::TinyLfu};
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
  }
  return "?";
}

std::optional<CachePolicyKind> parseCachePolicy(std::string_view name) {
  for (CachePolicyKind kind : allCachePolicies())
    if (cachePolicyName(kind) == name) return kind;
  return std::nullopt;
}

// W-TinyLFU had the best hit rate of the four, relative to Belady's, on every trace and
// capacity measured (tools/traces/README.md: `tools/traces/cache_table.sh`): 0.77-0.95 of
// Belady's on Zipf routing (skew 0.8-1.2, 10-40% capacity) where LRU had 0.70-0.93, and
// 0.59-0.80 on the tiny model's chats where LRU had 0.00-0.57 (a step's experts outnumber a
// 10% cache there: LRU's worst case, a loop larger than the cache).
CachePolicyKind defaultCachePolicy() { return CachePolicyKind::TinyLfu; }

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
  }
  throw Error("expert cache: unknown policy kind " + std::to_string(int(kind)));
}

}  // namespace strata::tier
