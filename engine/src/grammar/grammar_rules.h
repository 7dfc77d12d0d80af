#pragma once
// A grammar as the matcher uses it: every alternative of every rule is a run of symbols in one
// flat array, ended by an End symbol. A position in that array is what a pushdown stack holds.
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/char_set.h"
#include "strata/grammar.h"

namespace strata::grammar {

struct SourcePos {
  int line = 1;
  int column = 1;
};

// "line 3, column 7"
std::string describe(SourcePos pos);

struct Symbol {
  enum class Kind : uint8_t { Chars, Rule, End };
  Kind kind = Kind::End;
  uint32_t index = 0;  // Chars: into charSets; Rule: into rules
};

struct RuleInfo {
  std::string name;
  bool defined = false;
  SourcePos definedAt;
  SourcePos firstUse;  // where an undefined rule was first referred to
  // Rules the parser writes for groups and repetitions: what they stand for, for messages.
  bool generated = false;
  bool repetition = false;  // an open repetition (x*, x+, x{m,}): loops on its item
  std::string origin;       // "'*' at line 3, column 7"
  SourcePos originPos;
  uint32_t owner = 0;  // the written rule it came from (itself when not generated)
};

struct GrammarRules {
  std::vector<Symbol> symbols;
  std::vector<std::vector<uint32_t>> alternatives;  // per rule: where each alternative starts
  std::vector<CharSet> charSets;
  std::vector<RuleInfo> rules;
  uint32_t root = 0;

  const Symbol& at(uint32_t position) const { return symbols[position]; }
  const CharSet& charsAt(uint32_t position) const { return charSets[symbols[position].index]; }
};

// Throws strata::Error for an undefined rule, left recursion (a rule that can reach itself
// before reading a character, which would loop forever) and a rule that can never end.
void checkRules(const GrammarRules& rules);

}  // namespace strata::grammar

namespace strata {

struct Grammar::Impl {
  grammar::GrammarRules rules;
  std::string gbnf;  // the source text
};

}  // namespace strata
