#pragma once
// The request field response_format, as OpenAI defines it: {"type": "text"}, {"type":
// "json_object"} (any JSON object) or {"type": "json_schema", "json_schema": {"name", "schema",
// "strict"}}. A malformed one, or a schema the grammar engine cannot express, is an ApiError
// (400) naming the field: "response_format.json_schema.schema.properties.age.type: ...".
#include <memory>
#include <nlohmann/json.hpp>

#include "strata/grammar.h"

namespace strata::server {

// The grammar the reply must follow; nullptr when there is none (absent, null or "text").
std::shared_ptr<const Grammar> parseResponseFormat(const nlohmann::ordered_json& body);

}  // namespace strata::server
