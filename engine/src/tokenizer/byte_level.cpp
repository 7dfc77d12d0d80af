#include "tokenizer/byte_level.h"

#include "tokenizer/utf8.h"

namespace strata::tokenizer {

ByteLevelAlphabet::ByteLevelAlphabet() {
  byteOfChar_.fill(-1);
  char32_t next = 0x100;  // characters for the bytes that are not printable as themselves
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    const char32_t c = printable ? static_cast<char32_t>(b) : next++;
    appendUtf8(charOfByte_[b], c);
    byteOfChar_[c] = static_cast<int16_t>(b);
  }
}

void ByteLevelAlphabet::encode(std::string_view bytes, std::string& out) const {
  for (char b : bytes) out += charOfByte_[static_cast<unsigned char>(b)];
}

std::optional<std::string> ByteLevelAlphabet::decode(std::string_view token) const {
  std::string bytes;
  size_t pos = 0;
  while (pos < token.size()) {
    if (scanUtf8(token, pos).kind != Utf8Step::Char) return std::nullopt;
    const char32_t c = decodeUtf8(token, pos);
    if (c >= byteOfChar_.size() || byteOfChar_[c] < 0) return std::nullopt;
    bytes.push_back(static_cast<char>(byteOfChar_[c]));
  }
  return bytes;
}

}  // namespace strata::tokenizer
