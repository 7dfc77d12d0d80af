#pragma once
// A session's in-memory KV cache. Per layer and token it holds only what GLM-5 needs to attend
// later (glm5-architecture.md §3.5, §3.11): the normalized latent c (kv_lora_rank), the roped
// shared key k_pe (qk_rope_head_dim) and, on layers with an indexer, the indexer key
// (index_head_dim, post-LayerNorm, post-RoPE). Expanded K/V are never stored. Rows are held in
// the cache's precision (kv_rows.h): a 16-bit cache takes half the memory of an f32 one.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kv/kv_rows.h"
#include "strata/kv_precision.h"

namespace strata::kv {

struct CacheDims {
  int kvLoraRank = 0;
  int ropeDim = 0;
  int indexDim = 0;
};

struct LayerCache {
  KvRows latent;    // [tokens x kvLoraRank]
  KvRows ropeKey;   // [tokens x qkRopeHeadDim]
  KvRows indexKey;  // [tokens x indexHeadDim], empty on IndexShare "shared" layers

  LayerCache() = default;
  LayerCache(const CacheDims& d, KvPrecision p)
      : latent(d.kvLoraRank, p), ropeKey(d.ropeDim, p), indexKey(d.indexDim, p) {}
  LayerCache(KvRows l, KvRows r, KvRows i)
      : latent(std::move(l)), ropeKey(std::move(r)), indexKey(std::move(i)) {}
};

class KvCache {
 public:
  KvCache(int layerCount, CacheDims dims, KvPrecision precision = KvPrecision::F32)
      : dims_(dims), layers_(static_cast<size_t>(layerCount), LayerCache(dims, precision)),
        precision_(precision) {}
  KvPrecision precision() const { return precision_; }

  int64_t length() const { return length_; }
  const CacheDims& dims() const { return dims_; }
  LayerCache& layer(int i) { return layers_[static_cast<size_t>(i)]; }
  const LayerCache& layer(int i) const { return layers_[static_cast<size_t>(i)]; }
  int layerCount() const { return static_cast<int>(layers_.size()); }

  // Called once per forward pass after every layer appended its rows for `count` tokens.
  void commit(int64_t count) { length_ += count; }

  // Forgets everything after the first `tokens` tokens (edit, regenerate, speculative rollback).
  void truncate(int64_t tokens);
  // Becomes a copy of the first `tokens` tokens of `other` (same dimensions).
  void copyPrefix(const KvCache& other, int64_t tokens);
  // Re-encodes every row in `precision` (a saved session resumed under another setting).
  void convertTo(KvPrecision precision);

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
    l.latent.truncateRows(tokens);
    l.ropeKey.truncateRows(tokens);
    l.indexKey.truncateRows(tokens);
  }
  length_ = tokens;
}

inline void KvCache::copyPrefix(const KvCache& other, int64_t tokens) {
  dims_ = other.dims_;
  precision_ = other.precision_;
  layers_.resize(other.layers_.size());
  for (size_t i = 0; i < layers_.size(); ++i) {
    const LayerCache& from = other.layers_[i];
    layers_[i] = LayerCache(from.latent.prefix(tokens), from.ropeKey.prefix(tokens),
                            from.indexKey.prefix(tokens));
  }
  length_ = tokens;
}

inline void KvCache::convertTo(KvPrecision precision) {
  if (precision == precision_) return;
  for (LayerCache& l : layers_)
    l = LayerCache(l.latent.convertedTo(precision), l.ropeKey.convertedTo(precision),
                   l.indexKey.convertedTo(precision));
  precision_ = precision;
}

inline int64_t KvCache::bytes() const {
  int64_t total = 0;
  for (const LayerCache& l : layers_) total += l.latent.bytes() + l.ropeKey.bytes() + l.indexKey.bytes();
  return total;
}

}  // namespace strata::kv
