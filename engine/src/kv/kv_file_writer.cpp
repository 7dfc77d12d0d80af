// KvFileWriter: appends one (chunk, commit) pair per sync. The order of writes is what makes a
// kill at any moment safe: payload and chunk record, fdatasync, commit record, fdatasync. Cutting
// back (an edit) truncates to a commit and syncs before anything new is written, so no stale
// commit record can ever sit after new data.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "io/durable_file.h"
#include "kv/kv_file.h"
#include "kv/kv_file_io.h"
#include "kv/kv_file_layout.h"

namespace strata::kv {

namespace {

using Reason = KvFileError::Reason;
using format::PayloadPiece;

constexpr size_t kBlockBytes = size_t{1} << 20;

struct HashStateFree {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};

[[noreturn]] void failIo(const std::filesystem::path& path, const std::string& what) {
  format::fail(Reason::Io, path, what + ": " + std::strerror(errno));
}

// An advisory lock, so two writers (two windows, two processes) never interleave records.
void lockOrThrow(int fd, const std::filesystem::path& path) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK)
      format::fail(Reason::InUse, path, "the KV cache file is being written by another writer");
    failIo(path, "cannot lock the KV cache file");
  }
}

void truncateTo(int fd, uint64_t bytes, const std::filesystem::path& path) {
  while (::ftruncate(fd, static_cast<off_t>(bytes)) != 0)
    if (errno != EINTR) failIo(path, "cannot cut the file back to byte " + std::to_string(bytes));
}

const KvRows& source(const KvCache& cache, const PayloadPiece& piece) {
  const LayerCache& layer = cache.layer(piece.layer);
  switch (piece.kind) {
    case PayloadPiece::Kind::Latent:
      return layer.latent;
    case PayloadPiece::Kind::RopeKey:
      return layer.ropeKey;
    default:
      return layer.indexKey;
  }
}

void checkCache(std::span<const int32_t> tokens, const KvCache& cache, const KvFileHeader& h,
                const std::filesystem::path& path) {
  const std::string where = path.string() + ": saving the KV cache: ";
  const auto n = static_cast<size_t>(tokens.size());
  if (cache.length() != static_cast<int64_t>(n))
    throw Error(where + std::to_string(n) + " token ids but the cache holds " +
                std::to_string(cache.length()) + " tokens");
  const CacheDims& d = cache.dims();
  if (d.kvLoraRank != h.dims.kvLoraRank || d.ropeDim != h.dims.ropeDim ||
      d.indexDim != h.dims.indexDim)
    throw Error(where + "the cache's dims differ from the file header's");
  for (int l = 0; l < h.layerCount; ++l) {
    const LayerCache& layer = cache.layer(l);
    const bool indexed = h.layerHasIndexKey[static_cast<size_t>(l)];
    if (layer.latent.valueCount() < n * d.kvLoraRank || layer.ropeKey.valueCount() < n * d.ropeDim ||
        (indexed ? layer.indexKey.valueCount() < n * d.indexDim : !layer.indexKey.empty()))
      throw Error(where + "layer " + std::to_string(l) + " does not hold " + std::to_string(n) +
                  " rows of the header's vectors" + (indexed ? "" : " (or has index keys)"));
  }
}

}  // namespace

KvFileWriter::KvFileWriter(std::filesystem::path path, KvFileHeader header, int fd)
    : path_(std::move(path)), header_(std::move(header)), fd_(fd) {}

KvFileWriter::KvFileWriter(KvFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      header_(std::move(other.header_)),
      fd_(std::exchange(other.fd_, -1)),
      tokens_(std::move(other.tokens_)),
      commits_(std::move(other.commits_)),
      fileBytes_(other.fileBytes_),
      tailDirty_(other.tailDirty_) {}

KvFileWriter& KvFileWriter::operator=(KvFileWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    header_ = std::move(other.header_);
    fd_ = std::exchange(other.fd_, -1);
    tokens_ = std::move(other.tokens_);
    commits_ = std::move(other.commits_);
    fileBytes_ = other.fileBytes_;
    tailDirty_ = other.tailDirty_;
  }
  return *this;
}

KvFileWriter::~KvFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

KvFileWriter KvFileWriter::create(const std::filesystem::path& path, const KvFileHeader& header) {
  format::validateHeader(header, path);
  // Replacing a file another writer is appending to would silently lose its saves.
  if (const int old = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); old >= 0) {
    const int locked = ::flock(old, LOCK_EX | LOCK_NB);
    const int error = errno;
    ::close(old);
    if (locked != 0 && error == EWOULDBLOCK)
      format::fail(Reason::InUse, path, "the KV cache file is being written by another writer");
  }
  std::string bytes = format::encodeHeader(header);
  uint64_t headerChecksum;
  std::memcpy(&headerChecksum, bytes.data() + bytes.size() - 8, 8);
  const auto opening = format::encodeCommit({0, headerChecksum});
  bytes.append(reinterpret_cast<const char*>(opening.data()), opening.size());
  try {
    io::writeFileAtomically(path, bytes);  // the file is absent, old, or header + opening commit
  } catch (const KvFileError&) {
    throw;
  } catch (const Error& e) {
    throw KvFileError(Reason::Io, e.what());
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) failIo(path, "cannot open the new KV cache file");
  KvFileWriter writer(path, header, fd);
  lockOrThrow(fd, path);
  writer.commits_.push_back({0, bytes.size()});
  writer.fileBytes_ = bytes.size();
  return writer;
}

KvFileWriter KvFileWriter::open(const std::filesystem::path& path, const KvFileHeader& expected) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) failIo(path, "cannot open the KV cache file");
  KvFileWriter writer(path, expected, fd);  // closes fd if anything below throws
  lockOrThrow(fd, path);
  const KvFileLayout layout = scanKvFile(fd, path, expected.modelFingerprint, &expected);
  if (layout.header.header.precision != expected.precision)
    format::fail(
        Reason::WrongShape, path,
        "the KV cache stores " + std::string(kvPrecisionName(layout.header.header.precision)) +
            " vectors; this session saves " + std::string(kvPrecisionName(expected.precision)));
  writer.tokens_.resize(layout.committedTokens());
  writer.commits_.push_back({0, layout.commitEnds.front()});
  for (size_t i = 0; i < layout.chunks.size(); ++i) {
    const format::ChunkRecord& c = layout.chunks[i].record;
    readAt(fd, layout.chunks[i].payloadOffset(), writer.tokens_.data() + c.start,
           c.count * sizeof(int32_t), path);
    writer.commits_.push_back({static_cast<int64_t>(c.start + c.count), layout.commitEnds[i + 1]});
  }
  writer.fileBytes_ = layout.commitEnds.back();
  if (layout.fileBytes > writer.fileBytes_) {  // an interrupted save's torn tail
    truncateTo(fd, writer.fileBytes_, path);
    syncData(fd, path);
  }
  return writer;
}

void KvFileWriter::sync(std::span<const int32_t> tokens, const KvCache& cache) {
  if (fd_ < 0) throw Error(path_.string() + ": sync on a moved-from KvFileWriter");
  checkCache(tokens, cache, header_, path_);
  const auto shared = static_cast<int64_t>(
      std::mismatch(tokens_.begin(), tokens_.end(), tokens.begin(), tokens.end()).first -
      tokens_.begin());
  if (shared < committedTokens()) {
    // The last commit at or before the divergence; what the dropped chunk still shares with
    // `tokens` is written again from `cache` by append().
    size_t keep = commits_.size() - 1;
    while (commits_[keep].tokens > shared) --keep;
    cutBackTo(keep);
  }
  if (static_cast<int64_t>(tokens.size()) > committedTokens()) append(tokens, cache);
}

void KvFileWriter::cutBackTo(size_t commitIndex) {
  const Commit c = commits_[commitIndex];
  truncateTo(fd_, c.endOffset, path_);
  syncData(fd_, path_);  // durable before new records can land where old ones were
  tokens_.resize(static_cast<size_t>(c.tokens));
  commits_.resize(commitIndex + 1);
  fileBytes_ = c.endOffset;
  tailDirty_ = false;
}

void KvFileWriter::append(std::span<const int32_t> tokens, const KvCache& cache) {
  if (tailDirty_) truncateTo(fd_, fileBytes_, path_);  // a failed sync's leftovers
  tailDirty_ = true;
  const auto start = static_cast<uint64_t>(tokens_.size());
  const uint64_t count = tokens.size() - start;
  const uint64_t chunkAt = fileBytes_;
  uint64_t fileAt = chunkAt + format::kChunkBytes;

  std::unique_ptr<XXH3_state_t, HashStateFree> hash(XXH3_createState());
  if (!hash) throw Error("out of memory for a hash state");
  XXH3_64bits_reset(hash.get());
  std::vector<uint8_t> block(kBlockBytes);
  size_t have = 0;
  const auto flush = [&] {
    XXH3_64bits_update(hash.get(), block.data(), have);
    writeAt(fd_, fileAt, block.data(), have, path_);
    fileAt += have;
    have = 0;
  };
  for (const PayloadPiece& piece : format::payloadPieces(header_, start, count)) {
    const size_t elementBytes = format::storedBytesPerElement(piece.kind, header_.precision);
    for (size_t done = 0; done < piece.elements;) {
      if (block.size() - have < elementBytes) flush();
      const size_t k = std::min(piece.elements - done, (block.size() - have) / elementBytes);
      if (piece.kind == PayloadPiece::Kind::TokenIds)
        std::memcpy(block.data() + have, tokens.data() + piece.first + done, k * elementBytes);
      else
        source(cache, piece).encode(piece.first + done, k, header_.precision, block.data() + have);
      have += k * elementBytes;
      done += k;
    }
  }
  flush();
  const uint64_t payloadBytes = fileAt - chunkAt - format::kChunkBytes;
  const uint64_t payloadHash = XXH3_64bits_digest(hash.get());
  const auto chunk = format::encodeChunk({start, count, payloadBytes, payloadHash});
  writeAt(fd_, chunkAt, chunk.data(), chunk.size(), path_);
  syncData(fd_, path_);
  const auto commit = format::encodeCommit({start + count, payloadHash});
  writeAt(fd_, fileAt, commit.data(), commit.size(), path_);
  syncData(fd_, path_);

  tailDirty_ = false;
  tokens_.insert(tokens_.end(), tokens.begin() + static_cast<ptrdiff_t>(start), tokens.end());
  fileBytes_ = fileAt + commit.size();
  commits_.push_back({static_cast<int64_t>(tokens_.size()), fileBytes_});
}

}  // namespace strata::kv
