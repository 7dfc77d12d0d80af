#include "io/container_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/durable_file.h"
#include "strata/error.h"

namespace strata::io {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& action) {
  throw Error(path.string() + ": " + action + ": " + std::strerror(errno));
}

void pwriteAll(int fd, const std::byte* data, uint64_t size, uint64_t offset,
               const fs::path& path) {
  while (size > 0) {
    const ssize_t n =
        ::pwrite(fd, data, std::min<uint64_t>(size, uint64_t{1} << 30), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(path, "write failed (disk full?)");
    data += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<uint64_t>(n);
  }
}

}  // namespace

ContainerWriter::ContainerWriter(const fs::path& dir, const std::vector<ContainerFile>& files,
                                 const std::vector<bool>& holdsDoneWork)
    : dir_(dir) {
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path path = dir / files[i].name;
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      for (int open : fds_) ::close(open);
      fail(path, "cannot create");
    }
    fds_.push_back(fd);
    paths_.push_back(path);
    headerBytes_.push_back(files[i].headerBytes);
    fileBytes_.push_back(files[i].fileBytes);
    dirty_.push_back(false);
    struct stat st {};
    if (::fstat(fd, &st) != 0) fail(path, "cannot stat");
    if (static_cast<uint64_t>(st.st_size) == files[i].fileBytes) continue;
    if (i < holdsDoneWork.size() && holdsDoneWork[i]) {
      for (int open : fds_) ::close(open);
      throw Error(path.string() + " is " + std::to_string(st.st_size) + " bytes, but the " +
                  "conversion journal says it holds converted tensors of a " +
                  std::to_string(files[i].fileBytes) + "-byte file; delete the output " +
                  "directory and start over");
    }
    // Sparse until written: the conversion never needs more disk than it has produced.
    if (::ftruncate(fd, static_cast<off_t>(files[i].fileBytes)) != 0) {
      for (int open : fds_) ::close(open);
      fail(path, "cannot size the file");
    }
  }
}

ContainerWriter::~ContainerWriter() {
  for (int fd : fds_) ::close(fd);
}

void ContainerWriter::write(int file, uint64_t dataOffset, std::span<const std::byte> bytes) {
  const auto i = static_cast<size_t>(file);
  if (headerBytes_.at(i) + dataOffset + bytes.size() > fileBytes_[i])
    throw Error(paths_[i].string() + ": write past the planned end of the file");
  pwriteAll(fds_[i], bytes.data(), bytes.size(), headerBytes_[i] + dataOffset, paths_[i]);
  dirty_[i] = true;
  bytesWritten_ += bytes.size();
}

void ContainerWriter::sync() {
  for (size_t i = 0; i < fds_.size(); ++i) {
    if (!dirty_[i]) continue;
    if (::fdatasync(fds_[i]) != 0) fail(paths_[i], "fdatasync failed");
    dirty_[i] = false;
  }
}

void ContainerWriter::finish(const std::vector<ContainerFile>& files,
                             const ContainerIdentity& identity,
                             const std::vector<std::string>& copiedFiles) {
  ContainerManifest manifest;
  manifest.identity = identity;
  manifest.copiedFiles = copiedFiles;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string header = buildHeader(files[i], identity);
    if (header.size() != headerBytes_.at(i))
      throw Error(paths_[i].string() + ": header size changed after planning");
    pwriteAll(fds_[i], reinterpret_cast<const std::byte*>(header.data()), header.size(), 0,
              paths_[i]);
    if (::fsync(fds_[i]) != 0) fail(paths_[i], "fsync failed");
    dirty_[i] = false;
    manifest.files.push_back({files[i].name, files[i].role, files[i].layer, files[i].fileBytes,
                              XXH3_64bits(header.data() + 8, header.size() - 8)});
  }
  syncDirectory(dir_);
  writeFileAtomically(dir_ / kManifestName, formatManifest(manifest));
}

}  // namespace strata::io
