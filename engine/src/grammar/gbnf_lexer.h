#pragma once
// GBNF text -> tokens: rule names, `::=`, string literals and character classes (escapes
// decoded to code points), `.`, `|`, parentheses and the repetition operators. Comments (`#`
// to the end of the line) and white space, newlines included, separate tokens and are dropped.
#include <string_view>
#include <vector>

#include "grammar/char_set.h"
#include "grammar/grammar_rules.h"

namespace strata::grammar {

constexpr int kUnbounded = -1;

struct GbnfToken {
  enum class Kind {
    Name,
    Define,
    Literal,
    Class,
    Dot,
    Bar,
    Open,
    Close,
    Star,
    Plus,
    Question,
    Repeat,
    End
  };
  Kind kind = Kind::End;
  SourcePos pos;
  std::string text;                    // Name: the name; otherwise the token as written
  std::vector<uint32_t> literal;       // Literal: its characters
  std::vector<CodePointRange> ranges;  // Class
  bool negated = false;                // Class: [^...]
  int min = 0;                         // Repeat: {min,max}; max kUnbounded for {min,}
  int max = 0;
};

// Throws strata::Error "line L, column C: <problem>" for malformed text.
std::vector<GbnfToken> lexGbnf(std::string_view text);

}  // namespace strata::grammar
