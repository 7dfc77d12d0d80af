#pragma once
// The byte layout of a KV file (docs/kv-file-format.md is the specification; this is its one
// implementation): the header, chunk and commit records, the payload's order, and how values are
// stored in each precision. All integers and values are little-endian.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_file.h"

namespace strata::kv::format {

static_assert(std::endian::native == std::endian::little,
              "KV files are little-endian; a big-endian host would need byte swaps");

inline constexpr char kFileMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'K', 'V'};
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kMaxFingerprintBytes = 64;
inline constexpr int kMaxLayers = 1 << 16;
inline constexpr size_t kFixedHeaderBytes = 100;  // everything before the per-layer flags
inline constexpr size_t kChunkBytes = 48;         // a chunk record, without its payload
inline constexpr size_t kCommitBytes = 32;
inline constexpr std::array<char, 4> kChunkMagic = {'K', 'V', 'C', 'H'};
inline constexpr std::array<char, 4> kCommitMagic = {'K', 'V', 'C', 'M'};

// Throws KvFileError "<path>: <what>".
[[noreturn]] void fail(KvFileError::Reason reason, const std::filesystem::path& path,
                       const std::string& what);

// The whole header: fixed part, one flag byte per layer, then its XXH3-64.
uint64_t headerBytes(int layerCount);
// Token id plus every stored vector of one token.
uint64_t payloadBytesPerToken(const KvFileHeader& header);

// Checks what a writer is given (throws strata::Error naming `path`).
void validateHeader(const KvFileHeader& header, const std::filesystem::path& path);
std::string encodeHeader(const KvFileHeader& header);

struct DecodedHeader {
  KvFileHeader header;
  uint64_t bytes = 0;     // where the records start
  uint64_t checksum = 0;  // the header's XXH3-64, which the opening commit record repeats
};
// From the file's first min(fileBytes, kFixedHeaderBytes) bytes: the header's length, after
// checking the magic (NotKvFile), the version (FutureVersion), that the file holds the whole
// header (Truncated) and that the length agrees with the layer count (Corrupt).
uint64_t headerLength(std::span<const uint8_t> fixedPart, uint64_t fileBytes,
                      const std::filesystem::path& path);
// The whole header: checksum and fields (Corrupt), then the fingerprint (OtherModel) and, with
// `expected`, the layers, dims and index-key flags (WrongShape).
DecodedHeader decodeHeader(std::span<const uint8_t> bytes, const std::filesystem::path& path,
                           const std::string& expectedFingerprint, const KvFileHeader* expected);

struct ChunkRecord {
  uint64_t start = 0;  // tokens committed before this chunk
  uint64_t count = 0;
  uint64_t payloadBytes = 0;
  uint64_t payloadHash = 0;
};
std::array<uint8_t, kChunkBytes> encodeChunk(const ChunkRecord& chunk);
// Empty when the magic, the reserved field or the record's own checksum is wrong.
std::optional<ChunkRecord> decodeChunk(const uint8_t* bytes);

struct CommitRecord {
  uint64_t tokens = 0;        // committed tokens in all
  uint64_t previousHash = 0;  // the preceding chunk's payload hash (header checksum: the first)
};
std::array<uint8_t, kCommitBytes> encodeCommit(const CommitRecord& commit);
// Empty unless the bytes are a well-formed commit record (magic, reserved zero, checksum).
std::optional<CommitRecord> decodeCommit(const uint8_t* bytes);

// One contiguous run of a chunk's payload, in file order: the token ids, then per layer the
// latent rows, the rope-key rows and (flagged layers) the index-key rows of the chunk's tokens.
struct PayloadPiece {
  enum class Kind { TokenIds, Latent, RopeKey, IndexKey } kind;
  int layer = -1;    // -1 for TokenIds
  size_t first = 0;  // first element in the destination array (ids or the layer's vector)
  size_t elements = 0;
};
std::vector<PayloadPiece> payloadPieces(const KvFileHeader& header, uint64_t start, uint64_t count);
size_t storedBytesPerElement(PayloadPiece::Kind kind, KvPrecision precision);

// Values are encoded and widened by kv::KvRows (kv_rows.h), which the cache holds them in.

}  // namespace strata::kv::format
