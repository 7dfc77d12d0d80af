#include "core/logging.h"

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <array>
#include <string>

#include "strata/error.h"
#include "strata/logging.h"

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

void logToFile(const std::filesystem::path& file, int64_t maxBytes, int keptFiles) {
  if (maxBytes < 1024 || keptFiles < 0)
    throw Error("log file " + file.string() + ": needs at least 1 KiB per file and 0 or more kept files");
  try {
    if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
    auto sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
        file.string(), static_cast<size_t>(maxBytes), static_cast<size_t>(keptFiles));
    log().sinks().push_back(std::move(sink));
  } catch (const std::exception& e) {  // spdlog_ex or filesystem_error
    throw Error("cannot write the log file " + file.string() + ": " + e.what());
  }
}

void writeLog(LogLevel level, std::string_view message) {
  constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                    spdlog::level::warn, spdlog::level::err};
  log().log(kLevels[static_cast<int>(level)], "{}", message);
  // Warnings and errors reach the file at once (the app may be about to crash or quit).
  if (level >= LogLevel::Warning) log().flush();
}

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
