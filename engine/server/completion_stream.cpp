#include "completion_stream.h"

#include <httplib.h>

#include <algorithm>

#include "api_error.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

std::string dumpJson(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

CompletionStream::CompletionStream(AdmittedCompletion completion, Scheduler& scheduler,
                                   double keepAliveSeconds, std::optional<ClientConnection> client)
    : c_(std::move(completion)),
      scheduler_(scheduler),
      keepAlive_(keepAliveSeconds),
      reply_(c_.request.enableThinking),
      lastWrite_(Job::Clock::now()),
      client_(std::move(client)) {}

CompletionStream::~CompletionStream() { scheduler_.cancel(c_.job); }

bool CompletionStream::write(httplib::DataSink& sink, std::string_view data) {
  if (!sink.write(data.data(), data.size())) {
    scheduler_.cancel(c_.job);  // the client is gone
    return false;
  }
  lastWrite_ = Job::Clock::now();
  return true;
}

bool CompletionStream::event(httplib::DataSink& sink, const Json& payload) {
  return write(sink, "data: " + dumpJson(payload) + "\n\n");
}

nlohmann::ordered_json CompletionStream::takeLogprobs() {
  TakenTokens taken;
  Json j = replyLogprobs(c_, logprobs_, generated_.size() - logprobBytes_, textOffset_, &taken);
  logprobBytes_ += taken.bytes;
  logprobs_.erase(logprobs_.begin(), logprobs_.begin() + static_cast<std::ptrdiff_t>(taken.tokens));
  return j;
}

bool CompletionStream::text(httplib::DataSink& sink, const std::string& generated) {
  generated_ += generated;
  const bool usageField = c_.request.includeUsage;
  if (!c_.request.chat)
    return event(sink, completionChunkJson(c_.identity, generated, "", usageField, takeLogprobs()));
  const ReplyStream::Delta delta = reply_.push(generated);
  if (!delta.reasoning.empty() &&
      !event(sink, chatChunkJson(c_.identity, {{"reasoning_content", delta.reasoning}}, "",
                                 usageField, takeLogprobs())))
    return false;
  if (!delta.content.empty() &&
      !event(sink, chatChunkJson(c_.identity, {{"content", delta.content}}, "", usageField,
                                 takeLogprobs())))
    return false;
  return true;
}

bool CompletionStream::echoPrompt(httplib::DataSink& sink,
                                  const std::vector<TokenLogprob>* scored) {
  const Json logprobs =
      scored ? echoedPromptLogprobsJson(*c_.tokenizer, c_.job->prompt().front(), *scored,
                                        c_.request.generate.topLogprobs, textOffset_)
             : Json(nullptr);
  return event(sink, completionChunkJson(c_.identity, c_.echoedPrompt, "", c_.request.includeUsage,
                                         logprobs));
}

bool CompletionStream::end(httplib::DataSink& sink, const Job::Progress& p) {
  const bool usageField = c_.request.includeUsage;
  std::optional<ApiError> failure;
  if (!p.error.empty())
    failure.emplace(500, "generation failed: " + p.error, "", "generation_failed");
  else if (p.result->finishReason == "cancelled" && Job::Clock::now() >= c_.deadline)
    failure.emplace(504,
                    "the request took longer than the server's timeout of " +
                        std::to_string(c_.timeoutSeconds) + " s",
                    "", "timeout");
  else if (p.result->finishReason == "cancelled")
    failure.emplace(503, "the server is shutting down", "", "shutting_down");
  if (failure) {
    // The stream is already 200: the error travels as an event, as OpenAI's own streams do.
    event(sink, failure->toJson());
    sink.done();
    return true;
  }
  const GenerateResult& r = *p.result;
  std::string finishReason;
  if (c_.request.chat) {
    const AssistantReply parsed = parsedReply(c_, generated_);
    const ReplyStream::Delta rest = reply_.finish(!parsed.toolCalls.empty());
    if (!rest.reasoning.empty() &&
        !event(sink, chatChunkJson(c_.identity, {{"reasoning_content", rest.reasoning}}, "",
                                   usageField, takeLogprobs())))
      return false;
    if (!rest.content.empty() &&
        !event(sink, chatChunkJson(c_.identity, {{"content", rest.content}}, "", usageField,
                                   takeLogprobs())))
      return false;
    if (!parsed.toolCalls.empty() &&
        !event(sink, chatChunkJson(c_.identity, {{"tool_calls", toolCallDeltas(parsed)}}, "",
                                   usageField, takeLogprobs())))
      return false;
    finishReason = openAiFinishReason(r.finishReason, !parsed.toolCalls.empty());
    // Tokens whose text never came out (a stop string's) are not part of the reply.
    logprobs_.clear();
    if (!event(sink, chatChunkJson(c_.identity, Json::object(), finishReason, usageField)))
      return false;
  } else {
    finishReason = openAiFinishReason(r.finishReason, false);
    // With echo an end token is listed too (it has no text to ride on): in the last chunk.
    const Json last = c_.request.echo ? takeLogprobs() : Json(nullptr);
    if (!event(sink, completionChunkJson(c_.identity, "", finishReason, usageField, last)))
      return false;
  }
  if (c_.request.includeUsage) {
    const Json usage = usageJson(c_.promptTokens, static_cast<int64_t>(r.tokens.size()));
    const char* object = c_.request.chat ? "chat.completion.chunk" : "text_completion";
    if (!event(sink, usageChunkJson(c_.identity, object, usage))) return false;
  }
  if (!write(sink, "data: [DONE]\n\n")) return false;
  sink.done();
  return true;
}

bool CompletionStream::provide(httplib::DataSink& sink) {
  if (!opened_) {
    opened_ = true;
    // The first chunk names the role (chat), so clients see the stream start at once.
    if (c_.request.chat &&
        !event(sink, chatChunkJson(c_.identity, {{"role", "assistant"}, {"content", ""}}, "",
                                   c_.request.includeUsage)))
      return false;
    // An unscored echo goes out at once; a scored one once the prefill has scored it.
    if (c_.request.echo && !c_.request.generate.promptLogprobs && !echoPrompt(sink, nullptr))
      return false;
  }
  const auto keepAlive = std::chrono::duration_cast<Job::Clock::duration>(keepAlive_);
  // Past the deadline the job is already cancelled: wait for its end, not for the deadline.
  Job::Clock::time_point until = lastWrite_ + keepAlive;
  if (Job::Clock::now() < c_.deadline) until = std::min(until, c_.deadline);
  if (client_) until = std::min(until, Job::Clock::now() + kClientCheckInterval);
  const Job::Progress p = c_.job->wait(until);
  if (p.text.empty() && !p.done && client_ && client_->closed()) {
    scheduler_.cancel(c_.job);  // left while queued or prefilling: nothing was written to fail
    return false;
  }
  if (p.promptLogprobs && !echoPrompt(sink, &*p.promptLogprobs)) return false;
  logprobs_.insert(logprobs_.end(), p.logprobs.begin(), p.logprobs.end());
  if (!p.text.empty() && !text(sink, p.text)) return false;
  if (p.done) return end(sink, p);
  if (Job::Clock::now() >= c_.deadline) scheduler_.cancel(c_.job);  // ends with a timeout event
  if (p.text.empty() && Job::Clock::now() >= lastWrite_ + keepAlive)
    return write(sink, ": keep-alive\n\n");
  return true;
}

}  // namespace strata::server
