#include "completion_endpoint.h"

#include <httplib.h>

#include <algorithm>
#include <ctime>
#include <optional>

#include "api_error.h"
#include "client_connection.h"
#include "completion_stream.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

void respondJson(httplib::Response& response, int status, const Json& body) {
  response.status = status;
  response.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace),
                       "application/json");
}

// Waits for a non-streaming job; cancels it at the deadline, or when its client hangs up (then
// nothing is answered: there is nobody to answer).
Json finishedResponse(const AdmittedCompletion& c, Scheduler& scheduler,
                      const std::optional<ClientConnection>& client) {
  Job::Progress p;
  bool timedOut = false;
  bool clientGone = false;
  while (!p.done) {
    const auto now = Job::Clock::now();
    if (!timedOut && !clientGone && now >= c.deadline) {
      scheduler.cancel(c.job);
      timedOut = true;
    }
    if (!timedOut && !clientGone && client && client->closed()) {
      scheduler.cancel(c.job);
      clientGone = true;
    }
    const auto until = timedOut || clientGone ? now + std::chrono::seconds(1)
                                              : std::min(c.deadline, now + kClientCheckInterval);
    p = c.job->wait(until);
  }
  if (clientGone) throw ApiError(499, "the client closed the connection", "", "client_closed");
  if (!p.error.empty())
    throw ApiError(500, "generation failed: " + p.error, "", "generation_failed");
  const GenerateResult& r = *p.result;
  if (r.finishReason == "cancelled") {
    if (timedOut)
      throw ApiError(504,
                     "the request took longer than the server's timeout of " +
                         std::to_string(c.timeoutSeconds) + " s",
                     "", "timeout");
    throw ApiError(503, "the server is shutting down", "", "shutting_down");
  }
  const Json usage = usageJson(c.promptTokens, static_cast<int64_t>(r.tokens.size()));
  int64_t textOffset = 0;
  if (c.request.echo) {
    const std::string text = c.echoedPrompt + r.text;
    Json logprobs = c.request.generate.promptLogprobs
                        ? echoedPromptLogprobsJson(*c.tokenizer, c.firstPromptToken, r.promptLogprobs,
                                                   c.request.generate.topLogprobs, textOffset)
                        : Json(nullptr);
    if (!logprobs.is_null())
      appendCompletionLogprobs(logprobs, replyLogprobs(c, r.logprobs, r.text.size(), textOffset));
    return completionJson(c.identity, text, openAiFinishReason(r.finishReason, false), usage, logprobs);
  }
  const Json logprobs = replyLogprobs(c, r.logprobs, r.text.size(), textOffset);
  if (!c.request.chat)
    return completionJson(c.identity, r.text, openAiFinishReason(r.finishReason, false), usage,
                          logprobs);
  const AssistantReply reply = parsedReply(c, r.text);
  return chatCompletionJson(c.identity, reply,
                            openAiFinishReason(r.finishReason, !reply.toolCalls.empty()), usage,
                            logprobs);
}

}  // namespace

CompletionEndpoint::CompletionEndpoint(const Engine& engine, const ServerSettings& settings,
                                       Scheduler& scheduler)
    : engine_(engine), settings_(settings), scheduler_(scheduler), seeds_(std::random_device{}()) {}

uint64_t CompletionEndpoint::freshSeed() {
  std::lock_guard lock(seedMutex_);
  return seeds_();
}

void CompletionEndpoint::handle(const httplib::Request& request, httplib::Response& response,
                                bool chat) {
  try {
    admitAndRespond(request, response, chat);
  } catch (const ApiError& e) {
    if (e.status() == 429) response.set_header("Retry-After", "1");
    respondJson(response, e.status(), e.toJson());
  } catch (const std::exception& e) {
    respondJson(response, 500, ApiError(500, e.what(), "", "internal_error").toJson());
  }
}

void CompletionEndpoint::admitAndRespond(const httplib::Request& request,
                                         httplib::Response& response, bool chat) {
  const Json body = parseJsonBody(request.body);
  AdmittedCompletion c;
  c.request = chat ? parseChatCompletionRequest(body, settings_, freshSeed())
                   : parseCompletionRequest(body, settings_, freshSeed());
  std::string prompt = c.request.prompt;
  if (chat) {
    c.request.enableThinking =
        thinkBeforeGrammar(engine_.tokenizer(), c.request.enableThinking, c.request.generate);
    ChatOptions options;
    options.addGenerationPrompt = true;
    options.enableThinking = c.request.enableThinking;
    try {
      prompt = renderGlmChat(c.request.messages, c.request.tools, options);
    } catch (const Error& e) {
      throw ApiError(400, e.what(), "messages", "invalid_value");
    }
  }
  const Tokenizer* tokenizer = engine_.tokenizer();
  if (!tokenizer) throw ApiError(500, "the model has no tokenizer.json", "", "no_tokenizer");
  std::vector<int32_t> ids = c.request.promptIds.empty() ? tokenizer->encode(prompt) : c.request.promptIds;
  if (ids.empty()) throw ApiError(400, "prompt: encodes to no tokens", "prompt", "invalid_value");
  const int vocab = engine_.info().vocabSize;
  for (const int32_t id : ids)
    if (id >= vocab)
      throw ApiError(400,
                     "prompt: token " + std::to_string(id) + " is not in the model's vocabulary of " +
                         std::to_string(vocab),
                     "prompt", "invalid_value");
  if (c.request.echo) {
    c.echoedPrompt = c.request.promptIds.empty() ? prompt : tokenizer->decode(ids);
    c.firstPromptToken = ids.front();
  }
  c.promptTokens = static_cast<int64_t>(ids.size());
  if (c.promptTokens > settings_.maxPromptTokens)
    throw ApiError(400,
                   "the prompt is " + std::to_string(c.promptTokens) +
                       " tokens; this server accepts at most " +
                       std::to_string(settings_.maxPromptTokens),
                   chat ? "messages" : "prompt", "context_length_exceeded");

  c.tokenizer = tokenizer;
  if (!c.request.generate.ignoreEos) c.endTokens = engine_.info().eosTokenIds;
  c.job = std::make_shared<Job>(std::move(ids), c.request.generate);
  c.timeoutSeconds = settings_.timeoutSeconds;
  c.deadline = Job::Clock::now() + std::chrono::duration_cast<Job::Clock::duration>(
                                       std::chrono::duration<double>(settings_.timeoutSeconds));
  c.identity = {(chat ? "chatcmpl-" : "cmpl-") + std::to_string(nextId_++),
                static_cast<int64_t>(std::time(nullptr)), settings_.modelId};
  if (!scheduler_.submit(c.job)) {
    const Scheduler::Load load = scheduler_.load();
    throw ApiError(429,
                   "the server is busy: " + std::to_string(load.active) + " of " +
                       std::to_string(load.slotCount) + " slots generating and " +
                       std::to_string(load.queued) + " requests queued (the queue holds " +
                       std::to_string(load.queueCapacity) + "); retry later",
                   "", "server_busy");
  }
  auto client = ClientConnection::find(request.remote_addr, request.remote_port,
                                       request.local_addr, request.local_port);
  if (!c.request.stream) {
    respondJson(response, 200, finishedResponse(c, scheduler_, client));
    return;
  }
  auto stream = std::make_shared<CompletionStream>(std::move(c), scheduler_,
                                                   settings_.keepAliveSeconds, std::move(client));
  response.set_header("Cache-Control", "no-cache");
  response.set_chunked_content_provider(
      "text/event-stream",
      [stream](size_t, httplib::DataSink& sink) { return stream->provide(sink); });
}

}  // namespace strata::server
