#pragma once
// The tiered expert store: routed experts of a container, read from disk on demand and kept in
// memory under byte budgets (strata/tiers.h). Tiers, fastest first:
//   pinned  a hot set chosen from usage history and live heat; never evicted; mlock'ed
//   RAM     a cache with one budget across all layers and a replacement policy (cache_policy.h)
//   page    the OS page cache, when buffered I/O keeps file pages (optional)
//   disk    one read per expert, several in flight (expert_reader.h)
// (A VRAM tier would sit above pinned; the slot is ExpertTier, once a GPU backend exists.)
//
// Threads: the forward pass calls prefetch/tryGet/get; I/O threads read and decode; the app
// polls snapshot(). One mutex guards the entries; reads and decoding happen outside it. Two
// callers asking for the same missing expert share one read.
//
// Memory: an entry's bytes count against its tier's budget from the moment its read is queued.
// An evicted expert still being computed with stays alive through its handle until that
// computation ends (snapshot().inUseBytes); that is at most one layer's working set.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "io/container.h"
#include "model/weights.h"
#include "strata/tiers.h"
#include "tier/cache_policy.h"
#include "tier/expert_reader.h"
#include "tier/page_cache_probe.h"
#include "tier/read_buffer_pool.h"

namespace strata::tier {

struct StoreSettings {
  int64_t cacheBytes = 0;
  int64_t pinnedBytes = 0;
  IoBackend io = IoBackend::Direct;
  CachePolicyKind policy = CachePolicyKind::Lru;
  bool prefetch = true;
  bool pageCache = false;
  int ioDepth = 4;
};

// Makes one reader per I/O thread (tests inject failing readers through it).
using ReaderFactory = std::function<std::unique_ptr<ExpertReader>()>;

// Usage counts per (layer, expert), in the store's order: layers ascending, experts ascending.
using UsageCounts = std::vector<uint32_t>;

class ExpertStore final : public model::ExpertSource {
 public:
  // Throws strata::Error if the I/O backend cannot be used. `history` (may be empty) seeds
  // the pinned set.
  ExpertStore(io::Container container, StoreSettings settings, UsageCounts history = {},
              ReaderFactory readers = {});
  ExpertStore(const ExpertStore&) = delete;
  ExpertStore& operator=(const ExpertStore&) = delete;
  ~ExpertStore() override;

  void prefetch(int layer, std::span<const int> experts, bool predicted) override;
  model::ExpertHandle tryGet(int layer, int expert) override;
  model::ExpertHandle get(int layer, int expert) override;
  bool wantsPrediction() const override;
  int64_t residentBytes() const override;

  // Live retune: budgets shrink by evicting, grow at once; the pinned set is chosen again.
  void retune(const TierTuning& tuning);
  // Cheap enough to poll 10 times a second; each call also looks at up to kPageProbesPerSnapshot
  // experts' pages for the page-cache estimate.
  TierSnapshot snapshot() const;
  static constexpr size_t kPageProbesPerSnapshot = 256;
  // Usage counts of the history given at start plus this run's (to persist).
  UsageCounts usage() const;
  // Called with each layer's needed experts, every step (bench decode --record-trace).
  void setTraceSink(std::function<void(int64_t step, int layer, std::span<const int>)> sink);

  const std::vector<int>& layers() const { return layers_; }
  int expertsPerLayer() const { return expertsPerLayer_; }

 private:
  enum class State : uint8_t { Absent, Queued, Loading, Ready, Failed };
  struct Entry {
    State state = State::Absent;
    bool pinned = false;   // counted in the pinned budget (else in the cache budget)
    bool urgent = false;   // queued for the current layer, not a prediction
    bool locked = false;   // mlock'ed
    model::ExpertHandle data;
    std::string error;
    float heat = 0;
    int64_t heatStep = 0;
    uint32_t uses = 0;
  };

  int slot(int layer, int expert) const;
  ExpertKey keyOf(int slot) const;
  int slotOf(ExpertKey key) const;
  int64_t bytesOf(int slot) const;
  // Under mutex_.
  bool reserveCache(int64_t bytes, bool mustHave);
  void evictToFit();
  void evict(int slot);
  void enqueue(int slot, bool urgent);
  void release(int slot);  // returns a failed read's bytes to its budget
  void markUsed(int slot);
  void dropWrongGuesses(int layer, std::span<const int> experts);
  void choosePinned();
  void primePolicy();  // the cache policy starts from the usage history's counts
  void pin(int slot);
  void unpin(int slot);
  float heatNow(const Entry& e) const;

  void ioLoop(std::unique_ptr<ExpertReader> reader);
  void finishRead(int slot, model::ExpertHandle data, std::string error);
  // The expert's matrices as views into the buffer it was read into, which they keep.
  model::ExpertHandle decode(int slot, std::shared_ptr<AlignedBuffer> buffer);

  io::Container container_;
  StoreSettings settings_;
  std::vector<int> layers_;
  std::vector<int> firstSlot_;  // by layer index: slot of expert 0, or -1
  std::vector<const io::ExpertLocation*> locations_;
  int expertsPerLayer_ = 0;
  int64_t expertBytes_ = 0;     // the largest expert
  int64_t allExpertBytes_ = 0;  // every expert
  UsageCounts history_;
  std::unique_ptr<PageCacheProbe> pageCache_;  // its own lock: snapshot() probes outside mutex_

  mutable std::mutex mutex_;
  std::condition_variable arrived_;  // an entry became Ready or Failed
  std::condition_variable queued_;   // work for the I/O threads
  std::vector<Entry> entries_;
  std::unique_ptr<CachePolicy> policy_;
  std::deque<int> urgent_;
  std::deque<int> speculative_;
  std::vector<std::vector<int>> predictions_;  // by layer index: last predicted set
  int64_t cacheUsed_ = 0;
  int64_t pinnedUsed_ = 0;
  int64_t lockedBytes_ = 0;
  int64_t step_ = 0;
  int lastLayer_ = -1;
  TierCounters counters_;
  std::function<void(int64_t, int, std::span<const int>)> traceSink_;
  std::shared_ptr<std::atomic<int64_t>> liveBytes_;  // every decoded expert alive
  std::shared_ptr<ReadBufferPool> readBuffers_;        // each read's buffer, then its expert's
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace strata::tier
