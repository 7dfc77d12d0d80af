// readKvFile: the header and records' structure first (kv_file_layout), then every committed
// payload in blocks that stay in cache while each is read, hashed and appended to the cache's
// rows, in the file's precision as stored. Appending into reserved rows (rather than resizing,
// then filling) writes the hundreds of MiB of a long conversation's cache once instead of twice.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "kv/kv_file.h"
#include "kv/kv_file_io.h"
#include "kv/kv_file_layout.h"

namespace strata::kv {

namespace {

using Reason = KvFileError::Reason;
using format::PayloadPiece;

constexpr size_t kBlockFloats = size_t{1} << 18;  // 1 MiB: read, hashed and copied in L2

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

struct HashStateFree {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};

KvRows& destination(KvFileState& state, const PayloadPiece& piece) {
  LayerCache& layer = state.cache.layer(piece.layer);
  switch (piece.kind) {
    case PayloadPiece::Kind::Latent:
      return layer.latent;
    case PayloadPiece::Kind::RopeKey:
      return layer.ropeKey;
    default:
      return layer.indexKey;
  }
}

// The read buffers, reused across chunks. `block` holds raw payload bytes; its storage is
// floats so f32 values can be appended from it directly.
struct Buffers {
  std::vector<float> block = std::vector<float>(kBlockFloats);
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(block.data()); }
};

// Appends one chunk's payload to `state`, returning the payload's XXH3-64.
uint64_t readPayload(int fd, const CommittedChunk& chunk, KvFileState& state, Buffers& buffers,
                     const std::filesystem::path& path) {
  const KvPrecision precision = state.header.precision;
  std::unique_ptr<XXH3_state_t, HashStateFree> hash(XXH3_createState());
  if (!hash) throw Error("out of memory for a hash state");
  XXH3_64bits_reset(hash.get());
  uint8_t* bytes = buffers.bytes();
  const size_t capacity = buffers.block.size() * sizeof(float);
  uint64_t fileAt = chunk.payloadOffset();
  uint64_t left = chunk.record.payloadBytes;
  size_t used = 0, have = 0;  // bytes[used, have) are read but not yet consumed
  for (const PayloadPiece& piece :
       format::payloadPieces(state.header, chunk.record.start, chunk.record.count)) {
    const size_t elementBytes = format::storedBytesPerElement(piece.kind, precision);
    KvRows* values =
        piece.kind == PayloadPiece::Kind::TokenIds ? nullptr : &destination(state, piece);
    if (values != nullptr && values->valueCount() != piece.first)
      throw Error(path.string() + ": internal error: chunks appended out of order");
    for (size_t done = 0; done < piece.elements;) {
      if (have - used < elementBytes) {
        // Keeps a partial element at the front (only 16-bit files can split one at the end of
        // a block); f32 files stay 4-byte aligned, so their values are read in place as floats.
        std::memmove(bytes, bytes + used, have - used);
        have -= used;
        used = 0;
        const size_t n = static_cast<size_t>(std::min<uint64_t>(capacity - have, left));
        if (n == 0) throw Error(path.string() + ": internal error: payload pieces overrun");
        readAt(fd, fileAt, bytes + have, n, path);
        XXH3_64bits_update(hash.get(), bytes + have, n);
        have += n;
        fileAt += n;
        left -= n;
      }
      const size_t k = std::min(piece.elements - done, (have - used) / elementBytes);
      if (values == nullptr)
        std::memcpy(state.tokens.data() + piece.first + done, bytes + used, k * elementBytes);
      else  // the cache holds the file's precision: the stored bits as they are
        values->appendEncoded(bytes + used, k);
      used += k * elementBytes;
      done += k;
    }
  }
  return XXH3_64bits_digest(hash.get());
}

}  // namespace

KvFileState readKvFile(const std::filesystem::path& path, const std::string& expectedFingerprint,
                       const KvFileHeader* expected) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    format::fail(Reason::Io, path,
                 std::string("cannot open the KV cache file: ") + std::strerror(errno));
  const FdCloser closer{fd};
  const KvFileLayout layout = scanKvFile(fd, path, expectedFingerprint, expected);
  const KvFileHeader& h = layout.header.header;
  const uint64_t total = layout.committedTokens();

  KvFileState state{h, std::vector<int32_t>(total), KvCache(h.layerCount, h.dims, h.precision)};
  for (int l = 0; l < h.layerCount; ++l) {
    LayerCache& layer = state.cache.layer(l);
    layer.latent.reserveValues(total * h.dims.kvLoraRank);
    layer.ropeKey.reserveValues(total * h.dims.ropeDim);
    if (h.layerHasIndexKey[static_cast<size_t>(l)])
      layer.indexKey.reserveValues(total * h.dims.indexDim);
  }
  Buffers buffers;
  for (size_t i = 0; i < layout.chunks.size(); ++i) {
    const CommittedChunk& chunk = layout.chunks[i];
    if (readPayload(fd, chunk, state, buffers, path) != chunk.record.payloadHash)
      format::fail(Reason::Corrupt, path,
                   "chunk record " + std::to_string(i + 1) + " at byte " +
                       std::to_string(chunk.offset) +
                       ": the payload's checksum differs from the stored one (the file is "
                       "damaged)");
  }
  state.cache.commit(static_cast<int64_t>(total));
  return state;
}

}  // namespace strata::kv
