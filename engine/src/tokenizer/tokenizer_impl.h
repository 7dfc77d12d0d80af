#pragma once
// strata::Tokenizer's private state (pimpl), built from a parsed tokenizer.json.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/tokenizer.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer_config.h"

namespace strata {

struct Tokenizer::Impl {
  explicit Impl(const tokenizer::TokenizerConfig& config);

  void encodeValid(std::string_view text, std::vector<int32_t>& ids) const;
  void encodeInvalid(std::string_view bytes, std::vector<int32_t>& ids) const;
  void encodePlain(std::string_view text, std::vector<int32_t>& ids) const;
  std::string_view bytesOf(int32_t id) const;  // throws for an id no token has

  std::string source;
  tokenizer::Normalizer normalizer;
  tokenizer::PreTokenizer preTokenizer;
  tokenizer::BpeModel model;
  tokenizer::AddedTokens added;
  tokenizer::TokenMap addedIds;  // added token content -> id

  // Decoding: the bytes of id i are bytes[offsets[i], offsets[i+1]) when present[i].
  int32_t vocabSize = 0;
  std::string bytes;
  std::vector<uint32_t> offsets;
  std::vector<bool> present;
  std::vector<bool> special;  // added tokens with "special": true

 private:
  void buildDecodeTable(const tokenizer::TokenizerConfig& config);
};

}  // namespace strata
