#pragma once
// The response objects of the OpenAI API this server returns: chat.completion,
// chat.completion.chunk, text_completion, the models list and usage.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "strata/chat.h"
#include "strata/engine.h"
#include "strata/tokenizer.h"

namespace strata::server {

// Names one response: its id prefix is chosen by the endpoint ("chatcmpl-", "cmpl-").
struct ResponseIdentity {
  std::string id;
  int64_t created = 0;  // Unix seconds
  std::string model;
};

nlohmann::ordered_json usageJson(int64_t promptTokens, int64_t completionTokens);

// "stop", "length" or "tool_calls" from the engine's finish reason.
std::string openAiFinishReason(const std::string& engineReason, bool hasToolCalls);

// A choice's "logprobs" for these tokens: {"content": [{"token", "logprob", "bytes",
// "top_logprobs": [{"token", "logprob", "bytes"}]}], "refusal": null}. A token's text is its
// exact bytes (JSON-escaped; `bytes` carries them when they split a UTF-8 character).
nlohmann::ordered_json chatLogprobsJson(const Tokenizer& tokenizer, std::span<const TokenLogprob> tokens);

// A /v1/completions choice's "logprobs" for these tokens, in that endpoint's older shape:
// {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}] (null when top is 0),
// "text_offset"}; offsets count characters of the completion's text from `textOffset`, which
// is advanced past these tokens (a stream's chunks continue where the last one ended).
nlohmann::ordered_json completionLogprobsJson(const Tokenizer& tokenizer,
                                              std::span<const TokenLogprob> tokens, int top,
                                              int64_t& textOffset);

// The same for an echoed prompt (/v1/completions with echo): its first token has no log
// probability, as nothing precedes it (null there, as OpenAI's API answers), the rest are
// `rest`. Offsets start at textOffset = 0 and continue into the reply's (appendCompletionLogprobs).
nlohmann::ordered_json echoedPromptLogprobsJson(const Tokenizer& tokenizer, int32_t firstToken,
                                                std::span<const TokenLogprob> rest, int top,
                                                int64_t& textOffset);
// Appends the arrays of `more` (completionLogprobsJson's shape) to those of `into`.
void appendCompletionLogprobs(nlohmann::ordered_json& into, const nlohmann::ordered_json& more);

// One choice of a chat.completion (its index is its place in the list).
struct ChatChoice {
  AssistantReply reply;
  std::string finishReason;
  nlohmann::ordered_json logprobs;  // null when not asked for
};
nlohmann::ordered_json chatCompletionJson(const ResponseIdentity& who,
                                          const std::vector<ChatChoice>& choices,
                                          const nlohmann::ordered_json& usage);

// One chunk, of choice `index`. finishReason empty: null. withUsageField: "usage": null
// (stream_options.include_usage asks for the field on every chunk; the last chunk carries the
// numbers, see usageChunkJson).
nlohmann::ordered_json chatChunkJson(const ResponseIdentity& who, int index,
                                     nlohmann::ordered_json delta, const std::string& finishReason,
                                     bool withUsageField,
                                     const nlohmann::ordered_json& logprobs = nullptr);
nlohmann::ordered_json usageChunkJson(const ResponseIdentity& who, const char* object,
                                      const nlohmann::ordered_json& usage);

// delta.tool_calls for the calls of a finished reply (each whole, with its index).
nlohmann::ordered_json toolCallDeltas(const AssistantReply& reply);

// One choice of a /v1/completions response (its index is its place in the list).
struct CompletionChoice {
  std::string text;
  std::string finishReason;
  nlohmann::ordered_json logprobs;  // null when not asked for
};
nlohmann::ordered_json completionJson(const ResponseIdentity& who,
                                      const std::vector<CompletionChoice>& choices,
                                      const nlohmann::ordered_json& usage);
nlohmann::ordered_json completionChunkJson(const ResponseIdentity& who, int index,
                                           const std::string& text, const std::string& finishReason,
                                           bool withUsageField,
                                           const nlohmann::ordered_json& logprobs = nullptr);

nlohmann::ordered_json modelsJson(const std::string& modelId, int64_t created);

}  // namespace strata::server
