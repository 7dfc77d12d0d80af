#pragma once
// Batches the forward steps of sessions that generate at the same time (the server's slots).
// Each caller hands its rows over and waits; one of the waiting threads runs everybody's rows
// as one Transformer step - every weight, and every routed expert of the union, read once for
// all - and hands each caller its own logits and hidden states. Rows are bit-identical to
// running alone (Transformer::forward's guarantee), so batching never changes a reply.
//
// A step starts as soon as every member (a session inside generate()) has its rows in, or when
// the first rows have waited a gather window - half the last step's time, at most 20 ms - for
// a member that is busy elsewhere (sampling, drafting, tokenizing). A caller that is not a
// member (Session::append) never waits for anyone.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <vector>

#include "model/transformer.h"
#include "strata/engine.h"

namespace strata::model {

class StepBatcher {
 public:
  explicit StepBatcher(const Transformer& transformer) : transformer_(transformer) {}
  StepBatcher(const StepBatcher&) = delete;
  StepBatcher& operator=(const StepBatcher&) = delete;

  // Held by a session for the length of a generate() call.
  class Membership {
   public:
    explicit Membership(StepBatcher* batcher);
    ~Membership();
    Membership(const Membership&) = delete;
    Membership& operator=(const Membership&) = delete;

   private:
    StepBatcher* batcher_;
  };

  // Runs `tokens` after what `cache` holds, batched with other callers' rows, and returns their
  // final-normed hidden states and logits (all rows', or with lastLogitsOnly just the last
  // row's). Token ids must be valid. An error in the shared step is thrown to every caller in it.
  Session::StepResult run(std::span<const int32_t> tokens, kv::KvCache& cache, bool asDecode,
                          bool lastLogitsOnly);

  BatchingStats stats() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Request {
    std::span<const int32_t> tokens;
    kv::KvCache* cache = nullptr;
    bool asDecode = false;
    bool lastLogitsOnly = false;
    Session::StepResult result;
    std::exception_ptr error;
    bool done = false;
  };

  bool ready(Clock::time_point now) const;
  void execute(const std::vector<Request*>& batch);

  const Transformer& transformer_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Request*> pending_;
  Clock::time_point firstPending_;
  Clock::duration window_ = std::chrono::microseconds(100);
  bool running_ = false;
  int members_ = 0;
  BatchingStats stats_;
};

}  // namespace strata::model
