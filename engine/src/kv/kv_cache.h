#pragma once
// A session's in-memory KV cache. Per layer and token it holds only what GLM-5 needs to attend
// later (glm5-architecture.md §3.5, §3.11): the normalized latent c (kv_lora_rank), the roped
// shared key k_pe (qk_rope_head_dim) and, on layers with an indexer, the indexer key
// (index_head_dim, post-LayerNorm, post-RoPE). Expanded K/V are never stored.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::kv {

struct LayerCache {
  std::vector<float> latent;    // [tokens x kvLoraRank]
  std::vector<float> ropeKey;   // [tokens x qkRopeHeadDim]
  std::vector<float> indexKey;  // [tokens x indexHeadDim], empty on IndexShare "shared" layers
};

struct CacheDims {
  int kvLoraRank = 0;
  int ropeDim = 0;
  int indexDim = 0;
};

class KvCache {
 public:
  KvCache(int layerCount, CacheDims dims) : dims_(dims), layers_(static_cast<size_t>(layerCount)) {}

  int64_t length() const { return length_; }
  const CacheDims& dims() const { return dims_; }
  LayerCache& layer(int i) { return layers_[static_cast<size_t>(i)]; }
  const LayerCache& layer(int i) const { return layers_[static_cast<size_t>(i)]; }

  // Called once per forward pass after every layer appended its rows for `count` tokens.
  void commit(int64_t count) { length_ += count; }

  // Forgets everything after the first `tokens` tokens (edit, regenerate, speculative rollback).
  void truncate(int64_t tokens);

  int64_t bytes() const;

 private:
  CacheDims dims_;
  std::vector<LayerCache> layers_;
  int64_t length_ = 0;
};

inline void KvCache::truncate(int64_t tokens) {
  if (tokens >= length_) return;
  for (LayerCache& l : layers_) {
    l.latent.resize(static_cast<size_t>(tokens * dims_.kvLoraRank));
    l.ropeKey.resize(static_cast<size_t>(tokens * dims_.ropeDim));
    if (!l.indexKey.empty()) l.indexKey.resize(static_cast<size_t>(tokens * dims_.indexDim));
  }
  length_ = tokens;
}

inline int64_t KvCache::bytes() const {
  int64_t total = 0;
  for (const LayerCache& l : layers_)
    total += static_cast<int64_t>((l.latent.size() + l.ropeKey.size() + l.indexKey.size()) *
                                  sizeof(float));
  return total;
}

}  // namespace strata::kv
