#pragma once
// A session's in-memory KV cache. Per layer and token it holds only what GLM-5 needs to attend
// later (glm5-architecture.md §3.5, §3.11): the normalized latent c (kv_lora_rank), the roped
// shared key k_pe (qk_rope_head_dim) and, on layers with an indexer, the indexer key
// (index_head_dim, post-LayerNorm, post-RoPE). Expanded K/V are never stored.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/kv_precision.h"

namespace strata::kv {

// Rounds values to `precision` in place (nearest even), so what attention reads is exactly
// what a 16-bit cache or file holds.
void roundToPrecision(float* values, size_t count, KvPrecision precision);

struct LayerCache {
  std::vector<float> latent;    // [tokens x kvLoraRank]
  std::vector<float> ropeKey;   // [tokens x qkRopeHeadDim]
  std::vector<float> indexKey;  // [tokens x indexHeadDim], empty on IndexShare "shared" layers
  KvPrecision precision = KvPrecision::F32;  // rows are rounded to it as they are written

  void round(float* rows, size_t count) const { roundToPrecision(rows, count, precision); }
};

struct CacheDims {
  int kvLoraRank = 0;
  int ropeDim = 0;
  int indexDim = 0;
};

class KvCache {
 public:
  KvCache(int layerCount, CacheDims dims, KvPrecision precision = KvPrecision::F32)
      : dims_(dims), layers_(static_cast<size_t>(layerCount)), precision_(precision) {
    for (LayerCache& l : layers_) l.precision = precision;
  }
  KvPrecision precision() const { return precision_; }

  int64_t length() const { return length_; }
  const CacheDims& dims() const { return dims_; }
  LayerCache& layer(int i) { return layers_[static_cast<size_t>(i)]; }
  const LayerCache& layer(int i) const { return layers_[static_cast<size_t>(i)]; }

  // Called once per forward pass after every layer appended its rows for `count` tokens.
  void commit(int64_t count) { length_ += count; }

  // Forgets everything after the first `tokens` tokens (edit, regenerate, speculative rollback).
  void truncate(int64_t tokens);
  // Becomes a copy of the first `tokens` tokens of `other` (same dimensions).
  void copyPrefix(const KvCache& other, int64_t tokens);

  int64_t bytes() const;

 private:
  CacheDims dims_;
  std::vector<LayerCache> layers_;
  KvPrecision precision_;
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

inline void KvCache::copyPrefix(const KvCache& other, int64_t tokens) {
  dims_ = other.dims_;
  precision_ = other.precision_;
  layers_.assign(other.layers_.size(), LayerCache{});
  for (size_t i = 0; i < layers_.size(); ++i) {
    const LayerCache& from = other.layers_[i];
    LayerCache& to = layers_[i];
    to.precision = from.precision;
    to.latent.assign(from.latent.begin(), from.latent.begin() + tokens * dims_.kvLoraRank);
    to.ropeKey.assign(from.ropeKey.begin(), from.ropeKey.begin() + tokens * dims_.ropeDim);
    if (!from.indexKey.empty())
      to.indexKey.assign(from.indexKey.begin(), from.indexKey.begin() + tokens * dims_.indexDim);
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
