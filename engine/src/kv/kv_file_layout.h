#pragma once
// Where a KV file's committed records are. Walks the header and the (chunk, commit) pairs
// without reading payloads, and decides what follows the last good commit: a torn tail (an
// interrupted save: ignored) or damage (any well-formed commit record after the first bad
// record proves committed data is damaged: KvFileError Corrupt).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kv/kv_file_format.h"

namespace strata::kv {

struct CommittedChunk {
  format::ChunkRecord record;
  uint64_t offset = 0;  // of the chunk record; its payload follows it
  uint64_t payloadOffset() const { return offset + format::kChunkBytes; }
};

struct KvFileLayout {
  format::DecodedHeader header;
  std::vector<CommittedChunk> chunks;
  std::vector<uint64_t> commitEnds;  // the byte after each commit record, the opening one first
  uint64_t fileBytes = 0;            // the end of the last commit is commitEnds.back()
  uint64_t committedTokens() const;
};

KvFileLayout scanKvFile(int fd, const std::filesystem::path& path,
                        const std::string& expectedFingerprint, const KvFileHeader* expected);

}  // namespace strata::kv
