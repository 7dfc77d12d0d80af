#include "reply_stream.h"

namespace strata::server {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kToolCallOpen = "<tool_call>";
// ASCII whitespace; parseGlmReply strips Python's (Unicode) whitespace, which differs only for
// replies that begin or end in exotic spaces.
constexpr std::string_view kSpace = " \t\n\r\f\v";

// Length of the longest tail of `text` that is a proper prefix of `marker`: it may become the
// marker when more text comes, so it is held back.
size_t markerTail(std::string_view text, std::string_view marker) {
  for (size_t keep = std::min(text.size(), marker.size() - 1); keep > 0; --keep)
    if (text.substr(text.size() - keep) == marker.substr(0, keep)) return keep;
  return 0;
}

}  // namespace

ReplyStream::ReplyStream(bool thinkingOpen) : part_(thinkingOpen ? Part::Reasoning : Part::Start) {}

void ReplyStream::release(std::string_view text, Delta& out) {
  if (!partStarted_) {
    const size_t first = text.find_first_not_of(kSpace);
    if (first == std::string_view::npos) return;
    text.remove_prefix(first);
    partStarted_ = true;
  }
  if (text.empty()) return;
  const size_t last = text.find_last_not_of(kSpace);
  std::string& target = part_ == Part::Reasoning ? out.reasoning : out.content;
  if (last == std::string_view::npos) {  // only whitespace: hold it all
    held_.append(text);
    return;
  }
  target.append(held_).append(text.substr(0, last + 1));
  held_.assign(text.substr(last + 1));
}

ReplyStream::Delta ReplyStream::push(std::string_view text) {
  Delta out;
  buffer_.append(text);
  while (true) {
    switch (part_) {
      case Part::Start: {
        // A reply may open its own think block (after optional whitespace).
        const size_t first = buffer_.find_first_not_of(kSpace);
        if (first == std::string::npos) return out;
        const std::string_view rest = std::string_view(buffer_).substr(first);
        if (rest.size() < kThinkOpen.size() && kThinkOpen.starts_with(rest)) return out;
        if (rest.starts_with(kThinkOpen)) {
          buffer_.erase(0, first + kThinkOpen.size());
          part_ = Part::Reasoning;
        } else {
          part_ = Part::Content;
        }
        break;
      }
      case Part::Reasoning:
      case Part::Content: {
        const std::string_view marker = part_ == Part::Reasoning ? kThinkClose : kToolCallOpen;
        const size_t at = buffer_.find(marker);
        if (at == std::string::npos) {
          const size_t safe = buffer_.size() - markerTail(buffer_, marker);
          release(std::string_view(buffer_).substr(0, safe), out);
          buffer_.erase(0, safe);
          return out;
        }
        release(std::string_view(buffer_).substr(0, at), out);
        if (part_ == Part::Reasoning) {
          held_.clear();  // the reasoning ends: its trailing whitespace is trimmed
          buffer_.erase(0, at + marker.size());
          part_ = Part::Content;
          partStarted_ = false;
        } else {
          // Kept whole (with the whitespace before it) in case it is not a tool call after all.
          buffer_.erase(0, at);
          part_ = Part::ToolCalls;
        }
        break;
      }
      case Part::ToolCalls:
        return out;
    }
  }
}

ReplyStream::Delta ReplyStream::finish(bool toolCallsParsed) {
  Delta out;
  if (part_ == Part::Start) part_ = Part::Content;
  if (part_ == Part::ToolCalls) {
    if (toolCallsParsed) return out;
    part_ = Part::Content;
  }
  release(buffer_, out);
  buffer_.clear();
  held_.clear();
  return out;
}

}  // namespace strata::server
