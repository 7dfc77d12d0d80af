#pragma once
// Internal pieces of the GLM chat format shared by the renderer and the reply parser. The
// public API is strata/chat.h.
#include <string_view>

#include "strata/chat.h"

namespace strata::chat {

// The literal text of GLM's special tokens as the template writes them.
inline constexpr std::string_view kPromptPrefix = "[gMASK]<sop>";
inline constexpr std::string_view kSystem = "<|system|>";
inline constexpr std::string_view kUser = "<|user|>";
inline constexpr std::string_view kAssistant = "<|assistant|>";
inline constexpr std::string_view kObservation = "<|observation|>";
inline constexpr std::string_view kThinkOpen = "<think>";
inline constexpr std::string_view kThinkClose = "</think>";
inline constexpr std::string_view kToolCallOpen = "<tool_call>";
inline constexpr std::string_view kToolCallClose = "</tool_call>";
inline constexpr std::string_view kArgKeyOpen = "<arg_key>";
inline constexpr std::string_view kArgKeyClose = "</arg_key>";
inline constexpr std::string_view kArgValueOpen = "<arg_value>";
inline constexpr std::string_view kArgValueClose = "</arg_value>";
inline constexpr std::string_view kToolResponseOpen = "<tool_response>";
inline constexpr std::string_view kToolResponseClose = "</tool_response>";

// "system", "user", ... as in the OpenAI "role" field.
std::string_view roleName(ChatRole role);

// A tool's function object: {"type": "function", "function": {...}} or the function itself.
const nlohmann::ordered_json& toolFunction(const nlohmann::ordered_json& tool);

// Whether a parameter schema says "string" (alone or among its types): the template writes
// such values raw, everything else as JSON.
bool isStringSchema(const nlohmann::ordered_json& schema);

}  // namespace strata::chat
