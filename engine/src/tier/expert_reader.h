#pragma once
// Reads whole experts from container files: one request per expert (22.5 MiB at GLM-5 sizes),
// several in flight. On SSDs a random 4 KiB read costs about as much as a 1 MiB one, so whole
// experts and queue depth - not page-sized mmap faults - are what reach the disk's bandwidth.
//
//   Buffered  pread through the page cache; the pages are dropped after each read unless the
//             page cache is a tier of its own (keepPageCache), so the OS does not hold a
//             second copy of what our cache holds.
//   Direct    pread on O_DIRECT descriptors into aligned buffers: no page cache at all.
//   Uring     io_uring (liburing) on O_DIRECT descriptors: a whole batch submitted at once.
//
// A reader belongs to one thread. Buffers must be AlignedBuffer-aligned for Direct and Uring.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/tiers.h"

namespace strata::tier {

using strata::IoBackend;  // strata/tiers.h

struct ReadRequest {
  int file = 0;             // index into the reader's files
  uint64_t offset = 0;      // a multiple of 4096 for Direct and Uring
  uint64_t length = 0;      // bytes to read (a multiple of 4096 for Direct and Uring)
  uint64_t required = 0;    // bytes that must arrive (the rest may lie past the end of file)
  std::byte* buffer = nullptr;
  std::string error;        // set on failure; empty on success
};

class ExpertReader {
 public:
  virtual ~ExpertReader() = default;
  // Performs every request; failures are reported per request, never thrown.
  virtual void read(std::span<ReadRequest> requests) = 0;
  virtual IoBackend backend() const = 0;
};

// Opens `files` for `backend`. Throws strata::Error when the backend is unavailable here (no
// O_DIRECT on the file system, io_uring blocked by the kernel or a sandbox), naming the reason.
std::unique_ptr<ExpertReader> openExpertReader(IoBackend backend,
                                               const std::vector<std::filesystem::path>& files,
                                               bool keepPageCache, int queueDepth);

}  // namespace strata::tier
