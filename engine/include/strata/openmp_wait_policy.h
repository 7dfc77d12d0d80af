#pragma once
// OpenMP worker threads that busy-wait between parallel regions for long (libgomp's default:
// ~3 ms) take the CPU from the expert-reading threads and from each other: on a 2-core laptop
// decode ran 4x slower. Sleeping at once costs a wake-up per parallel region instead, and
// decode runs hundreds of regions per token: a brief spin first (GOMP_SPINCOUNT 10000, ~0.1 ms)
// took in-memory decode of the synthetic medium model from 52-53 to 58-71 tok/s and streamed
// decode from 9.8-10.1 to 11.1-13.6 tok/s on 2 idle cores (README "Kernels"). libgomp reads
// these only from the environment, at load time, so a program must start with them set: this
// re-executes the program once with OMP_WAIT_POLICY=PASSIVE and GOMP_SPINCOUNT=10000 unless
// the user chose a policy. For main(), before anything else runs (strata-cli and the desktop
// app call it; the engine library itself never does).
#include <unistd.h>

#include <cstdlib>

namespace strata {

inline void ensurePassiveOpenMpWaiting(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  if (::setenv("OMP_WAIT_POLICY", "PASSIVE", 0) != 0) return;
  if (::setenv("GOMP_SPINCOUNT", "10000", 0) != 0) return;  // overrides PASSIVE's zero
  ::execv("/proc/self/exe", argv);
  // execv failed (no /proc): carry on with the default policy.
}

}  // namespace strata
