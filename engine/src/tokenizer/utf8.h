#pragma once
// UTF-8 scanning by the Unicode rules (Table 3-7 well-formed byte sequences; "maximal subpart"
// replacement as in the Unicode standard §3.9 and WHATWG), shared by the encoder (which sets
// invalid bytes aside before the regexes run) and the streaming decoder.
#include <cstddef>
#include <string>
#include <string_view>

namespace strata::tokenizer {

// What starts at a position of a byte string.
struct Utf8Step {
  enum Kind {
    Char,        // a complete, well-formed character of `length` bytes
    Invalid,     // `length` bytes (a maximal subpart, >= 1) that can never form a character
    Incomplete,  // `length` bytes that begin a character the string ends before completing
  };
  Kind kind;
  size_t length;
};

Utf8Step scanUtf8(std::string_view bytes, size_t pos);

// Decodes the well-formed character at `pos` (see scanUtf8) and advances `pos` past it.
char32_t decodeUtf8(std::string_view text, size_t& pos);

void appendUtf8(std::string& out, char32_t codepoint);

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace strata::tokenizer
