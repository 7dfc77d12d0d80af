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

CompletionStream::CompletionStream(std::vector<AdmittedCompletion> choices,
                                   std::shared_ptr<JobSignal> signal, Scheduler& scheduler,
                                   double keepAliveSeconds, std::optional<ClientConnection> client)
    : ended_(choices.size(), false),
      signal_(std::move(signal)),
      scheduler_(scheduler),
      keepAlive_(keepAliveSeconds),
      lastWrite_(Job::Clock::now()),
      client_(std::move(client)) {
  for (AdmittedCompletion& c : choices) choices_.emplace_back(std::move(c));
}

CompletionStream::~CompletionStream() { cancelAll(); }

void CompletionStream::cancelAll() {
  for (const ChoiceStream& c : choices_) scheduler_.cancel(c.completion().job);
}

bool CompletionStream::write(httplib::DataSink& sink, std::string_view data) {
  if (!sink.write(data.data(), data.size())) {
    cancelAll();  // the client is gone
    return false;
  }
  lastWrite_ = Job::Clock::now();
  return true;
}

bool CompletionStream::send(httplib::DataSink& sink, const ChoiceStream::Events& events) {
  for (const Json& e : events)
    if (!write(sink, "data: " + dumpJson(e) + "\n\n")) return false;
  return true;
}

bool CompletionStream::allEnded() const {
  return std::all_of(ended_.begin(), ended_.end(), [](bool e) { return e; });
}

bool CompletionStream::sendProgress(httplib::DataSink& sink, bool& reported) {
  reported = false;
  for (size_t i = 0; i < choices_.size(); ++i) {
    if (ended_[i]) continue;
    const Job::Progress p = choices_[i].completion().job->poll();
    const ChoiceStream::Events events = choices_[i].progress(p);  // keeps text-less logprobs
    reported = reported || !events.empty() || p.done;
    if (!send(sink, events)) return false;
    if (!p.done) continue;
    if (const std::optional<ApiError> error = jobFailure(choices_[i].completion(), p)) {
      // The stream is already 200: the error travels as an event, as OpenAI's own streams do.
      cancelAll();
      std::fill(ended_.begin(), ended_.end(), true);
      write(sink, "data: " + dumpJson(error->toJson()) + "\n\n");
      sink.done();
      return true;
    }
    ended_[i] = true;
    completionTokens_ += static_cast<int64_t>(p.result->tokens.size());
    if (!send(sink, choices_[i].end(*p.result))) return false;
    if (allEnded()) return finish(sink);
  }
  return true;
}

bool CompletionStream::finish(httplib::DataSink& sink) {
  const AdmittedCompletion& first = choices_.front().completion();
  if (first.request.includeUsage) {
    int64_t promptTokens = 0;  // each prompt once (its n replies read it once)
    for (const ChoiceStream& c : choices_)
      if (c.completion().choice % first.request.choicesPerPrompt == 0)
        promptTokens += c.completion().promptTokens;
    const char* object = first.request.chat ? "chat.completion.chunk" : "text_completion";
    if (!send(sink,
              {usageChunkJson(first.identity, object, usageJson(promptTokens, completionTokens_))}))
      return false;
  }
  if (!write(sink, "data: [DONE]\n\n")) return false;
  sink.done();
  return true;
}

bool CompletionStream::provide(httplib::DataSink& sink) {
  if (allEnded()) return false;
  if (!opened_) {
    opened_ = true;
    for (ChoiceStream& c : choices_)
      if (!send(sink, c.opening())) return false;
  }
  const Job::Clock::time_point deadline = choices_.front().completion().deadline;
  const auto keepAlive = std::chrono::duration_cast<Job::Clock::duration>(keepAlive_);
  // Past the deadline the jobs are already cancelled: wait for their end, not for the deadline.
  Job::Clock::time_point until = lastWrite_ + keepAlive;
  if (Job::Clock::now() < deadline) until = std::min(until, deadline);
  if (client_) until = std::min(until, Job::Clock::now() + kClientCheckInterval);

  // The version first: a job reporting after it wakes the wait below.
  const uint64_t seen = signal_->version();
  bool reported = false;
  if (!sendProgress(sink, reported)) return false;
  if (!reported) {
    signal_->waitPast(seen, until);
    if (!sendProgress(sink, reported)) return false;
  }
  if (allEnded()) return true;
  if (!reported && client_ && client_->closed()) {
    cancelAll();  // left while queued or prefilling: nothing was written to fail
    return false;
  }
  if (Job::Clock::now() >= deadline) cancelAll();  // they end with a timeout event
  if (!reported && Job::Clock::now() >= lastWrite_ + keepAlive)
    return write(sink, ": keep-alive\n\n");
  return true;
}

}  // namespace strata::server
