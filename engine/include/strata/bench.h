#pragma once
// Kernel benchmarks, run by `strata-cli bench kernels`. Each measurement is a median over
// repeats and is paired with a limit measured in the same run (the memory read bandwidth),
// so results are ratios that mean something on a noisy machine.
#include <functional>
#include <string>
#include <vector>

namespace strata {

struct KernelBenchOptions {
  int repeats = 7;           // median of this many timed runs per measurement
  double workingSetMiB = 256; // bytes streamed per run: well past the last-level cache
  bool quick = false;        // smaller shapes and fewer repeats (for tests of the command)
};

struct KernelBenchResult {
  std::string name;     // e.g. "int4_g128_matvec"
  std::string path;     // kernel path: "f32", "dequant", "scalar", "avx2", "avx512vnni", ...
  int threads = 0;
  int rows = 0, cols = 0, batch = 0;
  double seconds = 0;   // median per run
  double gbps = 0;      // weight bytes read per second (GB = 1e9 bytes)
  double gflops = 0;    // 2 * rows * cols * batch per second
  double ratio = 0;     // gbps / memory read bandwidth measured just before, same thread count
};

struct KernelBenchReport {
  double memReadGbps1 = 0;    // one thread (the highest of the run's measurements)
  double memReadGbpsAll = 0;  // all threads
  int threadsAll = 0;
  std::string bestPath;
  std::vector<KernelBenchResult> results;
};

// `progress` sees each result as it is measured.
KernelBenchReport benchKernels(const KernelBenchOptions& options,
                               const std::function<void(const KernelBenchResult&)>& progress = {});

}  // namespace strata
