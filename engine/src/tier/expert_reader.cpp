#include "tier/expert_reader.h"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "strata/error.h"

namespace strata::tier {
namespace {

std::string errnoText(int error) { return std::strerror(error); }

// Open descriptors of the container files, closed on destruction.
class FileSet {
 public:
  FileSet(const std::vector<std::filesystem::path>& files, bool direct) {
    for (const auto& path : files) {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
      if (fd < 0) {
        const int error = errno;
        close();
        throw Error(path.string() + ": cannot open" + (direct ? " with O_DIRECT" : "") + ": " +
                    errnoText(error) +
                    (direct && error == EINVAL ? " (the file system has no direct I/O; use --io buffered)" : ""));
      }
      // Each read is one whole expert: kernel read-ahead past it would only fetch (and leave in
      // the page cache) the start of a neighbour that may never be asked for.
      if (!direct) ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
      fds_.push_back(fd);
    }
  }
  FileSet(const FileSet&) = delete;
  FileSet& operator=(const FileSet&) = delete;
  ~FileSet() { close(); }
  int fd(int file) const { return fds_.at(static_cast<size_t>(file)); }

 private:
  void close() {
    for (int fd : fds_) ::close(fd);
    fds_.clear();
  }
  std::vector<int> fds_;
};

// Reads until `length` bytes or end of file; returns bytes read or -errno.
int64_t preadFully(int fd, std::byte* buffer, uint64_t length, uint64_t offset) {
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, buffer + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  return static_cast<int64_t>(done);
}

void finish(ReadRequest& r, int64_t result) {
  if (result < 0)
    r.error = "read of " + std::to_string(r.length) + " bytes at offset " + std::to_string(r.offset) +
              " failed: " + errnoText(static_cast<int>(-result));
  else if (static_cast<uint64_t>(result) < r.required)
    r.error = "short read at offset " + std::to_string(r.offset) + ": got " + std::to_string(result) +
              " of " + std::to_string(r.required) + " bytes (the file is truncated)";
}

class PreadReader final : public ExpertReader {
 public:
  PreadReader(const std::vector<std::filesystem::path>& files, bool direct, bool keepPageCache)
      : files_(files, direct), direct_(direct), dropPages_(!direct && !keepPageCache) {}

  void read(std::span<ReadRequest> requests) override {
    for (ReadRequest& r : requests) {
      r.error.clear();
      const int fd = files_.fd(r.file);
      finish(r, preadFully(fd, r.buffer, r.length, r.offset));
      // Our cache holds the expert now; a second copy in the page cache would only crowd out
      // the memory budget the user gave us.
      if (dropPages_)
        ::posix_fadvise(fd, static_cast<off_t>(r.offset), static_cast<off_t>(r.length),
                        POSIX_FADV_DONTNEED);
    }
  }
  IoBackend backend() const override { return direct_ ? IoBackend::Direct : IoBackend::Buffered; }

 private:
  FileSet files_;
  bool direct_;
  bool dropPages_;
};

class UringReader final : public ExpertReader {
 public:
  UringReader(const std::vector<std::filesystem::path>& files, int queueDepth)
      : files_(files, /*direct=*/true), depth_(queueDepth < 1 ? 1 : queueDepth) {
    const int rc = io_uring_queue_init(static_cast<unsigned>(depth_), &ring_, 0);
    if (rc < 0)
      throw Error("io_uring is not available here (" + errnoText(-rc) +
                  "): the kernel or a sandbox blocks it; use --io direct");
  }
  UringReader(const UringReader&) = delete;
  UringReader& operator=(const UringReader&) = delete;
  ~UringReader() override { io_uring_queue_exit(&ring_); }

  void read(std::span<ReadRequest> requests) override {
    size_t next = 0;
    size_t inFlight = 0;
    while (next < requests.size() || inFlight > 0) {
      while (next < requests.size() && inFlight < static_cast<size_t>(depth_)) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        if (!sqe) break;
        ReadRequest& r = requests[next];
        r.error.clear();
        io_uring_prep_read(sqe, files_.fd(r.file), r.buffer, static_cast<unsigned>(r.length), r.offset);
        io_uring_sqe_set_data(sqe, &r);
        ++next;
        ++inFlight;
      }
      const int submitted = io_uring_submit(&ring_);
      if (submitted < 0 && submitted != -EINTR && submitted != -EAGAIN) {
        failAll(requests, inFlight, "io_uring_submit failed: " + errnoText(-submitted));
        return;
      }
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_wait_cqe(&ring_, &cqe);
      if (rc == -EINTR) continue;
      if (rc < 0) {
        failAll(requests, inFlight, "io_uring_wait_cqe failed: " + errnoText(-rc));
        return;
      }
      auto* r = static_cast<ReadRequest*>(io_uring_cqe_get_data(cqe));
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      --inFlight;
      // A short read of a direct request is rare (end of file); finish it synchronously.
      if (res >= 0 && static_cast<uint64_t>(res) < r->required && res > 0) {
        const int64_t more = preadFully(files_.fd(r->file), r->buffer + res, r->length - res,
                                        r->offset + static_cast<uint64_t>(res));
        finish(*r, more < 0 ? more : res + more);
      } else {
        finish(*r, res);
      }
    }
  }
  IoBackend backend() const override { return IoBackend::Uring; }

 private:
  // The ring itself failed: wait out what is in flight (no completion may write into a buffer
  // after we return), then fail the whole batch.
  void failAll(std::span<ReadRequest> requests, size_t inFlight, const std::string& why) {
    io_uring_cqe* cqe = nullptr;
    for (; inFlight > 0 && io_uring_wait_cqe(&ring_, &cqe) == 0; --inFlight)
      io_uring_cqe_seen(&ring_, cqe);
    for (ReadRequest& r : requests) r.error = why;
  }

  FileSet files_;
  int depth_;
  io_uring ring_{};
};

}  // namespace

std::unique_ptr<ExpertReader> openExpertReader(IoBackend backend,
                                               const std::vector<std::filesystem::path>& files,
                                               bool keepPageCache, int queueDepth) {
  switch (backend) {
    case IoBackend::Buffered: return std::make_unique<PreadReader>(files, false, keepPageCache);
    case IoBackend::Direct: return std::make_unique<PreadReader>(files, true, false);
    case IoBackend::Uring: return std::make_unique<UringReader>(files, queueDepth);
  }
  throw Error("unknown I/O backend");
}

}  // namespace strata::tier

namespace strata {

std::string_view ioBackendName(IoBackend backend) {
  switch (backend) {
    case IoBackend::Buffered: return "buffered";
    case IoBackend::Direct: return "direct";
    case IoBackend::Uring: return "uring";
  }
  return "?";
}

std::optional<IoBackend> parseIoBackend(std::string_view name) {
  for (IoBackend b : {IoBackend::Buffered, IoBackend::Direct, IoBackend::Uring})
    if (ioBackendName(b) == name) return b;
  return std::nullopt;
}

}  // namespace strata
