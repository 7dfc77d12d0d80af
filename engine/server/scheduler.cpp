#include "scheduler.h"

#include <algorithm>

namespace strata::server {

Scheduler::Scheduler(Engine& engine, int slotCount, int queueCapacity)
    : engine_(engine), slots_(slotCount), queueCapacity_(queueCapacity) {
  if (slotCount < 1)
    throw Error("server: slots must be at least 1, not " + std::to_string(slotCount));
  if (queueCapacity < 0)
    throw Error("server: the queue length must be 0 or more, not " + std::to_string(queueCapacity));
  for (int i = 0; i < slotCount; ++i) workers_.emplace_back([this] { work(); });
}

Scheduler::~Scheduler() { stop(); }

bool Scheduler::submit(std::shared_ptr<Job> job) {
  {
    std::lock_guard lock(mutex_);
    // Waiting room = queue capacity plus the slots not yet busy: a free slot takes the job at once.
    const int capacity = queueCapacity_ + slots_ - static_cast<int>(running_.size());
    if (stopping_ || static_cast<int>(queue_.size()) >= capacity) return false;
    queue_.push_back(std::move(job));
  }
  queued_.notify_one();
  return true;
}

void Scheduler::cancel(const std::shared_ptr<Job>& job) {
  job->cancel();
  bool wasQueued = false;
  {
    std::lock_guard lock(mutex_);
    const auto it = std::find(queue_.begin(), queue_.end(), job);
    if (it != queue_.end()) {
      queue_.erase(it);
      wasQueued = true;
    }
  }
  if (wasQueued) {
    GenerateResult cancelled;
    cancelled.finishReason = "cancelled";
    job->finish(std::move(cancelled));
  }
}

void Scheduler::stop() {
  std::call_once(stopped_, [this] { stopWorkers(); });
}

void Scheduler::stopWorkers() {
  std::deque<std::shared_ptr<Job>> abandoned;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    abandoned.swap(queue_);
    for (const auto& job : running_) job->cancel();
  }
  queued_.notify_all();
  for (const auto& job : abandoned) {
    job->cancel();
    job->fail("the server is shutting down");
  }
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

Scheduler::Load Scheduler::load() const {
  std::lock_guard lock(mutex_);
  return {slots_, static_cast<int>(running_.size()), static_cast<int>(queue_.size()),
          queueCapacity_};
}

// The slot is free before the job's client hears the end, so /health never counts a request
// whose reply has been delivered.
void Scheduler::release(const std::shared_ptr<Job>& job) {
  std::lock_guard lock(mutex_);
  const auto it = std::find(running_.begin(), running_.end(), job);
  if (it != running_.end()) running_.erase(it);
}

void Scheduler::work() {
  std::unique_ptr<Session> session;
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      running_.push_back(job);
    }
    job->start();
    try {
      if (job->cancelled()) {  // cancelled between leaving the queue and here
        GenerateResult skipped;
        skipped.finishReason = "cancelled";
        release(job);
        job->finish(std::move(skipped));
        continue;
      }
      if (!session) session = engine_.newSession();
      GenerateResult result = session->generate(
          job->prompt(), job->options(), [&](std::string_view text) { job->appendText(text); });
      release(job);
      job->finish(std::move(result));
    } catch (const std::exception& e) {
      // A failure part-way may leave the session's cache out of step with its tokens.
      session.reset();
      release(job);
      job->fail(e.what());
    }
  }
}

}  // namespace strata::server
