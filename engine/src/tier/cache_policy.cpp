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
