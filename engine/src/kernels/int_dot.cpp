#include "kernels/int_dot.h"

#include <string>

#include "strata/error.h"

namespace strata::kernels {

std::string_view pathName(IntKernelPath path) {
  switch (path) {
    case IntKernelPath::Scalar: return "scalar";
    case IntKernelPath::Avx2: return "avx2";
    case IntKernelPath::Avx512Vnni: return "avx512vnni";
  }
  return "?";
}

int groupShiftOf(int64_t groupSize, int64_t paddedCols) {
  if (groupSize >= paddedCols) return 62;  // one scale per row: every block maps to group 0
  int shift = 0;
  while ((int64_t{32} << shift) < groupSize) ++shift;
  if ((int64_t{32} << shift) != groupSize)
    throw Error("integer kernels need a power-of-two group size of at least 32, not " +
                std::to_string(groupSize));
  return shift;
}

bool pathAvailable(IntKernelPath path) {
  switch (path) {
    case IntKernelPath::Scalar:
      return true;
    case IntKernelPath::Avx2:
      return __builtin_cpu_supports("avx2");
    case IntKernelPath::Avx512Vnni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  }
  return false;
}

IntKernelPath bestIntPath() {
  for (IntKernelPath p : {IntKernelPath::Avx512Vnni, IntKernelPath::Avx2})
    if (pathAvailable(p)) return p;
  return IntKernelPath::Scalar;
}

IntKernels intKernels(IntKernelPath path) {
  if (!pathAvailable(path))
    throw Error("the " + std::string(pathName(path)) + " kernels need CPU features this machine lacks");
  switch (path) {
    case IntKernelPath::Avx2: return {path, dotInt8Avx2, dotInt4Avx2};
    case IntKernelPath::Avx512Vnni: return {path, dotInt8Avx512Vnni, dotInt4Avx512Vnni};
    case IntKernelPath::Scalar: break;
  }
  return {IntKernelPath::Scalar, dotInt8Scalar, dotInt4Scalar};
}

}  // namespace strata::kernels
