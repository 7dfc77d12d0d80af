#pragma once
// A small JSON Schema validator for the tests, written from the specification and independent
// of the grammar converter: type, enum, const, properties, required, additionalProperties,
// items, minItems, maxItems, minLength, maxLength (code points), anyOf, oneOf, allOf and local
// $ref. Returns why a value fails, or an empty string.
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace json_schema_check {

using Json = nlohmann::ordered_json;

inline size_t codePointCount(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

inline bool hasType(const Json& v, const std::string& t) {
  if (t == "integer")
    return v.is_number_integer() ||
           (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (t == "number") return v.is_number();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "array") return v.is_array();
  if (t == "object") return v.is_object();
  return false;
}

inline std::string check(const Json& v, const Json& schema, const Json& root,
                         const std::string& at = "$") {
  if (schema.is_boolean()) return schema.get<bool>() ? "" : at + ": false schema";
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    const Json& target = ref == "#" ? root : root[Json::json_pointer(ref.substr(1))];
    if (auto e = check(v, target, root, at); !e.empty()) return e;
  }
  if (schema.contains("type")) {
    const Json& t = schema["type"];
    bool ok = false;
    if (t.is_string()) ok = hasType(v, t);
    for (const Json& one : t.is_array() ? t : Json::array()) ok = ok || hasType(v, one);
    if (!ok) return at + ": not of type " + t.dump();
  }
  if (schema.contains("const") && v != schema["const"]) return at + ": not the const";
  if (schema.contains("enum")) {
    bool found = false;
    for (const Json& e : schema["enum"]) found = found || e == v;
    if (!found) return at + ": not in the enum";
  }
  if (schema.contains("anyOf")) {
    bool any = false;
    for (const Json& s : schema["anyOf"]) any = any || check(v, s, root, at).empty();
    if (!any) return at + ": matches no anyOf";
  }
  if (schema.contains("oneOf")) {
    int matches = 0;
    for (const Json& s : schema["oneOf"]) matches += check(v, s, root, at).empty();
    if (matches != 1) return at + ": matches " + std::to_string(matches) + " oneOf schemas";
  }
  for (const Json& s : schema.contains("allOf") ? schema["allOf"] : Json::array())
    if (auto e = check(v, s, root, at); !e.empty()) return e;
  if (v.is_string()) {
    const size_t n = codePointCount(v.get<std::string>());
    if (schema.contains("minLength") && n < schema["minLength"].get<size_t>())
      return at + ": too short";
    if (schema.contains("maxLength") && n > schema["maxLength"].get<size_t>())
      return at + ": too long";
  }
  if (v.is_array()) {
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>())
      return at + ": too few items";
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>())
      return at + ": too many items";
    if (schema.contains("items"))
      for (size_t i = 0; i < v.size(); ++i)
        if (auto e = check(v[i], schema["items"], root, at + "[" + std::to_string(i) + "]");
            !e.empty())
          return e;
  }
  if (v.is_object()) {
    const Json props = schema.value("properties", Json::object());
    for (const Json& name : schema.value("required", Json::array()))
      if (!v.contains(name.get<std::string>())) return at + ": lacks required " + name.dump();
    for (const auto& [key, value] : v.items()) {
      const std::string where = at + "." + key;
      if (props.contains(key)) {
        if (auto e = check(value, props[key], root, where); !e.empty()) return e;
      } else if (schema.contains("additionalProperties")) {
        if (auto e = check(value, schema["additionalProperties"], root, where); !e.empty())
          return e;
      }
    }
  }
  return "";
}

}  // namespace json_schema_check
