// toolCallGbnf: the grammar of a reply made only of GLM tool calls, for tool_choice "required"
// or a named function ("<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...
// </tool_call>", as the chat template renders an assistant's calls).
#include <map>
#include <string>

#include "chat/chat_format.h"
#include "grammar/json_rules.h"
#include "grammar/json_schema.h"
#include "strata/chat.h"

namespace strata {
namespace {

using Json = nlohmann::ordered_json;
using grammar::gbnfLiteral;

// One "<arg_key>key</arg_key><arg_value>value</arg_value>" for parameter `key`.
std::string argument(const std::string& key, const Json& schema) {
  return gbnfLiteral(std::string(chat::kArgKeyOpen) + key + std::string(chat::kArgKeyClose) +
                     std::string(chat::kArgValueOpen)) +
         (chat::isStringSchema(schema) ? " tc-text " : " value ") + gbnfLiteral(chat::kArgValueClose);
}

}  // namespace

std::string toolCallGbnf(const std::vector<Json>& tools, std::string_view onlyFunction) {
  if (tools.empty()) throw Error("tool calls need at least one tool");
  std::map<std::string, std::string> rules;
  std::string calls;
  for (const Json& tool : tools) {
    const Json& fn = chat::toolFunction(tool);
    if (!fn.contains("name") || !fn["name"].is_string()) continue;
    const std::string name = fn["name"].get<std::string>();
    if (!onlyFunction.empty() && name != onlyFunction) continue;
    const std::string rule = "tc-f" + std::to_string(rules.size());
    const Json empty = Json::object();
    const Json& parameters = fn.contains("parameters") && fn["parameters"].is_object() ? fn["parameters"] : empty;
    const Json& properties =
        parameters.contains("properties") && parameters["properties"].is_object() ? parameters["properties"] : empty;
    // Required parameters first, in the schema's order, then any of the others.
    std::vector<std::string> required;
    if (parameters.contains("required") && parameters["required"].is_array())
      for (const Json& key : parameters["required"])
        if (key.is_string() && properties.contains(key.get<std::string>())) required.push_back(key);
    std::string body = gbnfLiteral(name);
    for (const std::string& key : required) body += " " + argument(key, properties[key]);
    std::string optional;
    for (const auto& [key, schema] : properties.items())
      if (std::find(required.begin(), required.end(), key) == required.end())
        optional += (optional.empty() ? "" : " | ") + argument(key, schema);
    if (!optional.empty()) body += " ( " + optional + " )*";
    rules[rule] = body;
    calls += (calls.empty() ? "" : " | ") + rule;
  }
  if (calls.empty())
    throw Error(onlyFunction.empty() ? std::string("no tool has a function name")
                                     : "no tool is named '" + std::string(onlyFunction) + "'");
  // Raw text never holds "</" (it would end the value early).
  rules["tc-text"] = "( [^<] | \"<\" [^/] )*";
  rules["tc-call"] = gbnfLiteral(chat::kToolCallOpen) + " ( " + calls + " ) " + gbnfLiteral(chat::kToolCallClose);
  grammar::addJsonPrimitive("value", rules);
  std::string text = onlyFunction.empty() ? "root ::= tc-call+\n" : "root ::= tc-call\n";
  for (const auto& [name, definition] : rules) text += name + " ::= " + definition + "\n";
  return text;
}

}  // namespace strata
