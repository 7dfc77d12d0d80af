#include "chat/think_splitter.h"

namespace strata::app {
namespace {

const QString kOpen = QStringLiteral("<think>");
const QString kClose = QStringLiteral("</think>");

// How much of `text` is certainly not the start of `marker` (a held-back tail may be).
qsizetype safeLength(const QString& text, const QString& marker) {
  for (qsizetype keep = std::min(text.size(), marker.size() - 1); keep > 0; --keep)
    if (QStringView(text).right(keep) == QStringView(marker).left(keep)) return text.size() - keep;
  return text.size();
}

}  // namespace

ThinkSplitter::Parts ThinkSplitter::route(QString text, bool thinking) {
  Parts parts;
  if (thinking) {
    parts.thinking = std::move(text);
  } else {
    if (!answerStarted_) {
      qsizetype start = 0;
      while (start < text.size() && text[start].isSpace()) ++start;
      text.remove(0, start);
      answerStarted_ = !text.isEmpty();
    }
    parts.answer = std::move(text);
  }
  return parts;
}

ThinkSplitter::Parts ThinkSplitter::push(const QString& text) {
  pending_ += text;
  Parts out;
  while (!pending_.isEmpty()) {
    // A reply may open its own think block before any answer text.
    if (!thinking_ && !answerStarted_) {
      const QString trimmed = pending_.trimmed();
      if (trimmed.startsWith(kOpen)) {
        pending_ = pending_.mid(pending_.indexOf(kOpen) + kOpen.size());
        thinking_ = true;
        continue;
      }
      if (kOpen.startsWith(trimmed)) return out;  // could still become "<think>"
    }
    if (!thinking_) {
      out.answer += route(std::exchange(pending_, {}), false).answer;
      return out;
    }
    const qsizetype end = pending_.indexOf(kClose);
    if (end < 0) {
      const qsizetype safe = safeLength(pending_, kClose);
      out.thinking += pending_.left(safe);
      pending_.remove(0, safe);
      return out;
    }
    out.thinking += pending_.left(end);
    pending_.remove(0, end + kClose.size());
    thinking_ = false;
  }
  return out;
}

ThinkSplitter::Parts ThinkSplitter::finish() {
  Parts out = route(std::exchange(pending_, {}), thinking_);
  return out;
}

}  // namespace strata::app
