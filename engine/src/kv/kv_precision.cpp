#include "kv/kv_cache.h"
#include "quant/convert.h"

namespace strata {

std::string_view kvPrecisionName(KvPrecision precision) {
  switch (precision) {
    case KvPrecision::F32: return "f32";
    case KvPrecision::BF16: return "bf16";
    case KvPrecision::F16: return "f16";
  }
  return "?";
}

std::optional<KvPrecision> parseKvPrecision(std::string_view name) {
  for (KvPrecision p : {KvPrecision::F32, KvPrecision::BF16, KvPrecision::F16})
    if (kvPrecisionName(p) == name) return p;
  return std::nullopt;
}

namespace kv {

void roundToPrecision(float* values, size_t count, KvPrecision precision) {
  switch (precision) {
    case KvPrecision::F32: return;
    case KvPrecision::BF16:
      for (size_t i = 0; i < count; ++i) values[i] = quant::bf16ToF32(quant::f32ToBf16(values[i]));
      return;
    case KvPrecision::F16:
      for (size_t i = 0; i < count; ++i) values[i] = quant::f16ToF32(quant::f32ToF16(values[i]));
      return;
  }
}

}  // namespace kv
}  // namespace strata
