// KV cache rows (kv/kv_rows.h): 16-bit rows take half the memory of f32 ones and widen back
// to exactly the rounded values (rounding checked against the reference roundings of
// kv_file_fixtures.h: bf16 by distances, f16 by the compiler's _Float16 conversion).
#include <QtTest>

#include <cstring>
#include <random>

#include "kv/kv_cache.h"
#include "kv/kv_rows.h"
#include "kv_file_fixtures.h"

using strata::KvPrecision;
using strata::kv::KvRows;
using kvtest::rounded;

namespace {

std::vector<float> randomValues(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> v(count);
  for (float& x : v) x = normal(rng);
  v[0] = 1.0f + 1.0f / 256;  // a bf16 tie (halfway between two bf16 values): to even
  v[1] = -65000.0f;          // near f16's range limit
  return v;
}

bool sameBits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

class TestKvRows : public QObject {
  Q_OBJECT

 private slots:
  void roundsOnAppendAndWidensExactly_data() {
    QTest::addColumn<int>("precision");
    QTest::newRow("f32") << int(KvPrecision::F32);
    QTest::newRow("bf16") << int(KvPrecision::BF16);
    QTest::newRow("f16") << int(KvPrecision::F16);
  }
  void roundsOnAppendAndWidensExactly() {
    QFETCH(int, precision);
    const auto p = static_cast<KvPrecision>(precision);
    const int width = 24;
    const std::vector<float> values = randomValues(width * 10, 5);
    KvRows rows(width, p);
    rows.append(values.data(), values.size() / 2);
    rows.append(values.data() + values.size() / 2, values.size() / 2);
    QCOMPARE(rows.rows(), int64_t{10});
    std::vector<float> expected(values.size());
    for (size_t i = 0; i < values.size(); ++i) expected[i] = rounded(values[i], p);
    const std::vector<float> all = rows.toF32();
    QVERIFY(sameBits(all.data(), expected.data(), expected.size()));
    // Row access: an f32 row is read in place, a 16-bit one widened into the scratch row.
    std::vector<float> scratch(width, -1.0f);
    const float* row3 = rows.row(3, scratch.data());
    QVERIFY(sameBits(row3, expected.data() + 3 * width, width));
    QCOMPARE(row3 == scratch.data(), p != KvPrecision::F32);
    std::vector<float> many;
    QVERIFY(sameBits(rows.rowsF32(2, 5, many), expected.data() + 2 * width, 5 * width));
  }

  void sixteenBitRowsTakeHalfTheMemory() {
    const std::vector<float> values = randomValues(64 * 100, 6);
    KvRows f32(64, KvPrecision::F32), bf16(64, KvPrecision::BF16), f16(64, KvPrecision::F16);
    for (KvRows* r : {&f32, &bf16, &f16}) r->append(values.data(), values.size());
    QCOMPARE(f32.bytes(), int64_t(values.size() * 4));
    QCOMPARE(bf16.bytes(), int64_t(values.size() * 2));
    QCOMPARE(f16.bytes(), int64_t(values.size() * 2));
  }

  void truncatePrefixAndConvert() {
    const std::vector<float> values = randomValues(8 * 6, 7);
    KvRows rows(8, KvPrecision::BF16);
    rows.append(values.data(), values.size());
    const KvRows first4 = rows.prefix(4);
    QCOMPARE(first4.rows(), int64_t{4});
    KvRows cut = rows;
    cut.truncateRows(4);
    QVERIFY(cut == first4);
    cut.truncateRows(9);  // longer than held: unchanged
    QCOMPARE(cut.rows(), int64_t{4});
    // Widening to f32 is exact; narrowing an f32 copy back gives the same bits.
    const KvRows wide = rows.convertedTo(KvPrecision::F32);
    QCOMPARE(wide.bytes(), rows.bytes() * 2);
    QVERIFY(wide.toF32() == rows.toF32());
    QVERIFY(wide.convertedTo(KvPrecision::BF16) == rows);
  }

  // What the KV file stores: this precision's bits copied, another precision re-rounded.
  void encodesForFiles() {
    const std::vector<float> values = randomValues(16 * 4, 8);
    KvRows rows(16, KvPrecision::F32);
    rows.append(values.data(), values.size());
    std::vector<uint8_t> same(values.size() * 4), half(values.size() * 2);
    rows.encode(0, values.size(), KvPrecision::F32, same.data());
    QVERIFY(std::memcmp(same.data(), values.data(), same.size()) == 0);
    rows.encode(0, values.size(), KvPrecision::F16, half.data());
    KvRows back(16, KvPrecision::F16);
    back.appendEncoded(half.data(), values.size());
    const std::vector<float> widened = back.toF32();
    for (size_t i = 0; i < values.size(); ++i)
      QCOMPARE(widened[i], rounded(values[i], KvPrecision::F16));
  }

  // A cache's bytes follow its precision; truncation and prefixes keep it.
  void cacheBytesFollowPrecision() {
    const strata::kv::CacheDims dims{32, 8, 16};
    strata::kv::KvCache f32(2, dims, KvPrecision::F32), bf16(2, dims, KvPrecision::BF16);
    const std::vector<float> values = randomValues(32 * 5, 9);
    for (strata::kv::KvCache* c : {&f32, &bf16})
      for (int l = 0; l < 2; ++l) {
        c->layer(l).latent.append(values.data(), 32 * 5);
        c->layer(l).ropeKey.append(values.data(), 8 * 5);
        if (l == 0) c->layer(l).indexKey.append(values.data(), 16 * 5);
      }
    QCOMPARE(f32.bytes(), int64_t{(2 * (32 + 8) + 16) * 5 * 4});
    QCOMPARE(bf16.bytes() * 2, f32.bytes());
    strata::kv::KvCache copy(0, dims);
    copy.copyPrefix(bf16, 3);
    QCOMPARE(copy.precision(), KvPrecision::BF16);
    QCOMPARE(copy.layer(0).latent.rows(), int64_t{3});
    QCOMPARE(copy.layer(1).indexKey.rows(), int64_t{0});
    bf16.convertTo(KvPrecision::F32);
    QCOMPARE(bf16.bytes(), f32.bytes());
  }
};

QTEST_GUILESS_MAIN(TestKvRows)
#include "test_kv_rows.moc"
