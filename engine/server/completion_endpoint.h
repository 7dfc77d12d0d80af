#pragma once
// POST /v1/chat/completions and POST /v1/completions: validate, render the prompt, admit the
// job to the scheduler (429 when full; a batch of completion prompts is one job each, admitted
// all or none), then answer with one JSON object or an SSE stream.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>

#include "admitted_completion.h"
#include "scheduler.h"
#include "server_settings.h"
#include "strata/engine.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace strata::server {

// The prompt text a chat request renders to, its thinking first settled against its grammar
// (what the chat endpoint generates from; /tokenize counts the same).
std::string renderChatPrompt(const Engine& engine, CompletionRequest& parsed);

class CompletionEndpoint {
 public:
  CompletionEndpoint(const Engine& engine, const ServerSettings& settings, Scheduler& scheduler);

  // Never throws: every failure becomes an OpenAI error response.
  void handle(const httplib::Request& request, httplib::Response& response, bool chat);

 private:
  void admitAndRespond(const httplib::Request& request, httplib::Response& response, bool chat);
  // One prompt's job, checked (token ids, length) but not yet submitted.
  AdmittedCompletion admitPrompt(const CompletionRequest& request, const PromptInput& prompt) const;
  uint64_t freshSeed();

  const Engine& engine_;
  const ServerSettings& settings_;
  Scheduler& scheduler_;
  std::atomic<uint64_t> nextId_{1};
  std::mutex seedMutex_;
  std::mt19937_64 seeds_;
};

}  // namespace strata::server
