#include "kv/kv_file_format.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>


namespace strata::kv::format {

namespace {

using Reason = KvFileError::Reason;

void put32(uint8_t* at, uint32_t v) { std::memcpy(at, &v, sizeof v); }
void put64(uint8_t* at, uint64_t v) { std::memcpy(at, &v, sizeof v); }
uint32_t get32(const uint8_t* at) {
  uint32_t v;
  std::memcpy(&v, at, sizeof v);
  return v;
}
uint64_t get64(const uint8_t* at) {
  uint64_t v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// Stored codes; never renumber (files keep them).
uint8_t precisionCode(KvPrecision p) {
  switch (p) {
    case KvPrecision::F32:
      return 0;
    case KvPrecision::BF16:
      return 1;
    case KvPrecision::F16:
      return 2;
  }
  return 0xff;
}

std::optional<KvPrecision> precisionFromCode(uint8_t code) {
  switch (code) {
    case 0:
      return KvPrecision::F32;
    case 1:
      return KvPrecision::BF16;
    case 2:
      return KvPrecision::F16;
  }
  return std::nullopt;
}

std::string hex(uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
}

std::string shapeText(const KvFileHeader& h) {
  const auto indexed = std::count(h.layerHasIndexKey.begin(), h.layerHasIndexKey.end(), true);
  return std::to_string(h.layerCount) + " layers (" + std::to_string(indexed) +
         " with index keys), kv_lora_rank " + std::to_string(h.dims.kvLoraRank) + ", rope dim " +
         std::to_string(h.dims.ropeDim) + ", index dim " + std::to_string(h.dims.indexDim);
}

}  // namespace

void fail(KvFileError::Reason reason, const std::filesystem::path& path, const std::string& what) {
  throw KvFileError(reason, path.string() + ": " + what);
}

uint64_t headerBytes(int layerCount) {
  return kFixedHeaderBytes + static_cast<uint64_t>(layerCount) + 8;
}

uint64_t payloadBytesPerToken(const KvFileHeader& h) {
  const uint64_t valueBytes = storedBytesPerElement(PayloadPiece::Kind::Latent, h.precision);
  uint64_t values = 0;
  for (int l = 0; l < h.layerCount; ++l)
    values += static_cast<uint64_t>(h.dims.kvLoraRank + h.dims.ropeDim) +
              (h.layerHasIndexKey[static_cast<size_t>(l)] ? h.dims.indexDim : 0);
  return sizeof(int32_t) + values * valueBytes;
}

void validateHeader(const KvFileHeader& h, const std::filesystem::path& path) {
  const std::string where = path.string() + ": KV file header: ";
  if (h.layerCount < 1 || h.layerCount > kMaxLayers)
    throw Error(where + "layer count " + std::to_string(h.layerCount) + " is not in 1.." +
                std::to_string(kMaxLayers));
  if (h.layerHasIndexKey.size() != static_cast<size_t>(h.layerCount))
    throw Error(where + std::to_string(h.layerHasIndexKey.size()) + " index-key flags for " +
                std::to_string(h.layerCount) + " layers");
  if (h.modelFingerprint.size() > kMaxFingerprintBytes)
    throw Error(where + "the model fingerprint has " + std::to_string(h.modelFingerprint.size()) +
                " bytes; at most 64 fit");
  const bool anyIndex = std::find(h.layerHasIndexKey.begin(), h.layerHasIndexKey.end(), true) !=
                        h.layerHasIndexKey.end();
  if (h.dims.kvLoraRank < 1 || h.dims.ropeDim < 0 || h.dims.indexDim < 0 ||
      (anyIndex && h.dims.indexDim < 1))
    throw Error(where + "invalid dims: " + shapeText(h));
}

std::string encodeHeader(const KvFileHeader& h) {
  const uint64_t n = headerBytes(h.layerCount);
  std::string out(n, '\0');
  auto* b = reinterpret_cast<uint8_t*>(out.data());
  std::memcpy(b, kFileMagic, sizeof kFileMagic);
  put32(b + 8, kVersion);
  put32(b + 12, static_cast<uint32_t>(n));
  put32(b + 16, static_cast<uint32_t>(h.layerCount));
  put32(b + 20, static_cast<uint32_t>(h.dims.kvLoraRank));
  put32(b + 24, static_cast<uint32_t>(h.dims.ropeDim));
  put32(b + 28, static_cast<uint32_t>(h.dims.indexDim));
  b[32] = precisionCode(h.precision);
  b[33] = static_cast<uint8_t>(h.modelFingerprint.size());
  std::memcpy(b + 36, h.modelFingerprint.data(), h.modelFingerprint.size());
  for (int l = 0; l < h.layerCount; ++l)
    b[kFixedHeaderBytes + l] = h.layerHasIndexKey[static_cast<size_t>(l)] ? 1 : 0;
  put64(b + n - 8, XXH3_64bits(b, n - 8));
  return out;
}

uint64_t headerLength(std::span<const uint8_t> fixed, uint64_t fileBytes,
                      const std::filesystem::path& path) {
  const size_t magicBytes = std::min<size_t>(fixed.size(), 8);  // an empty file has no data()
  if (magicBytes > 0 && std::memcmp(fixed.data(), kFileMagic, magicBytes) != 0)
    fail(Reason::NotKvFile, path,
         "not a Strata KV cache file (it does not start with \"STRATAKV\")");
  const std::string shortFile =
      "the file ends inside its header (" + std::to_string(fileBytes) + " bytes): it was cut short";
  if (fixed.size() < 12) fail(Reason::Truncated, path, shortFile);
  const uint32_t version = get32(fixed.data() + 8);
  if (version == 0) fail(Reason::Corrupt, path, "header at byte 0: format version 0 is not valid");
  if (version > kVersion)
    fail(Reason::FutureVersion, path,
         "KV file format version " + std::to_string(version) + "; this Strata reads version " +
             std::to_string(kVersion) + " (the file was written by a newer Strata)");
  if (fixed.size() < kFixedHeaderBytes) fail(Reason::Truncated, path, shortFile);
  const uint32_t layers = get32(fixed.data() + 16);
  const uint32_t length = get32(fixed.data() + 12);
  if (layers < 1 || layers > static_cast<uint32_t>(kMaxLayers) ||
      length != headerBytes(static_cast<int>(layers)))
    fail(Reason::Corrupt, path,
         "header at byte 0: header length " + std::to_string(length) +
             " does not match its layer count " + std::to_string(layers));
  if (fileBytes < length) fail(Reason::Truncated, path, shortFile);
  return length;
}

DecodedHeader decodeHeader(std::span<const uint8_t> bytes, const std::filesystem::path& path,
                           const std::string& expectedFingerprint, const KvFileHeader* expected) {
  const uint8_t* b = bytes.data();
  const size_t n = bytes.size();
  DecodedHeader d;
  d.bytes = n;
  d.checksum = get64(b + n - 8);
  const uint64_t actual = XXH3_64bits(b, n - 8);
  if (actual != d.checksum)
    fail(Reason::Corrupt, path,
         "header at byte 0: checksum " + hex(actual) + " differs from the stored " +
             hex(d.checksum) + " (the file is damaged)");
  KvFileHeader& h = d.header;
  h.layerCount = static_cast<int>(get32(b + 16));
  h.dims = {static_cast<int>(get32(b + 20)), static_cast<int>(get32(b + 24)),
            static_cast<int>(get32(b + 28))};
  const std::optional<KvPrecision> precision = precisionFromCode(b[32]);
  const size_t fingerprintBytes = b[33];
  if (!precision || fingerprintBytes > kMaxFingerprintBytes || get32(b + 32) >> 16 != 0)
    fail(Reason::Corrupt, path, "header at byte 32: invalid precision or fingerprint length");
  h.precision = *precision;
  h.modelFingerprint.assign(reinterpret_cast<const char*>(b + 36), fingerprintBytes);
  h.layerHasIndexKey.resize(static_cast<size_t>(h.layerCount));
  for (int l = 0; l < h.layerCount; ++l) {
    const uint8_t flag = b[kFixedHeaderBytes + l];
    if (flag > 1)
      fail(Reason::Corrupt, path,
           "header at byte " + std::to_string(kFixedHeaderBytes + l) +
               ": index-key flag of layer " + std::to_string(l) + " is " + std::to_string(flag) +
               ", not 0 or 1");
    h.layerHasIndexKey[static_cast<size_t>(l)] = flag == 1;
  }
  try {
    validateHeader(h, path);
  } catch (const KvFileError&) {
    throw;
  } catch (const Error& e) {
    throw KvFileError(Reason::Corrupt, e.what());
  }
  if (h.modelFingerprint != expectedFingerprint)
    fail(Reason::OtherModel, path,
         "the KV cache was saved with model \"" + h.modelFingerprint + "\", not this model (\"" +
             expectedFingerprint + "\")");
  if (expected != nullptr) {
    const bool same =
        h.layerCount == expected->layerCount && h.dims.kvLoraRank == expected->dims.kvLoraRank &&
        h.dims.ropeDim == expected->dims.ropeDim && h.dims.indexDim == expected->dims.indexDim &&
        h.layerHasIndexKey == expected->layerHasIndexKey;
    if (!same)
      fail(Reason::WrongShape, path,
           "the KV cache has " + shapeText(h) + "; the model has " + shapeText(*expected));
  }
  return d;
}

std::array<uint8_t, kChunkBytes> encodeChunk(const ChunkRecord& c) {
  std::array<uint8_t, kChunkBytes> b{};
  std::memcpy(b.data(), kChunkMagic.data(), 4);
  put64(b.data() + 8, c.start);
  put64(b.data() + 16, c.count);
  put64(b.data() + 24, c.payloadBytes);
  put64(b.data() + 32, c.payloadHash);
  put64(b.data() + 40, XXH3_64bits(b.data(), 40));
  return b;
}

std::optional<ChunkRecord> decodeChunk(const uint8_t* b) {
  if (std::memcmp(b, kChunkMagic.data(), 4) != 0 || get32(b + 4) != 0 ||
      XXH3_64bits(b, 40) != get64(b + 40))
    return std::nullopt;
  return ChunkRecord{get64(b + 8), get64(b + 16), get64(b + 24), get64(b + 32)};
}

std::array<uint8_t, kCommitBytes> encodeCommit(const CommitRecord& c) {
  std::array<uint8_t, kCommitBytes> b{};
  std::memcpy(b.data(), kCommitMagic.data(), 4);
  put64(b.data() + 8, c.tokens);
  put64(b.data() + 16, c.previousHash);
  put64(b.data() + 24, XXH3_64bits(b.data(), 24));
  return b;
}

std::optional<CommitRecord> decodeCommit(const uint8_t* b) {
  if (std::memcmp(b, kCommitMagic.data(), 4) != 0 || get32(b + 4) != 0 ||
      XXH3_64bits(b, 24) != get64(b + 24))
    return std::nullopt;
  return CommitRecord{get64(b + 8), get64(b + 16)};
}

std::vector<PayloadPiece> payloadPieces(const KvFileHeader& h, uint64_t start, uint64_t count) {
  using Kind = PayloadPiece::Kind;
  std::vector<PayloadPiece> pieces;
  pieces.reserve(1 + 3 * static_cast<size_t>(h.layerCount));
  pieces.push_back({Kind::TokenIds, -1, start, count});
  const auto rows = [&](Kind kind, int layer, int dim) {
    if (dim > 0) pieces.push_back({kind, layer, start * dim, count * dim});
  };
  for (int l = 0; l < h.layerCount; ++l) {
    rows(Kind::Latent, l, h.dims.kvLoraRank);
    rows(Kind::RopeKey, l, h.dims.ropeDim);
    if (h.layerHasIndexKey[static_cast<size_t>(l)]) rows(Kind::IndexKey, l, h.dims.indexDim);
  }
  return pieces;
}

size_t storedBytesPerElement(PayloadPiece::Kind kind, KvPrecision precision) {
  if (kind == PayloadPiece::Kind::TokenIds) return sizeof(int32_t);
  return precision == KvPrecision::F32 ? 4 : 2;
}

}  // namespace strata::kv::format
