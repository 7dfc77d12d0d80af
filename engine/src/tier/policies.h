#pragma once
// Constructors of the concrete policies, each in its own file; callers use makeCachePolicy.
#include <cstddef>
#include <memory>

#include "tier/cache_policy.h"

namespace strata::tier {

std::unique_ptr<CachePolicy> makeLruPolicy();
std::unique_ptr<CachePolicy> makeSlruPolicy(size_t capacity);
std::unique_ptr<CachePolicy> makeArcPolicy(size_t capacity);
std::unique_ptr<CachePolicy> makeTinyLfuPolicy(size_t capacity);
std::unique_ptr<CachePolicy> makeWindowLfuPolicy(size_t capacity);

}  // namespace strata::tier
