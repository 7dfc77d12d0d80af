#pragma once
// Pre-tokenization: splits normalized text into the pieces that BPE encodes separately, as
// Hugging Face's Split, ByteLevel and Digits pre-tokenizers (and a Sequence of them) do.
// A ByteLevel step also rewrites its pieces into the byte-level alphabet, so later steps and
// the BPE model see "Ġthe" where the text had " the".
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/pcre_regex.h"
#include "tokenizer/tokenizer_config.h"

namespace strata::tokenizer {

// GPT-2's split regex, which ByteLevel uses when use_regex is true.
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class PreTokenizer {
 public:
  PreTokenizer(const std::vector<PreTokenizerStep>& steps, const std::string& source);
  ~PreTokenizer();

  // Calls `sink` with each piece of `text` (valid UTF-8), in order; no piece is empty. A piece
  // is valid only during the call. Pieces are made one at a time, depth first, so a long text
  // never has all its pieces in memory at once.
  using PieceSink = std::function<void(std::string_view piece)>;
  void split(std::string_view text, const PieceSink& sink) const;

  // The same, collected (for tests and tools).
  void split(std::string_view text, std::vector<std::string>& pieces) const;

  // Whether a ByteLevel step maps pieces into the byte-level alphabet.
  bool byteLevel() const { return byteLevel_; }
  const ByteLevelAlphabet& alphabet() const { return alphabet_; }

 private:
  struct Step;
  void applyFrom(size_t step, std::string_view piece, const PieceSink& sink) const;

  std::vector<std::unique_ptr<Step>> steps_;
  ByteLevelAlphabet alphabet_;
  bool byteLevel_ = false;
};

// One Split applied to one piece: the parts kept, as [begin, end) byte ranges, in order.
// `matches` are the pattern's matches in the piece (sorted, non-overlapping).
std::vector<Regex::Span> splitByMatches(size_t length, const std::vector<Regex::Span>& matches,
                                        SplitBehavior behavior, bool invert);

}  // namespace strata::tokenizer
