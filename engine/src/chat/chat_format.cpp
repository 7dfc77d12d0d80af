// The GLM-4.7/GLM-5 chat template (shared/reference/glm-4.7-chat_template.jinja) in C++.
// Each block below names the template lines it reproduces; whitespace follows the template as
// rendered with trim_blocks and lstrip_blocks (no newline after role tokens, none between turns).
#include "chat/chat_format.h"

#include <string>

#include "chat/python_text.h"

namespace strata {
namespace {

using chat::pythonJsonDumps;
using chat::pythonStrip;

// {%- if tools -%} ... {%- endif -%}
void renderTools(const std::vector<nlohmann::ordered_json>& tools, std::string& out) {
  if (tools.empty()) return;
  out += chat::kSystem;
  out +=
      "\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
      "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n";
  for (const auto& tool : tools) out += pythonJsonDumps(tool) + "\n";  // tool | tojson
  out +=
      "</tools>\n\nFor each function call, output the function name and arguments within the "
      "following XML format:\n<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key>"
      "<arg_value>{arg-value-1}</arg_value><arg_key>{arg-key-2}</arg_key><arg_value>"
      "{arg-value-2}</arg_value>...</tool_call>";
}

std::string_view stripChar(std::string_view text, char c, bool left) {
  if (left) {
    while (!text.empty() && text.front() == c) text.remove_prefix(1);
  } else {
    while (!text.empty() && text.back() == c) text.remove_suffix(1);
  }
  return text;
}

// {%- elif m.role == 'assistant' -%} ... : reasoning, content, tool calls.
void renderAssistant(const ChatMessage& m, bool keepReasoning, std::string& out) {
  out += chat::kAssistant;
  std::string_view content = m.content;
  std::string_view reasoning;
  if (m.reasoningContent) {
    reasoning = *m.reasoningContent;
  } else if (const size_t first = content.find(chat::kThinkClose);
             first != std::string_view::npos) {
    // content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
    std::string_view before = stripChar(content.substr(0, first), '\n', false);
    if (const size_t open = before.rfind(chat::kThinkOpen); open != std::string_view::npos)
      before = before.substr(open + chat::kThinkOpen.size());
    reasoning = stripChar(before, '\n', true);
    // content.split('</think>')[-1].lstrip('\n')
    content = stripChar(content.substr(content.rfind(chat::kThinkClose) + chat::kThinkClose.size()),
                        '\n', true);
  }
  if (keepReasoning && !reasoning.empty()) {
    out.append(chat::kThinkOpen).append(pythonStrip(reasoning)).append(chat::kThinkClose);
  } else {
    out += chat::kThinkClose;
  }
  out += pythonStrip(content);
  for (const ToolCall& call : m.toolCalls) {
    out.append(chat::kToolCallOpen).append(call.name);
    for (const auto& [key, value] : call.arguments.items()) {
      out.append(chat::kArgKeyOpen)
          .append(key)
          .append(chat::kArgKeyClose)
          .append(chat::kArgValueOpen);
      // v | tojson(ensure_ascii=False) if v is not string else v
      out += value.is_string() ? value.get_ref<const std::string&>() : pythonJsonDumps(value);
      out += chat::kArgValueClose;
    }
    out += chat::kToolCallClose;
  }
}

// {%- elif m.role == 'tool' -%}: one <|observation|> per run of string-content tool messages;
// the list form always opens its own.
void renderTool(const ChatMessage& m, bool previousIsTool, std::string& out) {
  if (m.toolOutputs) {
    out += chat::kObservation;
    for (const std::string& output : *m.toolOutputs)
      out.append(chat::kToolResponseOpen).append(output).append(chat::kToolResponseClose);
    return;
  }
  if (!previousIsTool) out += chat::kObservation;
  out.append(chat::kToolResponseOpen).append(m.content).append(chat::kToolResponseClose);
}

}  // namespace

std::string renderGlmChat(const std::vector<ChatMessage>& messages,
                          const std::vector<nlohmann::ordered_json>& tools,
                          const ChatOptions& options) {
  std::string out(chat::kPromptPrefix);
  renderTools(tools, out);

  // ns.last_user_index: reasoning survives only after it (unless clear_thinking is false).
  long lastUser = -1;
  for (size_t i = 0; i < messages.size(); ++i)
    if (messages[i].role == ChatRole::User) lastUser = static_cast<long>(i);

  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    switch (m.role) {
      case ChatRole::User:
        out.append(chat::kUser).append(m.content);
        break;
      case ChatRole::System:
        out.append(chat::kSystem).append(m.content);
        break;
      case ChatRole::Assistant:
        renderAssistant(m, !options.clearThinking || static_cast<long>(i) > lastUser, out);
        break;
      case ChatRole::Tool:
        renderTool(m, i > 0 && messages[i - 1].role == ChatRole::Tool, out);
        break;
    }
  }
  if (options.addGenerationPrompt) {
    out += chat::kAssistant;
    out += options.enableThinking ? chat::kThinkOpen : chat::kThinkClose;
  }
  return out;
}

}  // namespace strata
