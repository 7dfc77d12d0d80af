#pragma once
// Writes that survive a crash or power loss in a known state: a file is either absent, or its
// old version, or complete (temp file, fsync, rename, fsync of the directory).
#include <filesystem>
#include <string_view>

namespace strata::io {

// Replaces `path` with `contents` atomically.
void writeFileAtomically(const std::filesystem::path& path, std::string_view contents);
// Copies `from` to `to` atomically.
void copyFileAtomically(const std::filesystem::path& from, const std::filesystem::path& to);
// fsync of a directory, so renames and unlinks in it are durable.
void syncDirectory(const std::filesystem::path& dir);
// Whole file as text; throws strata::Error naming it.
std::string readFileText(const std::filesystem::path& path);

}  // namespace strata::io
