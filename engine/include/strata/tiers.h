#pragma once
// Expert streaming settings, the memory plan, and the live statistics the app shows. Routed
// experts of a Strata container can stay on disk and move through tiers as tokens need them:
// the pinned RAM hot set (never evicted, mlock'ed where permitted), the RAM cache (one budget
// across all layers, a replacement policy), the OS page cache (optional), and the disk.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// How experts are read from disk (see docs/design.md): buffered pread (page cache dropped
// after each read unless it is a tier), O_DIRECT pread, or io_uring with several reads in flight.
enum class IoBackend { Buffered, Direct, Uring };
std::string_view ioBackendName(IoBackend backend);  // "buffered", "direct", "uring"
std::optional<IoBackend> parseIoBackend(std::string_view name);

struct MemorySettings {
  // The most memory the engine may use: resident weights, KV cache for contextTokens, scratch,
  // pinned set and expert cache together. 0: no budget - every expert is loaded into memory.
  int64_t budgetBytes = 0;
  int64_t contextTokens = 4096;  // KV cache reserved in the plan, per session
  // Sessions generating at once (the server's slots): each has a KV cache of contextTokens,
  // and a batched step holds the experts of all their rows.
  int sessions = 1;
  // The opening of a recent conversation (system prompt) kept for new ones; in the plan too.
  int64_t sharedPrefixTokens = 1024;
  double pinnedFraction = 0.25;  // of the expert memory, for the pinned hot set
  IoBackend io = IoBackend::Direct;
  std::string cachePolicy;       // "lru", "slru", "arc", "tinylfu", "wlfu"; empty: the default
  bool pageCache = false;        // keep file pages in the OS page cache (buffered I/O only)
  int ioDepth = 4;               // expert reads in flight
  bool prefetch = true;          // predict and read the next layer's experts early
  // Usage history (which experts a model uses most) is kept here per model, to choose the
  // pinned set at the next start; empty: no history.
  std::filesystem::path dataDirectory;
};

// The most context tokens one prefill step evaluates: the plan's scratch holds one such step's
// activations and logits, so a longer prompt is evaluated in steps of at most this many.
inline constexpr int64_t kPrefillChunkTokens = 512;

// What a model needs in memory under MemorySettings, computed from its files without loading.
struct MemoryPlan {
  bool streaming = false;          // experts stream from disk (a container under a budget)
  int64_t residentBytes = 0;       // weights always in memory (all but the routed experts)
  int64_t expertBytes = 0;         // one routed expert
  int64_t expertCount = 0;         // routed experts in the model
  int64_t kvBytesPerToken = 0;
  int64_t kvBytes = 0;             // for sessions x contextTokens + sharedPrefixTokens
  int64_t scratchBytes = 0;        // activations and read buffers
  int64_t minimumExpertBytes = 0;  // the cache cannot be smaller (one step's working set)
  int64_t pinnedBytes = 0;
  int64_t cacheBytes = 0;
  int64_t budgetBytes = 0;         // 0: no budget
  // Weight bytes one decode token reads from memory: resident weights (not the embedding table,
  // of which it reads one row; not the MTP layer) and its routed experts.
  int64_t denseBytesPerToken = 0;
  int64_t expertBytesPerToken = 0;
  int64_t totalBytes() const {
    return residentBytes + kvBytes + scratchBytes + pinnedBytes + cacheBytes;
  }
};

// Settings that can change while a model is loaded.
struct TierTuning {
  int64_t cacheBytes = 0;
  int64_t pinnedBytes = 0;
  bool prefetch = true;
};

// PageCache: not in our memory, but the OS page cache holds its file pages (estimated).
enum class ExpertTier : uint8_t { Disk, Loading, Ram, Pinned, PageCache };

struct TierCounters {
  int64_t steps = 0;            // forward steps seen
  int64_t hitsPinned = 0;       // experts needed and found in the pinned set
  int64_t hitsRam = 0;          // ... in the RAM cache
  int64_t missesInFlight = 0;   // ... already being read (prefetched, not yet arrived)
  int64_t misses = 0;           // ... not in memory: read on demand
  int64_t reads = 0;            // expert reads finished
  int64_t bytesRead = 0;
  double readSeconds = 0;       // summed wall time of read batches (I/O threads)
  double stallSeconds = 0;      // compute waiting for experts
  int64_t predicted = 0;        // experts prefetched by prediction
  int64_t predictedUsed = 0;    // ... that the layer then used
  int64_t actualNeeded = 0;     // experts layers used, where a prediction was made
  int64_t guessesDropped = 0;   // predicted experts not read: the layer did not use them
  int64_t readErrors = 0;
  double hitRate() const {
    const int64_t all = hitsPinned + hitsRam + missesInFlight + misses;
    return all ? double(hitsPinned + hitsRam) / double(all) : 0.0;
  }
  double prefetchPrecision() const { return predicted ? double(predictedUsed) / double(predicted) : 0.0; }
  double prefetchRecall() const { return actualNeeded ? double(predictedUsed) / double(actualNeeded) : 0.0; }
};

struct TierSnapshot {
  bool streaming = false;
  std::vector<int> layers;        // MoE layers, in heat/tier row order
  int expertsPerLayer = 0;
  std::vector<float> heat;        // [layers x experts], uses decayed (half-life 32 steps)
  std::vector<ExpertTier> tiers;  // [layers x experts]
  TierCounters counters;
  int64_t pinnedBytes = 0;        // held by the pinned set
  int64_t cacheBytes = 0;         // held (or being read) by the RAM cache
  int64_t inUseBytes = 0;         // evicted but still being computed with
  int64_t pinnedBudget = 0;
  int64_t cacheBudget = 0;
  int64_t lockedBytes = 0;        // pinned bytes mlock'ed
  int64_t residentBytes = 0;      // weights always in memory
  // Routed-expert bytes in the OS page cache (estimated from sampled pages, refreshed a slice
  // per snapshot) of pageCacheTotal; -1 where unknown (not streaming, or files we cannot probe).
  int64_t pageCacheBytes = -1;
  int64_t pageCacheTotal = 0;
  bool prefetch = false;
  std::string cachePolicy;
  std::string io;
};

}  // namespace strata
