#pragma once
// The memory read bandwidth: the limit every weight-streaming kernel and the decode benchmark
// are measured against, in the same run.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace strata {

// Median wall time of `repeats` runs of `run`, after one warm-up run.
template <typename Fn>
double medianSeconds(int repeats, Fn&& run) {
  using Clock = std::chrono::steady_clock;
  run();  // warm-up: page faults, thread start
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    run();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// GB/s (1e9 bytes) summing `buffer` with `threads` threads; median of `repeats`.
double memoryReadGbps(const std::vector<uint64_t>& buffer, int threads, int repeats);

}  // namespace strata
