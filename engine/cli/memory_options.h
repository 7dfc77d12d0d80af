#pragma once
// --ram-gb and --io for the commands that open a model: stream the experts of a container under
// a memory budget, keeping the usage history in the user's data folder.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "args.h"
#include "strata/tiers.h"

namespace strata::cli {

inline const char* kMemoryOptionsUsage =
    "[--ram-gb X] [--io direct|buffered|uring]";

// The XDG data folder for Strata (where the app keeps its data too).
inline std::filesystem::path defaultDataDirectory() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "strata";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".local" / "share" / "strata";
  return {};
}

inline void applyMemoryOptions(const Args& args, MemorySettings& m) {
  if (args.has("ram-gb")) {
    const double gb = parseDouble(args.require("ram-gb"), "--ram-gb");
    if (gb <= 0) throw UsageError("--ram-gb must be positive");
    m.budgetBytes = static_cast<int64_t>(gb * 1e9);
    m.dataDirectory = defaultDataDirectory();
  }
  if (args.has("io")) {
    const auto io = parseIoBackend(args.require("io"));
    if (!io) throw UsageError("--io must be direct, buffered or uring");
    m.io = *io;
  }
}

}  // namespace strata::cli
