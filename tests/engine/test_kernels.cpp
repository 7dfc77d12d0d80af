// Integer quantization (quant/int_quant) and the int8/int4 kernels: every SIMD path the CPU
// has must equal the scalar reference bit for bit; the scalar reference must equal the
// arithmetic written out here from the format definition.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "engine/row_order.h"
#include "kernels/exponentials.h"
#include "kernels/int_dot.h"
#include "kernels/matmul.h"
#include "kernels/quant_matmul.h"
#include "kernels/row_product.h"
#include "quant/convert.h"
#include "quant/int_quant.h"
#include "strata/error.h"

using namespace strata;
using quant::IntFormat;

namespace {

std::vector<float> randomValues(size_t count, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(count);
  for (float& x : v) x = normal(rng);
  return v;
}

bool bitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

int qmax(IntFormat f) { return f == IntFormat::Int8 ? 127 : 7; }

#if defined(__x86_64__)
// The calling thread's XINUSE (xgetbv with ecx = 1), or nothing where the CPU cannot report it.
std::optional<uint64_t> vectorStateInUse() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return std::nullopt;
  if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d) || !(a & (1u << 2))) return std::nullopt;
  uint32_t low = 0, high = 0;
  asm volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(1));
  return (uint64_t{high} << 32) | low;
}
// XINUSE bits 2 and 6: the upper halves of ymm0-15 and of zmm0-15.
constexpr uint64_t kDirtyUpper = (1u << 2) | (1u << 6);
#endif

void addShapeRows() {
  QTest::addColumn<int>("format");
  QTest::addColumn<int>("rows");
  QTest::addColumn<int>("cols");
  QTest::addColumn<int>("group");
  for (int format : {0, 1})
    for (auto [rows, cols, group] : {std::tuple{5, 77, 0}, {7, 200, 32}, {3, 130, 64},
                                     {9, 640, 128}, {4, 6144, 128}, {2, 2048, 32}, {3, 384, 256}}) {
      const char* name = format == 0 ? "int8" : "int4";
      QTest::addRow("%s %dx%d g%d", name, rows, cols, group) << format << rows << cols << group;
    }
}

}  // namespace

class TestKernels : public QObject {
  Q_OBJECT

 private slots:
  // Codes stay in [-qmax, qmax] and dequantization errs by at most half a step per element,
  // where the step is the group's max |w| / qmax computed here: the stored scale, in f32 for
  // int8 and rounded to bf16 for int4 (whose codes are chosen against that rounded step; codes
  // chosen against the unrounded one would miss the bound by up to 7 x 0.4 % of a step).
  void quantizeRoundTrip_data() { addShapeRows(); }
  void quantizeRoundTrip() {
    QFETCH(int, format);
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(int, group);
    const auto f = static_cast<IntFormat>(format);
    const auto w = randomValues(static_cast<size_t>(rows) * cols, 11);
    const auto m = quant::quantizeMatrix(w.data(), rows, cols, f, group);
    QCOMPARE(m.paddedCols % 128, int64_t{0});
    const int64_t g = group == 0 ? m.paddedCols : group;
    std::vector<float> row(static_cast<size_t>(cols));
    for (int r = 0; r < rows; ++r) {
      quant::dequantizeRow(m, r, row.data());
      for (int c = 0; c < cols; ++c) {
        const int code = quant::quantCode(m, r, c);
        QVERIFY(code >= -qmax(f) && code <= qmax(f));
        float amax = 0.0f;
        for (int k = c / g * g; k < std::min<int64_t>(c / g * g + g, cols); ++k)
          amax = std::max(amax, std::fabs(w[r * cols + k]));
        const float exact = amax / qmax(f);
        const float step = f == IntFormat::Int4 ? quant::bf16ToF32(quant::f32ToBf16(exact)) : exact;
        QCOMPARE(m.scale(r, c / g), step);
        QVERIFY2(std::fabs(row[c] - w[r * cols + c]) <= 0.5f * step * 1.0001f,
                 qPrintable(QString("r%1 c%2: %3 vs %4").arg(r).arg(c).arg(row[c]).arg(w[r * cols + c])));
      }
      for (int c = cols; c < m.paddedCols; ++c) QCOMPARE(quant::quantCode(m, r, c), 0);
    }
  }

  // Int4's bf16 scales cost no accuracy worth the name: on normal weights the reconstruction
  // error is within 0.1 % of what f32 scales (computed here, codes against the exact step)
  // give, for groups of 32 and whole rows. Storing the scale with a 7-bit mantissa moves each
  // step by at most 0.4 %, while the codes' rounding errs by up to half a step.
  void int4Bf16ScalesKeepTheError() {
    const int rows = 256, cols = 1024;
    const auto w = randomValues(static_cast<size_t>(rows) * cols, 5, 0.02f);
    for (int group : {32, 0}) {
      const auto m = quant::quantizeMatrix(w.data(), rows, cols, IntFormat::Int4, group);
      const int g = group == 0 ? cols : group;
      double stored = 0, exact = 0;
      std::vector<float> row(static_cast<size_t>(cols));
      for (int r = 0; r < rows; ++r) {
        quant::dequantizeRow(m, r, row.data());
        for (int g0 = 0; g0 < cols; g0 += g) {
          float amax = 0;
          for (int c = g0; c < g0 + g; ++c) amax = std::max(amax, std::fabs(w[r * cols + c]));
          const float step = amax / 7;
          for (int c = g0; c < g0 + g; ++c) {
            const float v = w[r * cols + c];
            const float q = std::clamp(std::nearbyint(v / step), -7.0f, 7.0f);
            exact += std::pow(double(q * step - v), 2);
            stored += std::pow(double(row[c] - v), 2);
          }
        }
      }
      QVERIFY2(stored <= exact * 1.002 && stored > 0,  // RMS within 0.1 %
               qPrintable(QString("group %1: %2 vs %3").arg(group).arg(stored).arg(exact)));
    }
  }

  // The documented int4 layout, byte by byte: byte j of a 32-column block holds column j
  // (low nibble) and column j + 16 (high nibble), each as code + 8.
  void int4NibbleLayout() {
    std::vector<float> w(32);
    for (int c = 0; c < 32; ++c) w[c] = static_cast<float>(c % 15 - 7);  // codes -7..7, max 7
    const auto m = quant::quantizeMatrix(w.data(), 1, 32, IntFormat::Int4, 32);
    QCOMPARE(m.scale(0, 0), 1.0f);
    for (int j = 0; j < 16; ++j) {
      const int low = (j % 15 - 7) + 8;
      const int high = ((j + 16) % 15 - 7) + 8;
      QCOMPARE(int{m.data[j]}, low | (high << 4));
    }
    QCOMPARE(m.data.size(), size_t{64});   // padded to 128 columns
    QCOMPARE(int{m.data[16]}, 0x88);       // padding columns hold code 0
  }

  void rejectsUnsupportedGroupSize() {
    const std::vector<float> w(96, 1.0f);
    QVERIFY_THROWS_EXCEPTION(strata::Error, quant::quantizeMatrix(w.data(), 1, 96, IntFormat::Int4, 48));
  }

  // Activation codes never use -128, even for a block whose extreme is negative.
  void activationCodesAvoidMinus128() {
    std::vector<float> x(128, 0.25f);
    x[3] = -2.0f;
    x[40] = -1e-3f;
    const auto a = quant::quantizeActivations(x.data(), 1, 128, 128, IntFormat::Int8);
    QCOMPARE(int{a.codes[3]}, -127);
    for (int8_t c : a.codes) QVERIFY(c >= -127);
  }

  // Codes and scales from the definition: per block of 32, scale = max|x| / 127 and
  // code = round-half-even(x / scale); a zero block has scale 0 and codes 0; padding is 0.
  void activationCodesFollowTheDefinition() {
    const int cols = 77, padded = 128;
    auto x = randomValues(2 * cols, 9, 3.0f);
    std::fill(x.begin() + 32, x.begin() + 64, 0.0f);  // row 0, block 1: all zero
    const auto a = quant::quantizeActivations(x.data(), 2, cols, padded, IntFormat::Int8);
    for (int r = 0; r < 2; ++r)
      for (int b = 0; b < padded / 32; ++b) {
        float amax = 0;
        for (int c = b * 32; c < std::min(cols, b * 32 + 32); ++c) amax = std::max(amax, std::fabs(x[r * cols + c]));
        const float scale = amax / 127.0f;
        QCOMPARE(a.scales[r * (padded / 32) + b], scale);
        for (int c = b * 32; c < b * 32 + 32; ++c) {
          const int expected = c >= cols || scale == 0.0f
                                   ? 0
                                   : static_cast<int>(std::clamp(std::nearbyint(x[r * cols + c] / scale), -127.0f, 127.0f));
          QCOMPARE(int{a.codes[r * padded + c]}, expected);
        }
      }
  }

  // The int4 arrangement and its offsets, from the layout definition: weight byte t of a
  // chunk holds column 32*(t/16) + t%16 (low nibble) and that column + 16 (high nibble).
  void int4ActivationArrangement() {
    const auto x = randomValues(256, 5, 2.0f);
    const auto natural = quant::quantizeActivations(x.data(), 1, 256, 256, IntFormat::Int8);
    const auto arranged = quant::quantizeActivations(x.data(), 1, 256, 256, IntFormat::Int4);
    for (int chunk = 0; chunk < 2; ++chunk)
      for (int j = 0; j < 16; ++j) {
        int32_t sum = 0;
        for (int t = 4 * j; t < 4 * j + 4; ++t) {
          const int low = chunk * 128 + 32 * (t / 16) + t % 16;
          QCOMPARE(arranged.codes[chunk * 128 + t], natural.codes[low]);
          QCOMPARE(arranged.codes[chunk * 128 + 64 + t], natural.codes[low + 16]);
          sum += natural.codes[low] + natural.codes[low + 16];
        }
        QCOMPARE(arranged.int4Offsets[chunk * 16 + j], 8 * sum);
      }
  }

  // The scalar reference equals the arithmetic of int_dot.h, written out from the codes.
  void scalarMatchesDefinition_data() { addShapeRows(); }
  void scalarMatchesDefinition() {
    QFETCH(int, format);
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(int, group);
    const auto f = static_cast<IntFormat>(format);
    const auto w = randomValues(static_cast<size_t>(rows) * cols, 21);
    const auto x = randomValues(static_cast<size_t>(cols) * 2, 22, 3.0f);
    const auto m = quant::quantizeMatrix(w.data(), rows, cols, f, group);
    std::vector<float> y(static_cast<size_t>(rows) * 2);
    kernels::matmulInteger(m, x.data(), 2, y.data(), kernels::intKernels(kernels::IntKernelPath::Scalar));
    const auto natural = quant::quantizeActivations(x.data(), 2, cols, m.paddedCols, IntFormat::Int8);
    const int64_t blocks = m.paddedCols / 32;
    for (int i = 0; i < 2; ++i)
      for (int r = 0; r < rows; ++r) {
        auto code = [&](int64_t c) { return quant::quantCode(m, r, c) * natural.codes[i * m.paddedCols + c]; };
        auto scaleOf = [&](int64_t b) {
          return m.scale(r, b * 32 / m.groupSize) * natural.scales[i * blocks + b];
        };
        // Exact block sums, then f32 lanes lane[b % L]: L = 4 for int8, 16 for int4.
        const int lanesCount = f == IntFormat::Int8 ? 4 : 16;
        float lanes[16] = {};
        for (int64_t b = 0; b < blocks; ++b) {
          int32_t isum = 0;
          for (int64_t c = b * 32; c < b * 32 + 32; ++c) isum += code(c);
          lanes[b % lanesCount] += scaleOf(b) * static_cast<float>(isum);
        }
        float expected = 0.0f;
        if (f == IntFormat::Int8) {
          expected = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        } else {
          float l8[8], l4[4];
          for (int k = 0; k < 8; ++k) l8[k] = lanes[k] + lanes[k + 8];
          for (int k = 0; k < 4; ++k) l4[k] = l8[k] + l8[k + 4];
          expected = (l4[0] + l4[2]) + (l4[1] + l4[3]);
        }
        QCOMPARE(y[i * rows + r], expected);
      }
  }

  // Every SIMD path on this CPU is bit-exact against scalar, incl. odd sizes and extremes.
  void simdBitExact_data() {
    QTest::addColumn<int>("path");
    for (auto p : kernels::kAllIntPaths)
      if (p != kernels::IntKernelPath::Scalar)
        QTest::newRow(std::string(kernels::pathName(p)).c_str()) << static_cast<int>(p);
  }
  void simdBitExact() {
    QFETCH(int, path);
    const auto p = static_cast<kernels::IntKernelPath>(path);
    if (!kernels::pathAvailable(p))
      QSKIP(qPrintable(QString("this CPU lacks %1; its kernels are not tested here")
                           .arg(QString::fromUtf8(kernels::pathName(p).data()))));
    const auto simd = kernels::intKernels(p);
    const auto scalar = kernels::intKernels(kernels::IntKernelPath::Scalar);
    for (IntFormat f : {IntFormat::Int8, IntFormat::Int4})
      for (auto [rows, cols, group] : {std::tuple{5, 77, 0}, {7, 200, 32}, {3, 130, 64},
                                       {9, 640, 128}, {4, 6144, 128}, {3, 384, 256}}) {
        auto w = randomValues(static_cast<size_t>(rows) * cols, 31 + cols);
        auto x = randomValues(static_cast<size_t>(cols) * 3, 32 + cols, 5.0f);
        // Extremes: full-scale codes of both signs in weights and activations.
        w[0] = 100.0f;
        w[1] = -100.0f;
        x[0] = -50.0f;
        x[cols] = 50.0f;
        x[cols + 1] = -50.0f;
        const auto m = quant::quantizeMatrix(w.data(), rows, cols, f, group);
        std::vector<float> a(static_cast<size_t>(rows) * 3), b(a.size());
        kernels::matmulInteger(m, x.data(), 3, a.data(), scalar);
        kernels::matmulInteger(m, x.data(), 3, b.data(), simd);
        QVERIFY2(bitEqual(a, b), qPrintable(QString("format %1, %2x%3 g%4").arg(int(f)).arg(rows).arg(cols).arg(group)));
      }
  }

  // A kernel call takes one weight row and up to kMaxDotInputs inputs: each input's result is
  // the one it gets alone, for every input count (full calls, short tails) and scale layout,
  // and on every path equals the scalar reference.
  void inputCountsEqualOneAtATime() {
    const auto scalar = kernels::intKernels(kernels::IntKernelPath::Scalar);
    for (auto p : kernels::kAllIntPaths) {
      if (!kernels::pathAvailable(p)) continue;
      const auto k = kernels::intKernels(p);
      for (IntFormat f : {IntFormat::Int8, IntFormat::Int4})
        for (int group : {0, 32, 64, 256}) {
          const int rows = 3, cols = 300, maxN = kernels::kMaxDotInputs + 2;
          const auto w = randomValues(static_cast<size_t>(rows) * cols, 61 + group);
          const auto x = randomValues(static_cast<size_t>(maxN) * cols, 62 + group, 2.0f);
          const auto m = quant::quantizeMatrix(w.data(), rows, cols, f, group);
          std::vector<float> alone(static_cast<size_t>(maxN) * rows), reference(alone.size());
          for (int i = 0; i < maxN; ++i) {
            kernels::matmulInteger(m, x.data() + i * cols, 1, alone.data() + i * rows, k);
            kernels::matmulInteger(m, x.data() + i * cols, 1, reference.data() + i * rows, scalar);
          }
          const QString what = QString("path %1 format %2 g%3").arg(int(p)).arg(int(f)).arg(group);
          QVERIFY2(bitEqual(alone, reference), qPrintable(what));
          for (int n = 2; n <= maxN; ++n) {
            std::vector<float> batch(static_cast<size_t>(n) * rows);
            kernels::matmulInteger(m, x.data(), n, batch.data(), k);
            QVERIFY2(std::memcmp(batch.data(), alone.data(), batch.size() * sizeof(float)) == 0,
                     qPrintable(what + QString(" n %1").arg(n)));
          }
        }
    }
  }

  // Every entry point returns with the upper halves of ymm/zmm 0-15 clean: left in use, they
  // make each later SSE instruction pay a transition penalty on Intel CPUs (an avx512f clone
  // returning through zmm0 once made the SwiGLU's expf ~30x slower). The same is checked
  // statically on every object (tests/cross/clean_upper_state.sh); this checks the CPU's view.
  void entryPointsLeaveUpperStateClean() {
#if defined(__x86_64__)
    if (!vectorStateInUse()) QSKIP("this CPU cannot report the vector state in use (xgetbv 1)");
    if (!__builtin_cpu_supports("avx")) QSKIP("no AVX: there is no upper vector state");
    asm volatile("vzeroupper");
    if (*vectorStateInUse() & kDirtyUpper)
      QSKIP("the upper vector state reads in use right after vzeroupper on this (virtual) CPU");
    auto check = [](const char* what) {
      const uint64_t state = *vectorStateInUse();
      QVERIFY2(!(state & kDirtyUpper),
               qPrintable(QString("%1 left XINUSE %2").arg(what).arg(state, 0, 16)));
    };
    const int rows = 24, cols = 256;
    const auto w = randomValues(static_cast<size_t>(rows) * cols, 91);
    const auto x = randomValues(static_cast<size_t>(8) * cols, 92);
    std::vector<float> out(static_cast<size_t>(8) * rows);
    for (IntFormat f : {IntFormat::Int8, IntFormat::Int4}) {
      const auto m = quant::quantizeMatrix(w.data(), rows, cols, f, 32);
      check("quantizeMatrix");
      (void)quant::quantizeActivations(x.data(), 3, cols, m.paddedCols, f);
      check("quantizeActivations");
      std::vector<float> row(static_cast<size_t>(cols));
      quant::dequantizeRow(m, 1, row.data());
      check("dequantizeRow");
      for (auto p : kernels::kAllIntPaths) {
        if (!kernels::pathAvailable(p)) continue;
        for (int n : {1, 3, 8}) {  // one row kernel input, several, a tile
          kernels::matmulInteger(m, x.data(), n, out.data(), kernels::intKernels(p));
          check(kernels::pathName(p).data());
        }
      }
    }
    for (const auto& m :
         {kernels::Matrix::fromF32(rows, cols, w), kernels::Matrix::toBf16(rows, cols, w)})
      for (int n : {1, 3}) {
        kernels::matmul(m, x.data(), n, out.data());
        check("matmul (f32 / bf16)");
      }
    std::vector<float> values(x.begin(), x.begin() + cols);
    kernels::siluTimes(values.data(), x.data() + cols, cols);
    check("siluTimes");
    kernels::softmax(values.data(), cols);
    check("softmax");
#else
    QSKIP("x86-64 only: the SSE/AVX transition penalty is an x86 matter");
#endif
  }

  // From RowProduct::kTileMinInputs inputs, a path with tile kernels (x86-64 ones) computes eight
  // weight rows at a time against all inputs: every number must still be the scalar row
  // kernel's for that input alone - whole tiles and leftover rows, input counts across the
  // tile's groups of 16, every scale layout, and blocks at full scale on both sides (int4:
  // eight steps of 2 * 15 * 127 summed in int16, the most the kernel relies on).
  void tilesEqualRowsAlone() {
    const auto scalar = kernels::intKernels(kernels::IntKernelPath::Scalar);
    int tiled = 0;
    for (auto p : kernels::kAllIntPaths) {
      if (!kernels::pathAvailable(p)) continue;
      const auto k = kernels::intKernels(p);
      for (IntFormat f : {IntFormat::Int8, IntFormat::Int4}) {
        if (!(f == IntFormat::Int8 ? k.int8Tile : k.int4Tile)) continue;
        ++tiled;
        for (auto [rows, cols, group] : {std::tuple{8, 128, 32},
                                         {21, 300, 32},
                                         {19, 256, 0},
                                         {16, 640, 64},
                                         {11, 1024, 128},
                                         {9, 384, 256}})
          for (int n : {5, 16, 17, 37}) {
            auto w = randomValues(static_cast<size_t>(rows) * cols, 71 + cols);
            auto x = randomValues(static_cast<size_t>(n) * cols, 72 + n, 3.0f);
            for (int c = 0; c < 32; ++c) {  // row 0's and input 0's first block all at +max
              w[c] = 1.0f;
              x[c] = 2.0f;
            }
            for (int c = 32; c < 64; ++c) {  // and the second block at opposite signs
              w[c] = -1.0f;
              x[c] = 2.0f;
            }
            const auto m = quant::quantizeMatrix(w.data(), rows, cols, f, group);
            std::vector<float> alone(static_cast<size_t>(n) * rows), tiles(alone.size());
            for (int i = 0; i < n; ++i)
              kernels::matmulInteger(m, x.data() + i * cols, 1, alone.data() + i * rows, scalar);
            kernels::matmulInteger(m, x.data(), n, tiles.data(), k);
            QVERIFY2(bitEqual(tiles, alone),
                     qPrintable(QString("path %1 format %2 %3x%4 g%5 n %6")
                                    .arg(QString::fromUtf8(kernels::pathName(p).data()))
                                    .arg(int(f))
                                    .arg(rows)
                                    .arg(cols)
                                    .arg(group)
                                    .arg(n)));
          }
      }
    }
    if (tiled == 0)
      QSKIP("no kernel path on this CPU has tile kernels (AVX2 and the VNNI ones have)");
  }

  // The integer path approximates the exact (dequantize-then-f32) path closely.
  void integerPathCloseToDequant_data() { addShapeRows(); }
  void integerPathCloseToDequant() {
    QFETCH(int, format);
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(int, group);
    const auto f = static_cast<IntFormat>(format);
    const auto w = randomValues(static_cast<size_t>(rows) * cols, 41);
    const auto x = randomValues(static_cast<size_t>(cols), 42);
    const auto m = quant::quantizeMatrix(w.data(), rows, cols, f, group);
    std::vector<float> exact(static_cast<size_t>(rows)), fast(exact.size());
    kernels::matmulDequant(m, x.data(), 1, exact.data());
    kernels::matmulInteger(m, x.data(), 1, fast.data(), kernels::intKernels(kernels::bestIntPath()));
    double err = 0, norm = 0;
    for (int r = 0; r < rows; ++r) {
      err += (exact[r] - fast[r]) * (exact[r] - fast[r]);
      norm += exact[r] * exact[r];
    }
    // int8 activations: step = max|x|/127 per 32 values, ~2.2 sigma / 127 for Gaussian x, so
    // the rounding noise is ~0.5 % of the output's norm; with as few as 3 output rows the
    // measured ratio scatters, hence a 2 % bound (a broken kernel is off by far more).
    QVERIFY2(std::sqrt(err / norm) < 0.02, qPrintable(QString::number(std::sqrt(err / norm))));
  }

  // A row's result does not depend on the batch it is computed in (speculative verification
  // computes 1 + k rows together and must match decoding them one at a time bit for bit), and
  // it is the dot product up to f32 rounding (bf16: exactly f32's on the widened weights).
  // Every path: f32, bf16, int8/int4 both ways, with column counts that exercise the 32-, 16-
  // and tail parts of the f32 and bf16 kernels.
  void batchRowsEqualSingleRows_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<int>("cols");
    for (const QString f : {"f32", "bf16"})
      for (int cols : {7, 16, 48, 77, 256, 640}) QTest::addRow("%s cols %d", qPrintable(f), cols) << f << cols;
    for (const QString f : {"int8", "int4"})  // whole groups of 32 columns
      for (int cols : {32, 96, 256, 640}) QTest::addRow("%s cols %d", qPrintable(f), cols) << f << cols;
  }
  void batchRowsEqualSingleRows() {
    QFETCH(QString, format);
    QFETCH(int, cols);
    const int rows = 37, inputs = 7;
    const auto w = randomValues(static_cast<size_t>(rows) * cols, 51);
    const auto x = randomValues(static_cast<size_t>(inputs) * cols, 52);
    const bool quantized = format.startsWith("int");
    kernels::Matrix m;
    if (format == "f32") m = kernels::Matrix::fromF32(rows, cols, w);
    else if (format == "bf16") m = kernels::Matrix::toBf16(rows, cols, w);
    else m = kernels::Matrix::fromQuantized(quant::quantizeMatrix(
             w.data(), rows, cols, format == "int8" ? IntFormat::Int8 : IntFormat::Int4, 32));
    // Every split the kernels make: passes of four inputs, and a last pass of one to three.
    for (const int n : {2, 3, 4, 5, 6, 7})
    for (const bool integer : {false, true}) {
      if (integer && !quantized) continue;
      kernels::KernelConfig config;
      if (integer) config = {true, kernels::intKernels(kernels::bestIntPath())};
      std::vector<float> batch(static_cast<size_t>(n) * rows);
      kernels::matmul(m, x.data(), n, batch.data(), config);
      for (int i = 0; i < n; ++i) {
        std::vector<float> one(static_cast<size_t>(rows));
        kernels::matmul(m, x.data() + static_cast<size_t>(i) * cols, 1, one.data(), config);
        QVERIFY2(std::memcmp(one.data(), batch.data() + static_cast<size_t>(i) * rows, rows * sizeof(float)) == 0,
                 qPrintable(QString("input %1 of %2 differs alone").arg(i).arg(n)));
      }
      if (format == "bf16") {  // widened in registers: exactly the f32 kernel on the widened row
        std::vector<float> widened(w.size());
        for (size_t k = 0; k < w.size(); ++k) widened[k] = quant::bf16ToF32(quant::f32ToBf16(w[k]));
        std::vector<float> reference(static_cast<size_t>(n) * rows);
        kernels::matmul(kernels::Matrix::fromF32(rows, cols, widened), x.data(), n, reference.data(), config);
        QVERIFY2(bitEqual(batch, reference), "bf16 differs from f32 on the widened weights");
      }
      if (format != "f32") continue;
      for (int i = 0; i < n; ++i)
        for (int r = 0; r < rows; ++r) {
          const float documented = test::documentedDot(w.data() + r * cols, x.data() + i * cols, cols);
          QVERIFY2(batch[static_cast<size_t>(i) * rows + r] == documented,
                   qPrintable(QString("input %1, row %2: not the documented order").arg(i).arg(r)));
          double exact = 0, magnitude = 0;
          for (int k = 0; k < cols; ++k) {
            exact += double(w[r * cols + k]) * x[i * cols + k];
            magnitude += std::abs(double(w[r * cols + k]) * x[i * cols + k]);
          }
          QVERIFY(std::abs(batch[static_cast<size_t>(i) * rows + r] - exact) <= 1e-6 * magnitude + 1e-30);
        }
    }
  }

  // rowsTimesInputs over `count` rows (consecutive, or gathered from anywhere) finishes its dots
  // four at a time, across rows and inputs:
  // every row's output is the documented order's (bf16: on the widened weights) for any count,
  // including groups cut short, and nothing is written past the count in a strided output.
  // Decode's one input goes four rows at a time up to 1,024 columns (not 8,224), and paired
  // bf16 rows with two to four inputs two at a time (AVX-512); bf16 both paired and not.
  void rowsTimesInputsWritesEachRow_data() {
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("inputs");
    for (int count : {1, 2, 3, 4, 5, 8, 9})
      for (int inputs : {1, 2, 3, 4, 5})
        QTest::addRow("%d rows %d inputs", count, inputs) << count << inputs;
  }
  void rowsTimesInputsWritesEachRow() {
    QFETCH(int, count);
    QFETCH(int, inputs);
    const int stride = count + 3;  // outputs of input i at i * stride .. + count
    for (int cols : {16, 48, 77, 256, 300, 8224}) {
      const auto w = randomValues(static_cast<size_t>(count) * cols, 61 + cols);
      const auto x = randomValues(static_cast<size_t>(inputs) * cols, 62 + cols);
      std::vector<uint16_t> bf16(w.size());
      std::vector<float> widened(w.size());
      for (size_t k = 0; k < w.size(); ++k) {
        bf16[k] = quant::f32ToBf16(w[k]);
        widened[k] = quant::bf16ToF32(bf16[k]);
      }
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> y(static_cast<size_t>(inputs) * stride, nan), yBf16 = y, yGathered = y,
                                                                       yPaired = y;
      kernels::rowsTimesInputs(w.data(), count, x.data(), inputs, cols, stride, y.data());
      kernels::bf16RowsTimesInputs(bf16.data(), count, x.data(), inputs, cols, stride,
                                   yBf16.data());
      const std::vector<float> paired = kernels::bf16PairedInputs(x.data(), inputs, cols);
      kernels::bf16RowsTimesInputs(bf16.data(), count, x.data(), inputs, cols, stride,
                                   yPaired.data(), paired.empty() ? nullptr : paired.data());
      // The gathered form with the rows listed last first: output r is the row at rows[r].
      std::vector<const float*> reversed;
      for (int r = count - 1; r >= 0; --r)
        reversed.push_back(w.data() + static_cast<size_t>(r) * cols);
      kernels::gatheredRowsTimesInputs(reversed.data(), count, x.data(), inputs, cols, stride,
                                       yGathered.data());
      for (int i = 0; i < inputs; ++i)
        for (int r = 0; r < stride; ++r) {
          const float got = y[static_cast<size_t>(i) * stride + r];
          const float gotBf16 = yBf16[static_cast<size_t>(i) * stride + r];
          const float gotPaired = yPaired[static_cast<size_t>(i) * stride + r];
          const QString where = QString("cols %1, input %2, row %3").arg(cols).arg(i).arg(r);
          const float gotGathered = yGathered[static_cast<size_t>(i) * stride + r];
          if (r >= count) {
            QVERIFY2(std::isnan(got) && std::isnan(gotBf16) && std::isnan(gotGathered) &&
                         std::isnan(gotPaired),
                     qPrintable(where + ": written past the rows"));
            continue;
          }
          const float* xi = x.data() + static_cast<size_t>(i) * cols;
          QVERIFY2(
              gotGathered == test::documentedDot(
                                 w.data() + static_cast<size_t>(count - 1 - r) * cols, xi, cols),
              qPrintable(where + ": gathered row not the documented order"));
          QVERIFY2(got == test::documentedDot(w.data() + static_cast<size_t>(r) * cols, xi, cols),
                   qPrintable(where + ": not the documented order"));
          QVERIFY2(gotBf16 == test::documentedDot(widened.data() + static_cast<size_t>(r) * cols,
                                                  xi, cols),
                   qPrintable(where + ": bf16 not the widened weights' documented order"));
          QVERIFY2(gotPaired == gotBf16, qPrintable(where + ": bf16 paired differs"));
        }
    }
  }

  // matmulMany (several products of one input in one parallel region) gives each output
  // exactly what matmul() gives alone: every format and both quantized paths, in one call,
  // with the work below and above the parallel threshold. Outputs start as NaN, so a row no
  // thread wrote fails too.
  void manyProductsEqualSeparateProducts_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("n");
    QTest::newRow("small, one thread") << 9 << 1;
    // Each product alone stays under kParallelThreshold (one thread), the four together pass it.
    QTest::newRow("above the parallel threshold together") << 500 << 3;
  }
  void manyProductsEqualSeparateProducts() {
    QFETCH(int, rows);
    QFETCH(int, n);
    const int cols = 640;
    const auto x = randomValues(static_cast<size_t>(n) * cols, 61);
    std::vector<kernels::Matrix> matrices;
    matrices.push_back(kernels::Matrix::fromF32(rows, cols, randomValues(size_t(rows) * cols, 62)));
    matrices.push_back(kernels::Matrix::toBf16(rows + 3, cols, randomValues(size_t(rows + 3) * cols, 63)));
    for (IntFormat f : {IntFormat::Int8, IntFormat::Int4})
      matrices.push_back(kernels::Matrix::fromQuantized(quant::quantizeMatrix(
          randomValues(size_t(rows + 5) * cols, 64).data(), rows + 5, cols, f, 128)));
    for (const bool integer : {false, true}) {
      kernels::KernelConfig config;
      if (integer) config = {true, kernels::intKernels(kernels::bestIntPath())};
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::vector<std::vector<float>> together, alone;
      for (const kernels::Matrix& m : matrices) {
        together.emplace_back(static_cast<size_t>(n * m.rows()), nan);
        alone.emplace_back(static_cast<size_t>(n * m.rows()), nan);
        kernels::matmul(m, x.data(), n, alone.back().data(), config);
      }
      kernels::matmulMany({{matrices[0], together[0].data()}, {matrices[1], together[1].data()},
                           {matrices[2], together[2].data()}, {matrices[3], together[3].data()}},
                          x.data(), n, config);
      for (size_t i = 0; i < matrices.size(); ++i) {
        QVERIFY2(std::none_of(alone[i].begin(), alone[i].end(), [](float v) { return std::isnan(v); }),
                 "matmul left a row unwritten");
        QVERIFY2(bitEqual(together[i], alone[i]),
                 qPrintable(QString("product %1 (integer %2) differs").arg(i).arg(integer)));
      }
    }
  }

  // A product lends its quantized activations to a matrix that reads them in the same layout,
  // and int8-order ones to int4 weights of the same row width, rearranged (decode's experts
  // share one quantization of the token: a shared int8 expert ahead of int4 routed ones once
  // made every routed one quantize again); a product built from a lender gives the numbers of
  // one of its own. A bf16 product lends its paired inputs to bf16 rows of the same width.
  void productsLendInputsInTheirLayoutOnly() {
    const int cols = 256;
    const auto x = randomValues(cols, 71);
    const auto values = randomValues(size_t{16} * cols, 72);
    auto quantized = [&](IntFormat f, int group) {
      return kernels::Matrix::fromQuantized(
          quant::quantizeMatrix(values.data(), 16, cols, f, group));
    };
    const kernels::Matrix int8 = quantized(IntFormat::Int8, 32),
                          int4 = quantized(IntFormat::Int4, 32),
                          int4Wide = quantized(IntFormat::Int4, 512),  // rows padded to 512
        f32 = kernels::Matrix::fromF32(16, cols, values);
    const kernels::IntKernels k = kernels::intKernels(kernels::bestIntPath());
    std::vector<float> y(16), lent(16), own(16);
    const kernels::RowProduct fromInt8(int8, x.data(), 1, y.data(), true, k);
    const kernels::RowProduct fromInt4(int4, x.data(), 1, y.data(), true, k);
    const kernels::RowProduct exact(int8, x.data(), 1, y.data(), false, k);  // quantizes nothing
    QVERIFY(fromInt8.lendsInputTo(int8) && fromInt4.lendsInputTo(int4));
    QVERIFY(fromInt8.lendsInputTo(int4) && !fromInt4.lendsInputTo(int8));
    QVERIFY(!fromInt4.lendsInputTo(int4Wide) && !fromInt8.lendsInputTo(int4Wide));
    QVERIFY(!fromInt4.lendsInputTo(f32) && !exact.lendsInputTo(int8));
    std::vector<float> scratch;
    kernels::RowProduct(int4, x.data(), 1, own.data(), true, k).computeRows(0, 16, scratch);
    for (const kernels::RowProduct* lender : {&fromInt4, &fromInt8}) {
      std::fill(lent.begin(), lent.end(), NAN);
      kernels::RowProduct(int4, *lender, lent.data()).computeRows(0, 16, scratch);
      QVERIFY(bitEqual(lent, own));
    }
    const kernels::Matrix bf16 = kernels::Matrix::toBf16(16, cols, values),
                          bf16Narrow = kernels::Matrix::toBf16(32, cols / 2, values);
    const kernels::RowProduct fromBf16(bf16, x.data(), 1, y.data(), true, k);
    const bool pairs = !kernels::bf16PairedInputs(x.data(), 1, cols).empty();  // 16 or 8 lanes
    QCOMPARE(fromBf16.lendsInputTo(bf16), pairs);
    QVERIFY(!fromBf16.lendsInputTo(bf16Narrow) && !fromBf16.lendsInputTo(int8));
    QVERIFY(!fromInt8.lendsInputTo(bf16) && !exact.lendsInputTo(bf16));
    kernels::RowProduct(bf16, x.data(), 1, own.data(), true, k).computeRows(0, 16, scratch);
    std::fill(lent.begin(), lent.end(), NAN);
    kernels::RowProduct(bf16, fromBf16, lent.data()).computeRows(0, 16, scratch);
    QVERIFY(bitEqual(lent, own));
  }

  // rowChunks (the runs threads take in turn) covers every row of every product once, in
  // whole tiles but for a product's last run, none smaller than kMinChunkMultiplyAdds of work
  // but a product's last, and, where rows are that much work, in about kChunksPerThread runs
  // per thread (more only where products end mid-run).
  void rowChunksCoverEveryRowOnce() {
    const std::vector<std::vector<int64_t>> cases = {
        {32000}, {288, 512, 64, 8}, {768, 768, 768, 768, 2048}, {1}, {5, 0, 13}, {}};
    for (const int64_t rowWork : {kernels::kMinChunkMultiplyAdds, int64_t{2048}, int64_t{256}})
      for (const std::vector<int64_t>& rows : cases)
        for (int threads : {1, 2, 3, 16}) {
          const std::vector<kernels::RowChunk> chunks = kernels::rowChunks(rows, threads, rowWork);
          std::vector<int64_t> next(rows.size(), 0);  // each product's first row not yet covered
          for (const kernels::RowChunk& c : chunks) {
            QVERIFY(c.product < rows.size());
            QCOMPARE(c.begin, next[c.product]);
            QVERIFY(c.end > c.begin && c.end <= rows[c.product]);
            if (c.end < rows[c.product]) {
              QVERIFY2((c.end - c.begin) % kernels::kIntTileRows == 0, "a run ends mid-tile");
              QVERIFY2((c.end - c.begin) * rowWork >= kernels::kMinChunkMultiplyAdds,
                       "a run too small");
            }
            next[c.product] = c.end;
          }
          QVERIFY(next == rows);
          int64_t total = 0;
          for (int64_t r : rows) total += r;
          const int64_t wanted = int64_t{threads} * kernels::kChunksPerThread;
          if (rowWork == kernels::kMinChunkMultiplyAdds && total >= wanted * kernels::kIntTileRows)
            QVERIFY2(int64_t(chunks.size()) <= wanted + int64_t(rows.size()) &&
                         int64_t(chunks.size()) >= wanted / 2,
                     qPrintable(QString("%1 runs for %2 threads").arg(chunks.size()).arg(threads)));
        }
  }

  // matmulRows (a draft's logits over its vocabulary) writes exactly matmul's numbers in the
  // listed rows, whichever thread's share they fall in, and leaves every other output alone.
  void matmulRowsComputesTheListedRowsOnly_data() {
    QTest::addColumn<int>("rows");
    QTest::newRow("one thread") << 40;
    QTest::newRow("above the parallel threshold") << 700;
  }
  void matmulRowsComputesTheListedRowsOnly() {
    QFETCH(int, rows);
    const int cols = 256;
    const auto x = randomValues(cols, 71);
    std::vector<kernels::Matrix> matrices;
    matrices.push_back(kernels::Matrix::fromF32(rows, cols, randomValues(size_t(rows) * cols, 72)));
    matrices.push_back(kernels::Matrix::toBf16(rows, cols, randomValues(size_t(rows) * cols, 73)));
    for (IntFormat f : {IntFormat::Int8, IntFormat::Int4})
      matrices.push_back(kernels::Matrix::fromQuantized(
          quant::quantizeMatrix(randomValues(size_t(rows) * cols, 74).data(), rows, cols, f, 128)));
    const std::vector<kernels::RowRange> listed{
        {0, rows / 4}, {rows / 3, rows / 3 + 1}, {rows / 2, rows / 2 + 3}, {rows - 2, rows}};
    for (const bool integer : {false, true}) {
      kernels::KernelConfig config;
      if (integer) config = {true, kernels::intKernels(kernels::bestIntPath())};
      for (const kernels::Matrix& m : matrices) {
        std::vector<float> all(static_cast<size_t>(rows));
        kernels::matmul(m, x.data(), 1, all.data(), config);
        std::vector<float> some(static_cast<size_t>(rows), -1.0f);
        kernels::matmulRows(m, x.data(), 1, listed, some.data(), config);
        for (int r = 0; r < rows; ++r) {
          const bool inList = std::any_of(listed.begin(), listed.end(), [&](const auto& range) {
            return r >= range.begin && r < range.end;
          });
          const float expected = inList ? all[size_t(r)] : -1.0f;
          QVERIFY2(std::memcmp(&some[size_t(r)], &expected, sizeof(float)) == 0,
                   qPrintable(QString("row %1 (listed %2, integer %3): %4, expected %5")
                                  .arg(r)
                                  .arg(inList)
                                  .arg(integer)
                                  .arg(some[size_t(r)])
                                  .arg(expected)));
        }
      }
    }
  }

  // addScaledRow (attention's weighted sums of cached latents): each output gains its own
  // scale times the row, read with the given scale stride, whatever the width (vector tails)
  // and output count; outputs past n are left alone.
  void addScaledRowMatchesDefinition_data() {
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("n");
    for (int cols : {1, 15, 16, 64, 77, 256, 512})
      for (int n : {1, 4, 7}) QTest::addRow("cols %d n %d", cols, n) << cols << n;
  }
  void addScaledRowMatchesDefinition() {
    QFETCH(int, cols);
    QFETCH(int, n);
    const int stride = 3;  // scale i at scales[3 i]
    const auto row = randomValues(static_cast<size_t>(cols), 71);
    const auto scales = randomValues(static_cast<size_t>(n * stride), 72);
    const auto start = randomValues(static_cast<size_t>((n + 1) * cols), 73);
    std::vector<float> out = start;
    kernels::addScaledRow(row.data(), scales.data(), stride, n, cols, out.data());
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j < cols; ++j) {
        const size_t at = static_cast<size_t>(i) * cols + j;
        if (i == n) {
          QCOMPARE(out[at], start[at]);
          continue;
        }
        const double exact = double(start[at]) + double(scales[i * stride]) * row[j];
        const double magnitude = std::abs(double(start[at])) + std::abs(double(scales[i * stride]) * row[j]);
        QVERIFY2(std::abs(out[at] - exact) <= 1e-6 * magnitude + 1e-30,
                 qPrintable(QString("output %1, column %2: %3, expected %4").arg(i).arg(j).arg(out[at]).arg(exact)));
      }
  }

  // addScaledRows (many cached latents into a few outputs, held in registers): each output
  // gains the sum of its scales times the rows, for 32-column blocks and tails, one to seven
  // outputs, no rows at all, outputs wider apart than their columns; what lies between and past
  // the n outputs is left alone. Within 1e-6 of the float64 sum,
  // relative to the sum of the terms' magnitudes, and equal to addScaledRow called once per row
  // in order (no FMA contraction in the engine: every width rounds each product and sum).
  void addScaledRowsMatchesDefinition_data() {
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("count");
    for (int cols : {1, 31, 32, 77, 512})
      for (int n : {1, 3, 4, 7})
        for (int count : {0, 1, 37})
          QTest::addRow("cols %d n %d rows %d", cols, n, count) << cols << n << count;
  }
  void addScaledRowsMatchesDefinition() {
    QFETCH(int, cols);
    QFETCH(int, n);
    QFETCH(int, count);
    const int stride = count + 5;  // output i's scale for row r at scales[i * stride + r]
    const int outStride = cols + 3;  // output i at out[i * outStride]
    const auto values = randomValues(static_cast<size_t>(std::max(1, count) * cols), 81);
    std::vector<const float*> rows;
    for (int r = 0; r < count; ++r) rows.push_back(values.data() + r * cols);
    const auto scales = randomValues(static_cast<size_t>(n * stride), 82);
    const auto start = randomValues(static_cast<size_t>((n + 1) * outStride), 83);
    std::vector<float> out = start;
    kernels::addScaledRows(rows.data(), count, scales.data(), stride, n, cols, out.data(),
                           outStride);
    std::vector<float> rowByRow(static_cast<size_t>(n) * cols);  // addScaledRow's outputs are dense
    for (int i = 0; i < n; ++i)
      std::copy_n(start.begin() + i * outStride, cols, rowByRow.begin() + i * cols);
    for (int r = 0; r < count; ++r)
      kernels::addScaledRow(rows[static_cast<size_t>(r)], scales.data() + r, stride, n, cols,
                            rowByRow.data());
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j < outStride; ++j) {
        const size_t at = static_cast<size_t>(i) * outStride + j;
        if (i == n || j >= cols) {
          QCOMPARE(out[at], start[at]);
          continue;
        }
        double exact = start[at], magnitude = std::abs(double(start[at]));
        for (int r = 0; r < count; ++r) {
          const double term = double(scales[i * stride + r]) * values[r * cols + j];
          exact += term;
          magnitude += std::abs(term);
        }
        QVERIFY2(std::abs(out[at] - exact) <= 1e-6 * magnitude,
                 qPrintable(QString("output %1, column %2: %3, expected %4").arg(i).arg(j).arg(out[at]).arg(exact)));
        QVERIFY2(
            out[at] == rowByRow[static_cast<size_t>(i) * cols + j],
            qPrintable(QString("output %1, column %2: not addScaledRow's sums").arg(i).arg(j)));
      }
  }

  // The int8 row kernels (absorbed attention on an int8 kv_b) widen codes in registers to the
  // very values dequantizeRow writes, so each result is the f32 kernel's on the widened rows,
  // bit for bit: group sizes 32 and 128 and one scale per row, padded rows, tails, several
  // inputs, and a slice of rows from the middle of the matrix.
  void int8RowKernelsEqualWidenedRows_data() {
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("groupSize");
    for (int cols : {32, 77, 256, 300, 512})
      for (int group : {32, 128, 0})
        QTest::addRow("cols %d group %d", cols, group) << cols << group;
  }
  void int8RowKernelsEqualWidenedRows() {
    QFETCH(int, cols);
    QFETCH(int, groupSize);
    const int total = 40, first = 7, count = 21;
    const auto weights = randomValues(static_cast<size_t>(total) * cols, 91, 0.1f);
    const quant::QuantizedMatrix w =
        quant::quantizeMatrix(weights.data(), total, cols, IntFormat::Int8, groupSize);
    std::vector<float> widened(static_cast<size_t>(count) * cols);
    std::vector<const float*> rows;
    for (int r = 0; r < count; ++r) {
      quant::dequantizeRow(w, first + r, widened.data() + r * cols);
      rows.push_back(widened.data() + r * cols);
    }
    for (int n : {1, 3, 4, 7}) {
      const auto x = randomValues(static_cast<size_t>(n) * cols, 92);
      std::vector<float> fused(static_cast<size_t>(n) * count), f32(fused.size());
      kernels::int8RowsTimesInputs(w, first, count, x.data(), n, count, fused.data());
      kernels::rowsTimesInputs(widened.data(), count, x.data(), n, cols, count, f32.data());
      QVERIFY2(bitEqual(fused, f32), qPrintable(QString("rowsTimesInputs, %1 inputs").arg(n)));

      const auto scales = randomValues(static_cast<size_t>(n) * count, 93);
      const auto start = randomValues(static_cast<size_t>(n) * cols, 94);
      std::vector<float> fusedSums = start, f32Sums = start;
      kernels::int8AddScaledRows(w, first, count, scales.data(), count, n, fusedSums.data(), cols);
      kernels::addScaledRows(rows.data(), count, scales.data(), count, n, cols, f32Sums.data(),
                             cols);
      QVERIFY2(bitEqual(fusedSums, f32Sums),
               qPrintable(QString("addScaledRows, %1 outputs").arg(n)));
      QVERIFY(!bitEqual(fusedSums, start));
    }
    // Rows past the matrix, or an int4 matrix, are a clear error rather than a wrong read.
    float out[1];
    QVERIFY_THROWS_EXCEPTION(
        strata::Error, kernels::int8RowsTimesInputs(w, total - 1, 2, weights.data(), 1, 1, out));
    const quant::QuantizedMatrix int4 =
        quant::quantizeMatrix(weights.data(), total, cols, IntFormat::Int4, 32);
    QVERIFY_THROWS_EXCEPTION(strata::Error,
                             kernels::int8RowsTimesInputs(int4, 0, 1, weights.data(), 1, 1, out));
  }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "test_kernels.moc"
