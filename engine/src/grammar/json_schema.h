#pragma once
// JSON Schema -> GBNF text, for the common subset (see docs/grammar.md). Output is compact
// JSON: no white space except an optional single space after ':' and ','.
#include <string>
#include <string_view>

namespace strata::grammar {

// Throws strata::JsonSchemaError naming the schema path for anything it cannot express.
std::string jsonSchemaToGbnf(std::string_view schemaJson);

// root ::= any JSON object.
std::string anyJsonObjectGbnf();

// `text` as a GBNF string literal ("..." with escapes).
std::string gbnfLiteral(std::string_view text);

}  // namespace strata::grammar
