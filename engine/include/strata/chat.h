#pragma once
// GLM-5 chat format: OpenAI-shaped messages -> the prompt text the model was trained on, and the
// model's reply text -> reasoning, content and tool calls.
//
// renderGlmChat reproduces the upstream GLM-4.7/GLM-5 jinja chat template (as Hugging Face
// transformers renders it) byte for byte, without a template engine. Three inputs the raw
// template mishandles are normalized first, as vLLM does (see parseChatMessages):
// tool-call arguments given as a JSON string are parsed, "content": null counts as absent (the
// template would print "None"), and a tool message's list of text parts is joined into one string.
//
// JSON values are nlohmann::ordered_json because key order is visible in the prompt: the
// template prints tool definitions and tool-call arguments in the order they were given.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/error.h"

namespace strata {

enum class ChatRole { System, User, Assistant, Tool };

struct ToolCall {
  std::string id;  // optional; not part of the prompt
  std::string name;
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();  // always an object
};

struct ChatMessage {
  ChatRole role = ChatRole::User;
  // The visible text: a string content as given, or the concatenation of a list's text parts
  // (non-text parts such as images are dropped, as the template does). Empty when absent/null.
  std::string content;
  // reasoning_content: set (possibly to "") only when given as a string. When it is not set,
  // an assistant content holding "...</think>..." is split into reasoning and content.
  std::optional<std::string> reasoningContent;
  std::vector<ToolCall> toolCalls;  // assistant only
  // Tool messages whose content is a list of {"output": "..."} objects or strings: rendered by
  // the template's list branch (its own <|observation|>, one <tool_response> per item).
  std::optional<std::vector<std::string>> toolOutputs;
  std::string toolCallId;  // tool only; not part of the prompt
};

// Template variables. The defaults equal leaving the variable undefined upstream.
struct ChatOptions {
  bool addGenerationPrompt = false;
  bool enableThinking = true;  // generation prompt ends in "<think>" (true) or "</think>" (false)
  // true: reasoning is kept only for assistant turns after the last user message.
  // false: every assistant turn keeps its reasoning.
  bool clearThinking = true;
};

struct GenerateOptions;  // strata/engine.h
class Tokenizer;         // strata/tokenizer.h

// The thinking setting for a chat reply, given the one asked for. Under a grammar
// (generate.grammar) with thinking on, the grammar starts after `</think>`
// (generate.grammarAfterToken), so the thinking stays free and only the answer is
// constrained; a vocabulary without that token cannot think apart, so thinking is then off
// and the grammar covers the whole reply. Without a grammar or a tokenizer nothing changes.
bool thinkBeforeGrammar(const Tokenizer* tokenizer, bool enableThinking, GenerateOptions& generate);

// Parses an OpenAI "messages" array. Throws strata::Error naming the field at fault, e.g.
// "messages[2].role: expected one of system, user, assistant, tool, not 'developer'".
std::vector<ChatMessage> parseChatMessages(const nlohmann::ordered_json& messages);

// Parses an OpenAI "tools" array (null -> none). Each tool is kept whole: the template prints it.
std::vector<nlohmann::ordered_json> parseChatTools(const nlohmann::ordered_json& tools);

// The prompt text, starting with "[gMASK]<sop>". Special tokens appear as their literal text.
std::string renderGlmChat(const std::vector<ChatMessage>& messages,
                          const std::vector<nlohmann::ordered_json>& tools,
                          const ChatOptions& options);

// GBNF (strata/grammar.h) for a reply that is only tool calls in GLM's format: one or more
// calls of any of `tools` (tool_choice "required"), or exactly one call of `onlyFunction`.
// Each call gives the function's required parameters in its schema's order, then any of the
// others; string parameters take raw text without "</", the others a JSON value. Throws
// strata::Error when no tool (or none named onlyFunction) has a function name.
std::string toolCallGbnf(const std::vector<nlohmann::ordered_json>& tools,
                         std::string_view onlyFunction = {});

// A generated assistant reply, split into its parts.
struct AssistantReply {
  std::string reasoning;  // the text inside <think>...</think>, stripped
  std::string content;    // the visible answer, stripped, without tool-call blocks
  std::vector<ToolCall> toolCalls;
  bool reasoningComplete = true;  // false when generation stopped before "</think>"
};

// Splits the text the model generated after the prompt. `thinkingOpen` says whether the
// prompt ended inside a think block (generation prompt with thinking enabled), in which case
// everything up to "</think>" is reasoning. A reply that starts with "<think>" opens one too.
// Tool-call argument values are decoded as the template encoded them: raw text for
// parameters whose schema type in `tools` is "string", otherwise JSON when the value parses
// as JSON (a raw string when it does not). Never throws: text that is not a complete
// <tool_call> block stays in the content.
AssistantReply parseGlmReply(std::string_view generated, bool thinkingOpen,
                             const std::vector<nlohmann::ordered_json>& tools = {});

// {"role": "assistant", "content": ..., "reasoning_content": ..., "tool_calls": [...]}: content
// is null when empty and there are tool calls; reasoning_content is omitted when empty;
// tool_calls is omitted when there are none. Tool-call ids are the calls' ids, or "call_<i>".
nlohmann::ordered_json toOpenAiMessage(const AssistantReply& reply);

}  // namespace strata
