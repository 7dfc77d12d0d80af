#pragma once
// OpenMP worker threads that busy-wait between parallel regions (libgomp's default) take the
// CPU from the expert-reading threads and from each other: on a 2-core laptop decode ran 4x
// slower. libgomp reads its wait policy only from the environment, at load time, so a program
// that wants passive waiting must start with it set: this re-executes the program once with
// OMP_WAIT_POLICY=PASSIVE unless the user chose a policy. For main(), before anything else
// runs (strata-cli and the desktop app call it; the engine library itself never does).
#include <unistd.h>

#include <cstdlib>

namespace strata {

inline void ensurePassiveOpenMpWaiting(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  if (::setenv("OMP_WAIT_POLICY", "PASSIVE", 0) != 0) return;
  ::execv("/proc/self/exe", argv);
  // execv failed (no /proc): carry on with the default policy.
}

}  // namespace strata
