#pragma once
// A completion request that passed validation and admission: what the streaming and the
// non-streaming responses both need.
#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

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
};

// A choice's "logprobs" for these tokens (chat's shape or /v1/completions' older one): the
// reply's tokens only, those wholly within its first `textBytes` bytes (an end token that
// closed it, a stop string's tokens are not part of the text); null when the request did not
// ask. `textOffset`: completions' character offset of the first token, advanced past them.
inline nlohmann::ordered_json replyLogprobs(const AdmittedCompletion& c,
                                            std::span<const TokenLogprob> tokens,
                                            int64_t& textOffset,
                                            size_t textBytes = std::string::npos) {
  if (c.request.generate.topLogprobs < 0) return nullptr;
  std::vector<TokenLogprob> kept;
  size_t offset = 0;
  for (const TokenLogprob& t : tokens) {
    if (std::find(c.endTokens.begin(), c.endTokens.end(), t.token) != c.endTokens.end()) continue;
    offset += c.tokenizer->decode(std::span<const int32_t>(&t.token, 1)).size();
    if (offset > textBytes) break;
    kept.push_back(t);
  }
  if (!c.request.chat)
    return completionLogprobsJson(*c.tokenizer, kept, c.request.generate.topLogprobs, textOffset);
  return chatLogprobsJson(*c.tokenizer, kept);
}

// The reply of a finished chat generation, its tool calls given ids unique to the response.
inline AssistantReply parsedReply(const AdmittedCompletion& c, const std::string& text) {
  AssistantReply reply = parseGlmReply(text, c.request.enableThinking, c.request.tools);
  for (size_t i = 0; i < reply.toolCalls.size(); ++i)
    reply.toolCalls[i].id = "call_" + c.identity.id + "_" + std::to_string(i);
  return reply;
}

}  // namespace strata::server
