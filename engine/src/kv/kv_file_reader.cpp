// readKvFile: the header and records' structure first (kv_file_layout), then every committed
// payload in large blocks: each block is hashed while it is in cache and widened into place.
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

// Small enough to stay in L2 between the read, the hash and the conversion.
constexpr size_t kBlockBytes = size_t{1} << 20;

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

struct HashStateFree {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};

// Where a piece's elements go in the state being filled.
void* destination(KvFileState& state, const PayloadPiece& piece) {
  if (piece.kind == PayloadPiece::Kind::TokenIds) return state.tokens.data() + piece.first;
  LayerCache& layer = state.cache.layer(piece.layer);
  switch (piece.kind) {
    case PayloadPiece::Kind::Latent: return layer.latent.data() + piece.first;
    case PayloadPiece::Kind::RopeKey: return layer.ropeKey.data() + piece.first;
    default: return layer.indexKey.data() + piece.first;
  }
}

// Reads one chunk's payload into `state`, returning the payload's XXH3-64.
uint64_t readPayload(int fd, const CommittedChunk& chunk, KvFileState& state,
                     std::vector<uint8_t>& block, const std::filesystem::path& path) {
  const KvPrecision precision = state.header.precision;
  std::unique_ptr<XXH3_state_t, HashStateFree> hash(XXH3_createState());
  if (!hash) throw Error("out of memory for a hash state");
  XXH3_64bits_reset(hash.get());
  uint64_t fileAt = chunk.payloadOffset();
  uint64_t left = chunk.record.payloadBytes;
  size_t used = 0, have = 0;  // block[used, have) is read but not yet converted
  for (const PayloadPiece& piece :
       format::payloadPieces(state.header, chunk.record.start, chunk.record.count)) {
    const size_t elementBytes = format::storedBytesPerElement(piece.kind, precision);
    auto* out = static_cast<uint8_t*>(destination(state, piece));
    const size_t outBytes = piece.kind == PayloadPiece::Kind::TokenIds ? 4 : sizeof(float);
    for (size_t done = 0; done < piece.elements;) {
      if (have - used < elementBytes) {
        std::memmove(block.data(), block.data() + used, have - used);
        have -= used;
        used = 0;
        const size_t n = static_cast<size_t>(std::min<uint64_t>(block.size() - have, left));
        if (n == 0) throw Error(path.string() + ": internal error: payload pieces overrun");
        readAt(fd, fileAt, block.data() + have, n, path);
        XXH3_64bits_update(hash.get(), block.data() + have, n);
        have += n;
        fileAt += n;
        left -= n;
      }
      const size_t k = std::min(piece.elements - done, (have - used) / elementBytes);
      if (piece.kind == PayloadPiece::Kind::TokenIds)
        std::memcpy(out + done * outBytes, block.data() + used, k * elementBytes);
      else
        format::decodeValues(block.data() + used, k, precision,
                             reinterpret_cast<float*>(out + done * outBytes));
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
    format::fail(Reason::Io, path, std::string("cannot open the KV cache file: ") + std::strerror(errno));
  const FdCloser closer{fd};
  const KvFileLayout layout = scanKvFile(fd, path, expectedFingerprint, expected);
  const KvFileHeader& h = layout.header.header;
  const uint64_t total = layout.committedTokens();

  KvFileState state{h, std::vector<int32_t>(total), KvCache(h.layerCount, h.dims, h.precision)};
  for (int l = 0; l < h.layerCount; ++l) {
    LayerCache& layer = state.cache.layer(l);
    layer.latent.resize(total * h.dims.kvLoraRank);
    layer.ropeKey.resize(total * h.dims.ropeDim);
    if (h.layerHasIndexKey[static_cast<size_t>(l)]) layer.indexKey.resize(total * h.dims.indexDim);
  }
  std::vector<uint8_t> block(kBlockBytes);
  for (size_t i = 0; i < layout.chunks.size(); ++i) {
    const CommittedChunk& chunk = layout.chunks[i];
    const uint64_t actual = readPayload(fd, chunk, state, block, path);
    if (actual != chunk.record.payloadHash)
      format::fail(Reason::Corrupt, path,
                   "chunk record " + std::to_string(i + 1) + " at byte " +
                       std::to_string(chunk.offset) + ": the payload's checksum differs from the "
                       "stored one (the file is damaged)");
  }
  state.cache.commit(static_cast<int64_t>(total));
  return state;
}

}  // namespace strata::kv
