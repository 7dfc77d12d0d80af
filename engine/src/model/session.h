#pragma once
// A conversation's state over the shared model: its KV caches and the token ids they hold.
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kv/kv_file.h"
#include "model/prefix_cache.h"
#include "model/step_batcher.h"
#include "model/transformer.h"
#include "spec/grammar_drafter.h"
#include "spec/mtp_drafter.h"
#include "spec/ngram_drafter.h"
#include "spec/speculation_tuner.h"
#include "strata/engine.h"

namespace strata::model {

// What every session of an engine shares; owned by the engine, which outlives its sessions.
struct SessionEnvironment {
  const Transformer& transformer;
  const Tokenizer* tokenizer;      // may be null: no text out, no stop strings
  const std::atomic<int>& threads; // the engine's live-tunable setting, read at every call
  int64_t maxTokens = 0;           // > 0: the KV cache the memory plan reserved
  std::string fingerprint;         // the model's, for saved sessions
  KvPrecision kvPrecision = KvPrecision::F32;
  PrefixCache* prefixes = nullptr; // shared conversation openings (may be null)
  StepBatcher* batcher = nullptr;  // steps shared with concurrent sessions (null: run alone)
  spec::SpeculationTuner* speculation = nullptr;  // null: plain decoding only
  // The tokenizer's tokens for grammar masks, built on first use (null without a tokenizer).
  std::function<std::shared_ptr<const GrammarVocabulary>()> grammarVocabulary;

  kv::KvFileHeader kvFileHeader() const;
};

class SessionImpl final : public Session {
 public:
  explicit SessionImpl(const SessionEnvironment& environment);
  ~SessionImpl() override;  // its rows leave the routing trail
  // A session continuing a saved one (`state` as kv::readKvFile returned it).
  SessionImpl(const SessionEnvironment& environment, kv::KvFileState state);

  // What identifies this conversation's rows in the routing recorder (its KV cache).
  const void* routingKey() const { return &cache_; }

  StepResult append(std::span<const int32_t> tokens) override;
  std::vector<float> appendMtp(std::span<const float> hidden,
                               std::span<const int32_t> nextTokens) override;
  std::vector<float> appendMtpLastRow(std::span<const float> hidden,
                                      std::span<const int32_t> nextTokens) override;
  GenerateResult generate(std::span<const int32_t> context, const GenerateOptions& options,
                          const std::function<void(std::string_view)>& onText,
                          const std::function<void(int32_t)>& onToken) override;

  const std::vector<int32_t>& tokens() const override { return tokens_; }
  int64_t length() const override { return cache_.length(); }
  int64_t mtpLength() const override { return mtp_ ? mtp_->cache().length() : 0; }
  void truncate(int64_t tokens) override;
  int64_t kvBytes() const override { return cache_.bytes() + (mtp_ ? mtp_->bytes() : 0); }
  void save(const std::filesystem::path& file) override;
  int64_t evaluatedTokens() const override { return evaluated_; }

 private:
  const SessionEnvironment& env_;
  const Transformer& transformer_;
  const Tokenizer* tokenizer_;
  // `asDecode`: speculative verification (rows bit-identical to one-at-a-time decoding).
  // `lastLogitsOnly`: prefill, where only the last row's logits are sampled.
  StepResult appendRows(std::span<const int32_t> tokens, bool asDecode, bool lastLogitsOnly);
  // appendMtp / appendMtpLastRow.
  std::vector<float> runMtp(std::span<const float> hidden, std::span<const int32_t> nextTokens,
                            bool lastRowOnly);
  // Prompt log probabilities, with `top` alternatives, for the context rows at firstPosition..
  // whose final hidden states are `hidden` (GenerateOptions::promptLogprobs).
  void scorePrompt(std::span<const int32_t> context, int64_t firstPosition,
                   std::span<const float> hidden, int top, GenerateResult& result) const;
  // The first drafter the tuner allows that has something to propose (kind and tokens).
  std::pair<spec::DrafterKind, spec::Draft> chooseDraft(std::span<const int32_t> history, int maxTokens,
                                                        const GrammarMatcher* grammar, Sampler& draftSampler);

  kv::KvCache cache_;
  // Drafters, in the order they are asked: the grammar's forced text (near-certain), earlier
  // text, the MTP head.
  std::optional<spec::GrammarDrafter> grammarDrafter_;  // with a tokenizer
  spec::NgramDrafter ngram_;
  std::optional<spec::MtpDrafter> mtp_;  // models with an MTP layer
  std::vector<int32_t> tokens_;
  int64_t evaluated_ = 0;
  // GenerateOptions::promptLogprobs of the last scored context: entry k scores tokens_[k + 1]
  // (with scoredTop_ alternatives), so scoring a context that shares the prefix reuses its KV
  // cache (an evaluation harness scores several continuations of one context).
  std::vector<TokenLogprob> scored_;
  int scoredTop_ = 0;
  std::optional<kv::KvFileWriter> writer_;  // the file of the last save()
  std::filesystem::path writerPath_;
};

// OpenMP's thread count is per calling thread, so each entry point sets it for its own work.
void useThreads(int threads);

}  // namespace strata::model
