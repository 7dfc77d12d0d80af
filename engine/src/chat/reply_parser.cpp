// The model's reply text -> reasoning, content and OpenAI-shaped tool calls: the inverse of the
// assistant turn the template renders ("<think>r</think>content<tool_call>name<arg_key>k
// </arg_key><arg_value>v</arg_value>...</tool_call>").
#include <optional>
#include <string>

#include "chat/chat_format.h"
#include "chat/python_text.h"

namespace strata {
namespace {

using Json = nlohmann::ordered_json;
using chat::pythonLstrip;
using chat::pythonStrip;

// Whether the schema of tool `name` declares parameter `key` as a string (then the template
// wrote its value raw, and "42" means the text 42, not the number).
bool isStringParameter(const std::vector<Json>& tools, const std::string& name,
                       const std::string& key) {
  for (const Json& tool : tools) {
    const Json& fn = chat::toolFunction(tool);
    if (!fn.contains("name") || fn["name"] != name) continue;
    const Json::json_pointer pointer("/parameters/properties");
    if (!fn.contains(pointer) || !fn[pointer].is_object() || !fn[pointer].contains(key))
      return false;
    return chat::isStringSchema(fn[pointer][key]);
  }
  return false;
}

Json decodeValue(std::string_view raw, bool isString) {
  if (!isString) {
    Json parsed = Json::parse(raw, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) return parsed;
  }
  return std::string(raw);
}

// Takes `tag` (after optional whitespace) off the front of `text`.
bool consume(std::string_view& text, std::string_view tag) {
  const std::string_view rest = pythonLstrip(text);
  if (!rest.starts_with(tag)) return false;
  text = rest.substr(tag.size());
  return true;
}

// The inside of <tool_call>...</tool_call>: "name<arg_key>k</arg_key><arg_value>v</arg_value>...".
std::optional<ToolCall> parseCall(std::string_view body, const std::vector<Json>& tools) {
  ToolCall call;
  const size_t firstKey = body.find(chat::kArgKeyOpen);
  call.name = std::string(pythonStrip(body.substr(0, firstKey)));
  // A name holding a tag ("f<arg_value>...") is a malformed block, not a function name.
  if (call.name.empty() || call.name.find_first_of("<>") != std::string::npos) return std::nullopt;
  std::string_view rest = firstKey == std::string_view::npos ? "" : body.substr(firstKey);
  while (!pythonStrip(rest).empty()) {
    if (!consume(rest, chat::kArgKeyOpen)) return std::nullopt;
    const size_t keyEnd = rest.find(chat::kArgKeyClose);
    if (keyEnd == std::string_view::npos) return std::nullopt;
    const std::string key(pythonStrip(rest.substr(0, keyEnd)));
    rest = rest.substr(keyEnd + chat::kArgKeyClose.size());
    if (!consume(rest, chat::kArgValueOpen)) return std::nullopt;
    const size_t valueEnd = rest.find(chat::kArgValueClose);
    if (valueEnd == std::string_view::npos) return std::nullopt;
    call.arguments[key] =
        decodeValue(rest.substr(0, valueEnd), isStringParameter(tools, call.name, key));
    rest = rest.substr(valueEnd + chat::kArgValueClose.size());
  }
  return call;
}

}  // namespace

AssistantReply parseGlmReply(std::string_view generated, bool thinkingOpen,
                             const std::vector<nlohmann::ordered_json>& tools) {
  AssistantReply reply;
  std::string_view rest = generated;
  if (consume(rest, chat::kThinkOpen)) thinkingOpen = true;
  if (thinkingOpen) {
    const size_t close = rest.find(chat::kThinkClose);
    if (close == std::string_view::npos) {  // stopped while still thinking
      reply.reasoning = std::string(pythonStrip(rest));
      reply.reasoningComplete = false;
      return reply;
    }
    reply.reasoning = std::string(pythonStrip(rest.substr(0, close)));
    rest = rest.substr(close + chat::kThinkClose.size());
  }

  std::string content;
  while (true) {
    const size_t open = rest.find(chat::kToolCallOpen);
    const size_t close =
        open == std::string_view::npos ? open : rest.find(chat::kToolCallClose, open);
    if (close == std::string_view::npos) {  // no (complete) tool call left: the rest is text
      content += rest;
      break;
    }
    content += rest.substr(0, open);
    const size_t bodyStart = open + chat::kToolCallOpen.size();
    std::optional<ToolCall> call = parseCall(rest.substr(bodyStart, close - bodyStart), tools);
    const size_t end = close + chat::kToolCallClose.size();
    if (call) {
      call->id = "call_" + std::to_string(reply.toolCalls.size());
      reply.toolCalls.push_back(std::move(*call));
    } else {
      content += rest.substr(open, end - open);  // malformed: keep the text as the model wrote it
    }
    rest = rest.substr(end);
  }
  reply.content = std::string(pythonStrip(content));
  return reply;
}

nlohmann::ordered_json toOpenAiMessage(const AssistantReply& reply) {
  Json message = {{"role", "assistant"}};
  message["content"] =
      reply.content.empty() && !reply.toolCalls.empty() ? Json(nullptr) : Json(reply.content);
  if (!reply.reasoning.empty()) message["reasoning_content"] = reply.reasoning;
  if (!reply.toolCalls.empty()) {
    Json calls = Json::array();
    for (size_t i = 0; i < reply.toolCalls.size(); ++i) {
      const ToolCall& call = reply.toolCalls[i];
      calls.push_back(
          {{"id", call.id.empty() ? "call_" + std::to_string(i) : call.id},
           {"type", "function"},
           {"function",
            {{"name", call.name},
             {"arguments", call.arguments.dump(-1, ' ', false, Json::error_handler_t::replace)}}}});
    }
    message["tool_calls"] = std::move(calls);
  }
  return message;
}

}  // namespace strata
