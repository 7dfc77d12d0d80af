#include "kernels/int_dot.h"

#include <string>

#include "strata/error.h"

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace strata::kernels {

std::string_view pathName(IntKernelPath path) {
  switch (path) {
    case IntKernelPath::Scalar: return "scalar";
    case IntKernelPath::Avx2: return "avx2";
    case IntKernelPath::AvxVnni: return "avxvnni";
    case IntKernelPath::Avx512Vnni: return "avx512vnni";
    case IntKernelPath::Avx512Vnni256: return "avx512vnni-256";
    case IntKernelPath::NeonDot: return "neon-dotprod";
  }
  return "?";
}

IntKernelPath pathNamed(std::string_view name) {
  for (IntKernelPath p : kAllIntPaths)
    if (pathName(p) == name) return p;
  std::string known;
  for (IntKernelPath p : kAllIntPaths) known += (known.empty() ? "" : ", ") + std::string(pathName(p));
  throw Error("unknown kernel path '" + std::string(name) + "' (known: " + known + ")");
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
#if defined(__x86_64__)
  const bool avx512vnni = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  switch (path) {
    case IntKernelPath::Scalar: return true;
    case IntKernelPath::Avx2: return __builtin_cpu_supports("avx2");
    case IntKernelPath::AvxVnni: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avxvnni");
    case IntKernelPath::Avx512Vnni:
    case IntKernelPath::Avx512Vnni256: return avx512vnni;
    case IntKernelPath::NeonDot: return false;
  }
  return false;
#elif defined(__aarch64__)
  if (path == IntKernelPath::NeonDot) return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return path == IntKernelPath::Scalar;
#else
  return path == IntKernelPath::Scalar;
#endif
}

// The zmm kernels come first. With f32 int4 scales the 256-bit ones streamed int4 5-15 % faster
// on this project's Zen 4 machine (512-bit operations run as two 256-bit halves); with bf16
// scales the zmm ones won end to end there: in-memory decode of the synthetic medium model
// 4-17 % faster per step in five alternating pairs, prefill 6-8 % (`strata-cli bench decode`;
// `bench kernels` measures every path; a setting forces one).
IntKernelPath bestIntPath() {
  for (IntKernelPath p : {IntKernelPath::Avx512Vnni, IntKernelPath::Avx512Vnni256,
                          IntKernelPath::AvxVnni, IntKernelPath::Avx2, IntKernelPath::NeonDot})
    if (pathAvailable(p)) return p;
  return IntKernelPath::Scalar;
}

IntKernels intKernels(IntKernelPath path) {
  if (!pathAvailable(path))
    throw Error("the " + std::string(pathName(path)) + " kernels need CPU features this machine lacks");
  switch (path) {
#if defined(__x86_64__)
    case IntKernelPath::Avx2:
      return {path, dotInt8Avx2, dotInt4Avx2, tileInt8Avx2, tileInt4Avx2};
    // Every path computes the same numbers (int_dot.h), so the prefill tiles need not match
    // the row kernels' instructions: AVX-VNNI CPUs take the AVX2 ones (none here to measure
    // a VEX vpdpbusd tile on), AVX-512 VNNI CPUs the vpdpbusd ones.
    case IntKernelPath::AvxVnni:
      return {path, dotInt8AvxVnni, dotInt4AvxVnni, tileInt8Avx2, tileInt4Avx2};
    case IntKernelPath::Avx512Vnni:
      return {path, dotInt8Avx512Vnni, dotInt4Avx512Vnni, tileInt8Avx512Vnni, tileInt4Avx512Vnni};
    case IntKernelPath::Avx512Vnni256:
      return {path, dotInt8Avx512Vnni256, dotInt4Avx512Vnni256, tileInt8Avx512Vnni,
              tileInt4Avx512Vnni};
#elif defined(__aarch64__)
    case IntKernelPath::NeonDot: return {path, dotInt8NeonDot, dotInt4NeonDot};
#endif
    default: break;
  }
  return {IntKernelPath::Scalar, dotInt8Scalar, dotInt4Scalar};
}

}  // namespace strata::kernels
