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

}  // namespace strata::chat
