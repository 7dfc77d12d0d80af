#include "kernels/memory_bandwidth.h"

#include <omp.h>

namespace strata {
namespace {

// Integer adds are associative, so the compiler vectorizes the loop freely and it is bound by
// memory, not by a chain of dependent adds. Multi-versioned: the widest loads the CPU has, as
// the kernels measured against this use (baseline 16-byte loads read ~25 % less with one
// thread on this project's AVX-512 machine, which would flatter every ratio).
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
uint64_t sumWords(const uint64_t* data, int64_t n) {
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += data[i];
  return total;
}

}  // namespace

double memoryReadGbps(const std::vector<uint64_t>& buffer, int threads, int repeats) {
  volatile uint64_t sink = 0;
  const int64_t n = static_cast<int64_t>(buffer.size());
  const uint64_t* data = buffer.data();
  const double seconds = medianSeconds(repeats, [&] {
    uint64_t total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      // One contiguous slice per thread, as schedule(static) gives the kernels' rows.
      const int64_t parts = omp_get_num_threads(), part = omp_get_thread_num();
      const int64_t begin = n * part / parts, end = n * (part + 1) / parts;
      total += sumWords(data + begin, end - begin);
    }
    sink = total;
  });
  (void)sink;
  return static_cast<double>(buffer.size() * sizeof(uint64_t)) / seconds / 1e9;
}

}  // namespace strata
