#pragma once
// Small text helpers for error messages.
#include <cstdint>
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

}  // namespace strata
