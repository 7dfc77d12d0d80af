#pragma once
// Splits a GLM chat reply into OpenAI stream deltas while it is generated: the text inside
// <think>...</think> becomes reasoning_content, the rest content, and <tool_call> blocks are held
// back (the caller sends the parsed tool calls at the end). Whitespace is trimmed as
// parseGlmReply trims it - leading whitespace of each part is dropped, trailing whitespace is
// held until more text follows - so the deltas of a reply without tool calls concatenate to
// exactly what parseGlmReply returns for the whole text.
#include <string>
#include <string_view>

namespace strata::server {

class ReplyStream {
 public:
  // thinkingOpen: the prompt ended inside a think block (generation prompt with thinking on).
  explicit ReplyStream(bool thinkingOpen);

  struct Delta {
    std::string reasoning;
    std::string content;
    bool empty() const { return reasoning.empty() && content.empty(); }
  };
  Delta push(std::string_view text);
  // The end of the reply. toolCallsParsed: whether parseGlmReply found tool calls in it; if
  // not, a held-back "<tool_call>..." that never closed is released as content, as the parser
  // keeps it.
  Delta finish(bool toolCallsParsed);

 private:
  enum class Part { Start, Reasoning, Content, ToolCalls };
  // Emits `text` as the current part, holding back its trailing whitespace.
  void release(std::string_view text, Delta& out);

  Part part_;
  bool partStarted_ = false;  // the current part has emitted something (leading space kept)
  std::string held_;          // trailing whitespace not yet emitted
  std::string buffer_;        // text not yet assigned to a part
};

}  // namespace strata::server
