#pragma once
// The engine's logger: one named spdlog logger ("strata", to stderr so stdout stays free for
// machine-readable output), created on first use through spdlog's registry.
#include <spdlog/spdlog.h>

#include <string_view>

namespace strata {

spdlog::logger& log();

void setLogLevel(spdlog::level::level_enum level);

// "trace", "debug", "info", "warn", "error", "critical" or "off"; throws Error otherwise.
spdlog::level::level_enum parseLogLevel(std::string_view name);

}  // namespace strata
