#pragma once
// A conversation's KV cache on disk (docs/kv-file-format.md): a checksummed header bound to the
// model's fingerprint, then chunks of token rows, each made durable by a commit record. Saving a
// turn appends one chunk; reopening reads the whole file in large blocks. A process killed at any
// moment leaves a file that opens to its last commit.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_cache.h"
#include "strata/error.h"
#include "strata/kv_precision.h"

namespace strata::kv {

struct KvFileHeader {
  std::string modelFingerprint;  // opaque text (<= 64 bytes); must match on open
  int layerCount = 0;
  CacheDims dims;                      // kvLoraRank, ropeDim, indexDim
  std::vector<bool> layerHasIndexKey;  // [layerCount]
  KvPrecision precision = KvPrecision::F32;
};

// What a file holds at its last commit.
struct KvFileState {
  KvFileHeader header;
  std::vector<int32_t> tokens;  // token ids, in order
  KvCache cache;                // filled for exactly tokens.size() tokens (values widened to f32)
};

class KvFileError : public Error {
 public:
  enum class Reason {
    Io,             // cannot open, read or write the file (missing, permissions, disk full)
    InUse,          // another writer (this process or another) holds the file
    NotKvFile,      // bad magic
    FutureVersion,  // written by a newer Strata
    OtherModel,     // the fingerprint differs from the model's
    WrongShape,     // layers, dims, index-key flags (or, for KvFileWriter::open, precision) differ
    Corrupt,        // a committed record's checksum or structure is wrong
    Truncated,      // the file ends inside the header or before its first commit record
  };
  KvFileError(Reason reason, const std::string& message) : Error(message), reason_(reason) {}
  Reason reason() const { return reason_; }

 private:
  Reason reason_;
};

// Appends to one conversation's file. Crash-safe: a process killed at any moment leaves a file
// that opens to its last committed state. Not thread-safe; one writer per file (an advisory
// lock makes a second one fail with InUse).
class KvFileWriter {
 public:
  // Creates `path` (replacing any file there, atomically) with `header` and no tokens.
  static KvFileWriter create(const std::filesystem::path& path, const KvFileHeader& header);
  // Opens an existing file for more turns; its header must equal `expected` (else KvFileError);
  // anything after the last commit (an interrupted save) is cut off. Checks every record's
  // structure and reads the token ids, but does not re-hash the vectors (readKvFile does).
  static KvFileWriter open(const std::filesystem::path& path, const KvFileHeader& expected);
  KvFileWriter(KvFileWriter&& other) noexcept;
  KvFileWriter& operator=(KvFileWriter&& other) noexcept;
  ~KvFileWriter();

  // Makes the file hold exactly `tokens` with the vectors of `cache` (cache.length() ==
  // tokens.size()): keeps the longest committed prefix equal to tokens' first ids, cuts the file
  // back to the last commit at or before the divergence, then appends the rest as one chunk
  // (chunk, fdatasync, commit record, fdatasync). Vectors are rounded to the header's precision.
  void sync(std::span<const int32_t> tokens, const KvCache& cache);
  int64_t committedTokens() const { return static_cast<int64_t>(tokens_.size()); }
  uint64_t fileBytes() const { return fileBytes_; }
  const KvFileHeader& header() const { return header_; }

 private:
  struct Commit {
    int64_t tokens;      // committed tokens after this record
    uint64_t endOffset;  // the byte just past it
  };
  KvFileWriter(std::filesystem::path path, KvFileHeader header, int fd);
  void cutBackTo(size_t commitIndex);
  void append(std::span<const int32_t> tokens, const KvCache& cache);

  std::filesystem::path path_;
  KvFileHeader header_;
  int fd_ = -1;
  std::vector<int32_t> tokens_;  // committed token ids
  std::vector<Commit> commits_;  // the opening commit (0 tokens) first
  uint64_t fileBytes_ = 0;       // where the next chunk goes: the end of the last commit
  bool tailDirty_ = false;       // a failed sync may have left bytes after fileBytes_
};

// Reads the last committed state, verifying every checksum. Throws KvFileError naming the file
// and, for damage, the record and its byte offset. `expected`, when given, must have the same
// layers, dims and index-key flags (precision may differ: values are widened to f32 either way).
// A torn tail after the last commit (an interrupted save) is not an error: it is ignored.
KvFileState readKvFile(const std::filesystem::path& path, const std::string& expectedFingerprint,
                       const KvFileHeader* expected = nullptr);

}  // namespace strata::kv
