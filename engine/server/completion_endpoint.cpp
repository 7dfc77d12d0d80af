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

// Waits for a request's non-streaming jobs (a batch of prompts has one each); cancels them all
// at the deadline, or when the client hangs up (then nothing is answered: nobody is there).
std::vector<GenerateResult> finishedResults(const std::vector<AdmittedCompletion>& jobs,
                                            Scheduler& scheduler,
                                            const std::optional<ClientConnection>& client) {
  const AdmittedCompletion& first = jobs.front();  // all share the deadline
  bool timedOut = false;
  bool clientGone = false;
  auto cancelAll = [&] {
    for (const AdmittedCompletion& c : jobs) scheduler.cancel(c.job);
  };
  std::vector<Job::Progress> progress;
  for (const AdmittedCompletion& c : jobs) {
    Job::Progress p;
    while (!p.done) {
      const auto now = Job::Clock::now();
      if (!timedOut && !clientGone && now >= first.deadline) {
        cancelAll();
        timedOut = true;
      }
      if (!timedOut && !clientGone && client && client->closed()) {
        cancelAll();
        clientGone = true;
      }
      const auto until = timedOut || clientGone
                             ? now + std::chrono::seconds(1)
                             : std::min(first.deadline, now + kClientCheckInterval);
      p = c.job->wait(until);
    }
    progress.push_back(std::move(p));
  }
  if (clientGone) throw ApiError(499, "the client closed the connection", "", "client_closed");
  std::vector<GenerateResult> results;
  for (const Job::Progress& p : progress) {
    if (std::optional<ApiError> failure = jobFailure(first, p)) throw *failure;
    results.push_back(*p.result);
  }
  return results;
}

// A /v1/completions choice: the reply (after the prompt, with echo) and its log probabilities.
CompletionChoice completionChoice(const AdmittedCompletion& c, const GenerateResult& r) {
  CompletionChoice choice{r.text, openAiFinishReason(r.finishReason, false), nullptr};
  int64_t textOffset = 0;
  if (!c.request.echo) {
    choice.logprobs = replyLogprobs(c, r.logprobs, r.text.size(), textOffset);
    return choice;
  }
  choice.text = c.echoedPrompt + r.text;
  if (c.request.generate.promptLogprobs) {
    choice.logprobs =
        echoedPromptLogprobsJson(*c.tokenizer, c.job->prompt().front(), r.promptLogprobs,
                                 c.request.generate.topLogprobs, textOffset);
    appendCompletionLogprobs(choice.logprobs,
                             replyLogprobs(c, r.logprobs, r.text.size(), textOffset));
  }
  return choice;
}

Json finishedResponse(const std::vector<AdmittedCompletion>& jobs, Scheduler& scheduler,
                      const std::optional<ClientConnection>& client) {
  const std::vector<GenerateResult> results = finishedResults(jobs, scheduler, client);
  // Usage counts each prompt once (n replies to it read it once), and every reply's tokens.
  int64_t promptTokens = 0, completionTokens = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].choice % jobs[i].request.choicesPerPrompt == 0)
      promptTokens += jobs[i].promptTokens;
    completionTokens += static_cast<int64_t>(results[i].tokens.size());
  }
  const Json usage = usageJson(promptTokens, completionTokens);
  const AdmittedCompletion& c = jobs.front();
  if (!c.request.chat) {
    std::vector<CompletionChoice> choices;
    for (size_t i = 0; i < jobs.size(); ++i)
      choices.push_back(completionChoice(jobs[i], results[i]));
    return completionJson(c.identity, choices, usage);
  }
  std::vector<ChatChoice> choices;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const GenerateResult& r = results[i];
    int64_t textOffset = 0;
    ChatChoice choice{parsedReply(jobs[i], r.text), "",
                      replyLogprobs(jobs[i], r.logprobs, r.text.size(), textOffset)};
    choice.finishReason = openAiFinishReason(r.finishReason, !choice.reply.toolCalls.empty());
    choices.push_back(std::move(choice));
  }
  return chatCompletionJson(c.identity, choices, usage);
}

}  // namespace

std::string renderChatPrompt(const Engine& engine, CompletionRequest& parsed) {
  parsed.enableThinking =
      thinkBeforeGrammar(engine.tokenizer(), parsed.enableThinking, parsed.generate);
  ChatOptions options;
  options.addGenerationPrompt = true;
  options.enableThinking = parsed.enableThinking;
  try {
    return renderGlmChat(parsed.messages, parsed.tools, options);
  } catch (const Error& e) {
    throw ApiError(400, e.what(), "messages", "invalid_value");
  }
}

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

AdmittedCompletion CompletionEndpoint::admitPrompt(const CompletionRequest& request,
                                                   const PromptInput& prompt) const {
  const Tokenizer* tokenizer = engine_.tokenizer();
  if (!tokenizer) throw ApiError(500, "the model has no tokenizer.json", "", "no_tokenizer");
  AdmittedCompletion c;
  c.request = request;
  const char* field = request.chat ? "messages" : "prompt";
  std::vector<int32_t> ids = prompt.ids.empty() ? tokenizer->encode(prompt.text) : prompt.ids;
  if (ids.empty()) throw ApiError(400, "prompt: encodes to no tokens", field, "invalid_value");
  const int vocab = engine_.info().vocabSize;
  for (const int32_t id : ids)
    if (id >= vocab)
      throw ApiError(400,
                     "prompt: token " + std::to_string(id) +
                         " is not in the model's vocabulary of " + std::to_string(vocab),
                     field, "invalid_value");
  if (request.echo) c.echoedPrompt = prompt.ids.empty() ? prompt.text : tokenizer->decode(ids);
  c.promptTokens = static_cast<int64_t>(ids.size());
  if (c.promptTokens > settings_.maxPromptTokens)
    throw ApiError(400,
                   "the prompt is " + std::to_string(c.promptTokens) +
                       " tokens; this server accepts at most " +
                       std::to_string(settings_.maxPromptTokens),
                   field, "context_length_exceeded");
  c.tokenizer = tokenizer;
  if (!request.generate.ignoreEos) c.endTokens = engine_.info().eosTokenIds;
  c.job = std::make_shared<Job>(std::move(ids), request.generate);
  return c;
}

void CompletionEndpoint::admitAndRespond(const httplib::Request& request,
                                         httplib::Response& response, bool chat) {
  const Json body = parseJsonBody(request.body);
  CompletionRequest parsed = chat ? parseChatCompletionRequest(body, settings_, freshSeed())
                                  : parseCompletionRequest(body, settings_, freshSeed());
  std::vector<PromptInput> prompts = parsed.prompts;
  if (chat) prompts = {{renderChatPrompt(engine_, parsed), {}}};
  const int vocab = engine_.info().vocabSize;
  for (const auto& [id, bias] : parsed.generate.sampling.logitBias)
    if (id >= vocab)
      throw ApiError(400,
                     "logit_bias: token " + std::to_string(id) +
                         " is not in the model's vocabulary of " + std::to_string(vocab),
                     "logit_bias", "invalid_value");
  // A job per reply: n for each prompt of a batch.
  const size_t replies = prompts.size() * static_cast<size_t>(parsed.choicesPerPrompt);
  const Scheduler::Load capacity = scheduler_.load();
  if (replies > static_cast<size_t>(capacity.slotCount + capacity.queueCapacity))
    throw ApiError(400,
                   std::to_string(replies) + " replies (" + std::to_string(prompts.size()) +
                       " prompts, n = " + std::to_string(parsed.choicesPerPrompt) +
                       ") are more than this server holds at once (" +
                       std::to_string(capacity.slotCount) + " slots and a queue of " +
                       std::to_string(capacity.queueCapacity) + ")",
                   prompts.size() > 1 ? "prompt" : "n", "invalid_value");
  std::vector<AdmittedCompletion> jobs;
  for (const PromptInput& prompt : prompts) {
    const AdmittedCompletion checked = admitPrompt(parsed, prompt);
    for (int k = 0; k < parsed.choicesPerPrompt; ++k) {
      AdmittedCompletion reply = checked;
      if (k > 0) {  // n different replies: the same prompt, the next seed
        reply.request.generate.sampling.seed += static_cast<uint64_t>(k);
        reply.job = std::make_shared<Job>(checked.job->prompt(), reply.request.generate);
      }
      reply.choice = static_cast<int>(jobs.size());
      jobs.push_back(std::move(reply));
    }
  }
  const ResponseIdentity identity{(chat ? "chatcmpl-" : "cmpl-") + std::to_string(nextId_++),
                                  static_cast<int64_t>(std::time(nullptr)), settings_.modelId};
  // A stream waits on all its jobs at once: each wakes it when it reports.
  const auto signal = parsed.stream ? std::make_shared<JobSignal>() : nullptr;
  const auto deadline =
      Job::Clock::now() + std::chrono::duration_cast<Job::Clock::duration>(
                              std::chrono::duration<double>(settings_.timeoutSeconds));
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].identity = identity;
    jobs[i].timeoutSeconds = settings_.timeoutSeconds;
    jobs[i].deadline = deadline;
    if (signal) jobs[i].job->setSignal(signal);
    if (scheduler_.submit(jobs[i].job)) continue;
    for (size_t k = 0; k < i; ++k) scheduler_.cancel(jobs[k].job);  // all or nothing
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
  if (!parsed.stream) {
    respondJson(response, 200, finishedResponse(jobs, scheduler_, client));
    return;
  }
  auto stream = std::make_shared<CompletionStream>(std::move(jobs), signal, scheduler_,
                                                   settings_.keepAliveSeconds, std::move(client));
  response.set_header("Cache-Control", "no-cache");
  response.set_chunked_content_provider(
      "text/event-stream",
      [stream](size_t, httplib::DataSink& sink) { return stream->provide(sink); });
}

}  // namespace strata::server
