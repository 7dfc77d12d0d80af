#include "io/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "strata/error.h"

namespace strata::io {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& action) {
  throw Error(path.string() + ": " + action + ": " + std::strerror(errno));
}

void writeAll(int fd, const char* data, size_t size, const fs::path& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(path, "write failed (disk full?)");
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

void syncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(dir, "cannot open directory");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) fail(dir, "fsync of the directory failed");
}

void writeFileAtomically(const fs::path& path, std::string_view contents) {
  const fs::path temp = path.string() + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(temp, "cannot create");
  try {
    writeAll(fd, contents.data(), contents.size(), temp);
    if (::fsync(fd) != 0) fail(temp, "fsync failed");
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str()) != 0) fail(path, "cannot rename the temporary file");
  syncDirectory(path.parent_path().empty() ? fs::path(".") : path.parent_path());
}

std::string readFileText(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open");
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      fail(path, "read error");
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

void copyFileAtomically(const fs::path& from, const fs::path& to) {
  writeFileAtomically(to, readFileText(from));
}

}  // namespace strata::io
