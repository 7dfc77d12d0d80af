#include "kernels/memory_bandwidth.h"

namespace strata {

// Integer adds are associative, so the compiler vectorizes the loop freely and it is bound by
// memory, not by a chain of dependent adds.
double memoryReadGbps(const std::vector<uint64_t>& buffer, int threads, int repeats) {
  volatile uint64_t sink = 0;
  const int64_t n = static_cast<int64_t>(buffer.size());
  const uint64_t* data = buffer.data();
  const double seconds = medianSeconds(repeats, [&] {
    uint64_t total = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : total) schedule(static)
    for (int64_t i = 0; i < n; ++i) total += data[i];
    sink = total;
  });
  (void)sink;
  return static_cast<double>(buffer.size() * sizeof(uint64_t)) / seconds / 1e9;
}

}  // namespace strata
