// JSON Schema -> GBNF. Every schema becomes a rule named after where it sits (root,
// root-name, def-Person); objects list their properties in schema order, each optional one
// skippable, with the commas right whichever are present.
#include "grammar/json_schema.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "grammar/json_rules.h"
#include "strata/grammar.h"

namespace strata {

JsonSchemaError::JsonSchemaError(std::string path, std::string problem)
    : Error((path.empty() ? std::string("schema") : path) + ": " + problem),
      path_(std::move(path)),
      problem_(std::move(problem)) {}

namespace grammar {
namespace {

using Json = nlohmann::ordered_json;

// Keywords that restrict which values are valid, which this converter cannot express.
const std::set<std::string>& unsupportedKeywords() {
  static const std::set<std::string> keywords = {"pattern",
                                                 "format",
                                                 "not",
                                                 "if",
                                                 "then",
                                                 "else",
                                                 "minimum",
                                                 "maximum",
                                                 "exclusiveMinimum",
                                                 "exclusiveMaximum",
                                                 "multipleOf",
                                                 "patternProperties",
                                                 "propertyNames",
                                                 "minProperties",
                                                 "maxProperties",
                                                 "dependentRequired",
                                                 "dependentSchemas",
                                                 "dependencies",
                                                 "unevaluatedProperties",
                                                 "unevaluatedItems",
                                                 "prefixItems",
                                                 "additionalItems",
                                                 "contains",
                                                 "minContains",
                                                 "maxContains",
                                                 "$dynamicRef",
                                                 "$recursiveRef",
                                                 "contentSchema"};
  return keywords;
}

constexpr int64_t kMaxCount = 10000;  // the grammar's repetition limit
constexpr int kMaxDepth = 100;

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string indexed(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// A rule name from free text: letters, digits and '-'.
std::string sanitize(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += keep ? c : '-';
  }
  return out.empty() ? "x" : out;
}

bool isWhole(double x) { return std::isfinite(x) && std::floor(x) == x; }

bool hasType(const Json& value, const std::string& type) {
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  if (type == "string") return value.is_string();
  if (type == "array") return value.is_array();
  if (type == "object") return value.is_object();
  if (type == "number") return value.is_number();
  if (type == "integer")
    return value.is_number_integer() || (value.is_number_float() && isWhole(value.get<double>()));
  return false;
}

class SchemaConverter {
 public:
  explicit SchemaConverter(const Json& root) : root_(root) {}

  std::string run() {
    taken_.insert("root");
    rules_.emplace_back("root", "");  // first in the text, written once its parts are known
    rules_[0].second = body(root_, "", "root");
    std::string text;
    for (const auto& [name, definition] : rules_) text += name + " ::= " + definition + "\n";
    for (const auto& [name, definition] : primitives_) text += name + " ::= " + definition + "\n";
    return text;
  }

 private:
  [[noreturn]] static void fail(const std::string& path, const std::string& problem) {
    throw JsonSchemaError(path, problem);
  }

  void rule(const std::string& name, const std::string& definition) {
    rules_.emplace_back(name, definition);
  }

  std::string primitive(const std::string& name) {
    addJsonPrimitive(name, primitives_);
    return name;
  }

  std::string uniqueName(const std::string& hint) {
    std::string name = hint;
    for (int n = 2; taken_.count(name) || isJsonPrimitive(name); ++n)
      name = hint + "-" + std::to_string(n);
    taken_.insert(name);
    return name;
  }

  // A rule, or a primitive's name when the schema is just that primitive.
  std::string reference(const Json& schema, const std::string& path, const std::string& hint) {
    const std::string b = body(schema, path, hint);
    if (isJsonPrimitive(b)) return b;
    const std::string name = uniqueName(hint);
    rule(name, b);
    return name;
  }

  int64_t count(const Json& schema, const std::string& path, const char* key, int64_t fallback) {
    if (!schema.contains(key)) return fallback;
    const Json& v = schema[key];
    if (!v.is_number() || !isWhole(v.get<double>()) || v.get<double>() < 0)
      fail(join(path, key), "expected a non-negative integer, not " + v.dump());
    if (v.get<double>() > kMaxCount)
      fail(join(path, key),
           "at most " + std::to_string(kMaxCount) + " is supported, not " + v.dump());
    return static_cast<int64_t>(v.get<double>());
  }

  void checkKeywords(const Json& schema, const std::string& path) {
    for (const auto& [key, value] : schema.items()) {
      if (key == "uniqueItems" && value == false) continue;
      if (unsupportedKeywords().count(key) || key == "uniqueItems")
        fail(join(path, key), "the keyword '" + key +
                                  "' is not supported (it restricts which values are valid, and "
                                  "the grammar cannot express it)");
    }
  }

  // The GBNF expression for `schema`.
  std::string body(const Json& schema, const std::string& path, const std::string& name) {
    // Conversion recurses per level; a bound keeps hostile schemas from exhausting the stack.
    struct Level {
      int& depth;
      explicit Level(int& d) : depth(++d) {}
      ~Level() { --depth; }
    } level(depth_);
    if (depth_ > kMaxDepth)
      fail(path, "schemas nested deeper than " + std::to_string(kMaxDepth) + " are not supported");
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return primitive("value");
      fail(path, "the schema false accepts no value");
    }
    if (!schema.is_object())
      fail(path,
           "expected a schema (an object or a boolean), not " + std::string(schema.type_name()));
    checkKeywords(schema, path);
    if (schema.contains("$ref")) return refBody(schema, path);
    for (const char* combiner : {"anyOf", "oneOf"})
      if (schema.contains(combiner)) return alternativesBody(schema, path, name, combiner);
    if (schema.contains("allOf")) {
      const Json& all = schema["allOf"];
      if (!all.is_array() || all.size() != 1)
        fail(join(path, "allOf"), "only an allOf of exactly one schema is supported");
      onlyAnnotationsBeside(schema, path, "allOf");
      return body(all[0], indexed(join(path, "allOf"), 0), name);
    }
    const std::vector<std::string> types = typesOf(schema, path);
    if (schema.contains("const")) return valuesBody({schema["const"]}, types, join(path, "const"));
    if (schema.contains("enum")) {
      const Json& values = schema["enum"];
      if (!values.is_array() || values.empty())
        fail(join(path, "enum"), "expected a non-empty array of values");
      return valuesBody(std::vector<Json>(values.begin(), values.end()), types, join(path, "enum"));
    }
    if (types.empty()) return primitive("value");
    std::string out;
    for (const std::string& type : types) {
      if (!out.empty()) out += " | ";
      out += typeBody(type, schema, path, name);
    }
    return types.size() == 1 ? out : "( " + out + " )";
  }

  // The types `schema` allows; empty for any value.
  std::vector<std::string> typesOf(const Json& schema, const std::string& path) {
    static const std::set<std::string> known = {"string", "number", "integer", "boolean",
                                                "null",   "array",  "object"};
    std::vector<std::string> types;
    if (schema.contains("type")) {
      const Json& t = schema["type"];
      const std::vector<Json> listed =
          t.is_array() ? std::vector<Json>(t.begin(), t.end()) : std::vector<Json>{t};
      for (size_t i = 0; i < listed.size(); ++i) {
        const std::string where =
            t.is_array() ? indexed(join(path, "type"), i) : join(path, "type");
        if (!listed[i].is_string() || !known.count(listed[i].get<std::string>()))
          fail(where, "unknown type " + listed[i].dump() +
                          " (expected string, number, integer, boolean, null, array or object)");
        types.push_back(listed[i].get<std::string>());
      }
      if (types.empty()) fail(join(path, "type"), "an empty list of types accepts no value");
    } else if (schema.contains("properties") || schema.contains("required") ||
               schema.contains("additionalProperties")) {
      types.push_back("object");
    } else if (schema.contains("items") || schema.contains("minItems") ||
               schema.contains("maxItems")) {
      types.push_back("array");
    } else if (schema.contains("minLength") || schema.contains("maxLength")) {
      types.push_back("string");
    }
    return types;
  }

  std::string valuesBody(const std::vector<Json>& values, const std::vector<std::string>& types,
                         const std::string& path) {
    std::string out;
    for (const Json& v : values) {
      bool typed = types.empty();
      for (const std::string& t : types) typed = typed || hasType(v, t);
      if (!typed) continue;  // a value the type excludes is not valid
      if (!out.empty()) out += " | ";
      out += gbnfLiteral(v.dump());
    }
    if (out.empty()) fail(path, "no listed value has the schema's type, so no value is valid");
    return "( " + out + " )";
  }

  void onlyAnnotationsBeside(const Json& schema, const std::string& path, const char* keyword) {
    static const std::set<std::string> annotations = {
        "title",      "description", "default",   "examples", "$schema",     "$id",    "$comment",
        "deprecated", "readOnly",    "writeOnly", "$defs",    "definitions", "$anchor"};
    for (const auto& [key, value] : schema.items())
      if (key != keyword && !annotations.count(key))
        fail(join(path, key), std::string("'") + key + "' beside '" + keyword +
                                  "' is not supported (move it into each alternative or the "
                                  "referenced schema)");
  }

  std::string alternativesBody(const Json& schema, const std::string& path, const std::string& name,
                               const char* combiner) {
    onlyAnnotationsBeside(schema, path, combiner);
    const Json& list = schema[combiner];
    const std::string where = join(path, combiner);
    if (!list.is_array() || list.empty()) fail(where, "expected a non-empty array of schemas");
    // (oneOf is taken as anyOf: the grammar cannot check that only one alternative matches.)
    std::string out;
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out += " | ";
      out += reference(list[i], indexed(where, i), name + "-" + std::to_string(i));
    }
    return "( " + out + " )";
  }

  std::string refBody(const Json& schema, const std::string& path) {
    onlyAnnotationsBeside(schema, path, "$ref");
    const std::string where = join(path, "$ref");
    if (!schema["$ref"].is_string()) fail(where, "expected a string");
    const std::string ref = schema["$ref"].get<std::string>();
    if (ref == "#") return "root";
    if (const auto known = refs_.find(ref); known != refs_.end()) return known->second;
    if (ref.rfind("#/", 0) != 0)
      fail(where,
           "only references within the schema (#/$defs/...) are supported, not '" + ref + "'");
    Json::json_pointer pointer;
    try {
      pointer = Json::json_pointer(ref.substr(1));
    } catch (const Json::exception&) {
      fail(where, "'" + ref + "' is not a valid JSON pointer");
    }
    if (!root_.contains(pointer)) fail(where, "'" + ref + "' refers to nothing in the schema");
    // The name is known before the body is built, so a recursive reference finds it.
    const std::string name = uniqueName("def-" + sanitize(pointer.back()));
    refs_[ref] = name;
    std::string target = ref.substr(2);
    for (char& c : target)
      if (c == '/') c = '.';
    rule(name, body(root_[pointer], target, name));
    return name;
  }

  std::string typeBody(const std::string& type, const Json& schema, const std::string& path,
                       const std::string& name) {
    if (type == "object") return objectBody(schema, path, name);
    if (type == "array") return arrayBody(schema, path, name);
    if (type == "string") return stringBody(schema, path);
    return primitive(type);  // number, integer, boolean, null
  }

  std::string stringBody(const Json& schema, const std::string& path) {
    const int64_t min = count(schema, path, "minLength", 0);
    const int64_t max = count(schema, path, "maxLength", -1);
    if (max >= 0 && max < min) fail(join(path, "maxLength"), "is below minLength");
    if (min == 0 && max < 0) return primitive("string");
    primitive("char");
    return R"("\"" char)" + repeat(min, max) + R"( "\"")";
  }

  static std::string repeat(int64_t min, int64_t max) {
    std::string text = "{";
    text += std::to_string(min);
    if (max != min) text += ',';
    if (max != min && max >= 0) text += std::to_string(max);
    return text + '}';
  }

  std::string arrayBody(const Json& schema, const std::string& path, const std::string& name) {
    const int64_t min = count(schema, path, "minItems", 0);
    const int64_t max = count(schema, path, "maxItems", -1);
    if (max >= 0 && max < min) fail(join(path, "maxItems"), "is below minItems");
    std::string item = "value";
    if (schema.contains("items")) {
      if (schema["items"].is_array())
        fail(join(path, "items"),
             "an array of schemas (a tuple) is not supported; give one schema");
      item = reference(schema["items"], join(path, "items"), name + "-item");
    }
    if (item == "value") primitive("value");
    primitive("sp");
    if (max == 0) return R"("[" "]")";
    const std::string more = R"(( "," sp )" + item + " )";
    const int64_t moreMax = max < 0 ? -1 : max - 1;
    if (min == 0) return R"("[" ( )" + item + " " + more + repeat(0, moreMax) + R"( )? "]")";
    return R"("[" )" + item + " " + more + repeat(min - 1, moreMax) + R"( "]")";
  }

  struct Property {
    std::string keyValue;  // "\"key\":" sp value-rule
    bool required = false;
  };

  std::string objectBody(const Json& schema, const std::string& path, const std::string& name) {
    const Json empty = Json::object();
    const Json& properties = schema.contains("properties") ? schema["properties"] : empty;
    if (!properties.is_object()) fail(join(path, "properties"), "expected an object of schemas");
    std::set<std::string> required;
    if (schema.contains("required")) {
      const Json& r = schema["required"];
      if (!r.is_array()) fail(join(path, "required"), "expected an array of property names");
      for (size_t i = 0; i < r.size(); ++i) {
        if (!r[i].is_string()) fail(indexed(join(path, "required"), i), "expected a property name");
        required.insert(r[i].get<std::string>());
      }
    }
    const Json additional =
        schema.contains("additionalProperties") ? schema["additionalProperties"] : Json(true);
    const std::string additionalPath = join(path, "additionalProperties");
    primitive("sp");

    std::vector<Property> list;
    for (const auto& [key, value] : properties.items())
      list.push_back(
          {keyValue(key, value, join(join(path, "properties"), key), name + "-" + sanitize(key)),
           required.count(key) > 0});
    // Required names with no schema of their own take additionalProperties' schema.
    for (const std::string& key : required) {
      if (properties.contains(key)) continue;
      if (additional == false)
        fail(join(path, "required"), "'" + key +
                                         "' is required but additionalProperties is false and it "
                                         "is not among the properties");
      list.push_back({keyValue(key, additional, additionalPath, name + "-" + sanitize(key)), true});
    }
    if (list.empty()) {
      if (additional == false) return R"("{" "}")";
      // A map: any keys, values of additionalProperties' schema.
      primitive("string");
      const std::string value = reference(additional, additionalPath, name + "-value");
      if (value == "value") primitive("value");
      const std::string kv = R"(string ":" sp )" + value;
      return R"("{" ( )" + kv + R"( ( "," sp )" + kv + R"( )* )? "}")";
    }
    return R"("{" )" + propertiesBody(list, 0, name) + R"( "}")";
  }

  std::string keyValue(const std::string& key, const Json& schema, const std::string& path,
                       const std::string& hint) {
    return gbnfLiteral(Json(key).dump() + ":") + " sp " + reference(schema, path, hint);
  }

  // The properties from `i` on when none has been written yet: the first present one has no
  // comma before it. Optional ones may be skipped; the rest follows in a rule of its own
  // (restRule), so the text stays linear in the number of properties.
  std::string propertiesBody(const std::vector<Property>& list, size_t i, const std::string& name) {
    if (i == list.size()) return "";
    const std::string first = list[i].keyValue + " " + restRule(list, i + 1, name);
    if (list[i].required) return first;
    const std::string skip = propertiesBody(list, i + 1, name);
    return "( " + first + " | " + skip + " )";
  }

  // The properties from `i` on after one has been written: each present one after a comma.
  std::string restRule(const std::vector<Property>& list, size_t i, const std::string& name) {
    if (i == list.size()) return "";
    const std::string key = name + "-rest-" + std::to_string(i);
    if (const auto known = rests_.find(key); known != rests_.end()) return known->second;
    const std::string rule = uniqueName(key);
    rests_[key] = rule;
    const std::string next = restRule(list, i + 1, name);
    const std::string item = R"("," sp )" + list[i].keyValue;
    rules_.emplace_back(rule, (list[i].required ? item : "( " + item + " )?") + " " + next);
    return rule;
  }

  const Json& root_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, std::string> primitives_;
  std::set<std::string> taken_;
  std::map<std::string, std::string> refs_;
  std::map<std::string, std::string> rests_;
  int depth_ = 0;
};

}  // namespace

std::string gbnfLiteral(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "\"";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;  // UTF-8 passes through: the grammar reads characters
    }
  }
  return out + "\"";
}

std::string jsonSchemaToGbnf(std::string_view schemaJson) {
  Json schema;
  try {
    schema = Json::parse(schemaJson);
  } catch (const Json::parse_error& e) {
    throw JsonSchemaError("", std::string("not valid JSON: ") + e.what());
  }
  return SchemaConverter(schema).run();
}

std::string anyJsonObjectGbnf() {
  std::map<std::string, std::string> rules;
  addJsonPrimitive("object", rules);
  std::string text = "root ::= object\n";
  for (const auto& [name, definition] : rules) text += name + " ::= " + definition + "\n";
  return text;
}

}  // namespace grammar
}  // namespace strata
