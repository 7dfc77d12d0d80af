#pragma once
// The KV cache of one recent conversation opening, shared by the engine's sessions: a new
// conversation that starts with the same system prompt (and any further common tokens) copies
// those rows instead of computing them, so a shared system prompt is prefilled once per
// engine, not once per conversation. Thread-safe.
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "kv/kv_cache.h"

namespace strata::model {

class PrefixCache {
 public:
  explicit PrefixCache(int64_t maxTokens) : maxTokens_(maxTokens) {}

  // Copies the longest prefix of `context` held here (at most context.size() - 1 tokens: the
  // last token must be evaluated for its logits) into the empty `cache`; returns its length.
  int64_t restore(std::span<const int32_t> context, kv::KvCache& cache);
  // Keeps the first min(tokens.size(), maxTokens) tokens of a conversation that `cache` holds.
  void offer(std::span<const int32_t> tokens, const kv::KvCache& cache);

 private:
  int64_t maxTokens_;
  std::mutex mutex_;
  std::vector<int32_t> tokens_;
  std::optional<kv::KvCache> cache_;
};

}  // namespace strata::model
