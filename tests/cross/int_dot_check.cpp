// The integer kernels of another architecture, bit-exact against the scalar reference: built
// with a cross compiler and run under an emulator (tests/cross/CMakeLists.txt: Arm64 NEON
// dot-product kernels under qemu-aarch64). Plain C++, no Qt: only the kernel sources travel.
//
//   int_dot_check EXPECTED_BEST_PATH
// checks that the run-time dispatch picks EXPECTED_BEST_PATH on the emulated CPU, then that
// every available path equals scalar for int8/int4, several group sizes, odd widths, chunk
// tails, extreme codes and 1..6 inputs. Exit status 0 only if all of that holds.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/int_dot.h"
#include "kernels/quant_matmul.h"
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
  std::printf("%s: best path %s; %d cases on %d SIMD path(s) against scalar, %d mismatching\n",
              failures ? "FAIL" : "PASS", best.c_str(), cases, paths, failures);
  return failures ? 1 : 0;
}
