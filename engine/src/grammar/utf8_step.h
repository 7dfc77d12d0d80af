#pragma once
// Well-formed UTF-8 decoded one byte at a time (Unicode Table 3-7): a token may end in the
// middle of a character, so the matcher keeps the partial character between tokens. Overlong
// forms, surrogates and values past U+10FFFF are malformed and never match.
#include <cstdint>
#include <string>
#include <utility>

namespace strata::grammar {

struct Utf8Partial {
  uint32_t value = 0;     // the bits read so far
  uint8_t remaining = 0;  // continuation bytes still to come; 0: between characters
  uint8_t low = 0x80;     // the range the next continuation byte must be in
  uint8_t high = 0xBF;

  bool operator==(const Utf8Partial&) const = default;
};

enum class Utf8Result { Malformed, Partial, Complete };

// Feeds one byte; on Complete, `codePoint` is the character.
inline Utf8Result feedUtf8(Utf8Partial& p, uint8_t byte, uint32_t& codePoint) {
  if (p.remaining == 0) {
    p.low = 0x80;
    p.high = 0xBF;
    if (byte < 0x80) {
      codePoint = byte;
      return Utf8Result::Complete;
    }
    if (byte >= 0xC2 && byte <= 0xDF) {
      p.value = byte & 0x1F;
      p.remaining = 1;
    } else if (byte >= 0xE0 && byte <= 0xEF) {
      p.value = byte & 0x0F;
      p.remaining = 2;
      if (byte == 0xE0) p.low = 0xA0;   // no overlong forms
      if (byte == 0xED) p.high = 0x9F;  // no surrogates
    } else if (byte >= 0xF0 && byte <= 0xF4) {
      p.value = byte & 0x07;
      p.remaining = 3;
      if (byte == 0xF0) p.low = 0x90;
      if (byte == 0xF4) p.high = 0x8F;  // nothing past U+10FFFF
    } else {
      return Utf8Result::Malformed;
    }
    return Utf8Result::Partial;
  }
  if (byte < p.low || byte > p.high) return Utf8Result::Malformed;
  p.value = (p.value << 6) | (byte & 0x3F);
  p.low = 0x80;
  p.high = 0xBF;
  if (--p.remaining > 0) return Utf8Result::Partial;
  codePoint = p.value;
  p.value = 0;
  return Utf8Result::Complete;
}

// The characters a partial sequence can still become: [first, last].
inline std::pair<uint32_t, uint32_t> pendingRange(const Utf8Partial& p) {
  const uint32_t shift = 6 * (p.remaining - 1u);
  const uint32_t first = ((p.value << 6) | (p.low & 0x3Fu)) << shift;
  const uint32_t last = (((p.value << 6) | (p.high & 0x3Fu)) << shift) | ((1u << shift) - 1);
  return {first, last};
}

inline void appendUtf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace strata::grammar
