#pragma once
// Writes the files of a planned container (io/container_format.h). Files are created at their
// final size up front and filled with pwrite at planned offsets, in any order; their headers
// are written last, when every checksum is known, and the manifest after them. A file whose
// header is still zeros is not valid safetensors, and a directory without the manifest is not
// a container: an interrupted conversion never looks complete.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "io/container_format.h"

namespace strata::io {

class ContainerWriter {
 public:
  // Creates or reopens each file of `files` (already laid out) in `dir` at its planned size.
  // holdsDoneWork[i]: file i already holds data a resumed conversion keeps, so it must already
  // have exactly its planned size.
  ContainerWriter(const std::filesystem::path& dir, const std::vector<ContainerFile>& files,
                  const std::vector<bool>& holdsDoneWork);
  ContainerWriter(const ContainerWriter&) = delete;
  ContainerWriter& operator=(const ContainerWriter&) = delete;
  ~ContainerWriter();  // closes without syncing (like a crash would)

  // Writes `bytes` at `dataOffset` (relative to the data section) of file `file`.
  void write(int file, uint64_t dataOffset, std::span<const std::byte> bytes);
  // fdatasync of every file written since the last sync.
  void sync();
  uint64_t bytesWritten() const { return bytesWritten_; }

  // Writes every file's header (checksums filled in), syncs, then writes the manifest
  // atomically. `copiedFiles` must already be in the directory.
  void finish(const std::vector<ContainerFile>& files, const ContainerIdentity& identity,
              const std::vector<std::string>& copiedFiles);

 private:
  std::filesystem::path dir_;
  std::vector<std::filesystem::path> paths_;
  std::vector<int> fds_;
  std::vector<uint64_t> headerBytes_;
  std::vector<uint64_t> fileBytes_;
  std::vector<bool> dirty_;
  uint64_t bytesWritten_ = 0;
};

}  // namespace strata::io
