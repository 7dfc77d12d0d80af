#pragma once
// The parts of a Hugging Face tokenizer.json that Strata uses, as plain structs. Parsing
// (tokenizer_json.cpp) checks the structure and rejects features we do not implement; the
// components built from these structs check the rest (e.g. merges against the vocab).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::tokenizer {

enum class NormalizationForm { NFC, NFD, NFKC, NFKD };

// What a Split does with the pieces its pattern matches (Hugging Face SplitDelimiterBehavior).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct PreTokenizerStep {
  enum class Kind { Split, ByteLevel, Digits };
  Kind kind = Kind::Split;
  std::string where;  // "pre_tokenizer.pretokenizers[0]": names the step in error messages
  // Split
  std::string regex;  // a {"String": s} pattern arrives here escaped into a regex
  SplitBehavior behavior = SplitBehavior::Isolated;
  bool invert = false;
  // ByteLevel (Hugging Face's defaults when the fields are absent)
  bool addPrefixSpace = true;
  bool useRegex = true;
  // Digits
  bool individualDigits = false;
};

struct BpeConfig {
  std::vector<std::pair<std::string, int32_t>> vocab;
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
  bool ignoreMerges = false;
  bool byteFallback = false;
  bool fuseUnk = false;
  std::optional<std::string> unkToken;
};

struct AddedTokenConfig {
  std::string content;
  int32_t id = 0;
  bool special = false;
  bool normalized = true;
  bool lstrip = false;
  bool rstrip = false;
  bool singleWord = false;
};

struct TokenizerConfig {
  std::string source;                          // the file, for error messages
  std::vector<NormalizationForm> normalizer;   // applied in order; empty: none
  std::vector<PreTokenizerStep> preTokenizer;  // a Sequence flattened; empty: none
  BpeConfig model;
  std::vector<AddedTokenConfig> addedTokens;
};

// Throws strata::Error naming `source` and the field at fault.
TokenizerConfig parseTokenizerJson(std::string_view json, const std::string& source);

}  // namespace strata::tokenizer
