#pragma once
// The server-sent-events response of a streaming completion, written by the HTTP handler
// thread as its jobs' text arrives: the events of each choice (ChoiceStream; a batch of prompts
// or n replies interleave theirs, each chunk naming its choice's index), the usage chunk when
// asked for once every choice has ended, then "data: [DONE]". While there is nothing to send
// (queued, prefilling) a ": keep-alive" comment goes out every interval. A failed write, or the
// connection seen closed while waiting, means the client is gone: the jobs are cancelled, which
// frees their slots after the token or prefill chunk being computed. A choice that fails ends
// the whole response with an error event (the others are cancelled).
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "choice_stream.h"
#include "client_connection.h"
#include "scheduler.h"

namespace httplib {
class DataSink;
}

namespace strata::server {

class CompletionStream {
 public:
  // `choices` in index order, their jobs reporting to `signal`. `client`: the request's
  // connection, watched while nothing is written (none: only writes notice a client that left).
  CompletionStream(std::vector<AdmittedCompletion> choices, std::shared_ptr<JobSignal> signal,
                   Scheduler& scheduler, double keepAliveSeconds,
                   std::optional<ClientConnection> client);
  ~CompletionStream();  // cancels the jobs still running (response aborted)
  CompletionStream(const CompletionStream&) = delete;
  CompletionStream& operator=(const CompletionStream&) = delete;

  // One call of httplib's chunked content provider; false aborts the response.
  bool provide(httplib::DataSink& sink);

 private:
  void cancelAll();
  bool write(httplib::DataSink& sink, std::string_view data);
  bool send(httplib::DataSink& sink, const ChoiceStream::Events& events);
  // Sends what every choice's job reported; `reported`: whether any had something.
  bool sendProgress(httplib::DataSink& sink, bool& reported);
  bool allEnded() const;
  bool finish(httplib::DataSink& sink);

  std::vector<ChoiceStream> choices_;
  std::vector<bool> ended_;
  std::shared_ptr<JobSignal> signal_;
  Scheduler& scheduler_;
  const std::chrono::duration<double> keepAlive_;
  bool opened_ = false;
  int64_t completionTokens_ = 0;
  Job::Clock::time_point lastWrite_;
  std::optional<ClientConnection> client_;
};

}  // namespace strata::server
