#pragma once
// Small text helpers for error messages.
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

namespace strata {

// 'name' (not called `quoted`: ADL would find std::quoted for std::string arguments).
inline std::string inQuotes(std::string_view name) {
  std::string result(1, '\'');
  result.append(name).push_back('\'');
  return result;
}

// "[2048, 6144]"
inline std::string shapeString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s.append(i ? ", " : "").append(std::to_string(shape[i]));
  return s + "]";
}

// "3.20 GiB", or "12.5 MiB" under a GiB.
inline std::string bytesText(int64_t bytes) {
  char text[32];
  if (bytes >= (int64_t{1} << 30))
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  else
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

}  // namespace strata
