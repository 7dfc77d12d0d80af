// OpenAI-shaped JSON -> ChatMessage, with errors that name the field at fault.
#include <string>

#include "chat/chat_format.h"

namespace strata {
namespace {

using Json = nlohmann::ordered_json;

std::string typeName(const Json& value) {
  return value.is_null() ? "null" : std::string(value.type_name());
}

[[noreturn]] void fail(const std::string& field, const std::string& expected, const Json& got) {
  throw Error(field + ": expected " + expected + ", got " + typeName(got));
}

ChatRole parseRole(const Json& message, const std::string& field) {
  if (!message.contains("role"))
    throw Error(field + ": missing (expected one of system, developer, user, assistant, tool)");
  const Json& role = message["role"];
  if (!role.is_string()) fail(field, "a string (one of system, developer, user, assistant, tool)", role);
  const std::string& name = role.get_ref<const std::string&>();
  // OpenAI's newer name for system instructions (its clients send it for recent models); GLM's
  // template knows only system (llama.cpp's server maps it the same way).
  if (name == "system" || name == "developer") return ChatRole::System;
  if (name == "user") return ChatRole::User;
  if (name == "assistant") return ChatRole::Assistant;
  if (name == "tool") return ChatRole::Tool;
  throw Error(field + ": expected one of system, developer, user, assistant, tool, not '" + name + "'");
}

bool isTextPart(const Json& part) {
  return part.is_object() && part.contains("type") && part["type"] == "text";
}

std::string textOfPart(const Json& part, const std::string& field) {
  if (!part.contains("text")) throw Error(field + ".text: missing in a {\"type\": \"text\"} part");
  const Json& text = part["text"];
  if (!text.is_string()) fail(field + ".text", "a string", text);
  return text.get<std::string>();
}

// The template's visible_text(): strings and text parts concatenated; other parts (images,
// audio) are dropped, as the template drops them.
std::string visibleText(const Json& parts, const std::string& field) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Json& part = parts[i];
    const std::string partField = field + "[" + std::to_string(i) + "]";
    if (part.is_string())
      text += part.get_ref<const std::string&>();
    else if (isTextPart(part))
      text += textOfPart(part, partField);
    else if (!part.is_object())
      fail(partField, "a string or a content part object", part);
  }
  return text;
}

// Tool results: a string; a non-empty list of text parts (joined, as vLLM does); or a list of
// strings and {"output": "..."} objects (the template's list branch).
void parseToolContent(const Json& content, const std::string& field, ChatMessage& message) {
  bool allText = !content.empty();
  for (const Json& part : content) allText = allText && isTextPart(part);
  if (allText) {
    message.content = visibleText(content, field);
    return;
  }
  std::vector<std::string> outputs;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& item = content[i];
    const std::string itemField = field + "[" + std::to_string(i) + "]";
    if (item.is_string()) {
      outputs.push_back(item.get<std::string>());
    } else if (item.is_object() && item.contains("output")) {
      if (!item["output"].is_string()) fail(itemField + ".output", "a string", item["output"]);
      outputs.push_back(item["output"].get<std::string>());
    } else {
      fail(itemField,
           "a string or an {\"output\": ...} object (text parts cannot be mixed with outputs)",
           item);
    }
  }
  message.toolOutputs = std::move(outputs);
}

void parseContent(const Json& message, const std::string& field, ChatMessage& out) {
  if (!message.contains("content") || message["content"].is_null()) {
    // The template iterates an undefined tool content: a bare <|observation|>.
    if (out.role == ChatRole::Tool) out.toolOutputs.emplace();
    return;
  }
  const Json& content = message["content"];
  if (content.is_string())
    out.content = content.get<std::string>();
  else if (!content.is_array())
    fail(field, "a string, an array of content parts or null", content);
  else if (out.role == ChatRole::Tool)
    parseToolContent(content, field, out);
  else
    out.content = visibleText(content, field);
}

nlohmann::ordered_json parseArguments(const Json& fn, const std::string& field) {
  if (!fn.contains("arguments")) return Json::object();
  const Json& arguments = fn["arguments"];
  if (arguments.is_null()) return Json::object();
  if (arguments.is_object()) return arguments;
  if (!arguments.is_string()) fail(field, "a JSON object or a string holding one", arguments);
  const std::string& text = arguments.get_ref<const std::string&>();
  if (text.empty()) return Json::object();
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) throw Error(field + ": not valid JSON: " + text);
  if (!parsed.is_object()) fail(field, "a JSON object", parsed);
  return parsed;
}

std::vector<ToolCall> parseToolCalls(const Json& message, const std::string& field) {
  std::vector<ToolCall> calls;
  if (!message.contains("tool_calls") || message["tool_calls"].is_null()) return calls;
  const Json& list = message["tool_calls"];
  if (!list.is_array()) fail(field, "an array of tool calls or null", list);
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& call = list[i];
    const std::string callField = field + "[" + std::to_string(i) + "]";
    if (!call.is_object()) fail(callField, "an object", call);
    ToolCall out;
    if (call.contains("id") && call["id"].is_string()) out.id = call["id"].get<std::string>();
    // OpenAI shape {"function": {"name", "arguments"}}; the template also takes them flat.
    const bool wrapped = call.contains("function");
    if (wrapped && !call["function"].is_object())
      fail(callField + ".function", "an object", call["function"]);
    const Json& fn = wrapped ? call["function"] : call;
    const std::string fnField = wrapped ? callField + ".function" : callField;
    if (!fn.contains("name")) throw Error(fnField + ".name: missing");
    if (!fn["name"].is_string()) fail(fnField + ".name", "a string", fn["name"]);
    out.name = fn["name"].get<std::string>();
    out.arguments = parseArguments(fn, fnField + ".arguments");
    calls.push_back(std::move(out));
  }
  return calls;
}

}  // namespace

namespace chat {
std::string_view roleName(ChatRole role) {
  switch (role) {
    case ChatRole::System:
      return "system";
    case ChatRole::User:
      return "user";
    case ChatRole::Assistant:
      return "assistant";
    case ChatRole::Tool:
      return "tool";
  }
  return "?";
}

const nlohmann::ordered_json& toolFunction(const nlohmann::ordered_json& tool) {
  return tool.contains("function") && tool["function"].is_object() ? tool["function"] : tool;
}

bool isStringSchema(const nlohmann::ordered_json& schema) {
  if (!schema.is_object() || !schema.contains("type")) return false;
  const nlohmann::ordered_json& type = schema["type"];
  if (type == "string") return true;
  if (type.is_array())
    for (const auto& t : type)
      if (t == "string") return true;
  return false;
}
}  // namespace chat

std::vector<ChatMessage> parseChatMessages(const nlohmann::ordered_json& messages) {
  if (!messages.is_array()) fail("messages", "an array of message objects", messages);
  std::vector<ChatMessage> out;
  out.reserve(messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    const std::string field = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) fail(field, "an object", m);
    ChatMessage message;
    message.role = parseRole(m, field + ".role");
    parseContent(m, field + ".content", message);
    if (m.contains("reasoning_content") && !m["reasoning_content"].is_null()) {
      const Json& reasoning = m["reasoning_content"];
      if (!reasoning.is_string()) fail(field + ".reasoning_content", "a string or null", reasoning);
      message.reasoningContent = reasoning.get<std::string>();
    }
    if (message.role == ChatRole::Assistant)
      message.toolCalls = parseToolCalls(m, field + ".tool_calls");
    if (m.contains("tool_call_id") && m["tool_call_id"].is_string())
      message.toolCallId = m["tool_call_id"].get<std::string>();
    out.push_back(std::move(message));
  }
  return out;
}

std::vector<nlohmann::ordered_json> parseChatTools(const nlohmann::ordered_json& tools) {
  if (tools.is_null()) return {};
  if (!tools.is_array()) fail("tools", "an array of tool objects or null", tools);
  std::vector<Json> out;
  for (size_t i = 0; i < tools.size(); ++i) {
    if (!tools[i].is_object()) fail("tools[" + std::to_string(i) + "]", "an object", tools[i]);
    out.push_back(tools[i]);
  }
  return out;
}

}  // namespace strata
