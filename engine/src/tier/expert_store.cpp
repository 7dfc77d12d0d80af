#include "tier/expert_store.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/logging.h"
#include "strata/error.h"
#include "tier/aligned_buffer.h"

namespace strata::tier {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Heat halves every 32 steps: recent enough for a live heatmap, long enough to be stable.
const double kHeatDecay = std::pow(0.5, 1.0 / 32.0);
// The pinned set is chosen again from history and live heat at steps 16, 64 and 256 (soon
// after a start without history), then every 256 steps.
bool repinAt(int64_t step) { return step == 16 || step == 64 || (step > 0 && step % 256 == 0); }

int64_t matrixBytes(const model::FeedForwardWeights& w) {
  return w.gate.bytes() + w.up.bytes() + w.down.bytes();
}

// mlock of every buffer of an expert; false if the OS refused (no permission, over the limit).
bool lockExpert(const model::FeedForwardWeights& w, bool lock) {
  bool ok = true;
  for (const kernels::Matrix* m : {&w.gate, &w.up, &w.down}) {
    const auto& q = m->quantized();
    for (auto [ptr, bytes] :
         {std::pair<const void*, size_t>{q.codes(), static_cast<size_t>(q.codeBytes())},
          {q.scaleData(), static_cast<size_t>(q.scaleBytes())}}) {
      if (bytes == 0) continue;
      ok = (lock ? ::mlock(ptr, bytes) : ::munlock(ptr, bytes)) == 0 && ok;
    }
  }
  return ok;
}

}  // namespace

ExpertStore::ExpertStore(io::Container container, StoreSettings settings, UsageCounts history,
                         ReaderFactory readers)
    : container_(std::move(container)),
      settings_(settings),
      liveBytes_(std::make_shared<std::atomic<int64_t>>(0)) {
  layers_ = container_.expertLayers();
  if (layers_.empty()) throw Error(container_.directory().string() + ": the model has no routed experts");
  expertsPerLayer_ = container_.expertCount(layers_.front());
  firstSlot_.assign(static_cast<size_t>(layers_.back() + 1), -1);
  for (int layer : layers_) {
    if (container_.expertCount(layer) != expertsPerLayer_)
      throw Error(container_.directory().string() + ": layer " + std::to_string(layer) +
                  " has a different number of experts");
    firstSlot_[static_cast<size_t>(layer)] = static_cast<int>(locations_.size());
    for (int e = 0; e < expertsPerLayer_; ++e) {
      const io::ExpertLocation& loc = container_.expert(layer, e);
      locations_.push_back(&loc);
      expertBytes_ = std::max<int64_t>(expertBytes_, static_cast<int64_t>(loc.bytes));
      allExpertBytes_ += static_cast<int64_t>(loc.bytes);
    }
  }
  entries_.resize(locations_.size());
  std::vector<ProbedRange> ranges;
  for (const io::ExpertLocation* loc : locations_) ranges.push_back({loc->fileIndex, loc->offset, loc->bytes});
  pageCache_ = std::make_unique<PageCacheProbe>(container_.files(), std::move(ranges));
  history_ = history.size() == locations_.size() ? std::move(history) : UsageCounts(locations_.size(), 0);
  predictions_.resize(firstSlot_.size());
  policy_ = makeCachePolicy(settings_.policy, static_cast<size_t>(settings_.cacheBytes / expertBytes_));
  primePolicy();

  if (!readers) {
    const auto files = container_.files();
    const IoBackend io = settings_.io;
    const bool keep = settings_.pageCache;
    const int depth = settings_.ioDepth;
    readers = [files, io, keep, depth] { return openExpertReader(io, files, keep, depth); };
  }
  // io_uring keeps a whole batch in flight from one thread; pread backends need one thread
  // per read in flight. Either way ioDepth reads are in flight: as many spare buffers.
  const int threads = settings_.io == IoBackend::Uring ? 1 : std::max(1, settings_.ioDepth);
  uint64_t span = 0;
  for (const io::ExpertLocation* loc : locations_) span = std::max(span, loc->span);
  readBuffers_ = ReadBufferPool::create(span, static_cast<size_t>(std::max(1, settings_.ioDepth)));
  std::vector<std::unique_ptr<ExpertReader>> made;
  for (int i = 0; i < threads; ++i) made.push_back(readers());  // throws before any thread starts
  for (auto& reader : made)
    threads_.emplace_back([this, r = std::move(reader)]() mutable { ioLoop(std::move(r)); });

  std::lock_guard lock(mutex_);
  choosePinned();
}

ExpertStore::~ExpertStore() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  queued_.notify_all();
  for (auto& t : threads_) t.join();
  for (Entry& e : entries_)
    if (e.locked && e.data) lockExpert(*e.data, false);
}

int ExpertStore::slot(int layer, int expert) const {
  if (layer < 0 || layer >= static_cast<int>(firstSlot_.size()) || firstSlot_[layer] < 0 ||
      expert < 0 || expert >= expertsPerLayer_)
    throw Error("no routed expert " + std::to_string(expert) + " in layer " + std::to_string(layer));
  return firstSlot_[static_cast<size_t>(layer)] + expert;
}

ExpertKey ExpertStore::keyOf(int s) const {
  const io::ExpertLocation& loc = *locations_[static_cast<size_t>(s)];
  return expertKey(loc.layer, loc.expert);
}

int ExpertStore::slotOf(ExpertKey key) const { return slot(keyLayer(key), keyExpert(key)); }

int64_t ExpertStore::bytesOf(int s) const {
  return static_cast<int64_t>(locations_[static_cast<size_t>(s)]->bytes);
}

// --- budgets (under mutex_) ---

bool ExpertStore::reserveCache(int64_t bytes, bool mustHave) {
  while (cacheUsed_ + bytes > settings_.cacheBytes) {
    const std::optional<ExpertKey> victim = policy_->evict();
    if (!victim) {
      // Everything cached is on its way in: only what this step needs may overdraw.
      if (!mustHave) return false;
      break;
    }
    evict(slotOf(*victim));
  }
  cacheUsed_ += bytes;
  return true;
}

void ExpertStore::evictToFit() {
  while (cacheUsed_ > settings_.cacheBytes) {
    const std::optional<ExpertKey> victim = policy_->evict();
    if (!victim) break;
    evict(slotOf(*victim));
  }
}

void ExpertStore::evict(int s) {
  Entry& e = entries_[static_cast<size_t>(s)];
  e.data.reset();  // a caller still computing keeps it alive through its handle
  e.state = State::Absent;
  cacheUsed_ -= bytesOf(s);
}

// A read that failed holds no data (so nothing is locked): only its reservation goes back.
void ExpertStore::release(int s) {
  Entry& e = entries_[static_cast<size_t>(s)];
  (e.pinned ? pinnedUsed_ : cacheUsed_) -= bytesOf(s);
  e.pinned = false;
}

void ExpertStore::enqueue(int s, bool urgent) {
  Entry& e = entries_[static_cast<size_t>(s)];
  e.state = State::Queued;
  e.urgent = urgent;
  e.error.clear();
  (urgent ? urgent_ : speculative_).push_back(s);
  queued_.notify_one();
}

float ExpertStore::heatNow(const Entry& e) const {
  return static_cast<float>(e.heat * std::pow(kHeatDecay, static_cast<double>(step_ - e.heatStep)));
}

void ExpertStore::markUsed(int s) {
  Entry& e = entries_[static_cast<size_t>(s)];
  e.heat = heatNow(e) + 1.0f;
  e.heatStep = step_;
  ++e.uses;
}

// The history's counts, scaled so the most used expert starts at kPrimeUses (at least 1 for
// any used one).
void ExpertStore::primePolicy() {
  const uint32_t most = history_.empty() ? 0 : *std::max_element(history_.begin(), history_.end());
  if (most == 0) return;
  for (size_t s = 0; s < history_.size(); ++s) {
    if (history_[s] == 0) continue;
    const uint64_t scaled = (uint64_t(history_[s]) * kPrimeUses + most - 1) / most;
    policy_->prime(keyOf(static_cast<int>(s)), static_cast<unsigned>(scaled));
  }
}

// --- the pinned set (under mutex_) ---

void ExpertStore::choosePinned() {
  // Score: share of all recorded uses (history, this run included) plus share of live heat.
  std::vector<double> score(entries_.size());
  double historyTotal = 0;
  double heatTotal = 0;
  for (size_t s = 0; s < entries_.size(); ++s) {
    historyTotal += history_[s] + entries_[s].uses;
    heatTotal += heatNow(entries_[s]);
  }
  for (size_t s = 0; s < entries_.size(); ++s) {
    const double uses = history_[s] + entries_[s].uses;
    score[s] = (historyTotal > 0 ? uses / historyTotal : 0) +
               (heatTotal > 0 ? heatNow(entries_[s]) / heatTotal : 0);
  }
  std::vector<int> order(entries_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return score[a] > score[b]; });
  // Hottest first, as many as the budget holds (experts of different layers may differ in
  // size). Without any history the budget is still filled (in model order): an arbitrary
  // expert in memory beats none, and live heat replaces them at the next choice.
  std::vector<bool> want(entries_.size(), false);
  int64_t bytes = 0;
  for (int s : order) {
    if (bytes + bytesOf(s) > settings_.pinnedBytes) continue;
    bytes += bytesOf(s);
    want[static_cast<size_t>(s)] = true;
  }
  for (size_t s = 0; s < entries_.size(); ++s)
    if (entries_[s].pinned && !want[s]) unpin(static_cast<int>(s));
  for (size_t s = 0; s < entries_.size(); ++s)
    if (want[s] && !entries_[s].pinned) pin(static_cast<int>(s));
  evictToFit();
}

void ExpertStore::pin(int s) {
  Entry& e = entries_[static_cast<size_t>(s)];
  if (pinnedUsed_ + bytesOf(s) > settings_.pinnedBytes) return;
  switch (e.state) {
    case State::Absent:
    case State::Failed:
      e.pinned = true;
      pinnedUsed_ += bytesOf(s);
      enqueue(s, /*urgent=*/false);
      return;
    case State::Queued:
    case State::Loading:
      cacheUsed_ -= bytesOf(s);
      break;
    case State::Ready:
      policy_->erase(keyOf(s));
      cacheUsed_ -= bytesOf(s);
      e.locked = lockExpert(*e.data, true);
      if (e.locked) lockedBytes_ += bytesOf(s);
      break;
  }
  e.pinned = true;
  pinnedUsed_ += bytesOf(s);
}

void ExpertStore::unpin(int s) {
  Entry& e = entries_[static_cast<size_t>(s)];
  if (e.locked && e.data) lockExpert(*e.data, false);
  if (e.locked) lockedBytes_ -= bytesOf(s);
  e.locked = false;
  e.pinned = false;
  pinnedUsed_ -= bytesOf(s);
  if (e.state == State::Absent || e.state == State::Failed) return;
  cacheUsed_ += bytesOf(s);  // now the cache's; evictToFit trims it
  if (e.state == State::Ready) policy_->insert(keyOf(s));
}

// --- the forward pass's side ---

void ExpertStore::prefetch(int layer, std::span<const int> experts, bool predicted) {
  std::lock_guard lock(mutex_);
  if (predicted) {
    if (!settings_.prefetch) return;
    std::vector<int>& guess = predictions_.at(static_cast<size_t>(layer));
    guess.assign(experts.begin(), experts.end());
    counters_.predicted += static_cast<int64_t>(guess.size());
    for (int expert : experts) {  // most likely first
      const int s = slot(layer, expert);
      Entry& e = entries_[static_cast<size_t>(s)];
      if (e.state != State::Absent && e.state != State::Failed) continue;
      // A guess never evicts what this step holds beyond the budget: skip when it is full.
      if (!reserveCache(bytesOf(s), /*mustHave=*/false)) break;
      enqueue(s, /*urgent=*/false);
    }
    return;
  }

  if (layer <= lastLayer_) {
    ++step_;
    ++counters_.steps;
    if (repinAt(step_) && settings_.pinnedBytes > 0) choosePinned();
  }
  lastLayer_ = layer;
  if (traceSink_) traceSink_(step_, layer, experts);

  std::vector<int>& guess = predictions_.at(static_cast<size_t>(layer));
  if (!guess.empty()) {
    counters_.actualNeeded += static_cast<int64_t>(experts.size());
    for (int expert : guess)
      counters_.predictedUsed += std::find(experts.begin(), experts.end(), expert) != experts.end();
    guess.clear();
  }
  dropWrongGuesses(layer, experts);
  for (int expert : experts) {
    const int s = slot(layer, expert);
    Entry& e = entries_[static_cast<size_t>(s)];
    markUsed(s);
    switch (e.state) {
      case State::Ready:
        if (e.pinned) {
          ++counters_.hitsPinned;
        } else {
          ++counters_.hitsRam;
          policy_->touch(keyOf(s));
        }
        break;
      case State::Queued:
        ++counters_.missesInFlight;
        if (!e.urgent) {  // a guess that turned out right: read it before other guesses
          e.urgent = true;
          urgent_.push_back(s);
          queued_.notify_one();
        }
        break;
      case State::Loading:
        ++counters_.missesInFlight;
        break;
      case State::Absent:
      case State::Failed:
        ++counters_.misses;
        // Read now what fits; the rest (a prefill's union larger than the cache) is read by
        // get() once the experts before it are computed and evictable.
        if (reserveCache(bytesOf(s), /*mustHave=*/false)) enqueue(s, /*urgent=*/true);
        break;
    }
  }
}

// Under mutex_. A guess for this layer still waiting for its read when the layer's real
// experts are known, and not among them, is wrong: reading it would spend disk bandwidth, the
// scarce resource when streaming, and its cache room on an expert this step does not use.
void ExpertStore::dropWrongGuesses(int layer, std::span<const int> experts) {
  const int first = firstSlot_.at(static_cast<size_t>(layer));
  for (int expert = 0; expert < expertsPerLayer_; ++expert) {
    Entry& e = entries_[static_cast<size_t>(first + expert)];
    if (e.state != State::Queued || e.urgent || e.pinned) continue;  // pinned: loading the hot set
    if (std::find(experts.begin(), experts.end(), expert) != experts.end()) continue;
    release(first + expert);  // its reservation; the queue skips it when it comes up
    e.state = State::Absent;
    ++counters_.guessesDropped;
  }
}

model::ExpertHandle ExpertStore::tryGet(int layer, int expert) {
  std::lock_guard lock(mutex_);
  Entry& e = entries_[static_cast<size_t>(slot(layer, expert))];
  return e.state == State::Ready ? e.data : nullptr;
}

model::ExpertHandle ExpertStore::get(int layer, int expert) {
  const int s = slot(layer, expert);
  std::unique_lock lock(mutex_);
  Entry& e = entries_[static_cast<size_t>(s)];
  const Clock::time_point start = Clock::now();
  bool waited = false;
  for (;;) {
    switch (e.state) {
      case State::Ready:
        if (waited) counters_.stallSeconds += secondsSince(start);
        return e.data;
      case State::Failed: {
        const std::string error = e.error;
        e.state = State::Absent;
        e.error.clear();
        if (waited) counters_.stallSeconds += secondsSince(start);
        throw Error(error);
      }
      case State::Absent:
        // Not announced (or evicted since): read it now.
        reserveCache(bytesOf(s), /*mustHave=*/true);
        enqueue(s, /*urgent=*/true);
        break;
      case State::Queued:
        if (!e.urgent) {
          e.urgent = true;
          urgent_.push_back(s);
          queued_.notify_one();
        }
        break;
      case State::Loading:
        break;
    }
    waited = true;
    arrived_.wait(lock);
  }
}

bool ExpertStore::wantsPrediction() const {
  std::lock_guard lock(mutex_);
  // With every expert pinned nothing can miss, and the prediction's router pass (a serial
  // matrix-vector product per layer) would only slow decoding down.
  return settings_.prefetch && pinnedUsed_ < allExpertBytes_;
}

int64_t ExpertStore::residentBytes() const { return liveBytes_->load(); }

// --- I/O threads ---

void ExpertStore::ioLoop(std::unique_ptr<ExpertReader> reader) {
  const size_t batch = reader->backend() == IoBackend::Uring ? std::max(1, settings_.ioDepth) : 1;
  std::vector<int> slots;
  std::vector<std::shared_ptr<AlignedBuffer>> buffers;
  std::vector<ReadRequest> requests;
  for (;;) {
    slots.clear();
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return stop_ || !urgent_.empty() || !speculative_.empty(); });
      if (stop_) return;
      for (auto* queue : {&urgent_, &speculative_}) {
        while (slots.size() < batch && !queue->empty()) {
          const int s = queue->front();
          queue->pop_front();
          Entry& e = entries_[static_cast<size_t>(s)];
          if (e.state != State::Queued) continue;  // taken already, or a stale duplicate
          e.state = State::Loading;
          slots.push_back(s);
        }
      }
    }
    if (slots.empty()) continue;
    buffers.resize(slots.size());
    requests.assign(slots.size(), {});
    for (size_t i = 0; i < slots.size(); ++i) {
      const io::ExpertLocation& loc = *locations_[static_cast<size_t>(slots[i])];
      buffers[i] = readBuffers_->take();  // at least the largest span
      requests[i] = {loc.fileIndex, loc.offset, loc.span, loc.bytes, buffers[i]->data(), {}};
    }
    const Clock::time_point start = Clock::now();
    reader->read(requests);
    const double seconds = secondsSince(start);
    for (size_t i = 0; i < slots.size(); ++i) {
      const int s = slots[i];
      const io::ExpertLocation& loc = *locations_[static_cast<size_t>(s)];
      model::ExpertHandle data;
      std::string error;
      if (!requests[i].error.empty()) {
        error = loc.file.string() + ": layer " + std::to_string(loc.layer) + " expert " +
                std::to_string(loc.expert) + ": " + requests[i].error;
      } else {
        try {
          data = decode(s, std::move(buffers[i]));
        } catch (const std::exception& ex) {
          error = ex.what();
        }
      }
      std::lock_guard lock(mutex_);
      if (i == 0) counters_.readSeconds += seconds;
      if (error.empty()) {
        ++counters_.reads;
        counters_.bytesRead += static_cast<int64_t>(loc.span);
      } else {
        ++counters_.readErrors;
      }
      finishRead(s, std::move(data), std::move(error));
    }
    buffers.clear();  // a failed read's buffer goes back to the pool
    arrived_.notify_all();
  }
}

// Under mutex_.
void ExpertStore::finishRead(int s, model::ExpertHandle data, std::string error) {
  Entry& e = entries_[static_cast<size_t>(s)];
  if (!error.empty()) {
    log().warn("{}", error);
    release(s);
    e.state = State::Failed;
    e.error = std::move(error);
    return;
  }
  e.state = State::Ready;
  e.data = std::move(data);
  if (e.pinned) {
    e.locked = lockExpert(*e.data, true);
    if (e.locked) lockedBytes_ += bytesOf(s);
  } else {
    policy_->insert(keyOf(s));
  }
}

model::ExpertHandle ExpertStore::decode(int s, std::shared_ptr<AlignedBuffer> buffer) {
  const io::ExpertLocation& loc = *locations_[static_cast<size_t>(s)];
  const std::span<const std::byte> bytes(buffer->data(), loc.span);
  io::ExpertMatrices m = container_.viewExpert(loc, bytes, std::move(buffer));
  auto* weights = new model::FeedForwardWeights{kernels::Matrix::fromQuantized(std::move(m.gate)),
                                                kernels::Matrix::fromQuantized(std::move(m.up)),
                                                kernels::Matrix::fromQuantized(std::move(m.down))};
  const int64_t bytesHeld = matrixBytes(*weights);
  liveBytes_->fetch_add(bytesHeld);
  return model::ExpertHandle(weights, [live = liveBytes_, bytesHeld](const model::FeedForwardWeights* w) {
    live->fetch_sub(bytesHeld);
    delete w;
  });
}

// --- the app's side ---

void ExpertStore::retune(const TierTuning& tuning) {
  std::lock_guard lock(mutex_);
  settings_.cacheBytes = std::max<int64_t>(0, tuning.cacheBytes);
  settings_.pinnedBytes = std::max<int64_t>(0, tuning.pinnedBytes);
  settings_.prefetch = tuning.prefetch;
  policy_->setCapacity(static_cast<size_t>(settings_.cacheBytes / expertBytes_));
  // Unpin what no longer fits, then choose again under the new budgets.
  choosePinned();
  evictToFit();
}

TierSnapshot ExpertStore::snapshot() const {
  TierSnapshot snap;
  std::vector<bool> inPageCache;  // probed before taking mutex_: the forward pass never waits on it
  if (pageCache_->available()) {
    snap.pageCacheBytes = pageCache_->update(kPageProbesPerSnapshot);
    snap.pageCacheTotal = pageCache_->totalBytes();
    inPageCache = pageCache_->mostlyResident();
  }
  std::lock_guard lock(mutex_);
  snap.streaming = true;
  snap.layers = layers_;
  snap.expertsPerLayer = expertsPerLayer_;
  snap.heat.resize(entries_.size());
  snap.tiers.resize(entries_.size());
  int64_t held = 0;
  for (size_t s = 0; s < entries_.size(); ++s) {
    const Entry& e = entries_[s];
    snap.heat[s] = heatNow(e);
    switch (e.state) {
      case State::Ready:
        snap.tiers[s] = e.pinned ? ExpertTier::Pinned : ExpertTier::Ram;
        held += bytesOf(static_cast<int>(s));
        break;
      case State::Queued:
      case State::Loading: snap.tiers[s] = ExpertTier::Loading; break;
      default:  // not ours: the OS page cache may hold it
        snap.tiers[s] = s < inPageCache.size() && inPageCache[s] ? ExpertTier::PageCache : ExpertTier::Disk;
        break;
    }
  }
  snap.counters = counters_;
  snap.pinnedBytes = pinnedUsed_;
  snap.cacheBytes = cacheUsed_;
  snap.inUseBytes = std::max<int64_t>(0, liveBytes_->load() - held);
  snap.pinnedBudget = settings_.pinnedBytes;
  snap.cacheBudget = settings_.cacheBytes;
  snap.lockedBytes = lockedBytes_;
  snap.prefetch = settings_.prefetch;
  snap.cachePolicy = std::string(cachePolicyName(settings_.policy));
  snap.io = std::string(ioBackendName(settings_.io));
  return snap;
}

UsageCounts ExpertStore::usage() const {
  std::lock_guard lock(mutex_);
  UsageCounts counts(entries_.size());
  for (size_t s = 0; s < entries_.size(); ++s) counts[s] = history_[s] + entries_[s].uses;
  return counts;
}

void ExpertStore::setTraceSink(std::function<void(int64_t, int, std::span<const int>)> sink) {
  std::lock_guard lock(mutex_);
  traceSink_ = std::move(sink);
}

}  // namespace strata::tier
