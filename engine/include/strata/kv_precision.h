#pragma once
// How KV cache vectors are kept: f32, or rounded to 16 bits (bf16: f32's range, 8 mantissa
// bits; f16: 11 mantissa bits, range +-65504). Saved sessions store them in this precision.
#include <optional>
#include <string_view>

namespace strata {

enum class KvPrecision { F32, BF16, F16 };
std::string_view kvPrecisionName(KvPrecision precision);  // "f32", "bf16", "f16"
std::optional<KvPrecision> parseKvPrecision(std::string_view name);

}  // namespace strata
