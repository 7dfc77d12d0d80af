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
