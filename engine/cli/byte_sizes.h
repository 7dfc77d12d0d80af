#pragma once
// Byte counts for people, in decimal units as disks and RAM are sold: "19.69 GB", "3.32 MB",
// "864.8 KB".
#include <cstdint>
#include <cstdio>
#include <string>

namespace strata::cli {

inline std::string decimalSize(uint64_t bytes) {
  char text[32];
  if (bytes >= 1000000000ull)
    std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / 1e9);
  else if (bytes >= 1000000ull)
    std::snprintf(text, sizeof text, "%.2f MB", static_cast<double>(bytes) / 1e6);
  else
    std::snprintf(text, sizeof text, "%.1f KB", static_cast<double>(bytes) / 1e3);
  return text;
}

}  // namespace strata::cli
