#pragma once
// One choice of a streamed completion: turns its job's progress into the payloads of
// chat.completion.chunk or text_completion events carrying the choice's index. The transport
// (SSE, keep-alives, failures, usage and [DONE]) is CompletionStream's, which may interleave
// several choices (a batch of prompts, n replies).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admitted_completion.h"
#include "reply_stream.h"

namespace strata::server {

class ChoiceStream {
 public:
  using Events = std::vector<nlohmann::ordered_json>;

  explicit ChoiceStream(AdmittedCompletion completion);

  const AdmittedCompletion& completion() const { return c_; }

  // What opens the choice: chat's role chunk; an echo without log probabilities (a scored echo
  // waits for the prefill's scores).
  Events opening();
  // What its job reported since the last call, short of the end: a scored echo, new text.
  Events progress(const Job::Progress& p);
  // The close of a finished generation: text held back, tool calls, the finish_reason chunk.
  Events end(const GenerateResult& r);

 private:
  nlohmann::ordered_json chatChunk(nlohmann::ordered_json delta,
                                   const std::string& finishReason = "",
                                   const nlohmann::ordered_json& logprobs = nullptr) const;
  nlohmann::ordered_json completionChunk(const std::string& text, const std::string& finishReason,
                                         const nlohmann::ordered_json& logprobs) const;
  nlohmann::ordered_json echo(const std::vector<TokenLogprob>* scored);
  // The log probabilities of the tokens whose text has been sent.
  nlohmann::ordered_json takeLogprobs();

  AdmittedCompletion c_;
  ReplyStream reply_;
  std::string generated_;  // everything so far (chat: parsed for tool calls at the end)
  // Chosen tokens not yet sent: each rides on the first chunk written once its text has come
  // (a stop string's tokens never do); logprobBytes_: the text bytes of those already sent.
  std::vector<TokenLogprob> logprobs_;
  size_t logprobBytes_ = 0;
  int64_t textOffset_ = 0;  // completions: the next token's character offset
};

}  // namespace strata::server
