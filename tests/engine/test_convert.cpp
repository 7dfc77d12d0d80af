// Scalar dtype conversions and FP8 block dequantization, checked against values derived here
// from the format definitions (sign/exponent/mantissa fields and ldexp), not from the engine.
#include <QTest>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "quant/convert.h"

using namespace strata::quant;

namespace {

// FP8 E4M3 "fn" from its definition: 1 sign, 4 exponent (bias 7), 3 mantissa bits; exponent 0
// is subnormal; S.1111.111 is NaN and there are no infinities.
double fp8Reference(int code) {
  const int sign = code >> 7, exponent = (code >> 3) & 15, mantissa = code & 7;
  if (exponent == 15 && mantissa == 7) return std::numeric_limits<double>::quiet_NaN();
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 7 - 3);
  return sign ? -magnitude : magnitude;
}

// IEEE binary16 from its definition: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
double f16Reference(int code) {
  const int sign = code >> 15, exponent = (code >> 10) & 31, mantissa = code & 1023;
  double magnitude;
  if (exponent == 31) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);
  } else {
    magnitude = std::ldexp(1024 + mantissa, exponent - 15 - 10);
  }
  return sign ? -magnitude : magnitude;
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

}  // namespace

class TestConvert : public QObject {
  Q_OBJECT

 private slots:
  // f32 -> f16: every f16 value round-trips exactly; other values go to the nearer of their two
  // f16 neighbours (ties to the even code), found here by brute force over the codes.
  void f32ToF16RoundsToNearestEven() {
    for (uint32_t code = 0; code < 0x10000; ++code) {
      const float v = f16ToF32(static_cast<uint16_t>(code));
      if (std::isnan(v)) {
        QVERIFY(std::isnan(f16ToF32(f32ToF16(v))));
        continue;
      }
      QCOMPARE(f32ToF16(v), static_cast<uint16_t>(code == 0x8000 ? 0x8000 : code));
    }
    // Midpoints and points near them, over the whole positive finite range.
    for (uint32_t code = 0; code < 0x7bff; code += 7) {
      const float lo = f16ToF32(static_cast<uint16_t>(code));
      const float hi = f16ToF32(static_cast<uint16_t>(code + 1));
      const float mid = lo + (hi - lo) / 2;  // exact in f32
      const uint16_t even = (code & 1u) ? static_cast<uint16_t>(code + 1) : static_cast<uint16_t>(code);
      QCOMPARE(f32ToF16(mid), even);
      QCOMPARE(f32ToF16(std::nextafter(mid, 0.0f)), static_cast<uint16_t>(code));
      QCOMPARE(f32ToF16(std::nextafter(mid, 1e9f)), static_cast<uint16_t>(code + 1));
      QCOMPARE(f32ToF16(-mid), static_cast<uint16_t>(0x8000u | even));
    }
    QCOMPARE(f32ToF16(65519.0f), uint16_t{0x7bff});   // below the midpoint to 65536
    QCOMPARE(f32ToF16(65520.0f), uint16_t{0x7c00});   // the midpoint: ties to inf (even)
    QCOMPARE(f32ToF16(1e10f), uint16_t{0x7c00});
    QCOMPARE(f32ToF16(std::ldexp(1.0f, -25)), uint16_t{0});       // tie to zero
    QCOMPARE(f32ToF16(std::ldexp(1.5f, -25)), uint16_t{1});       // above the tie
  }

  void bf16KnownValues() {
    QCOMPARE(bf16ToF32(0x3F80), 1.0f);
    QCOMPARE(bf16ToF32(0xC000), -2.0f);
    QCOMPARE(bf16ToF32(0x4049), 3.140625f);                // 0x40490000 = 1.5703125 * 2
    QCOMPARE(bf16ToF32(0x0001), std::ldexp(1.0f, -133));   // smallest subnormal
    QCOMPARE(bf16ToF32(0x7F7F), std::ldexp(255.0f, 120));  // largest finite: 0x7F7F0000
    QCOMPARE(bf16ToF32(0x7F80), std::numeric_limits<float>::infinity());
    QCOMPARE(bf16ToF32(0xFF80), -std::numeric_limits<float>::infinity());
    QVERIFY(std::isnan(bf16ToF32(0x7FC0)));
    QVERIFY(std::signbit(bf16ToF32(0x8000)) && bf16ToF32(0x8000) == 0.0f);
  }

  void bf16IsUpperHalfOfF32() {
    // Every bf16 code must widen to the float whose top 16 bits it is (the definition of bf16).
    for (uint32_t code = 0; code < 65536; ++code) {
      const uint32_t got = bitsOf(bf16ToF32(static_cast<uint16_t>(code)));
      if (got != code << 16) QFAIL(qPrintable(QString("bf16 code 0x%1").arg(code, 4, 16)));
    }
  }

  void f16KnownValues() {
    QCOMPARE(f16ToF32(0x3C00), 1.0f);
    QCOMPARE(f16ToF32(0xC000), -2.0f);
    QCOMPARE(f16ToF32(0x3555), 0.333251953125f);
    QCOMPARE(f16ToF32(0x7BFF), 65504.0f);
    QCOMPARE(f16ToF32(0xFBFF), -65504.0f);
    QCOMPARE(f16ToF32(0x0400), std::ldexp(1.0f, -14));     // smallest normal
    QCOMPARE(f16ToF32(0x0001), std::ldexp(1.0f, -24));     // smallest subnormal
    QCOMPARE(f16ToF32(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
    QCOMPARE(f16ToF32(0x7C00), std::numeric_limits<float>::infinity());
    QCOMPARE(f16ToF32(0xFC00), -std::numeric_limits<float>::infinity());
    QVERIFY(std::isnan(f16ToF32(0x7E00)));
    QVERIFY(std::isnan(f16ToF32(0xFC01)));
    QVERIFY(std::signbit(f16ToF32(0x8000)) && f16ToF32(0x8000) == 0.0f);
  }

  void f16AllCodes() {
    for (int code = 0; code < 65536; ++code) {
      const double expected = f16Reference(code);
      const float got = f16ToF32(static_cast<uint16_t>(code));
      const bool ok = std::isnan(expected) ? std::isnan(got)
                                           : (static_cast<double>(got) == expected &&
                                              std::signbit(got) == std::signbit(expected));
      if (!ok) QFAIL(qPrintable(QString("f16 code 0x%1 -> %2").arg(code, 4, 16).arg(got)));
    }
  }

  void fp8KnownValues() {
    QCOMPARE(fp8e4m3ToF32(0x38), 1.0f);    // exponent 7 = bias
    QCOMPARE(fp8e4m3ToF32(0x7E), 448.0f);  // largest finite: 1.75 * 2^8
    QCOMPARE(fp8e4m3ToF32(0xFE), -448.0f);
    QCOMPARE(fp8e4m3ToF32(0x01), 0.001953125f);  // smallest subnormal 2^-9
    QCOMPARE(fp8e4m3ToF32(0x07), 0.013671875f);  // largest subnormal 7 * 2^-9
    QCOMPARE(fp8e4m3ToF32(0x08), 0.015625f);     // smallest normal 2^-6
    QCOMPARE(fp8e4m3ToF32(0x78), 256.0f);        // exponent 15 is finite in the fn variant
    QVERIFY(std::isnan(fp8e4m3ToF32(0x7F)));
    QVERIFY(std::isnan(fp8e4m3ToF32(0xFF)));
    QVERIFY(std::signbit(fp8e4m3ToF32(0x80)) && fp8e4m3ToF32(0x80) == 0.0f);
  }

  void fp8AllCodes() {
    int nans = 0;
    for (int code = 0; code < 256; ++code) {
      const double expected = fp8Reference(code);
      const float got = fp8e4m3ToF32(static_cast<uint8_t>(code));
      if (std::isnan(expected)) {
        ++nans;
        QVERIFY2(std::isnan(got), qPrintable(QString("fp8 code %1").arg(code)));
        continue;
      }
      QVERIFY2(!std::isinf(got), qPrintable(QString("fp8 code %1 gave inf").arg(code)));
      QVERIFY2(
          static_cast<double>(got) == expected && std::signbit(got) == std::signbit(expected),
          qPrintable(QString("fp8 code %1: got %2, expected %3").arg(code).arg(got).arg(expected)));
    }
    QCOMPARE(nans, 2);
  }

  void dequantFp8BlockPartialBlocks() {
    // 200 x 130 with 128 x 128 blocks: scales [2, 2]; the last row block has 72 rows and the
    // last column block 2 columns, the shape class that broke vLLM-Ascend (spec §7.9).
    const int64_t rows = 200, cols = 130, br = 128, bc = 128;
    std::vector<uint8_t> weights(rows * cols);
    for (int64_t i = 0; i < rows * cols; ++i) {
      uint8_t code = static_cast<uint8_t>((i * 37 + 11) % 256);
      if ((code & 0x7F) == 0x7F) code = 0x3A;  // keep NaN codes out of the arithmetic check
      weights[i] = code;
    }
    const std::vector<float> scales{0.5f, 2.0f, -0.25f, 3.0f};
    std::vector<float> out(rows * cols, -1.0f);
    dequantFp8Block(weights.data(), rows, cols, scales.data(), br, bc, out.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const double scale = scales[(r >= 128 ? 2 : 0) + (c >= 128 ? 1 : 0)];
        const double expected = fp8Reference(weights[r * cols + c]) * scale;
        if (static_cast<double>(out[r * cols + c]) != expected) {
          QFAIL(qPrintable(QString("at [%1, %2]: got %3, expected %4")
                               .arg(r)
                               .arg(c)
                               .arg(out[r * cols + c])
                               .arg(expected)));
        }
      }
    }
  }

  void dequantFp8BlockSmallBlocks() {
    // 3 x 5 with 2 x 2 blocks: scales [2, 3], partial in both directions; hand-computed.
    const std::vector<uint8_t> w{0x38, 0x40, 0x30, 0x38, 0x38,   // 1, 2, 0.5, 1, 1
                                 0x38, 0xB8, 0x38, 0x38, 0x7E,   // 1, -1, 1, 1, 448
                                 0x38, 0x01, 0x38, 0x00, 0x38};  // 1, 2^-9, 1, 0, 1
    const std::vector<float> s{1, 10, 100, 1000, 10000, 100000};
    const std::vector<float> expected{1,     2,
                                      5,     10,
                                      100,  //
                                      1,     -1,
                                      10,    10,
                                      44800,  //
                                      1000,  1000.0f / 512,
                                      10000, 0,
                                      100000};
    std::vector<float> out(15);
    dequantFp8Block(w.data(), 3, 5, s.data(), 2, 2, out.data());
    for (int i = 0; i < 15; ++i) QCOMPARE(out[i], expected[i]);
  }
};

QTEST_APPLESS_MAIN(TestConvert)
#include "test_convert.moc"
