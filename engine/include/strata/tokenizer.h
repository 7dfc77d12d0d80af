#pragma once
// A Hugging Face `tokenizer.json` byte-level BPE tokenizer (GPT-2, Llama-3, Qwen2, GLM-4.5 and
// GLM-5 style files). Every failure throws strata::Error naming the file and the field at
// fault. A loaded Tokenizer is immutable apart from an internal word cache (guarded by a mutex),
// so one instance may encode and decode from several threads at once.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/error.h"

namespace strata {

class Tokenizer {
 public:
  // Reads and checks a tokenizer.json file.
  static std::unique_ptr<Tokenizer> load(const std::filesystem::path& file);
  // The same from the file's text; `source` names it in error messages.
  static std::unique_ptr<Tokenizer> fromJson(std::string_view json,
                                             const std::string& source = "tokenizer.json");
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // The ids of `text`, taken as bytes. Added (special) tokens written in the text come out as
  // their single id and are never split; no BOS/EOS or template tokens are added. Bytes that
  // are not valid UTF-8 are encoded on their own (each maximal invalid subsequence is one
  // pre-token), so any byte string round-trips through decode().
  std::vector<int32_t> encode(std::string_view text) const;

  // The exact bytes the ids stand for (may be invalid UTF-8 when the ids split a character;
  // StreamDecoder gives valid UTF-8). Throws for an id no token has.
  std::string decode(std::span<const int32_t> ids) const;

  // The id of a token written as it appears in tokenizer.json ("Ġthe", "<|user|>").
  std::optional<int32_t> tokenId(std::string_view token) const;

  // One past the largest id (vocab and added tokens): the rows an embedding table needs.
  int32_t vocabSize() const;

  // An added token marked "special" (<|user|>, <think>, the end of text): a control token
  // rather than text, whatever its content's bytes say.
  bool isSpecial(int32_t id) const;
  // Every id isSpecial() is true for, ascending (a walk over the added tokens only).
  std::vector<int32_t> specialIds() const;

  // Turns ids arriving one at a time into text, emitting only complete UTF-8 characters:
  // an incomplete multi-byte character is held back until its last byte arrives; bytes that
  // cannot start or continue a character become U+FFFD. The Tokenizer must outlive it.
  class StreamDecoder {
   public:
    explicit StreamDecoder(const Tokenizer& tokenizer) : tokenizer_(&tokenizer) {}
    // Text completed by this id (often empty while a character is incomplete).
    std::string push(int32_t id);
    // Whatever is held back, as U+FFFD (an incomplete character at the end), then resets.
    std::string flush();

   private:
    const Tokenizer* tokenizer_;
    std::string pending_;  // the start of a character whose last bytes have not come yet
  };

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata
