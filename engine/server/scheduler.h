#pragma once
// Runs admitted requests on a fixed set of slots. Each slot is one worker thread with its own
// Session, reused from request to request, so a request that continues the slot's previous
// conversation reuses its KV cache (Session::generate keeps the longest common prefix).
//
// Where the engine batches (EngineSettings::batchSessions; by default when experts stream from
// disk) the slots' decode steps are shared: sessions generating at the same time share each
// forward pass, so the weights - and each routed expert of the union - are read once per step
// for all slots. Long prompts are prefilled in
// chunks (ServerSettings::prefillChunkTokens) whose steps the other slots' rows join, so
// running streams keep flowing. Admission is bounded: at most `slots` running plus `queue`
// waiting; beyond that submit() refuses and the server answers 429. HTTP threads only submit,
// wait and cancel.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "job.h"
#include "strata/engine.h"

namespace strata::server {

class Scheduler {
 public:
  Scheduler(Engine& engine, int slotCount, int queueCapacity);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues the job for the next free slot; false when the queue is full or stopping.
  bool submit(std::shared_ptr<Job> job);
  // Cancels the job: a queued one leaves the queue at once (and reports "cancelled"), a
  // running one stops after its current token.
  void cancel(const std::shared_ptr<Job>& job);
  // Cancels everything and joins the workers. Idempotent.
  void stop();

  struct Load {
    int slotCount = 0;
    int active = 0;  // generating (or prefilling)
    int queued = 0;
    int queueCapacity = 0;
  };
  Load load() const;

 private:
  void work();
  void release(const std::shared_ptr<Job>& job);  // takes it off the running list
  void stopWorkers();

  Engine& engine_;
  const int slots_;
  const int queueCapacity_;
  mutable std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<std::shared_ptr<Job>> running_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
  std::once_flag stopped_;
};

}  // namespace strata::server
