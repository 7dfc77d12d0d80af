#pragma once
// Whole-buffer positioned reads for the model files: pread until every byte is in, retrying
// interrupted calls; a short file or an I/O error throws strata::Error naming the file and
// what was being read.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace strata::io {

void preadAll(int fd, void* buffer, size_t size, uint64_t offset, const std::filesystem::path& file,
              const std::string& what);

}  // namespace strata::io
