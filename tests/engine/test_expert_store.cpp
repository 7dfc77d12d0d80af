// The tiered expert store (tier/expert_store.h): results equal the all-resident engine bit for
// bit under any cache size and I/O backend; budgets hold; eviction and pinning behave; two
// callers share one read; injected I/O errors reach the caller and leave the store usable; the
// memory plan matches what the engine really allocates and refuses budgets that cannot work;
// the OS page cache's share of the experts is measured.
#include <fcntl.h>
#include <unistd.h>

#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "error_check.h"
#include "fixtures.h"
#include "io/container.h"
#include "strata/convert.h"
#include "strata/engine.h"
#include "tier/expert_store.h"
#include "tier/usage_history.h"

namespace fs = std::filesystem;
using namespace strata;
using tier::ExpertStore;

namespace {

// Counts reads, can delay them and fail the next N, around a real reader.
struct ReaderProbe {
  std::atomic<int> reads{0};
  std::atomic<int> failNext{0};
  int delayMs = 0;
  std::mutex mutex;
  std::set<const std::byte*> buffers;  // every buffer a read went into
};

class ProbeReader final : public tier::ExpertReader {
 public:
  ProbeReader(std::unique_ptr<tier::ExpertReader> inner, ReaderProbe& probe)
      : inner_(std::move(inner)), probe_(probe) {}
  void read(std::span<tier::ReadRequest> requests) override {
    if (probe_.delayMs) std::this_thread::sleep_for(std::chrono::milliseconds(probe_.delayMs));
    for (tier::ReadRequest& r : requests) {
      ++probe_.reads;
      if (probe_.failNext.fetch_sub(1) > 0) {
        r.error = "injected I/O error";
        continue;
      }
      {
        std::lock_guard lock(probe_.mutex);
        probe_.buffers.insert(r.buffer);
      }
      inner_->read({&r, 1});
    }
  }
  IoBackend backend() const override { return inner_->backend(); }

 private:
  std::unique_ptr<tier::ExpertReader> inner_;
  ReaderProbe& probe_;
};

std::vector<int32_t> prompt(int n) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 37 + 11) % 250);
  return ids;
}

// Logits of a prompt and of 8 single-token decode steps after it.
std::vector<float> runTokens(Engine& engine) {
  auto session = engine.newSession();
  std::vector<float> all = session->append(prompt(12)).logits;
  for (int i = 0; i < 8; ++i) {
    const std::vector<float> step = session->append(std::vector<int32_t>{(i * 53 + 7) % 250}).logits;
    all.insert(all.end(), step.begin(), step.end());
  }
  return all;
}

}  // namespace

class TestExpertStore : public QObject {
  Q_OBJECT

  // In the build tree, not /tmp: page-cache tests need a disk-backed file system (tmpfs pages
  // cannot leave the page cache).
  QTemporaryDir tmp_{QDir::currentPath() + QStringLiteral("/expert-store-XXXXXX")};
  fs::path container_;
  int64_t expertBytes_ = 0;

  fs::path dir(const std::string& name) { return fs::path(tmp_.path().toStdString()) / name; }

  // A store over the tiny container with room for `cacheExperts` in the cache.
  std::unique_ptr<ExpertStore> store(int cacheExperts, int pinnedExperts, ReaderProbe* probe,
                                     tier::UsageCounts history = {},
                                     tier::CachePolicyKind policy = tier::CachePolicyKind::Lru) {
    tier::StoreSettings s;
    s.cacheBytes = cacheExperts * expertBytes_;
    s.pinnedBytes = pinnedExperts * expertBytes_;
    s.io = IoBackend::Buffered;
    s.policy = policy;
    s.ioDepth = 2;
    const auto files = io::Container::open(container_).files();
    tier::ReaderFactory factory;
    if (probe)
      factory = [files, probe] {
        return std::make_unique<ProbeReader>(
            tier::openExpertReader(IoBackend::Buffered, files, false, 1), *probe);
      };
    return std::make_unique<ExpertStore>(io::Container::open(container_), s, std::move(history),
                                         factory);
  }

  static ExpertTier tierOf(const ExpertStore& s, int layer, int expert) {
    const TierSnapshot snap = s.snapshot();
    for (size_t i = 0; i < snap.layers.size(); ++i)
      if (snap.layers[i] == layer) return snap.tiers[i * snap.expertsPerLayer + expert];
    throw std::runtime_error("no such layer");
  }

  // Uses one expert as the forward pass does: announce, then take it.
  static void use(ExpertStore& s, int layer, int expert) {
    const int e[] = {expert};
    s.prefetch(layer, e, false);
    QVERIFY(s.get(layer, expert) != nullptr);
  }

  EngineSettings streaming(int64_t budget, IoBackend io = IoBackend::Buffered) {
    EngineSettings s;
    s.memory.budgetBytes = budget;
    s.memory.io = io;
    s.memory.contextTokens = 64;
    return s;
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    container_ = dir("tiny-dsa");
    ConvertOptions o;
    o.input = fixtures::dataDir() / "tiny-dsa";
    o.output = container_;
    convertModel(o);
    const io::Container c = io::Container::open(container_);
    expertBytes_ = static_cast<int64_t>(c.expert(c.expertLayers().front(), 0).bytes);
  }

  // The memory plan counts resident weights exactly as the engine allocates them.
  void planMatchesTheEngine() {
    const auto resident = Engine::open(container_);
    const MemoryPlan plan = Engine::plan(container_);
    QVERIFY(!plan.streaming);
    QCOMPARE(plan.residentBytes + plan.cacheBytes, resident->info().residentBytes);
    QCOMPARE(plan.expertCount, int64_t{4 * 16});  // 3 MoE layers and the MTP layer

    const MemoryPlan budgeted = Engine::plan(container_, streaming(plan.residentBytes + (64 << 20)));
    QVERIFY(budgeted.streaming);
    QCOMPARE(budgeted.residentBytes, plan.residentBytes);
    QVERIFY(budgeted.totalBytes() <= budgeted.budgetBytes);
    const auto engine = Engine::open(container_, streaming(budgeted.budgetBytes));
    QCOMPARE(engine->info().residentBytes, plan.residentBytes);  // no expert loaded yet
  }

  // The server's slots: a KV cache per session, and a batched step's experts for all of them.
  void planReservesEverySession() {
    EngineSettings one = streaming(int64_t{1} << 40);
    EngineSettings three = one;
    three.memory.sessions = 3;
    const MemoryPlan a = Engine::plan(container_, one);
    const MemoryPlan b = Engine::plan(container_, three);
    QCOMPARE(b.kvBytes - a.kvBytes, 2 * one.memory.contextTokens * a.kvBytesPerToken);
    QVERIFY(b.minimumExpertBytes > a.minimumExpertBytes);
    QVERIFY(b.minimumExpertBytes <= 2 * 16 * b.expertBytes);  // never more than a layer's experts

    // A budget with room for one session's minimum but not three's is refused, saying why.
    const int64_t fitsOne = a.residentBytes + a.kvBytes + a.scratchBytes + a.minimumExpertBytes;
    QVERIFY(Engine::plan(container_, streaming(fitsOne)).streaming);
    EngineSettings tight = streaming(fitsOne);
    tight.memory.sessions = 3;
    const QString error = errorOf([&] { Engine::plan(container_, tight); }, {"too small", "3 sessions x 64 tokens"});
    QVERIFY2(error.isEmpty(), qPrintable(error));
  }

  void tooSmallBudgetIsRefusedWithTheNumbers() {
    const QString error = errorOf([&] { Engine::open(container_, streaming(1 << 20)); },
                                  {"too small", "resident weights", "KV cache", "MiB"});
    QVERIFY2(error.isEmpty(), qPrintable(error));
  }

  // A Hugging Face checkpoint cannot stream: the plan counts it whole, as the engine holds it
  // (f32; native keeps BF16 matrices 16-bit but not the tensors always widened), and a budget
  // it does not fit is refused with the numbers, not ignored.
  void checkpointPlanIsExactAndItsBudgetEnforced() {
    const auto checkpoint = fixtures::dataDir() / "tiny-dsa";
    for (const Precision precision : {Precision::F32, Precision::Native}) {
      EngineSettings s;
      s.precision = precision;
      const MemoryPlan plan = Engine::plan(checkpoint, s);
      QVERIFY(!plan.streaming);
      QCOMPARE(plan.residentBytes, Engine::open(checkpoint, s)->info().residentBytes);

      s.memory.budgetBytes = plan.residentBytes + plan.kvBytes + plan.scratchBytes;
      QCOMPARE(Engine::plan(checkpoint, s).residentBytes, plan.residentBytes);
      s.memory.budgetBytes -= 1;
      const QString error = errorOf([&] { Engine::open(checkpoint, s); },
                                    {"too small", "held in memory whole", "of weights", "strata-cli convert"});
      QVERIFY2(error.isEmpty(), qPrintable(error));
    }
  }

  // Any cache size, any backend: the same logits, bit for bit, as every expert resident.
  void streamingEqualsResident_data() {
    QTest::addColumn<int>("cacheExperts");
    QTest::addColumn<QString>("io");
    QTest::newRow("minimum cache, buffered") << 0 << "buffered";
    QTest::newRow("minimum cache, direct") << 0 << "direct";
    QTest::newRow("minimum cache, uring") << 0 << "uring";
    QTest::newRow("20 experts, direct") << 20 << "direct";
    QTest::newRow("everything, buffered") << 64 << "buffered";
  }
  void streamingEqualsResident() {
    QFETCH(int, cacheExperts);
    QFETCH(QString, io);
    const std::vector<float> expected = runTokens(*Engine::open(container_));
    const MemoryPlan base = Engine::plan(container_, streaming(int64_t{1} << 40));
    const int64_t fixed = base.residentBytes + base.kvBytes + base.scratchBytes;
    EngineSettings s = streaming(fixed + base.minimumExpertBytes + cacheExperts * expertBytes_,
                                 *parseIoBackend(io.toStdString()));
    s.memory.pinnedFraction = 0;
    const auto engine = Engine::open(container_, s);
    QVERIFY(engine->info().plan.streaming);
    const std::vector<float> actual = runTokens(*engine);
    QCOMPARE(actual.size(), expected.size());
    QVERIFY(actual == expected);
    const TierSnapshot snap = engine->tierSnapshot();
    QVERIFY(snap.counters.reads > 0);
    QVERIFY(snap.cacheBytes <= snap.cacheBudget);
    QCOMPARE(snap.counters.readErrors, int64_t{0});
    if (cacheExperts == 0) QVERIFY(snap.counters.misses > 0);  // it really streamed
  }

  // Under a budget, a session may not grow its KV cache past the planned context.
  void contextBeyondThePlanIsRefused() {
    EngineSettings s = streaming(int64_t{1} << 30);
    s.memory.contextTokens = 16;
    const auto engine = Engine::open(container_, s);
    auto session = engine->newSession();
    session->append(prompt(12));
    const QString error = errorOf([&] { session->append(prompt(5)); }, {"17 tokens", "16"});
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(session->length(), int64_t{12});  // nothing lost
    session->append(prompt(4));
  }

  // LRU over a 3-expert cache: the least recently used goes first; the byte count follows.
  void evictsLeastRecentlyUsed() {
    const auto s = store(3, 0, nullptr);
    use(*s, 1, 0);
    use(*s, 1, 1);
    use(*s, 1, 2);
    use(*s, 1, 0);  // 0 is now the most recent: 1 goes next
    use(*s, 1, 3);
    QCOMPARE(tierOf(*s, 1, 1), ExpertTier::Disk);
    for (int e : {0, 2, 3}) QCOMPARE(tierOf(*s, 1, e), ExpertTier::Ram);
    const TierSnapshot snap = s->snapshot();
    QCOMPARE(snap.cacheBytes, 3 * expertBytes_);
    QCOMPARE(snap.counters.misses, int64_t{4});
    QCOMPARE(snap.counters.hitsRam, int64_t{1});
  }

  // The usage history primes the cache policy's counts (nothing pinned here): an expert used
  // most in earlier runs outlives this run's briefly popular ones.
  void usageHistoryPrimesTheCachePolicy() {
    tier::UsageCounts history(4 * 16, 0);
    history[0] = 500;  // layer 1, expert 0
    history[3] = 20;   // layer 1, expert 3: primed at ceil(16 * 20 / 500) = 1
    for (bool primed : {false, true}) {
      const auto s = store(3, 0, nullptr, primed ? history : tier::UsageCounts{},
                           tier::CachePolicyKind::WindowLfu);
      // Capacity 3: a window of 1 and a main of 2, ordered by counts. 0, 1 go to main, 2 waits
      // in the window; 1 and 2 are used again. On 3: the window's 2 (2 uses) against main's
      // least used — 0 (1 use) without history, 1 (2 uses; a tie keeps it) with.
      for (int e : {0, 1, 2, 1, 2, 3}) use(*s, 1, e);
      QCOMPARE(tierOf(*s, 1, 0), primed ? ExpertTier::Ram : ExpertTier::Disk);
      QCOMPARE(tierOf(*s, 1, 2), primed ? ExpertTier::Disk : ExpertTier::Ram);
      QCOMPARE(tierOf(*s, 1, 3), ExpertTier::Ram);
    }
  }

  // History picks the pinned set; pinned experts survive any amount of other traffic.
  void pinnedExpertsAreNeverEvicted() {
    tier::UsageCounts history(4 * 16, 0);
    history[16 + 5] = 100;  // layer 2, expert 5 (layers 1..4 in order)
    const auto s = store(2, 1, nullptr, history);
    QVERIFY(s->get(2, 5) != nullptr);  // waits for the pinned load
    QCOMPARE(tierOf(*s, 2, 5), ExpertTier::Pinned);
    for (int round = 0; round < 3; ++round)
      for (int e = 0; e < 16; ++e) use(*s, 3, e);
    QCOMPARE(tierOf(*s, 2, 5), ExpertTier::Pinned);
    const TierSnapshot snap = s->snapshot();
    QCOMPARE(snap.pinnedBytes, expertBytes_);
    QVERIFY(snap.cacheBytes <= 2 * expertBytes_);
    use(*s, 2, 5);
    QCOMPARE(s->snapshot().counters.hitsPinned, int64_t{1});
  }

  void twoCallersShareOneRead() {
    ReaderProbe probe;
    probe.delayMs = 100;
    const auto s = store(4, 0, &probe);
    model::ExpertHandle a, b;
    std::thread first([&] { a = s->get(1, 7); });
    std::thread second([&] { b = s->get(1, 7); });
    first.join();
    second.join();
    QVERIFY(a && a == b);
    QCOMPARE(probe.reads.load(), 1);
  }

  // A streamed expert is used where it was read (its matrices view the read buffer: no copy),
  // and buffers are recycled: a long run over many experts with room for three in the cache
  // reads into no more buffers than the cache, the reads in flight (ioDepth 2) and the
  // handles this test holds at once (one) can keep.
  void streamedExpertsViewRecycledReadBuffers() {
    ReaderProbe probe;
    const auto s = store(3, 0, &probe);
    const model::ExpertHandle held = s->get(1, 4);
    const auto& gate = held->gate.quantized();
    QVERIFY(gate.data.empty() && gate.owner);
    const std::byte* codes = reinterpret_cast<const std::byte*>(gate.codes());
    bool inAReadBuffer = false;
    for (const std::byte* b : probe.buffers)
      inAReadBuffer = inAReadBuffer || (codes >= b && codes < b + expertBytes_ + 4096);
    QVERIFY(inAReadBuffer);
    for (int round = 0; round < 4; ++round)
      for (int layer = 1; layer <= 4; ++layer)
        for (int e = 0; e < 16; ++e) use(*s, layer, e);
    QVERIFY(probe.reads.load() > 200);
    QVERIFY2(probe.buffers.size() <= 3 + 2 + 1,
             qPrintable(QString("%1 distinct read buffers").arg(probe.buffers.size())));
  }

  void injectedErrorReachesTheCallerAndLeavesTheStoreConsistent() {
    ReaderProbe probe;
    probe.failNext = 1;
    const auto s = store(4, 0, &probe);
    const int e[] = {3};
    s->prefetch(1, e, false);
    const QString error = errorOf([&] { s->get(1, 3); }, {"injected I/O error", "layer 1 expert 3"});
    QVERIFY2(error.isEmpty(), qPrintable(error));
    TierSnapshot snap = s->snapshot();
    QCOMPARE(snap.cacheBytes, int64_t{0});  // the failed read gave its bytes back
    QCOMPARE(snap.counters.readErrors, int64_t{1});
    QCOMPARE(tierOf(*s, 1, 3), ExpertTier::Disk);
    QVERIFY(s->get(1, 3) != nullptr);  // the next read works
    QCOMPARE(s->snapshot().cacheBytes, expertBytes_);
  }

  void retuneShrinksAtOnce() {
    const auto s = store(8, 0, nullptr);
    for (int e = 0; e < 8; ++e) use(*s, 1, e);
    QCOMPARE(s->snapshot().cacheBytes, 8 * expertBytes_);
    s->retune({2 * expertBytes_, 0, true});
    const TierSnapshot snap = s->snapshot();
    QCOMPARE(snap.cacheBudget, 2 * expertBytes_);
    QCOMPARE(snap.cacheBytes, 2 * expertBytes_);
    int inRam = 0;
    for (ExpertTier t : snap.tiers) inRam += t == ExpertTier::Ram;
    QCOMPARE(inRam, 2);
  }

  // Prediction of the next layer's experts is measured: precision and recall within [0, 1],
  // and prefetched experts are found in flight or in memory.
  void predictionIsCounted() {
    const MemoryPlan base = Engine::plan(container_, streaming(int64_t{1} << 40));
    EngineSettings s = streaming(base.residentBytes + base.kvBytes + base.scratchBytes + 64 * expertBytes_);
    s.memory.pinnedFraction = 0;
    const auto engine = Engine::open(container_, s);
    runTokens(*engine);
    const TierCounters c = engine->tierSnapshot().counters;
    QVERIFY(c.predicted > 0);
    QVERIFY(c.actualNeeded > 0);
    QVERIFY(c.prefetchPrecision() > 0 && c.prefetchPrecision() <= 1);
    QVERIFY(c.prefetchRecall() > 0 && c.prefetchRecall() <= 1);
  }

  // A guess still waiting for its read when the layer's real experts are known, and not among
  // them, is dropped unread with its cache reservation; a guess that was right is read.
  void wrongGuessesAreNotRead() {
    ReaderProbe probe;
    probe.delayMs = 150;  // the two I/O threads (ioDepth 2) hold the first guesses that long
    const auto s = store(8, 0, &probe);
    const int guesses[] = {1, 2, 3, 4, 5, 6};
    s->prefetch(1, guesses, /*predicted=*/true);
    const int actual[] = {1, 9};
    s->prefetch(1, actual, /*predicted=*/false);
    QVERIFY(s->get(1, 1) != nullptr);
    QVERIFY(s->get(1, 9) != nullptr);
    // Experts 1 and 2 may have been taken before the layer ran; 3 to 6 were still queued.
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // time for any stray read
    const TierSnapshot snap = s->snapshot();
    for (int e : {3, 4, 5, 6}) {  // not in our memory (the OS may hold the file's pages)
      const ExpertTier t = tierOf(*s, 1, e);
      QVERIFY(t == ExpertTier::Disk || t == ExpertTier::PageCache);
    }
    QVERIFY2(probe.reads.load() <= 3, qPrintable(QString("%1 reads").arg(probe.reads.load())));
    QVERIFY(snap.counters.guessesDropped >= 4);
    QCOMPARE(snap.cacheBytes, probe.reads.load() * expertBytes_);  // no reservation left behind
  }

  // The pinned set also loads through the queue, but it is no guess: a layer that runs
  // without a pinned expert while it still waits for its read does not drop it.
  void pinnedLoadsAreNotDroppedAsGuesses() {
    ReaderProbe probe;
    probe.delayMs = 100;
    tier::UsageCounts history(4 * 16, 0);
    for (int e = 0; e < 4; ++e) history[e] = 100 - e;  // layer 1, experts 0-3 pinned
    const auto s = store(4, 4, &probe, history);
    const int actual[] = {9};
    s->prefetch(1, actual, /*predicted=*/false);  // the two I/O threads still hold pinned loads
    QVERIFY(s->get(1, 9) != nullptr);
    for (int e = 0; e < 4; ++e) {
      QVERIFY(s->get(1, e) != nullptr);
      QCOMPARE(tierOf(*s, 1, e), ExpertTier::Pinned);
    }
    QCOMPARE(s->snapshot().counters.guessesDropped, int64_t{0});
  }

  // Usage is saved in the data folder at close and seeds the pinned set at the next open.
  void usageHistoryPersistsAndSeedsPinning() {
    const fs::path data = dir("data");
    const MemoryPlan base = Engine::plan(container_, streaming(int64_t{1} << 40));
    EngineSettings s = streaming(base.residentBytes + base.kvBytes + base.scratchBytes + 24 * expertBytes_);
    s.memory.dataDirectory = data;
    s.memory.pinnedFraction = 0.5;
    runTokens(*Engine::open(container_, s));
    const fs::path file = tier::usageHistoryPath(data, Engine::open(container_)->info().fingerprint);
    QVERIFY(fs::exists(file));
    const tier::UsageCounts counts = tier::loadUsageHistory(file, {1, 2, 3, 4}, 16);
    QCOMPARE(counts.size(), size_t{64});
    size_t best = 0;
    for (size_t i = 0; i < counts.size(); ++i)
      if (counts[i] > counts[best]) best = i;
    QVERIFY(counts[best] > 0);

    // Before any token: the most used expert is pinned (or on its way in), nothing else is
    // in the cache.
    const auto engine = Engine::open(container_, s);
    const TierSnapshot snap = engine->tierSnapshot();
    QVERIFY(snap.pinnedBudget > 0);
    const ExpertTier t = snap.tiers[best];
    QVERIFY(t == ExpertTier::Pinned || t == ExpertTier::Loading);
    QCOMPARE(snap.cacheBytes, int64_t{0});
  }

  // The page-cache tier: buffered reads that keep file pages leave each expert read (and only
  // it: no read-ahead into neighbours) in the OS page cache, where the snapshot finds it, also
  // once our own cache evicted it; the default buffered reads leave nothing behind.
  void pageCacheShareIsMeasured_data() {
    QTest::addColumn<bool>("keepPages");
    QTest::newRow("page cache kept") << true;
    QTest::newRow("pages dropped") << false;
  }
  void pageCacheShareIsMeasured() {
    QFETCH(bool, keepPages);
    tier::StoreSettings settings;
    settings.cacheBytes = 2 * expertBytes_;
    settings.io = IoBackend::Buffered;
    settings.pageCache = keepPages;
    settings.ioDepth = 1;
    ExpertStore s(io::Container::open(container_), settings);
    // Start with none of the file in the page cache (opening it read its header, and with
    // the kernel's read-ahead, more).
    const io::Container container = io::Container::open(container_);
    for (const fs::path& file : container.files()) {
      const int fd = ::open(file.c_str(), O_RDONLY);
      QVERIFY(fd >= 0);
      ::fdatasync(fd);
      QCOMPARE(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
      ::close(fd);
    }

    const TierSnapshot before = s.snapshot();
    int64_t total = 0;
    for (int layer : container.expertLayers())
      for (int e = 0; e < container.expertCount(layer); ++e)
        total += static_cast<int64_t>(container.expert(layer, e).bytes);
    QCOMPARE(before.pageCacheTotal, total);
    QCOMPARE(before.pageCacheBytes, int64_t{0});

    const int layer = container.expertLayers().front();
    for (int e : {0, 1, 2}) use(s, layer, e);  // room for two: expert 0 leaves our cache
    const TierSnapshot after = s.snapshot();
    const auto bytes = [&](int e) { return static_cast<int64_t>(container.expert(layer, e).bytes); };
    QCOMPARE(after.pageCacheBytes, keepPages ? bytes(0) + bytes(1) + bytes(2) : int64_t{0});
    QCOMPARE(tierOf(s, layer, 0), keepPages ? ExpertTier::PageCache : ExpertTier::Disk);
    QCOMPARE(tierOf(s, layer, 1), ExpertTier::Ram);
    QCOMPARE(tierOf(s, layer, 3), ExpertTier::Disk);
  }
};

QTEST_APPLESS_MAIN(TestExpertStore)
#include "test_expert_store.moc"
