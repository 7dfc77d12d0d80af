#include "model/prefix_cache.h"

#include <algorithm>

namespace strata::model {

int64_t PrefixCache::restore(std::span<const int32_t> context, kv::KvCache& cache) {
  std::lock_guard lock(mutex_);
  if (!cache_ || cache.length() != 0 || context.empty()) return 0;
  const auto mismatch = std::mismatch(tokens_.begin(), tokens_.end(), context.begin(), context.end());
  const int64_t shared = std::min<int64_t>(mismatch.first - tokens_.begin(),
                                           static_cast<int64_t>(context.size()) - 1);
  if (shared <= 0) return 0;
  cache.copyPrefix(*cache_, shared);
  return shared;
}

void PrefixCache::offer(std::span<const int32_t> tokens, const kv::KvCache& cache) {
  const int64_t keep = std::min<int64_t>({static_cast<int64_t>(tokens.size()), cache.length(), maxTokens_});
  if (keep <= 0) return;
  {
    // Already held (another conversation with this opening): no copy.
    std::lock_guard lock(mutex_);
    if (cache_ && static_cast<int64_t>(tokens_.size()) >= keep &&
        std::equal(tokens.begin(), tokens.begin() + keep, tokens_.begin()))
      return;
  }
  kv::KvCache copy(0, cache.dims(), cache.precision());
  copy.copyPrefix(cache, keep);
  std::lock_guard lock(mutex_);
  tokens_.assign(tokens.begin(), tokens.begin() + keep);
  cache_ = std::move(copy);
}

}  // namespace strata::model
