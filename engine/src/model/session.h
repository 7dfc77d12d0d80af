#pragma once
// A conversation's state over the shared model: its KV caches and the token ids they hold.
#include <atomic>
#include <vector>

#include "model/transformer.h"
#include "strata/engine.h"

namespace strata::model {

class SessionImpl final : public Session {
 public:
  // `tokenizer` may be null (no text out, no stop strings). All three must outlive the
  // session; `threads` is the engine's (live-tunable) setting, read at every call.
  // `maxTokens` > 0: the KV cache the memory plan reserved; appending past it is an error.
  SessionImpl(const Transformer& transformer, const Tokenizer* tokenizer,
              const std::atomic<int>& threads, int64_t maxTokens = 0);

  StepResult append(std::span<const int32_t> tokens) override;
  std::vector<float> appendMtp(std::span<const float> hidden,
                               std::span<const int32_t> nextTokens) override;
  GenerateResult generate(std::span<const int32_t> context, const GenerateOptions& options,
                          const std::function<void(std::string_view)>& onText,
                          const std::function<void(int32_t)>& onToken) override;

  const std::vector<int32_t>& tokens() const override { return tokens_; }
  int64_t length() const override { return cache_.length(); }
  int64_t mtpLength() const override { return mtpCache_.length(); }
  void truncate(int64_t tokens) override;
  int64_t kvBytes() const override { return cache_.bytes() + mtpCache_.bytes(); }

 private:
  const Transformer& transformer_;
  const Tokenizer* tokenizer_;
  const std::atomic<int>& threads_;
  int64_t maxTokens_;
  kv::KvCache cache_;
  kv::KvCache mtpCache_;
  std::vector<int32_t> tokens_;
};

// OpenMP's thread count is per calling thread, so each entry point sets it for its own work.
void useThreads(int threads);

}  // namespace strata::model
