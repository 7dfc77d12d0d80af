#pragma once
// Added tokens (special tokens such as <|user|> and any token added on top of the BPE vocab):
// found in the text before pre-tokenization, leftmost-longest first, and never split. Follows
// Hugging Face's AddedVocabulary: tokens with normalized=false are matched in the raw text,
// the others in the normalized text, honouring single_word, lstrip and rstrip.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/normalizer.h"
#include "tokenizer/pcre_regex.h"
#include "tokenizer/tokenizer_config.h"

namespace strata::tokenizer {

// A part of the text: either an added token's id or text for the rest of the pipeline.
struct TextPart {
  std::string_view text;
  std::optional<int32_t> id;
};

class AddedTokens {
 public:
  // `normalizer` writes the patterns of the normalized=true tokens.
  AddedTokens(const std::vector<AddedTokenConfig>& tokens, const Normalizer& normalizer);
  ~AddedTokens();

  // Splits valid UTF-8 `text` around the tokens with the given `normalized` flag.
  std::vector<TextPart> split(std::string_view text, bool normalized) const;

  bool empty() const { return tokens_.empty(); }

 private:
  // A byte trie over the patterns of one group (raw or normalized).
  struct Trie {
    struct Node {
      std::vector<std::pair<unsigned char, int32_t>> children;
      int32_t token = -1;  // index into tokens_ of the pattern ending here
    };
    std::vector<Node> nodes{Node{}};
    bool firstByte[256] = {};
    void insert(std::string_view pattern, int32_t token);
    // The longest pattern starting at `pos`: (token index, length), or token -1.
    std::pair<int32_t, size_t> longestAt(std::string_view text, size_t pos) const;
  };

  bool isWordCharacterBefore(std::string_view text, size_t pos) const;
  bool isWordCharacterAt(std::string_view text, size_t pos) const;
  size_t whitespaceStartBefore(std::string_view text, size_t pos) const;
  size_t whitespaceEndAfter(std::string_view text, size_t pos) const;

  std::vector<AddedTokenConfig> tokens_;
  Trie raw_;
  Trie normalized_;
  // Rust regex's \w and \s, which Hugging Face uses for single_word, lstrip and rstrip.
  std::unique_ptr<Regex> wordCharacter_;
  std::unique_ptr<Regex> whitespace_;
};

}  // namespace strata::tokenizer
