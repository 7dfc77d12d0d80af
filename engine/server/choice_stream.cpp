#include "choice_stream.h"

namespace strata::server {

using Json = nlohmann::ordered_json;

ChoiceStream::ChoiceStream(AdmittedCompletion completion)
    : c_(std::move(completion)), reply_(c_.request.enableThinking) {}

Json ChoiceStream::chatChunk(Json delta, const std::string& finishReason,
                             const Json& logprobs) const {
  return chatChunkJson(c_.identity, c_.choice, std::move(delta), finishReason,
                       c_.request.includeUsage, logprobs);
}

Json ChoiceStream::completionChunk(const std::string& text, const std::string& finishReason,
                                   const Json& logprobs) const {
  return completionChunkJson(c_.identity, c_.choice, text, finishReason, c_.request.includeUsage,
                             logprobs);
}

Json ChoiceStream::takeLogprobs() {
  TakenTokens taken;
  Json j = replyLogprobs(c_, logprobs_, generated_.size() - logprobBytes_, textOffset_, &taken);
  logprobBytes_ += taken.bytes;
  logprobs_.erase(logprobs_.begin(), logprobs_.begin() + static_cast<std::ptrdiff_t>(taken.tokens));
  return j;
}

Json ChoiceStream::echo(const std::vector<TokenLogprob>* scored) {
  const Json logprobs =
      scored ? echoedPromptLogprobsJson(*c_.tokenizer, c_.job->prompt().front(), *scored,
                                        c_.request.generate.topLogprobs, textOffset_)
             : Json(nullptr);
  return completionChunk(c_.echoedPrompt, "", logprobs);
}

ChoiceStream::Events ChoiceStream::opening() {
  Events out;
  // The role first, so chat clients see the choice start at once.
  if (c_.request.chat) out.push_back(chatChunk({{"role", "assistant"}, {"content", ""}}));
  if (c_.request.echo && !c_.request.generate.promptLogprobs) out.push_back(echo(nullptr));
  return out;
}

ChoiceStream::Events ChoiceStream::progress(const Job::Progress& p) {
  Events out;
  if (p.promptLogprobs) out.push_back(echo(&*p.promptLogprobs));
  logprobs_.insert(logprobs_.end(), p.logprobs.begin(), p.logprobs.end());
  if (p.text.empty()) return out;
  generated_ += p.text;
  if (!c_.request.chat) {
    out.push_back(completionChunk(p.text, "", takeLogprobs()));
    return out;
  }
  const ReplyStream::Delta delta = reply_.push(p.text);
  if (!delta.reasoning.empty())
    out.push_back(chatChunk({{"reasoning_content", delta.reasoning}}, "", takeLogprobs()));
  if (!delta.content.empty())
    out.push_back(chatChunk({{"content", delta.content}}, "", takeLogprobs()));
  return out;
}

ChoiceStream::Events ChoiceStream::end(const GenerateResult& r) {
  Events out;
  if (!c_.request.chat) {
    // With echo an end token is listed too (it has no text to ride on): in the last chunk.
    const Json last = c_.request.echo ? takeLogprobs() : Json(nullptr);
    out.push_back(completionChunk("", openAiFinishReason(r.finishReason, false), last));
    return out;
  }
  const AssistantReply parsed = parsedReply(c_, generated_);
  const ReplyStream::Delta rest = reply_.finish(!parsed.toolCalls.empty());
  if (!rest.reasoning.empty())
    out.push_back(chatChunk({{"reasoning_content", rest.reasoning}}, "", takeLogprobs()));
  if (!rest.content.empty())
    out.push_back(chatChunk({{"content", rest.content}}, "", takeLogprobs()));
  if (!parsed.toolCalls.empty())
    out.push_back(chatChunk({{"tool_calls", toolCallDeltas(parsed)}}, "", takeLogprobs()));
  // Tokens whose text never came out (a stop string's) are not part of the reply.
  logprobs_.clear();
  out.push_back(
      chatChunk(Json::object(), openAiFinishReason(r.finishReason, !parsed.toolCalls.empty())));
  return out;
}

}  // namespace strata::server
