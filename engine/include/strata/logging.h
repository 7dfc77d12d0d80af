#pragma once
// The engine's log: always stderr; optionally also a file that rotates by size (the desktop app
// keeps one in its data folder so that a user can send it with a bug report).
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace strata {

enum class LogLevel { Debug, Info, Warning, Error };

// Also writes the log to `file`: when it would grow past maxBytes it is renamed with index 1
// (strata.log -> strata.1.log; strata.1.log -> strata.2.log, ...) and at most keptFiles old
// files stay. Creates the folder. Throws
// strata::Error naming the file when it cannot be opened. Call once, before other threads log.
void logToFile(const std::filesystem::path& file, int64_t maxBytes = int64_t{4} << 20, int keptFiles = 3);

// One line in the log (messages from the app, e.g. Qt's warnings).
void writeLog(LogLevel level, std::string_view message);

}  // namespace strata
