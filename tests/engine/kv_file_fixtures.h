#pragma once
// Deterministic KV caches for the KV file tests: every vector element is a pure function of
// (layer, vector, position, token id, element), so a conversation's expected cache can be
// rebuilt anywhere (a killed child's parent, a truncated copy). Values include the hard cases of
// 16-bit rounding (exact ties, f16 subnormals and overflow, signed zeros). Rounding references
// are independent of the engine: bf16 by comparing both neighbours in double, f16 by the
// compiler's _Float16.
#include <QString>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_file.h"

namespace kvtest {

using strata::KvPrecision;
using strata::kv::CacheDims;
using strata::kv::KvCache;
using strata::kv::KvFileHeader;
using strata::kv::LayerCache;

inline constexpr char kFingerprint[] = "0123456789abcdef";

inline KvFileHeader makeHeader(int layers, CacheDims dims, std::vector<bool> flags,
                               KvPrecision precision) {
  KvFileHeader h;
  h.modelFingerprint = kFingerprint;
  h.layerCount = layers;
  h.dims = dims;
  h.layerHasIndexKey = std::move(flags);
  h.precision = precision;
  return h;
}

inline uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// vector: 0 latent, 1 rope key, 2 index key.
inline float kvValue(int layer, int vector, int64_t pos, int32_t id, int64_t element) {
  const uint64_t r = splitmix(
      splitmix(splitmix(static_cast<uint64_t>(layer) * 3 + vector) ^ static_cast<uint64_t>(pos)) ^
      (static_cast<uint64_t>(static_cast<uint32_t>(id)) << 20) ^ static_cast<uint64_t>(element));
  const uint32_t sign = static_cast<uint32_t>(r >> 63) << 31;
  const uint32_t mantissa = static_cast<uint32_t>(r >> 8) & 0x7fffffu;
  const auto exponent = [&](int lo, int span) {
    return static_cast<uint32_t>(127 + lo + static_cast<int>((r >> 32) % span)) << 23;
  };
  uint32_t bits;
  switch (r & 15) {
    case 0:
      bits = sign | exponent(-4, 8) | (mantissa & ~0xffffu) | 0x8000u;
      break;  // bf16 tie
    case 1:
      bits = sign | exponent(-4, 8) | (mantissa & ~0x1fffu) | 0x1000u;
      break;  // f16 tie
    case 2:
      bits = sign | exponent(-26, 12) | mantissa;
      break;  // f16 subnormal or zero
    case 3:
      bits = sign | exponent(16, 1) | mantissa;
      break;  // beyond f16: infinity
    case 4:
      bits = sign;
      break;  // +-0
    default:
      bits = sign | exponent(-8, 16) | mantissa;
      break;
  }
  return std::bit_cast<float>(bits);
}

inline float bf16Reference(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t down = bits & 0xffff0000u, up = down + 0x10000u;
  const double toDown = std::fabs(double{x} - std::bit_cast<float>(down));
  const double toUp = std::fabs(double{std::bit_cast<float>(up)} - x);
  if (toDown != toUp) return std::bit_cast<float>(toDown < toUp ? down : up);
  return std::bit_cast<float>((down & 0x10000u) ? up : down);  // tie: the even one
}

inline float rounded(float x, KvPrecision p) {
  switch (p) {
    case KvPrecision::F32:
      return x;
    case KvPrecision::BF16:
      return bf16Reference(x);
    case KvPrecision::F16:
      return static_cast<float>(static_cast<_Float16>(x));
  }
  return x;
}

// Appends rows for tokens[cache.length()...] (after cutting the cache to what it shares with
// `tokens`, as a session does on an edit), optionally rounded to `round`.
inline void extendCache(KvCache& cache, const KvFileHeader& h, std::span<const int32_t> tokens,
                        std::span<const int32_t> cached, KvPrecision round = KvPrecision::F32) {
  int64_t shared = 0;
  while (shared < cache.length() && shared < static_cast<int64_t>(tokens.size()) &&
         cached[static_cast<size_t>(shared)] == tokens[static_cast<size_t>(shared)])
    ++shared;
  cache.truncate(shared);
  const int dims[3] = {h.dims.kvLoraRank, h.dims.ropeDim, h.dims.indexDim};
  for (int l = 0; l < h.layerCount; ++l) {
    LayerCache& layer = cache.layer(l);
    strata::kv::KvRows* vectors[3] = {&layer.latent, &layer.ropeKey, &layer.indexKey};
    for (int v = 0; v < 3; ++v) {
      if (v == 2 && !h.layerHasIndexKey[static_cast<size_t>(l)]) continue;
      std::vector<float> row(static_cast<size_t>(dims[v]));
      for (int64_t pos = shared; pos < static_cast<int64_t>(tokens.size()); ++pos) {
        for (int e = 0; e < dims[v]; ++e)
          row[static_cast<size_t>(e)] = rounded(kvValue(l, v, pos, tokens[static_cast<size_t>(pos)], e), round);
        vectors[v]->append(row.data(), row.size());
      }
    }
  }
  cache.commit(static_cast<int64_t>(tokens.size()) - shared);
}

inline KvCache cacheFor(const KvFileHeader& h, std::span<const int32_t> tokens,
                        KvPrecision round = KvPrecision::F32) {
  KvCache cache(h.layerCount, h.dims);
  extendCache(cache, h, tokens, {}, round);
  return cache;
}

// Empty when `actual` holds bit for bit what `tokens` rounded to the header's precision give.
inline QString cacheProblem(const KvFileHeader& h, std::span<const int32_t> tokens,
                            const KvCache& actual) {
  const KvCache expected = cacheFor(h, tokens, h.precision);
  if (actual.length() != expected.length())
    return QString("length %1, expected %2").arg(actual.length()).arg(expected.length());
  for (int l = 0; l < h.layerCount; ++l) {
    const LayerCache& a = actual.layer(l);
    const LayerCache& e = expected.layer(l);
    const strata::kv::KvRows* pairs[3][2] = {
        {&a.latent, &e.latent}, {&a.ropeKey, &e.ropeKey}, {&a.indexKey, &e.indexKey}};
    for (int v = 0; v < 3; ++v) {
      // Compared as f32: a cache read from a 16-bit file holds 16-bit rows, widened exactly.
      const std::vector<float> x = pairs[v][0]->toF32();
      const std::vector<float> y = pairs[v][1]->toF32();
      if (x.size() != y.size())
        return QString("layer %1 vector %2: %3 values, expected %4")
            .arg(l)
            .arg(v)
            .arg(x.size())
            .arg(y.size());
      if (!x.empty() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) != 0)
        return QString("layer %1 vector %2: values differ").arg(l).arg(v);
    }
  }
  return {};
}

inline std::string readBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Unlinks first: ext4 flushes a file truncated and rewritten in place when it is closed, which
// would make the hundreds of damaged copies below wait for the disk.
inline void writeBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::remove(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace kvtest
