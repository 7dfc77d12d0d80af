#include "strata/kv_precision.h"

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

}  // namespace strata
