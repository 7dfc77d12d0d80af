#include "kv/kv_file_layout.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "kv/kv_file_io.h"

namespace strata::kv {

namespace {

using Reason = KvFileError::Reason;
using namespace format;

// The first well-formed commit record starting in [from, end), read in large blocks.
std::optional<uint64_t> findCommitRecord(int fd, uint64_t from, uint64_t end,
                                         const std::filesystem::path& path) {
  constexpr size_t kBlock = size_t{1} << 20;
  std::vector<uint8_t> block(kBlock + kCommitBytes);
  for (uint64_t at = from; at + kCommitBytes <= end; at += kBlock) {
    // Each block overlaps the next by a record, so no record is missed at a boundary.
    const size_t n = static_cast<size_t>(std::min<uint64_t>(block.size(), end - at));
    readAt(fd, at, block.data(), n, path);
    for (size_t i = 0; i + kCommitBytes <= n && i < kBlock; ++i) {
      const void* hit = std::memchr(block.data() + i, kCommitMagic[0], std::min(n, kBlock) - i);
      if (hit == nullptr) break;
      i = static_cast<size_t>(static_cast<const uint8_t*>(hit) - block.data());
      if (i + kCommitBytes <= n && decodeCommit(block.data() + i)) return at + i;
    }
  }
  return std::nullopt;
}

// Why the (chunk, commit) pair at `at` is not a valid next commit; empty when it is.
std::string checkPair(int fd, uint64_t at, uint64_t fileBytes, uint64_t committed,
                      uint64_t bytesPerToken, size_t index, const std::filesystem::path& path,
                      CommittedChunk& out) {
  const std::string chunkName =
      "chunk record " + std::to_string(index) + " at byte " + std::to_string(at);
  if (fileBytes - at < kChunkBytes) return chunkName + " is incomplete";
  std::array<uint8_t, kChunkBytes> head;
  readAt(fd, at, head.data(), head.size(), path);
  const std::optional<ChunkRecord> chunk = decodeChunk(head.data());
  if (!chunk) return chunkName + " has a wrong magic or checksum";
  if (chunk->start != committed || chunk->count == 0 ||
      chunk->count > (fileBytes - at) / bytesPerToken ||
      chunk->payloadBytes != chunk->count * bytesPerToken)
    return chunkName + " is inconsistent (tokens " + std::to_string(chunk->start) + "+" +
           std::to_string(chunk->count) + ", " + std::to_string(chunk->payloadBytes) +
           " payload bytes; expected to start at token " + std::to_string(committed) + ")";
  const uint64_t commitAt = at + kChunkBytes + chunk->payloadBytes;
  const std::string commitName =
      "commit record " + std::to_string(index) + " at byte " + std::to_string(commitAt);
  if (fileBytes < commitAt + kCommitBytes) return commitName + " is missing or incomplete";
  std::array<uint8_t, kCommitBytes> tail;
  readAt(fd, commitAt, tail.data(), tail.size(), path);
  const std::optional<CommitRecord> commit = decodeCommit(tail.data());
  if (!commit) return commitName + " has a wrong magic or checksum";
  if (commit->tokens != committed + chunk->count || commit->previousHash != chunk->payloadHash)
    return commitName + " does not match the chunk before it";
  out = {*chunk, at};
  return {};
}

}  // namespace

uint64_t KvFileLayout::committedTokens() const {
  return chunks.empty() ? 0 : chunks.back().record.start + chunks.back().record.count;
}

KvFileLayout scanKvFile(int fd, const std::filesystem::path& path,
                        const std::string& expectedFingerprint, const KvFileHeader* expected) {
  KvFileLayout layout;
  layout.fileBytes = fileSize(fd, path);
  std::vector<uint8_t> bytes(std::min<uint64_t>(layout.fileBytes, kFixedHeaderBytes));
  readAt(fd, 0, bytes.data(), bytes.size(), path);
  bytes.resize(headerLength(bytes, layout.fileBytes, path));
  readAt(fd, 0, bytes.data(), bytes.size(), path);
  layout.header = decodeHeader(bytes, path, expectedFingerprint, expected);

  // The opening commit (0 tokens) is written with the header, atomically: it must be whole.
  uint64_t at = layout.header.bytes;
  if (layout.fileBytes < at + kCommitBytes)
    fail(Reason::Truncated, path,
         "the file ends before its first commit record (" + std::to_string(layout.fileBytes) +
             " bytes): it was cut short");
  std::array<uint8_t, kCommitBytes> opening;
  readAt(fd, at, opening.data(), opening.size(), path);
  const std::optional<CommitRecord> first = decodeCommit(opening.data());
  if (!first || first->tokens != 0 || first->previousHash != layout.header.checksum)
    fail(Reason::Corrupt, path,
         "commit record 0 at byte " + std::to_string(at) + " is damaged (the file is damaged)");
  at += kCommitBytes;
  layout.commitEnds.push_back(at);

  const uint64_t bytesPerToken = payloadBytesPerToken(layout.header.header);
  while (at < layout.fileBytes) {
    CommittedChunk chunk;
    const std::string problem = checkPair(fd, at, layout.fileBytes, layout.committedTokens(),
                                          bytesPerToken, layout.chunks.size() + 1, path, chunk);
    if (problem.empty()) {
      layout.chunks.push_back(chunk);
      at = chunk.payloadOffset() + chunk.record.payloadBytes + kCommitBytes;
      layout.commitEnds.push_back(at);
      continue;
    }
    // A save never writes a commit record before its chunk is complete and durable, so a
    // well-formed one after the damage means the damage is in committed data.
    if (const std::optional<uint64_t> later = findCommitRecord(fd, at, layout.fileBytes, path))
      fail(Reason::Corrupt, path,
           problem + ", yet a commit record at byte " + std::to_string(*later) +
               " follows: committed data is damaged");
    break;  // a torn tail: the save after the last commit was interrupted
  }
  return layout;
}

}  // namespace strata::kv
