#pragma once
// --precision and --kv-precision for the commands that open a model.
#include <string>

#include "args.h"
#include "strata/engine.h"

namespace strata::cli {

// --precision native (the default, as in the app): BF16 checkpoint weights stay BF16, in half
// the memory; the kernels widen each value exactly, in registers, so the numbers are f32's.
// f32 widens them when the model opens. --kv-precision: how KV vectors are kept.
inline void applyPrecisionOptions(const Args& args, EngineSettings& s) {
  const std::string precision = args.get("precision", "native");
  if (precision == "native")
    s.precision = Precision::Native;
  else if (precision == "f32")
    s.precision = Precision::F32;
  else
    throw UsageError("--precision must be native or f32, not '" + precision + "'");
  const std::string kv = args.get("kv-precision", "f32");
  const auto kvPrecision = parseKvPrecision(kv);
  if (!kvPrecision) throw UsageError("--kv-precision must be f32, bf16 or f16, not '" + kv + "'");
  s.kvPrecision = *kvPrecision;
}

}  // namespace strata::cli
