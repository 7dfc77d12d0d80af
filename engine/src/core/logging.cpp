#include "core/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <array>
#include <string>

#include "strata/error.h"

namespace strata {

namespace {
constexpr const char* kLoggerName = "strata";
}

spdlog::logger& log() {
  // The registry owns the logger; we keep no state of our own. Two threads may race to create
  // it: the loser's create throws because the name is taken, and it then finds the winner's.
  if (auto existing = spdlog::get(kLoggerName)) return *existing;
  try {
    return *spdlog::stderr_color_mt(kLoggerName);
  } catch (const spdlog::spdlog_ex&) {
    if (auto existing = spdlog::get(kLoggerName)) return *existing;
    throw;
  }
}

void setLogLevel(spdlog::level::level_enum level) { log().set_level(level); }

spdlog::level::level_enum parseLogLevel(std::string_view name) {
  constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 7> kLevels{{
      {"trace", spdlog::level::trace},
      {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},
      {"error", spdlog::level::err},
      {"critical", spdlog::level::critical},
      {"off", spdlog::level::off},
  }};
  for (const auto& [levelName, level] : kLevels) {
    if (levelName == name) return level;
  }
  throw Error("log level \"" + std::string(name) +
              "\" is unknown; expected trace, debug, info, warn, error, critical or off");
}

}  // namespace strata
