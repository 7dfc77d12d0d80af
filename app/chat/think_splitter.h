#pragma once
// Splits a streamed GLM reply into thinking (before "</think>") and the answer as the text
// arrives. A tail that could be the start of a marker is held back until it is known, so no
// "</thi" ever flashes on screen.
#include <QString>

namespace strata::app {

class ThinkSplitter {
 public:
  // `thinkingOpen`: the prompt ended inside a think block (thinking enabled).
  explicit ThinkSplitter(bool thinkingOpen) : thinking_(thinkingOpen) {}

  struct Parts {
    QString thinking;
    QString answer;
  };
  Parts push(const QString& text);
  Parts finish();  // releases what was held back
  bool inThinking() const { return thinking_; }

 private:
  bool thinking_;
  bool answerStarted_ = false;  // leading blank lines of the answer are dropped
  QString pending_;
  Parts route(QString text, bool thinking);
};

}  // namespace strata::app
