#pragma once
// A completion request that passed validation and admission: what the streaming and the
// non-streaming responses both need.
#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api_error.h"
#include "completion_request.h"
#include "job.h"
#include "openai_json.h"

namespace strata::server {

struct AdmittedCompletion {
  CompletionRequest request;
  std::shared_ptr<Job> job;
  ResponseIdentity identity;
  int64_t promptTokens = 0;
  Job::Clock::time_point deadline;
  double timeoutSeconds = 0;
  const Tokenizer* tokenizer = nullptr;  // the engine's
  std::vector<int> endTokens;  // ids that end a reply without being text (none with ignore_eos)
  std::string echoedPrompt;    // echo: the prompt's text, ahead of the reply's
  int choice = 0;  // its index among the response's choices
};

// What a finished job's failure answers: the engine's error (500), a cancel at or past the
// request's deadline (504), any other cancel (503: the server is shutting down). None when it
// finished.
inline std::optional<ApiError> jobFailure(const AdmittedCompletion& c, const Job::Progress& p) {
  if (!p.error.empty())
    return ApiError(500, "generation failed: " + p.error, "", "generation_failed");
  if (p.result->finishReason != "cancelled") return std::nullopt;
  if (Job::Clock::now() >= c.deadline)
    return ApiError(504,
                    "the request took longer than the server's timeout of " +
                        std::to_string(c.timeoutSeconds) + " s",
                    "", "timeout");
  return ApiError(503, "the server is shutting down", "", "shutting_down");
}

// How many leading tokens a choice's "logprobs" took, and the bytes of their text.
struct TakenTokens {
  size_t tokens = 0, bytes = 0;
};

// A choice's "logprobs" (chat's shape or /v1/completions' older one) for the leading `tokens`
// whose text lies wholly within the next `textBytes` bytes of the reply: an end token that
// closed it is passed over (it is not text; with echo it is listed), a stop string's tokens
// never fit. Null when the request did not ask. `taken`: what it used (a stream keeps the rest for
// a later chunk); `textOffset`: completions' character offset of the first token, advanced past
// them.
inline nlohmann::ordered_json replyLogprobs(const AdmittedCompletion& c,
                                            std::span<const TokenLogprob> tokens, size_t textBytes,
                                            int64_t& textOffset, TakenTokens* taken = nullptr) {
  if (c.request.generate.topLogprobs < 0) return nullptr;
  std::vector<TokenLogprob> kept;
  TakenTokens used;
  for (const TokenLogprob& t : tokens) {
    const bool end = std::find(c.endTokens.begin(), c.endTokens.end(), t.token) != c.endTokens.end();
    const size_t bytes = end ? 0 : c.tokenizer->decode(std::span<const int32_t>(&t.token, 1)).size();
    if (used.bytes + bytes > textBytes) break;
    used.bytes += bytes;
    ++used.tokens;
    // Echo keeps it: scoring clients take the entry after the prompt's as the generated one.
    if (!end || c.request.echo) kept.push_back(t);
  }
  if (taken) *taken = used;
  if (!c.request.chat)
    return completionLogprobsJson(*c.tokenizer, kept, c.request.generate.topLogprobs, textOffset);
  return chatLogprobsJson(*c.tokenizer, kept);
}

// The reply of a finished chat generation, its tool calls given ids unique to the response.
inline AssistantReply parsedReply(const AdmittedCompletion& c, const std::string& text) {
  AssistantReply reply = parseGlmReply(text, c.request.enableThinking, c.request.tools);
  for (size_t i = 0; i < reply.toolCalls.size(); ++i)
    reply.toolCalls[i].id = "call_" + c.identity.id + "_" +
                            (c.choice > 0 ? std::to_string(c.choice) + "_" : "") +
                            std::to_string(i);
  return reply;
}

}  // namespace strata::server
