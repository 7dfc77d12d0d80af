#pragma once
// The BPE model of a tokenizer.json: vocabulary, merge ranks and the merge loop of Hugging Face
// tokenizers' Word::merge_all (lowest rank first, leftmost first among equal ranks), with a
// bounded cache of encoded words.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer_config.h"

namespace strata::tokenizer {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  // Checks the vocab (ids unique) and merges (both parts and the result in the vocab).
  BpeModel(const BpeConfig& config, const std::string& source);

  // Appends the ids of one pre-token, written in the model's alphabet (byte-level characters
  // for byte-level tokenizers). Must be non-empty valid UTF-8.
  void encode(std::string_view word, std::vector<int32_t>& ids) const;

  // Appends ids for bytes that are not valid UTF-8 in a tokenizer without a ByteLevel
  // pre-tokenizer: byte_fallback tokens <0xAB>, else unk_token, else an error.
  void encodeInvalidBytes(std::string_view bytes, std::vector<int32_t>& ids) const;

  std::optional<int32_t> id(std::string_view token) const;
  const TokenMap& vocab() const { return vocab_; }

 private:
  struct Merge {
    uint32_t rank;
    int32_t result;
  };
  static uint64_t pairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  std::vector<int32_t> initialSymbols(std::string_view word) const;
  void mergeAll(std::vector<int32_t>& symbols) const;
  std::optional<int32_t> byteFallbackId(unsigned char byte) const;

  std::string source_;
  TokenMap vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  bool ignoreMerges_ = false;
  bool byteFallback_ = false;
  bool fuseUnk_ = false;
  std::optional<int32_t> unkId_;

  // Words seen before and their ids. Cleared when full, so memory stays bounded.
  static constexpr size_t kCacheCapacity = 1 << 16;
  static constexpr size_t kLongestCachedWord = 256;  // bytes
  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace strata::tokenizer
