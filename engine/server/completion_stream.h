#pragma once
// The server-sent-events response of a streaming completion, written by the HTTP handler
// thread as the job's text arrives: chat.completion.chunk (or text_completion) events, a final
// chunk with finish_reason, the usage chunk when asked for, then "data: [DONE]". While there is
// nothing to send (queued, prefilling) a ": keep-alive" comment goes out every interval. A
// failed write, or the connection seen closed while waiting, means the client is gone: the job
// is cancelled, which frees its slot after the token or prefill chunk being computed.
#include <optional>
#include <string_view>

#include "admitted_completion.h"
#include "client_connection.h"
#include "reply_stream.h"
#include "scheduler.h"

namespace httplib {
class DataSink;
}

namespace strata::server {

class CompletionStream {
 public:
  // `client`: the request's connection, watched while nothing is written (none: only writes
  // notice a client that left).
  CompletionStream(AdmittedCompletion completion, Scheduler& scheduler, double keepAliveSeconds,
                   std::optional<ClientConnection> client);
  ~CompletionStream();  // cancels the job if it is still running (response aborted)
  CompletionStream(const CompletionStream&) = delete;
  CompletionStream& operator=(const CompletionStream&) = delete;

  // One call of httplib's chunked content provider; false aborts the response.
  bool provide(httplib::DataSink& sink);

 private:
  bool write(httplib::DataSink& sink, std::string_view data);
  bool event(httplib::DataSink& sink, const nlohmann::ordered_json& payload);
  bool text(httplib::DataSink& sink, const std::string& generated);
  // echo: the prompt's text (and, when scored, its log probabilities) ahead of the reply.
  bool echoPrompt(httplib::DataSink& sink, const std::vector<TokenLogprob>* scored);
  bool end(httplib::DataSink& sink, const Job::Progress& progress);

  AdmittedCompletion c_;
  Scheduler& scheduler_;
  const std::chrono::duration<double> keepAlive_;
  ReplyStream reply_;
  bool opened_ = false;
  std::string generated_;  // everything so far (chat: parsed for tool calls at the end)
  // Chosen tokens not yet sent: each rides on the first chunk written once its text has come
  // (a stop string's tokens never do); logprobBytes_: the text bytes of those already sent.
  std::vector<TokenLogprob> logprobs_;
  size_t logprobBytes_ = 0;
  int64_t textOffset_ = 0;  // completions: the next token's character offset
  nlohmann::ordered_json takeLogprobs();
  Job::Clock::time_point lastWrite_;
  std::optional<ClientConnection> client_;
};

}  // namespace strata::server
