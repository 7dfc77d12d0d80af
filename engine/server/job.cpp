#include "job.h"

namespace strata::server {

uint64_t JobSignal::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

void JobSignal::notify() {
  std::lock_guard lock(mutex_);
  ++version_;
  changed_.notify_all();
}

void JobSignal::waitPast(uint64_t seen, std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, until, [&] { return version_ != seen; });
}

void Job::changed() {
  changed_.notify_all();
  if (signal_) signal_->notify();
}

Job::Job(std::vector<int32_t> prompt, GenerateOptions options)
    : prompt_(std::move(prompt)), options_(std::move(options)) {
  options_.cancel = &cancelled_;
  if (options_.topLogprobs >= 0)
    options_.onLogprob = [this](const TokenLogprob& logprob) { appendLogprob(logprob); };
  if (options_.promptLogprobs)
    options_.onPromptLogprobs = [this](std::span<const TokenLogprob> l) { setPromptLogprobs(l); };
}

void Job::setPromptLogprobs(std::span<const TokenLogprob> logprobs) {
  std::lock_guard lock(mutex_);
  pendingPromptLogprobs_.emplace(logprobs.begin(), logprobs.end());
  changed();
}

void Job::start() {
  std::lock_guard lock(mutex_);
  started_ = true;
  changed();
}

void Job::appendText(std::string_view text) {
  std::lock_guard lock(mutex_);
  pending_.append(text);
  changed();
}

void Job::appendLogprob(const TokenLogprob& logprob) {
  std::lock_guard lock(mutex_);
  pendingLogprobs_.push_back(logprob);  // its text follows at once: that wakes the handler
}

void Job::finish(GenerateResult result) {
  std::lock_guard lock(mutex_);
  result_ = std::move(result);
  done_ = true;
  changed();
}

void Job::fail(std::string message) {
  std::lock_guard lock(mutex_);
  error_ = std::move(message);
  done_ = true;
  changed();
}

Job::Progress Job::wait(Clock::time_point until) {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, until,
                      [&] { return done_ || !pending_.empty() || pendingPromptLogprobs_; });
  Progress p;
  p.started = started_;
  p.done = done_;
  p.text.swap(pending_);
  p.logprobs.swap(pendingLogprobs_);
  p.promptLogprobs.swap(pendingPromptLogprobs_);
  if (done_) {
    p.result = result_;
    p.error = error_;
  }
  return p;
}

}  // namespace strata::server
