#include "strata/grammar.h"

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_rules.h"
#include "grammar/json_schema.h"

namespace strata {

Grammar::Grammar(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Grammar::~Grammar() = default;

std::shared_ptr<const Grammar> Grammar::fromGbnf(std::string_view text, std::string_view root) {
  auto impl = std::make_unique<Impl>();
  impl->rules = grammar::parseGbnf(text, root);
  impl->gbnf = std::string(text);
  return std::make_shared<Grammar>(std::move(impl));
}

std::shared_ptr<const Grammar> Grammar::fromJsonSchema(std::string_view schemaJson) {
  const std::string text = grammar::jsonSchemaToGbnf(schemaJson);
  try {
    return fromGbnf(text);
  } catch (const Error& e) {
    // Only a schema whose $ref points back to itself without reading a character gets here.
    throw JsonSchemaError("", std::string("cannot be turned into a grammar: ") + e.what());
  }
}

std::shared_ptr<const Grammar> Grammar::anyJsonObject() {
  return fromGbnf(grammar::anyJsonObjectGbnf());
}

std::string Grammar::gbnf() const { return impl_->gbnf; }

}  // namespace strata
