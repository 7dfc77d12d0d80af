#include "tokenizer/utf8.h"

namespace strata::tokenizer {

Utf8Step scanUtf8(std::string_view bytes, size_t pos) {
  const auto at = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = at(pos);
  if (lead < 0x80) return {Utf8Step::Char, 1};
  size_t need = 0;                        // continuation bytes after the lead
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the first continuation byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return {Utf8Step::Invalid, 1};  // 80..C1, F5..FF never start a character
  }
  size_t length = 1;
  for (size_t k = 0; k < need; ++k) {
    if (pos + length >= bytes.size()) return {Utf8Step::Incomplete, length};
    const unsigned char b = at(pos + length);
    const unsigned char lo = k == 0 ? low : 0x80, hi = k == 0 ? high : 0xBF;
    if (b < lo || b > hi) return {Utf8Step::Invalid, length};
    ++length;
  }
  return {Utf8Step::Char, length};
}

char32_t decodeUtf8(std::string_view text, size_t& pos) {
  const auto b = [&](size_t i) {
    return static_cast<char32_t>(static_cast<unsigned char>(text[i]));
  };
  const char32_t lead = b(pos);
  if (lead < 0x80) {
    pos += 1;
    return lead;
  }
  if (lead < 0xE0) {
    const char32_t c = ((lead & 0x1F) << 6) | (b(pos + 1) & 0x3F);
    pos += 2;
    return c;
  }
  if (lead < 0xF0) {
    const char32_t c = ((lead & 0x0F) << 12) | ((b(pos + 1) & 0x3F) << 6) | (b(pos + 2) & 0x3F);
    pos += 3;
    return c;
  }
  const char32_t c = ((lead & 0x07) << 18) | ((b(pos + 1) & 0x3F) << 12) |
                     ((b(pos + 2) & 0x3F) << 6) | (b(pos + 3) & 0x3F);
  pos += 4;
  return c;
}

void appendUtf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace strata::tokenizer
