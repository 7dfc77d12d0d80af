#include "response_format.h"

#include <string>

#include "api_error.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void invalid(const std::string& name, const std::string& problem) {
  throw ApiError(400, name + ": " + problem, name, "invalid_value");
}

const Json* member(const Json& object, const char* name) {
  const auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::shared_ptr<const Grammar> schemaGrammar(const Json& format) {
  const std::string where = "response_format.json_schema";
  const Json* spec = member(format, "json_schema");
  if (!spec)
    throw ApiError(400, where + ": required when type is \"json_schema\"", where,
                   "missing_required_parameter");
  if (!spec->is_object())
    invalid(where, "expected an object, not " + std::string(spec->type_name()));
  if (const Json* name = member(*spec, "name"); name && !name->is_string())
    invalid(where + ".name", "expected a string, not " + std::string(name->type_name()));
  // strict: the output always follows the schema here, so true and false behave alike.
  if (const Json* strict = member(*spec, "strict"); strict && !strict->is_boolean())
    invalid(where + ".strict", "expected true or false, not " + std::string(strict->type_name()));
  const Json* schema = member(*spec, "schema");
  if (!schema)
    throw ApiError(400, where + ".schema: required", where + ".schema",
                   "missing_required_parameter");
  try {
    return Grammar::fromJsonSchema(schema->dump());
  } catch (const JsonSchemaError& e) {
    invalid(where + ".schema" + (e.path().empty() ? "" : "." + e.path()), e.problem());
  }
}

}  // namespace

std::shared_ptr<const Grammar> parseResponseFormat(const Json& body) {
  const Json* format = member(body, "response_format");
  if (!format) return nullptr;
  if (!format->is_object())
    invalid("response_format", "expected an object, not " + std::string(format->type_name()));
  const Json* type = member(*format, "type");
  if (!type)
    throw ApiError(400, "response_format.type: required", "response_format.type",
                   "missing_required_parameter");
  const std::string kind = type->is_string() ? type->get<std::string>() : "";
  if (kind == "text") return nullptr;
  if (kind == "json_object") return Grammar::anyJsonObject();
  if (kind == "json_schema") return schemaGrammar(*format);
  invalid("response_format.type",
          "expected \"text\", \"json_object\" or \"json_schema\", not " + type->dump());
}

}  // namespace strata::server
