#pragma once
// The body of POST /v1/chat/completions and /v1/completions, checked field by field: a wrong
// type or value is an ApiError (400) naming the field, as OpenAI's own API answers.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server_settings.h"
#include "strata/chat.h"
#include "strata/engine.h"

namespace strata::server {

// A /v1/completions prompt: text, or token ids (checked against the vocabulary later).
struct PromptInput {
  std::string text;
  std::vector<int32_t> ids;
};

struct CompletionRequest {
  bool chat = true;                           // false: /v1/completions
  std::vector<ChatMessage> messages;          // chat
  std::vector<nlohmann::ordered_json> tools;  // chat; empty also for tool_choice "none"
  bool enableThinking = true;                 // chat_template_kwargs.enable_thinking (vLLM's)
  std::vector<PromptInput> prompts;           // completions: one choice each
  bool echo = false;                          // completions: the reply repeats the prompt
  GenerateOptions generate;                   // sampling, limits, stop strings, grammar
  int choicesPerPrompt = 1;  // n: replies to each prompt, each with its own seed (seed + i)
  bool stream = false;
  bool includeUsage = false;  // stream_options.include_usage
};

// Parses a request body; 400 (code "invalid_json") when it is not JSON.
nlohmann::ordered_json parseJsonBody(const std::string& body);

// `seed` is used when the request gives none (a fresh random seed per request). An unknown
// "model" is a 404 (code "model_not_found"). Unknown fields are ignored, as OpenAI clients send
// fields this server has no use for (user, metadata, store).
CompletionRequest parseChatCompletionRequest(const nlohmann::ordered_json& body,
                                             const ServerSettings& settings, uint64_t seed);
CompletionRequest parseCompletionRequest(const nlohmann::ordered_json& body,
                                         const ServerSettings& settings, uint64_t seed);

}  // namespace strata::server
