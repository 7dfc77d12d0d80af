#pragma once
// Replacement policies of the RAM expert cache. A policy holds only keys and decides which
// resident expert to evict; the expert store holds the bytes and calls the policy under its
// own mutex. All experts of a model have the same size, so capacity is counted in experts.
//
// The store's protocol, which replay (cache_replay.h) follows too:
//   hit:  touch(key)
//   miss: while (size() >= capacity) evict();  then insert(key)
// Every miss is inserted: the store must hold an expert to compute with it, so there is no
// admission filter that could refuse one.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::tier {

// One routed expert: layer in the high 16 bits, expert index in the low 16 bits.
using ExpertKey = uint32_t;
inline ExpertKey expertKey(int layer, int expert) {
  return (uint32_t(layer) << 16) | uint32_t(expert);
}
inline int keyLayer(ExpertKey k) { return int(k >> 16); }
inline int keyExpert(ExpertKey k) { return int(k & 0xffff); }
std::string expertKeyName(ExpertKey k);  // "layer 3 expert 17", for error messages

enum class CachePolicyKind {
  Lru,      // least recently used
  Slru,     // segmented LRU: probation + protected (a second hit protects)
  Arc,      // adaptive replacement cache: recency vs frequency balanced by ghost hits
  TinyLfu,    // W-TinyLFU: small LRU window + SLRU main, victims chosen by aged frequency
  WindowLfu,  // the same window + a main ordered by aged frequency: evicts the least used
};

// Every kind, in the order benchmarks list them.
const std::vector<CachePolicyKind>& allCachePolicies();
std::string_view cachePolicyName(CachePolicyKind kind);  // "lru", "slru", "arc", "tinylfu", "wlfu"
std::optional<CachePolicyKind> parseCachePolicy(std::string_view name);
// The policy with the best hit rate relative to Belady's on the measured traces
// (see cache_policy.cpp for the numbers).
CachePolicyKind defaultCachePolicy();

// Decides which resident expert to evict. Every operation is O(1) (amortised) and does not
// allocate in steady state. Not thread-safe.
class CachePolicy {
 public:
  virtual ~CachePolicy() = default;
  // key just became resident (after a miss); must not be present (strata::Error if it is)
  virtual void insert(ExpertKey key) = 0;
  // a hit on a resident key
  virtual void touch(ExpertKey key) = 0;
  // picks a victim, removes it, returns it; nullopt if empty
  virtual std::optional<ExpertKey> evict() = 0;
  // removed by the store (e.g. pinned); no-op if absent
  virtual void erase(ExpertKey key) = 0;
  virtual bool contains(ExpertKey key) const = 0;
  virtual size_t size() const = 0;
  // The store's current capacity in experts (changes on a live retune). Policies size their
  // segments and their history of non-resident keys from it.
  virtual void setCapacity(size_t experts) = 0;
  // Uses of `key` in earlier runs (the usage history), scaled by the store to at most
  // kPrimeUses: frequency-aware policies start counting from there, so a restarted engine
  // keeps the experts it used most instead of relearning them; the others ignore it.
  virtual void prime(ExpertKey /*key*/, unsigned /*uses*/) {}
};

// The most uses prime() gives the most used expert of the history: the weight of the past
// against this run (counts halve as a run goes on, so the prior fades like any old use).
constexpr unsigned kPrimeUses = 16;

std::unique_ptr<CachePolicy> makeCachePolicy(CachePolicyKind kind, size_t capacityExperts);

}  // namespace strata::tier
