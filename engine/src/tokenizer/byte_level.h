#pragma once
// GPT-2's byte-level alphabet: each of the 256 byte values is written as one printable
// character (printable Latin-1 bytes as themselves, the rest as U+0100 + n), so that BPE can
// work on any byte string with a vocabulary of ordinary strings.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::tokenizer {

class ByteLevelAlphabet {
 public:
  ByteLevelAlphabet();

  // Appends each byte of `bytes` as its alphabet character (UTF-8).
  void encode(std::string_view bytes, std::string& out) const;

  // The bytes a token's string stands for, or nullopt when a character of it is not in the
  // alphabet (Hugging Face's ByteLevel decoder then keeps the token's text as it is).
  std::optional<std::string> decode(std::string_view token) const;

 private:
  std::array<std::string, 256> charOfByte_;  // UTF-8 of each byte's character
  std::array<int16_t, 0x144> byteOfChar_;    // code point -> byte, -1 where none
};

}  // namespace strata::tokenizer
