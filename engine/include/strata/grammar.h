#pragma once
// Constrained output: a grammar applied as a token mask while sampling.
//
// Grammar: a GBNF grammar (llama.cpp's notation) or a JSON Schema turned into one. Immutable,
// shared by every generation that uses it.
// GrammarVocabulary: one tokenizer's tokens as byte strings, arranged so that a mask costs far
// less than a forward pass even for a 155k-token vocabulary. Built once per model.
// GrammarMatcher: the state of one generation (the bytes accepted so far). Copyable, so
// speculative verification can try drafted tokens on a copy.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/error.h"
#include "strata/tokenizer.h"

namespace strata {

class Grammar {
 public:
  // Throws strata::Error naming the line, column and problem (unknown rule, unbalanced
  // parentheses, bad escape, a rule that can never end, no `root` rule, ...).
  static std::shared_ptr<const Grammar> fromGbnf(std::string_view text,
                                                 std::string_view root = "root");
  // The common JSON Schema subset: object (properties, required, additionalProperties false),
  // array (items, minItems, maxItems), string (enum, const, minLength, maxLength), number,
  // integer, boolean, null, enum, const, anyOf/oneOf, $ref to #/$defs or #/definitions.
  // Anything else throws strata::Error naming the schema path ("properties.age.type").
  static std::shared_ptr<const Grammar> fromJsonSchema(std::string_view schemaJson);
  // Any JSON object (the OpenAI response_format {"type": "json_object"}).
  static std::shared_ptr<const Grammar> anyJsonObject();

  // The grammar as GBNF text (what a JSON Schema became).
  std::string gbnf() const;

  struct Impl;
  explicit Grammar(std::unique_ptr<Impl> impl);
  ~Grammar();
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// What Grammar::fromJsonSchema throws for a schema it cannot use. path() is where, as keys
// joined by dots ("properties.age.type", "anyOf[1]"; empty for the schema itself); what() is
// "path: problem".
class JsonSchemaError : public Error {
 public:
  JsonSchemaError(std::string path, std::string problem);
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string path_;
  std::string problem_;
};

class GrammarVocabulary {
 public:
  // Every token's bytes from `tokenizer`; `endTokens` (the model's eos ids) are allowed only
  // once the grammar is complete. Other special tokens are never allowed, except the tags of
  // GLM tool calls (<tool_call>, <arg_key>, ...), which are text where a grammar spells them.
  static std::shared_ptr<const GrammarVocabulary> build(const Tokenizer& tokenizer,
                                                        std::span<const int32_t> endTokens);
  struct Impl;
  explicit GrammarVocabulary(std::unique_ptr<Impl> impl);
  ~GrammarVocabulary();
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

class GrammarMatcher {
 public:
  GrammarMatcher(std::shared_ptr<const Grammar> grammar,
                 std::shared_ptr<const GrammarVocabulary> vocabulary);
  GrammarMatcher(const GrammarMatcher&);
  GrammarMatcher& operator=(const GrammarMatcher&);
  GrammarMatcher(GrammarMatcher&&) noexcept;
  GrammarMatcher& operator=(GrammarMatcher&&) noexcept;
  ~GrammarMatcher();

  // Sets the logit of every token the grammar does not allow next to -inf. End tokens are
  // allowed exactly when the text so far is complete.
  void mask(std::span<float> logits) const;
  bool allows(int32_t token) const;
  // Advances past `token`; false (and the state unchanged) when the grammar does not allow it.
  bool accept(int32_t token);
  // The text so far is a whole sentence of the grammar.
  bool complete() const;
  // Complete, and no byte may follow: only an end token is allowed.
  bool finished() const;
  // The bytes every allowed continuation starts with (at most maxBytes): what the grammar
  // forces next, e.g. `": "` after a key. Empty when the next byte is a choice.
  std::string forcedBytes(size_t maxBytes = 64) const;

 private:
  struct State;
  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const GrammarVocabulary> vocabulary_;
  std::unique_ptr<State> state_;
};

}  // namespace strata
