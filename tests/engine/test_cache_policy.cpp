// Expert-cache replacement policies and trace replay: each policy on a sequence worked out by
// hand, the bookkeeping every policy shares (erase, contains, size, empty eviction, capacity),
// Belady's MIN on a textbook sequence, and Belady as an upper bound of every online policy.
#include <QtTest>
#include <optional>
#include <random>
#include <set>
#include <unordered_set>
#include <vector>

#include "error_check.h"
#include "synthetic_routing.h"
#include "tier/cache_policy.h"
#include "tier/cache_replay.h"

using namespace strata::tier;

Q_DECLARE_METATYPE(strata::tier::CachePolicyKind)

namespace {

// Keys spread over layers, so a policy that mixed up layer and expert would be caught.
ExpertKey k(int n) { return expertKey(n % 3, 100 + n); }

std::optional<ExpertKey> some(int n) { return k(n); }

std::vector<ExpertKey> randomAccesses(unsigned seed, size_t count, int distinct) {
  std::mt19937 rng(seed);
  // Half uniform, half from a few hot keys: some reuse at every distance.
  std::uniform_int_distribution<int> any(0, distinct - 1), hot(0, distinct / 8);
  std::vector<ExpertKey> keys;
  for (size_t i = 0; i < count; ++i) keys.push_back(k(i % 2 ? any(rng) : hot(rng)));
  return keys;
}

void addKindRows() {
  QTest::addColumn<CachePolicyKind>("kind");
  for (CachePolicyKind kind : allCachePolicies())
    QTest::newRow(std::string(cachePolicyName(kind)).c_str()) << kind;
}

// A policy that forgets to remove its victim: replay must notice.
class LeakyPolicy final : public CachePolicy {
 public:
  void insert(ExpertKey key) override { keys_.push_back(key); }
  void touch(ExpertKey) override {}
  std::optional<ExpertKey> evict() override {
    return keys_.empty() ? std::nullopt : std::optional<ExpertKey>(keys_.front());
  }
  void erase(ExpertKey) override {}
  bool contains(ExpertKey key) const override {
    return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
  }
  size_t size() const override { return keys_.size(); }
  void setCapacity(size_t) override {}

 private:
  std::vector<ExpertKey> keys_;
};

}  // namespace

class TestCachePolicy : public QObject {
  Q_OBJECT

 private slots:
  void keysSplitLayerAndExpert() {
    const ExpertKey key = expertKey(77, 255);
    QCOMPARE(key, (77u << 16) | 255u);
    QCOMPARE(keyLayer(key), 77);
    QCOMPARE(keyExpert(key), 255);
  }

  void namesRoundTrip() {
    for (CachePolicyKind kind : allCachePolicies())
      QCOMPARE(parseCachePolicy(cachePolicyName(kind)), std::optional<CachePolicyKind>(kind));
    QCOMPARE(parseCachePolicy("lru"), std::optional<CachePolicyKind>(CachePolicyKind::Lru));
    QVERIFY(!parseCachePolicy("LRU").has_value());
    QVERIFY(!parseCachePolicy("").has_value());
  }

  void lruEvictsLeastRecentlyUsed() {
    auto p = makeCachePolicy(CachePolicyKind::Lru, 3);
    p->insert(k(1));
    p->insert(k(2));
    p->insert(k(3));
    p->touch(k(1));  // recency, oldest first: 2 3 1
    QCOMPARE(p->evict(), some(2));
    p->insert(k(4));  // 3 1 4
    p->touch(k(3));   // 1 4 3
    QCOMPARE(p->evict(), some(1));
    QCOMPARE(p->evict(), some(4));
    QCOMPARE(p->evict(), some(3));
    QCOMPARE(p->evict(), std::optional<ExpertKey>());
  }

  void slruProtectsKeysUsedTwice() {
    // Capacity 5: protected holds 4. Key 0 is used twice, then a scan of one-time keys
    // 1..4 arrives. LRU would evict 0 first (least recent); SLRU takes the scan first.
    auto p = makeCachePolicy(CachePolicyKind::Slru, 5);
    p->insert(k(0));
    p->touch(k(0));  // second use: protected
    for (int n = 1; n <= 4; ++n) p->insert(k(n));
    QCOMPARE(p->evict(), some(1));
    QCOMPARE(p->evict(), some(2));
    QCOMPARE(p->evict(), some(3));
    QCOMPARE(p->evict(), some(4));
    QCOMPARE(p->evict(), some(0));
  }

  void slruProtectedOverflowDropsToProbation() {
    // Capacity 6, protected 4: promoting a fifth key pushes the protected list's least
    // recent key (0) back to the front of probation, behind the next new key (5).
    auto p = makeCachePolicy(CachePolicyKind::Slru, 6);
    for (int n = 0; n < 5; ++n) p->insert(k(n));
    for (int n = 0; n < 5; ++n) p->touch(k(n));  // protected, most recent first: 4 3 2 1 (0 out)
    p->insert(k(5));                             // probation: 5 0
    QCOMPARE(p->evict(), some(0));
    QCOMPARE(p->evict(), some(5));
    QCOMPARE(p->evict(), some(1));  // probation empty: protected's least recent
    // Shrinking the capacity to 2 leaves protected room for 1: 4 stays, 3 and 2 drop back.
    p->setCapacity(2);
    QCOMPARE(p->evict(), some(2));
    QCOMPARE(p->evict(), some(3));
    QCOMPARE(p->evict(), some(4));
  }

  void arcKeepsFrequentKeysThroughAScan() {
    // c = 4: key 0 used twice sits in T2; the scan 1..3 and the new keys go through T1.
    auto p = makeCachePolicy(CachePolicyKind::Arc, 4);
    p->insert(k(0));
    p->touch(k(0));
    for (int n = 1; n <= 3; ++n) p->insert(k(n));
    for (int n = 4; n <= 6; ++n) {
      QCOMPARE(p->evict(), some(n - 3));  // T1's least recent (|T1| = 3 > p = 0)
      p->insert(k(n));
    }
    QVERIFY(p->contains(k(0)));
    QVERIFY(!p->contains(k(1)));  // evicted
  }

  void arcAdaptsToGhostHits() {
    // c = 2, the accesses 1 2 1 3 2 4 1, worked through the paper's lists:
    auto p = makeCachePolicy(CachePolicyKind::Arc, 2);
    p->insert(k(1));
    p->insert(k(2));                // T1 = [2 1]
    p->touch(k(1));                 // T1 = [2], T2 = [1]
    QCOMPARE(p->evict(), some(2));  // |T1| = 1 > p = 0: T1's LRU; B1 = [2]
    p->insert(k(3));                // T1 = [3]
    QCOMPARE(p->evict(), some(3));  // B1 = [3 2]
    p->insert(k(2));                // ghost hit in B1: p = 1; T2 = [2 1], B1 = [3]
    QVERIFY(p->contains(k(2)));
    QCOMPARE(p->evict(), some(1));  // T1 empty: T2's LRU; B2 = [1]
    p->insert(k(4));                // T1 = [4]
    QCOMPARE(p->evict(), some(2));  // |T1| = 1 = p: not above target, so T2's LRU; B2 = [2 1]
    p->insert(k(1));                // ghost hit in B2: p = 0; T2 = [1]
    QCOMPARE(p->size(), size_t(2));
    QVERIFY(p->contains(k(4)));
    QVERIFY(p->contains(k(1)));
  }

  void tinyLfuWindowContestByFrequency() {
    // Capacity 10: window 2 (20%), main 8. Filling with 0..9 leaves window = [9 8] and
    // probation = [7 .. 0], each key counted once.
    auto p = makeCachePolicy(CachePolicyKind::TinyLfu, 10);
    for (int n = 0; n < 10; ++n) p->insert(k(n));
    for (int i = 0; i < 3; ++i) p->touch(k(8));  // 8 counted 4 times; window = [8 9]
    // Window's oldest (9, count 1) vs probation's oldest (0, count 1): ties keep main's key.
    QCOMPARE(p->evict(), some(9));
    p->insert(k(20));  // window = [20 8]
    // 8 (count 4) beats 0 (count 1): 8 moves to main and 0 goes.
    QCOMPARE(p->evict(), some(0));
    QVERIFY(p->contains(k(8)));
    // A scan of one-time keys cannot displace main's keys: each loses its contest.
    p->insert(k(21));
    for (int n = 22; n < 40; ++n) {
      const std::optional<ExpertKey> victim = p->evict();
      QVERIFY(victim == some(n - 2));
      p->insert(k(n));
    }
    for (int n = 1; n <= 8; ++n) QVERIFY2(p->contains(k(n)), qPrintable(QString::number(n)));
  }

  void tinyLfuWindowGrowsOnWindowGhostHits() {
    // Capacity 12: window 2, ghosts remembered 3. Fill: window = [11 10], probation = [9 .. 0].
    auto p = makeCachePolicy(CachePolicyKind::TinyLfu, 12);
    for (int n = 0; n < 12; ++n) p->insert(k(n));
    QCOMPARE(p->evict(), some(10));  // contest 10 vs 0, tie: the window's key goes (a ghost)
    p->insert(k(20));                // window = [20 11]
    QCOMPARE(p->evict(), some(11));  // 11 vs 0, tie again
    p->insert(k(10));                // 10 was the window's victim: the window grows to 3
    // The window ([10 20]) is below its new size, so there is no contest: main's oldest goes.
    // With a window of 2 this would have been 20 vs 0, and 20 would have gone.
    QCOMPARE(p->evict(), some(0));
  }

  void windowLfuEvictsTheLeastUsedMainKey() {
    // Capacity 10: window 2, main 8. Filling with 0..9 leaves window = [9 8], main = 7..0,
    // each counted once. 0..6 used again: 7, the newest in main, is now its least used key.
    auto p = makeCachePolicy(CachePolicyKind::WindowLfu, 10);
    for (int n = 0; n < 10; ++n) p->insert(k(n));
    for (int n = 0; n <= 6; ++n) p->touch(k(n));
    // Window's oldest (8, count 1) vs main's least used (7, count 1): ties keep main's key.
    QCOMPARE(p->evict(), some(8));
    for (int i = 0; i < 2; ++i) p->touch(k(9));  // 9 counted 3 times
    p->insert(k(20));                            // window = [20 9]
    // 9 beats 7 and moves to main; 7 goes although it entered main after 0..6 (an SLRU main
    // would give up its least recent key, 0).
    QCOMPARE(p->evict(), some(7));
    for (int n : {0, 1, 2, 3, 4, 5, 6, 9, 20}) QVERIFY2(p->contains(k(n)), qPrintable(QString::number(n)));
  }

  void windowLfuReordersMainWhenCountsHalve() {
    // Capacity 4: window 1, main 3; counts halve every 160 increments. D is used 20 times,
    // E 12, both before the halving (D 10, E 6 after it); then E 6 more times: E 12 > D 10, so
    // D must go — with main still ordered by the counts before the halving, E would.
    auto p = makeCachePolicy(CachePolicyKind::WindowLfu, 4);
    const ExpertKey d = k(1), e = k(2), f = k(3), g = k(4);
    p->insert(d);
    for (int i = 0; i < 19; ++i) p->touch(d);
    p->insert(e);  // d to main
    for (int i = 0; i < 11; ++i) p->touch(e);
    p->insert(f);  // e to main
    p->insert(g);  // f to main; 34 increments so far
    for (int i = 0; i < 200; ++i) p->touch(g);  // the 160th increment halves every count
    for (int i = 0; i < 6; ++i) p->touch(e);
    p->erase(f);
    QCOMPARE(p->size(), size_t(3));
    QCOMPARE(p->evict(), some(1));  // g (the window's, used most) beats d: d goes
    QVERIFY(p->contains(e) && p->contains(g));
  }

  void primingCountsAsEarlierUse() {
    // Window-LFU, capacity 4 (window 1, main 3): 1..4 used once each, then 9 primed with 3
    // uses of earlier runs. Priming is not residence: 9 is not in the cache.
    auto p = makeCachePolicy(CachePolicyKind::WindowLfu, 4);
    for (int n = 1; n <= 4; ++n) p->insert(k(n));
    p->prime(k(9), 3);
    QVERIFY(!p->contains(k(9)));
    QCOMPARE(p->size(), size_t(4));
    // 1 primed too, after it entered main: main re-orders, so 2 is now its least used.
    p->prime(k(1), 5);
    QCOMPARE(p->evict(), some(4));  // the window's 4 vs main's 2: a tie keeps main's
    p->insert(k(9));                // counted 4: beats main's least used
    QCOMPARE(p->evict(), some(2));
    QVERIFY(p->contains(k(1)) && p->contains(k(3)) && p->contains(k(9)));
    // Policies without counts ignore priming.
    auto lru = makeCachePolicy(CachePolicyKind::Lru, 2);
    lru->prime(k(1), 16);
    lru->insert(k(1));
    lru->insert(k(2));
    lru->touch(k(2));
    QCOMPARE(lru->evict(), some(1));
  }

  void bookkeeping_data() { addKindRows(); }
  void bookkeeping() {
    QFETCH(CachePolicyKind, kind);
    auto p = makeCachePolicy(kind, 4);
    QCOMPARE(p->evict(), std::optional<ExpertKey>());
    QCOMPARE(p->size(), size_t(0));
    for (int n = 1; n <= 3; ++n) p->insert(k(n));
    QCOMPARE(p->size(), size_t(3));
    QVERIFY(p->contains(k(2)));
    QVERIFY(!p->contains(k(4)));
    QVERIFY(
        !p->contains(expertKey(keyLayer(k(2)) + 1, keyExpert(k(2)))));  // same expert, other layer
    p->erase(k(2));
    p->erase(k(9));  // absent: no-op
    QCOMPARE(p->size(), size_t(2));
    QVERIFY(!p->contains(k(2)));
    std::set<ExpertKey> evicted;
    for (int i = 0; i < 2; ++i) evicted.insert(p->evict().value_or(0));
    QCOMPARE(evicted, (std::set<ExpertKey>{k(1), k(3)}));
    QCOMPARE(p->evict(), std::optional<ExpertKey>());
    QCOMPARE(p->size(), size_t(0));
    p->insert(k(2));  // an erased key can come back
    QVERIFY(p->contains(k(2)));
  }

  void insertingAResidentKeyThrows_data() { addKindRows(); }
  void insertingAResidentKeyThrows() {
    QFETCH(CachePolicyKind, kind);
    auto p = makeCachePolicy(kind, 4);
    p->insert(k(1));
    QCOMPARE(errorOf([&] { p->insert(k(1)); }, {"layer 1 expert 101", "inserted twice"}),
             QString());
  }

  void neverAboveCapacity_data() { addKindRows(); }
  void neverAboveCapacity() {
    // The store's protocol on random accesses, with the capacity cut and raised midway as
    // a live retune would: every victim was resident, and the size never passes capacity.
    QFETCH(CachePolicyKind, kind);
    const std::vector<ExpertKey> keys = randomAccesses(7, 4000, 64);
    size_t capacity = 16;
    auto p = makeCachePolicy(kind, capacity);
    std::unordered_set<ExpertKey> resident;
    auto evictDownTo = [&](size_t limit) {
      while (resident.size() > limit) {
        const std::optional<ExpertKey> victim = p->evict();
        QVERIFY(victim.has_value());
        QVERIFY(resident.erase(*victim) == 1);
      }
    };
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i == 1500 || i == 3000) {
        capacity = i == 1500 ? 5 : 24;
        p->setCapacity(capacity);
        evictDownTo(capacity);
      }
      if (!resident.count(keys[i])) {
        evictDownTo(capacity - 1);
        p->insert(keys[i]);
        resident.insert(keys[i]);
      } else {
        p->touch(keys[i]);
      }
      QVERIFY(p->size() <= capacity);
      QCOMPARE(p->size(), resident.size());
    }
  }

  void beladyOnTextbookSequence() {
    // 1 2 3 4 1 2 5 1 2 3 4 5 with 3 slots. Belady: 1 2 3 miss; 4 miss, evicts 3 (next use
    // furthest, position 9); 1 2 hit; 5 miss, evicts 4 (position 10); 1 2 hit; 3 miss,
    // evicts 1 or 2 (never used again); 4 miss, evicts the other; 5 hit. 7 misses, 5 hits.
    // LRU: only the 1 and 2 after 5 hit: 2 hits.
    std::vector<ExpertKey> seq;
    for (int n : {1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5}) seq.push_back(k(n));
    const ReplayResult best = replayBelady(seq, 3);
    QCOMPARE(best.accesses, uint64_t(12));
    QCOMPARE(best.hits, uint64_t(5));
    QCOMPARE(best.peakResident, size_t(3));
    auto lru = makeCachePolicy(CachePolicyKind::Lru, 3);
    QCOMPARE(replayPolicy(seq, *lru, 3).hits, uint64_t(2));
  }

  void bestStaticSetOnHandSequence() {
    // 1 2 1 3 3 1 2 4 2 1 with 3 slots: counts 1:4, 2:3, 3:2, 4:1, so 1 and 2 stay (3 + 2
    // hits after their first loads) and 3, 4 share the last slot (the second 3 hits): 6.
    std::vector<ExpertKey> seq;
    for (int n : {1, 2, 1, 3, 3, 1, 2, 4, 2, 1}) seq.push_back(k(n));
    const ReplayResult fixed = replayBestStatic(seq, 3);
    QCOMPARE(fixed.hits, uint64_t(6));
    QCOMPARE(fixed.peakResident, size_t(3));
    // One slot: nothing stays, only the repeated 3 hits.
    QCOMPARE(replayBestStatic(seq, 1).hits, uint64_t(1));
    // Room for all: every access after a key's first hits.
    QCOMPARE(replayBestStatic(seq, 5).hits, uint64_t(10 - 4));
    QCOMPARE(errorOf([&] { replayBestStatic(seq, 0); }, {"at least 1"}), QString());
  }

  void beladyBoundsEveryPolicy() {
    // Property: on random traces Belady's hits are at least every online policy's, at most
    // accesses - distinct keys (each key's first access misses), and exactly that when
    // everything fits.
    for (unsigned seed = 1; seed <= 6; ++seed) {
      const std::vector<ExpertKey> keys = randomAccesses(seed, 3000, 40 + 20 * int(seed));
      const size_t distinct = std::unordered_set<ExpertKey>(keys.begin(), keys.end()).size();
      for (size_t capacity : {size_t(1), size_t(7), size_t(30), distinct}) {
        const ReplayResult best = replayBelady(keys, capacity);
        QVERIFY(best.hits <= keys.size() - distinct);
        const ReplayResult fixed = replayBestStatic(keys, capacity);  // a policy too
        QVERIFY(fixed.hits <= best.hits);
        QVERIFY(fixed.peakResident <= capacity);
        if (capacity == distinct) QCOMPARE(best.hits, uint64_t(keys.size() - distinct));
        for (CachePolicyKind kind : allCachePolicies()) {
          auto p = makeCachePolicy(kind, capacity);
          const ReplayResult r = replayPolicy(keys, *p, capacity);
          QVERIFY2(r.hits <= best.hits,
                   qPrintable(QString("%1 seed %2 capacity %3: %4 > Belady %5")
                                  .arg(QString::fromLatin1(cachePolicyName(kind).data()))
                                  .arg(seed)
                                  .arg(capacity)
                                  .arg(r.hits)
                                  .arg(best.hits)));
          QVERIFY(r.peakResident <= capacity);
        }
      }
    }
  }

  void replayCatchesAPolicyThatKeepsItsVictim() {
    LeakyPolicy leaky;
    const std::vector<ExpertKey> keys = {k(1), k(2), k(3)};
    QCOMPARE(errorOf([&] { replayPolicy(keys, leaky, 2); }, {"cache replay", "holds 3 keys"}),
             QString());
  }

  void replayRejectsZeroCapacity() {
    auto p = makeCachePolicy(CachePolicyKind::Lru, 1);
    const std::vector<ExpertKey> keys = {k(1)};
    QCOMPARE(errorOf([&] { replayPolicy(keys, *p, 0); }, {"at least 1"}), QString());
    QCOMPARE(errorOf([&] { replayBelady(keys, 0); }, {"at least 1"}), QString());
  }

  void defaultPolicyBeatsLruOnSkewedRouting() {
    // The reason for the default (cache_policy.cpp): on Zipf routing with a step's experts
    // partly reused by the next, it keeps more of what is needed than LRU does.
    SyntheticRouting shape;
    const std::vector<ExpertKey> keys = traceAccesses(syntheticRoutingTrace(shape));
    const size_t capacity = size_t(0.2 * shape.layers * shape.experts);
    auto lru = makeCachePolicy(CachePolicyKind::Lru, capacity);
    auto chosen = makeCachePolicy(defaultCachePolicy(), capacity);
    const double lruRate = replayPolicy(keys, *lru, capacity).hitRate();
    const double chosenRate = replayPolicy(keys, *chosen, capacity).hitRate();
    QVERIFY2(chosenRate > lruRate + 0.02,
             qPrintable(QString("default %1 vs LRU %2").arg(chosenRate).arg(lruRate)));
  }

  void capacityFromFractionRounds() {
    RoutingTraceHeader h{"m", {1, 2, 3}, 10, 0};
    QCOMPARE(capacityFromFraction(h, 0.2), size_t(6));
    QCOMPARE(capacityFromFraction(h, 0.01), size_t(1));  // at least one expert
    QCOMPARE(capacityFromFraction(h, 1.0), size_t(30));
  }
};

QTEST_APPLESS_MAIN(TestCachePolicy)
#include "test_cache_policy.moc"
