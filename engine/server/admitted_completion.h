#pragma once
// A completion request that passed validation and admission: what the streaming and the
// non-streaming responses both need.
#include <memory>
#include <string>

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
};

// The reply of a finished chat generation, its tool calls given ids unique to the response.
inline AssistantReply parsedReply(const AdmittedCompletion& c, const std::string& text) {
  AssistantReply reply = parseGlmReply(text, c.request.enableThinking, c.request.tools);
  for (size_t i = 0; i < reply.toolCalls.size(); ++i)
    reply.toolCalls[i].id = "call_" + c.identity.id + "_" + std::to_string(i);
  return reply;
}

}  // namespace strata::server
