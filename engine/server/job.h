#pragma once
// One admitted request, shared by the HTTP handler thread that waits on it and the scheduler's
// worker thread that generates it. The worker only appends text and reports the end; the
// handler turns that into HTTP (JSON or SSE), so no socket is ever touched by a worker.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/engine.h"

namespace strata::server {

// Wakes a handler thread that waits on several jobs at once (a streamed batch of prompts, or
// n replies): every job reporting to it bumps its version.
class JobSignal {
 public:
  uint64_t version() const;
  void notify();
  // Returns once a notify() came after `seen` was read, or at `until`.
  void waitPast(uint64_t seen, std::chrono::steady_clock::time_point until);

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t version_ = 0;
};

class Job {
 public:
  using Clock = std::chrono::steady_clock;

  Job(std::vector<int32_t> prompt, GenerateOptions options);
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  const std::vector<int32_t>& prompt() const { return prompt_; }
  // options().cancel points at this job's own flag.
  const GenerateOptions& options() const { return options_; }

  // Also wake `signal` on every change. Before the job is submitted.
  void setSignal(std::shared_ptr<JobSignal> signal) { signal_ = std::move(signal); }

  // Any thread: stop after the current token (or before starting).
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

  // Worker side.
  void start();
  void appendText(std::string_view text);
  void appendLogprob(const TokenLogprob& logprob);  // options().onLogprob calls it
  void setPromptLogprobs(std::span<const TokenLogprob> logprobs);  // options().onPromptLogprobs
  void finish(GenerateResult result);
  void fail(std::string message);

  // Handler side: what happened since the last call.
  struct Progress {
    bool started = false;  // a worker has taken the job (prefill running or done)
    bool done = false;     // result or error is set
    std::string text;      // reply text new since the last call
    std::vector<TokenLogprob> logprobs;  // tokens chosen since the last call (with topLogprobs)
    // The prompt's (GenerateOptions::promptLogprobs), in the first progress after the prefill.
    std::optional<std::vector<TokenLogprob>> promptLogprobs;
    std::optional<GenerateResult> result;
    std::string error;  // the engine's message when generation failed
  };
  // Waits until there is new text, the job ends or `until` passes.
  Progress wait(Clock::time_point until);
  Progress poll() { return wait(Clock::time_point::min()); }

 private:
  void changed();  // with mutex_ held

  std::shared_ptr<JobSignal> signal_;
  std::vector<int32_t> prompt_;
  GenerateOptions options_;
  std::atomic<bool> cancelled_{false};

  std::mutex mutex_;
  std::condition_variable changed_;
  bool started_ = false;
  bool done_ = false;
  std::string pending_;
  std::vector<TokenLogprob> pendingLogprobs_;
  std::optional<std::vector<TokenLogprob>> pendingPromptLogprobs_;
  std::optional<GenerateResult> result_;
  std::string error_;
};

}  // namespace strata::server
