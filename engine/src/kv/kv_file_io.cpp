#include "kv/kv_file_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "kv/kv_file_format.h"

namespace strata::kv {

namespace {

[[noreturn]] void failIo(const std::filesystem::path& path, const std::string& what) {
  format::fail(KvFileError::Reason::Io, path, what + ": " + std::strerror(errno));
}

}  // namespace

void readAt(int fd, uint64_t offset, void* data, size_t bytes, const std::filesystem::path& path) {
  auto* at = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, at, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failIo(path, "read error at byte " + std::to_string(offset));
    if (n == 0) {
      format::fail(KvFileError::Reason::Io, path,
                   "the file ended at byte " + std::to_string(offset) +
                       " while being read (changed by another program?)");
    }
    at += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<size_t>(n);
  }
}

void writeAt(int fd, uint64_t offset, const void* data, size_t bytes,
             const std::filesystem::path& path) {
  const auto* at = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, at, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) failIo(path, "write failed at byte " + std::to_string(offset) + " (disk full?)");
    at += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<size_t>(n);
  }
}

void syncData(int fd, const std::filesystem::path& path) {
  while (::fdatasync(fd) != 0)
    if (errno != EINTR) failIo(path, "fdatasync failed");
}

uint64_t fileSize(int fd, const std::filesystem::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) failIo(path, "cannot stat");
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace strata::kv
