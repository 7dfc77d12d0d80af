// The integer kernels of another architecture, bit-exact against the scalar reference: built
// with a cross compiler and run under an emulator (tests/cross/CMakeLists.txt: Arm64 NEON
// dot-product kernels under qemu-aarch64). Plain C++, no Qt: only the kernel sources travel.
//
//   int_dot_check EXPECTED_BEST_PATH
// checks that the run-time dispatch picks EXPECTED_BEST_PATH on the emulated CPU, then that
// every available path equals scalar for int8/int4, several group sizes, odd widths, chunk
// tails, extreme codes and 1..6 inputs, and that the f32 and bf16 row kernels (this CPU's
// vector width) give exactly their documented summation order. Exit status 0 only if all of
// that holds.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/row_order.h"
#include "kernels/int_dot.h"
#include "kernels/matmul.h"
#include "kernels/quant_matmul.h"
#include "quant/convert.h"
#include "quant/int_quant.h"

using namespace strata;

namespace {

std::vector<float> randomValues(size_t count, uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(count);
  for (float& x : v) x = normal(rng);
  return v;
}

struct Shape { int rows, cols, group; };

// Mismatching cases on `path`, each reported.
int checkPath(kernels::IntKernelPath path, int& cases) {
  const auto simd = kernels::intKernels(path);
  const auto scalar = kernels::intKernels(kernels::IntKernelPath::Scalar);
  int failures = 0;
  for (auto format : {quant::IntFormat::Int8, quant::IntFormat::Int4})
    for (Shape s : {Shape{5, 77, 0}, {7, 200, 32}, {3, 130, 64}, {9, 640, 128}, {4, 6144, 128},
                    {3, 384, 256}, {2, 2048, 32}})
      for (int inputs = 1; inputs <= kernels::kMaxDotInputs + 2; ++inputs) {
        auto w = randomValues(size_t(s.rows) * s.cols, 31 + s.cols, 1.0f);
        auto x = randomValues(size_t(s.cols) * inputs, 32 + s.cols + inputs, 5.0f);
        w[0] = 100.0f;  // full-scale codes of both signs
        w[1] = -100.0f;
        x[0] = -50.0f;
        x[s.cols - 1] = 50.0f;
        const auto m = quant::quantizeMatrix(w.data(), s.rows, s.cols, format, s.group);
        std::vector<float> want(size_t(s.rows) * inputs), got(want.size());
        kernels::matmulInteger(m, x.data(), inputs, want.data(), scalar);
        kernels::matmulInteger(m, x.data(), inputs, got.data(), simd);
        ++cases;
        if (std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) != 0) {
          ++failures;
          std::printf("MISMATCH %s %s %dx%d g%d inputs %d\n", std::string(kernels::pathName(path)).c_str(),
                      format == quant::IntFormat::Int8 ? "int8" : "int4", s.rows, s.cols, s.group, inputs);
        }
      }
  return failures;
}

// Mismatching cases of rowsTimesInputs (f32 weights, and bf16 against their widened values)
// with the documented order, for every split into passes (1..6 inputs), column counts with and
// without 32-, 16- and tail parts, and five rows (their dots' last steps go four at a time).
int checkFloatRows(int& cases) {
  constexpr int kRows = 5;
  int failures = 0;
  for (int cols : {7, 16, 48, 77, 256, 640})
    for (int inputs = 1; inputs <= 6; ++inputs) {
      const auto w = randomValues(size_t(cols) * kRows, 41 + cols, 1.0f);
      const auto x = randomValues(size_t(cols) * inputs, 42 + cols + inputs, 1.0f);
      std::vector<uint16_t> bf16(w.size());
      std::vector<float> widened(w.size());
      for (size_t k = 0; k < w.size(); ++k) {
        bf16[k] = quant::f32ToBf16(w[k]);
        widened[k] = quant::bf16ToF32(bf16[k]);
      }
      std::vector<float> f32Out(size_t(inputs) * kRows), bf16Out(size_t(inputs) * kRows);
      kernels::rowsTimesInputs(w.data(), kRows, x.data(), inputs, cols, kRows, f32Out.data());
      kernels::bf16RowsTimesInputs(bf16.data(), kRows, x.data(), inputs, cols, kRows,
                                   bf16Out.data());
      for (int i = 0; i < inputs; ++i)
        for (int r = 0; r < kRows; ++r) {
          ++cases;
          const float* xi = x.data() + size_t(i) * cols;
          const size_t at = size_t(i) * kRows + r;
          if (f32Out[at] != test::documentedDot(w.data() + size_t(r) * cols, xi, cols) ||
              bf16Out[at] != test::documentedDot(widened.data() + size_t(r) * cols, xi, cols)) {
            ++failures;
            std::printf("MISMATCH f32/bf16 row kernel cols %d inputs %d input %d row %d\n", cols,
                        inputs, i, r);
          }
        }
    }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: int_dot_check EXPECTED_BEST_PATH\n");
    return 2;
  }
  const std::string best(kernels::pathName(kernels::bestIntPath()));
  if (best != argv[1]) {
    std::printf("FAIL: the dispatch picks %s on this CPU, expected %s\n", best.c_str(), argv[1]);
    return 1;
  }
  int failures = 0, cases = 0, paths = 0;
  for (kernels::IntKernelPath p : kernels::kAllIntPaths)
    if (p != kernels::IntKernelPath::Scalar && kernels::pathAvailable(p)) {
      failures += checkPath(p, cases);
      ++paths;
    }
  int floatCases = 0;
  failures += checkFloatRows(floatCases);
  std::printf("%s: best path %s; %d cases on %d SIMD path(s) against scalar and %d f32/bf16 row "
              "kernel cases against their documented order, %d mismatching\n",
              failures ? "FAIL" : "PASS", best.c_str(), cases, paths, floatCases, failures);
  return failures ? 1 : 0;
}
