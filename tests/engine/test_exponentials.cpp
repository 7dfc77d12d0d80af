// The vector exponentials (kernels/exponentials.h) against their definitions in double
// precision: silu(x) * u over the whole float range that matters, softmax rows of lengths
// around the lane widths and of a long context, and the edges (saturation, NaN).
#include <QtTest>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/exponentials.h"

namespace {

// |a - b| in units of b's last place (for b a normal float).
double ulps(float a, double b) {
  const float bf = static_cast<float>(b);
  const double ulp = std::nextafter(std::fabs(bf), INFINITY) - std::fabs(bf);
  return std::fabs(a - b) / ulp;
}

}  // namespace

class TestExponentials : public QObject {
  Q_OBJECT

 private slots:
  // silu(x) * 1 within 3 ulps of x / (1 + e^-x) from -90 to 90 (a sweep of 180,000 values,
  // through the clamp at both ends), and times u exactly as a float product of that.
  void siluTimesFollowsTheDefinition() {
    std::vector<float> gate, up;
    for (int i = -900000; i <= 900000; i += 10) gate.push_back(static_cast<float>(i) * 1e-4f);
    up.assign(gate.size(), 1.0f);
    std::vector<float> out = gate;
    strata::kernels::siluTimes(out.data(), up.data(), static_cast<int64_t>(out.size()));
    double worst = 0;
    for (size_t i = 0; i < gate.size(); ++i) {
      const double x = gate[i], expected = x / (1.0 + std::exp(-x));
      if (std::fabs(expected) < 1e-30) {  // far left: both vanish
        QVERIFY2(std::fabs(out[i]) < 1e-30,
                 qPrintable(QString("silu(%1) = %2").arg(x).arg(out[i])));
        continue;
      }
      worst = std::max(worst, ulps(out[i], expected));
    }
    QVERIFY2(worst <= 3.0, qPrintable(QString("worst error %1 ulps").arg(worst)));

    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> g(1000), u(1000);
    for (float& v : g) v = normal(rng);
    for (float& v : u) v = normal(rng);
    std::vector<float> withUp = g, alone = g;
    const std::vector<float> ones(g.size(), 1.0f);
    strata::kernels::siluTimes(withUp.data(), u.data(), 1000);
    strata::kernels::siluTimes(alone.data(), ones.data(), 1000);
    for (size_t i = 0; i < g.size(); ++i) QCOMPARE(withUp[i], alone[i] * u[i]);

    std::vector<float> nan = {NAN, 1.0f};
    strata::kernels::siluTimes(nan.data(), ones.data(), 2);
    QVERIFY(std::isnan(nan[0]));
  }

  // Each probability within 1e-6 (relative) of the softmax in double precision, a sum of 1, at
  // lengths around the lane widths and of a long context; keys 100 below the maximum (past
  // the clamp) get a weight of about 0.
  void softmaxFollowsTheDefinition() {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 4.0f);
    for (int64_t n : {1, 2, 7, 15, 16, 17, 33, 200, 4096}) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = normal(rng);
      if (n > 2) x[1] = x[0] - 100.0f;
      // e^(x - max), with x - max rounded to a float as the kernel computes it.
      std::vector<double> expected(x.size());
      float max = x[0];
      double sum = 0;
      for (float v : x) max = std::max(max, v);
      for (size_t i = 0; i < x.size(); ++i) sum += expected[i] = std::exp(double{x[i] - max});
      std::vector<float> p = x;
      strata::kernels::softmax(p.data(), n);
      double total = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const double want = expected[i] / sum;
        total += p[i];
        QVERIFY2(std::fabs(p[i] - want) <= 1e-6 * want + 1e-30,
                 qPrintable(QString("n %1, value %2: %3 vs %4").arg(n).arg(i).arg(p[i]).arg(want)));
      }
      QVERIFY2(std::fabs(total - 1.0) < 1e-5,
               qPrintable(QString("n %1: sum %2").arg(n).arg(total)));
    }
  }
};

QTEST_GUILESS_MAIN(TestExponentials)
#include "test_exponentials.moc"
