#include "io/pread_all.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "strata/error.h"

namespace strata::io {

namespace fs = std::filesystem;

// A zero return before the end means the file is shorter than its header promised.
void preadAll(int fd, void* buffer, size_t size, uint64_t offset, const fs::path& file,
              const std::string& what) {
  auto* out = static_cast<char*>(buffer);
  size_t done = 0;
  while (done < size) {
    // Linux transfers at most ~2 GiB per call; ask for 1 GiB at a time.
    const size_t chunk = std::min<size_t>(size - done, size_t{1} << 30);
    const ssize_t got = ::pread(fd, out + done, chunk, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(file.string() + ": reading " + what + ": " + std::strerror(errno));
    }
    if (got == 0) {
      throw Error(file.string() + ": reading " + what + ": got " + std::to_string(done) + " of " +
                  std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                  " (file truncated?)");
    }
    done += static_cast<size_t>(got);
  }
}

}  // namespace strata::io
