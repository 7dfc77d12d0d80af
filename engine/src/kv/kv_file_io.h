#pragma once
// Whole-buffer pread/pwrite and fdatasync on a KV file's descriptor; failures throw KvFileError
// (Io) naming the file, the byte offset and the system's reason.
#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace strata::kv {

void readAt(int fd, uint64_t offset, void* data, size_t bytes, const std::filesystem::path& path);
void writeAt(int fd, uint64_t offset, const void* data, size_t bytes,
             const std::filesystem::path& path);
void syncData(int fd, const std::filesystem::path& path);
uint64_t fileSize(int fd, const std::filesystem::path& path);

}  // namespace strata::kv
