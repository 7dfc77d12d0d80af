#pragma once
// GrammarVocabulary's state: what each token id is to a grammar, and the trie of text tokens.
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/token_trie.h"
#include "strata/grammar.h"

namespace strata {

struct GrammarVocabulary::Impl {
  enum class Role : uint8_t {
    Text,   // bytes the grammar must accept
    End,    // an end token: allowed once the grammar is complete
    Never,  // special tokens, ids no token has, tokens with no bytes
  };
  std::vector<Role> roles;         // by id
  std::vector<std::string> bytes;  // by id, for Text tokens
  grammar::TokenTrie trie;

  Role roleOf(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < roles.size() ? roles[id] : Role::Never;
  }
};

}  // namespace strata
