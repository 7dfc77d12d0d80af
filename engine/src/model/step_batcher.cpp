#include "model/step_batcher.h"

#include <algorithm>

namespace strata::model {
namespace {
constexpr auto kMaxWindow = std::chrono::milliseconds(20);
constexpr auto kMinWindow = std::chrono::microseconds(50);
}  // namespace

StepBatcher::Membership::Membership(StepBatcher* batcher) : batcher_(batcher) {
  if (!batcher_) return;
  std::lock_guard lock(batcher_->mutex_);
  ++batcher_->members_;
}

StepBatcher::Membership::~Membership() {
  if (!batcher_) return;
  {
    std::lock_guard lock(batcher_->mutex_);
    --batcher_->members_;
  }
  // Waiting rows may now be everybody's.
  batcher_->changed_.notify_all();
}

BatchingStats StepBatcher::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

bool StepBatcher::ready(Clock::time_point now) const {
  return !pending_.empty() &&
         (static_cast<int>(pending_.size()) >= members_ || now >= firstPending_ + window_);
}

Session::StepResult StepBatcher::run(std::span<const int32_t> tokens, kv::KvCache& cache,
                                     bool asDecode, bool lastLogitsOnly) {
  if (tokens.empty()) return {};
  Request request;
  request.tokens = tokens;
  request.cache = &cache;
  request.asDecode = asDecode;
  request.lastLogitsOnly = lastLogitsOnly;
  std::unique_lock lock(mutex_);
  if (pending_.empty()) firstPending_ = Clock::now();
  pending_.push_back(&request);
  changed_.notify_all();
  while (!request.done) {
    const Clock::time_point now = Clock::now();
    if (!running_ && ready(now)) {
      // This thread runs the step for everybody waiting (itself included).
      std::vector<Request*> batch;
      batch.swap(pending_);
      running_ = true;
      lock.unlock();
      const Clock::time_point start = Clock::now();
      execute(batch);
      const Clock::duration took = Clock::now() - start;
      lock.lock();
      running_ = false;
      window_ = std::clamp<Clock::duration>(took / 2, kMinWindow, kMaxWindow);
      ++stats_.steps;
      stats_.sequences += static_cast<int64_t>(batch.size());
      for (Request* r : batch) {
        stats_.rows += static_cast<int64_t>(r->tokens.size());
        r->done = true;
      }
      // Rows that arrived during the step start their wait now.
      if (!pending_.empty()) firstPending_ = Clock::now();
      changed_.notify_all();
    } else if (!running_ && !pending_.empty()) {
      changed_.wait_until(lock, firstPending_ + window_);
    } else {
      changed_.wait(lock);
    }
  }
  if (request.error) std::rethrow_exception(request.error);
  return std::move(request.result);
}

void StepBatcher::execute(const std::vector<Request*>& batch) {
  try {
    std::vector<SequenceInput> inputs;
    for (const Request* r : batch) inputs.push_back({r->tokens, r->cache, r->asDecode});
    std::vector<float> hidden = transformer_.forward(inputs);
    const int64_t width = transformer_.config().hiddenSize;
    const int64_t vocab = transformer_.config().vocabSize;

    // Logits for the rows someone wants, in one lm_head pass.
    std::vector<int64_t> logitRows;
    int64_t row = 0;
    for (const Request* r : batch) {
      const auto n = static_cast<int64_t>(r->tokens.size());
      for (int64_t i = r->lastLogitsOnly ? n - 1 : 0; i < n; ++i) logitRows.push_back(row + i);
      row += n;
    }
    // Decode steps want every row: gather only when a prefill chunk wants its last row alone.
    std::vector<float> wanted;
    if (static_cast<int64_t>(logitRows.size()) < row) {
      wanted.resize(static_cast<size_t>(logitRows.size() * width));
      for (size_t i = 0; i < logitRows.size(); ++i)
        std::copy_n(hidden.data() + logitRows[i] * width, width, wanted.data() + i * width);
    }
    std::vector<float> logits = transformer_.logits(wanted.empty() ? hidden.data() : wanted.data(),
                                                    static_cast<int64_t>(logitRows.size()));
    if (batch.size() == 1) {  // alone: hand the buffers over (a prefill step's logits are large)
      batch.front()->result.hidden = std::move(hidden);
      batch.front()->result.logits = std::move(logits);
      return;
    }
    int64_t hiddenRow = 0;
    int64_t logitRow = 0;
    for (Request* r : batch) {
      const auto n = static_cast<int64_t>(r->tokens.size());
      const int64_t kept = r->lastLogitsOnly ? 1 : n;
      r->result.hidden.assign(hidden.begin() + hiddenRow * width, hidden.begin() + (hiddenRow + n) * width);
      r->result.logits.assign(logits.begin() + logitRow * vocab, logits.begin() + (logitRow + kept) * vocab);
      hiddenRow += n;
      logitRow += kept;
    }
  } catch (...) {
    for (Request* r : batch) r->error = std::current_exception();
  }
}

}  // namespace strata::model
