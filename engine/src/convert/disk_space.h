#pragma once
// Whether a conversion's output fits its disk, asked before anything is written: a full disk
// found hours into converting a 744B model is the worst way to learn of it.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "io/container_format.h"

namespace strata::convert {

// Bytes of the planned `files` in `dir` not yet on disk (an interrupted run's blocks count as
// written; the files are sparse until written).
uint64_t bytesToWrite(const std::vector<io::ContainerFile>& files, const std::filesystem::path& dir);

// Throws strata::Error giving both numbers when `needed` exceeds `available`.
void requireRoom(uint64_t needed, uint64_t available, const std::filesystem::path& dir);

}  // namespace strata::convert
