#pragma once
// Strata's public engine API: the one entry point the CLI, the app and the server use.
// Every function reports failure by throwing strata::Error with a message for the user.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/error.h"
#include "strata/grammar.h"
#include "strata/kv_precision.h"
#include "strata/routing.h"
#include "strata/sampling.h"
#include "strata/speculation.h"
#include "strata/tiers.h"
#include "strata/tokenizer.h"

namespace strata {

// F32: every weight widened to f32 (the exact path). Native: weights stay in their stored
// 16-bit format in memory and are widened inside the kernels (same values, half the RAM).
enum class Precision { F32, Native };

// Multi-head latent attention form; Automatic picks the cheaper per batch (absorbed for decode,
// expanded for prefill). The two are mathematically identical.
enum class AttentionForm { Automatic, Expanded, Absorbed };

// How quantized (int8/int4) weights are multiplied. Dequantize: float activations against
// weights widened on the fly (the exact path). The others quantize activations to int8 per 32
// values and use integer dot products; Automatic picks the best the CPU supports, the rest
// force one (an error if the CPU lacks it). Unquantized weights always use f32 kernels.
enum class KernelPath { Automatic, Dequantize, Scalar, Avx2, AvxVnni, Avx512Vnni, Avx512Vnni256, NeonDot };

enum class SessionBatching { Auto, On, Off };

struct EngineSettings {
  int threads = 0;  // 0: OpenMP's default (all cores)
  Precision precision = Precision::F32;
  AttentionForm attentionForm = AttentionForm::Automatic;
  KernelPath kernelPath = KernelPath::Automatic;
  // Diagnostics: attend to every visible key, ignoring the DSA indexer's top-k.
  bool denseAttention = false;
  // Memory budget and expert streaming (strata/tiers.h). Streaming needs a Strata container.
  MemorySettings memory;
  KvPrecision kvPrecision = KvPrecision::F32;
  // Speculative decoding (strata/speculation.h); lossless, so on (self-tuning) by default.
  SpeculationSettings speculation;
  // Sessions generating at the same time (the server's slots) share forward steps: one pass
  // over the weights, and one read of each routed expert, for all their rows. Replies are
  // bit-identical either way; off, each session runs its own steps concurrently. Auto batches
  // when routed experts stream from disk (shared reads are the win) and runs sessions apart
  // when the model is in memory (a shared step keeps the work of all on one thread's path
  // while separate sessions use a core each: docs/batching.md has the measurements).
  SessionBatching batchSessions = SessionBatching::Auto;
};

struct ModelInfo {
  std::filesystem::path directory;
  std::string fingerprint;    // identity of the weights (saved sessions must match it)
  int vocabSize = 0;
  int hiddenSize = 0;
  int layerCount = 0;
  bool hasMtp = false;
  std::vector<int> eosTokenIds;
  int64_t residentBytes = 0;  // weights held in memory at open (streamed experts not included)
  MemoryPlan plan;            // how memory is divided (plan.streaming: experts stream)
};

// A generated token's log probability under the model (the log-softmax of the logits it was
// chosen from, before temperature, penalties or a grammar), with the most likely tokens there.
struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;  // (id, log probability), most likely first
};
constexpr int kMaxTopLogprobs = 20;  // as OpenAI's top_logprobs

struct GenerateOptions {
  SamplingParams sampling;         // temperature 0: greedy
  int maxNewTokens = 512;          // 0: only evaluate the context (and score it)
  std::vector<std::string> stop;   // stop strings (needs the model's tokenizer)
  // Generate exactly maxNewTokens: end-of-sequence ids do not stop (benchmarks, load tests).
  bool ignoreEos = false;
  // Set from another thread to stop after the current token.
  const std::atomic<bool>* cancel = nullptr;
  // Constrained output: only tokens the grammar allows are sampled, and an end token only
  // once the grammar is complete (strata/grammar.h). Needs the model's tokenizer.
  std::shared_ptr<const Grammar> grammar;
  // With a grammar: the token after which it applies (a reasoning model's `</think>`: the
  // thinking stays free, the answer follows the grammar); until then end-of-sequence ids are
  // held back, so every reply reaches its constrained part. -1: the grammar applies from the
  // first token.
  int32_t grammarAfterToken = -1;
  // Evaluate the context's new tokens in steps of at most this many (0, or more than
  // kPrefillChunkTokens: kPrefillChunkTokens, what the memory plan's scratch holds). With
  // sessions batched (EngineSettings::batchSessions) other sessions keep decoding between the
  // chunks, and a cancel is seen between them.
  int prefillChunkTokens = 0;
  // Called after each prefill step with the context tokens evaluated so far (reused ones
  // included) and the context's length: a progress bar (with prefillChunkTokens set).
  std::function<void(int64_t done, int64_t total)> onPrefillProgress;
  // >= 0: each generated token's log probability, with this many (0..kMaxTopLogprobs) of the
  // most likely tokens at its position, in GenerateResult::logprobs and to onLogprob as it is
  // chosen. -1: none (computing them costs a pass over the vocabulary per token).
  int topLogprobs = -1;
  std::function<void(const TokenLogprob&)> onLogprob;
  // Also each context token's log probability after the tokens before it (the first has none),
  // with topLogprobs alternatives (none when topLogprobs is -1), in
  // GenerateResult::promptLogprobs: scoring text, as evaluation harnesses do. A cached prefix
  // is reused only as far as an earlier scoring on this session kept its scores (several
  // continuations of one context); beyond that the context is evaluated again (the cache keeps
  // no logits).
  bool promptLogprobs = false;
  // With promptLogprobs: called once, after the prefill, with those numbers (a stream sends an
  // echoed prompt's before the reply).
  std::function<void(std::span<const TokenLogprob>)> onPromptLogprobs;
};

struct GenerateResult {
  std::vector<int32_t> tokens;  // generated ids, the final end-of-sequence id included
  std::string text;             // their text up to any stop string (empty without a tokenizer)
  std::string finishReason;     // "stop" (eos or stop string), "length" or "cancelled"
  int64_t promptTokens = 0;     // the context given
  int64_t reusedTokens = 0;     // of those, already in the KV cache (prefix reuse)
  double prefillSeconds = 0;    // evaluating the context's new tokens, to the first token
  double decodeSeconds = 0;     // the rest
  SpeculationSummary speculation;
  std::vector<TokenLogprob> logprobs;  // with GenerateOptions::topLogprobs >= 0: one per token
  // With GenerateOptions::promptLogprobs: one per context token after the first.
  std::vector<TokenLogprob> promptLogprobs;
};

// One conversation: its own KV cache over the shared weights. A session is used by one
// thread at a time; it must not outlive its engine.
class Session {
 public:
  virtual ~Session() = default;

  struct StepResult {
    std::vector<float> logits;  // [tokens x vocab]
    std::vector<float> hidden;  // final-normed hidden states [tokens x hidden] (MTP input)
  };

  // Appends tokens after everything seen so far and returns their logits. (generate() runs
  // the MTP layer itself; append()/appendMtp() are the low-level steps for diagnostics.)
  virtual StepResult append(std::span<const int32_t> tokens) = 0;

  // MTP draft logits [rows x vocab]: row i combines hidden[i] (the main model's hidden state
  // at position p = mtpLength() + i) with the token at p+1 (nextTokens[i]) and predicts p+2.
  virtual std::vector<float> appendMtp(std::span<const float> hidden,
                                       std::span<const int32_t> nextTokens) = 0;
  // The same as a draft runs it: the last row's logits only [1 x vocab]; the rows before it
  // only add their keys to the MTP cache (their attention and experts are skipped).
  virtual std::vector<float> appendMtpLastRow(std::span<const float> hidden,
                                              std::span<const int32_t> nextTokens) = 0;

  // Continues `context`, the whole conversation so far as token ids. The longest prefix of
  // it already in the KV cache is kept (a new turn reuses the previous ones), the rest is
  // evaluated, then tokens are sampled until an end-of-sequence id, a stop string, the token
  // limit or a cancel. onText sees the reply's text as it grows (complete UTF-8 characters,
  // never part of a stop string); onToken sees each id.
  virtual GenerateResult generate(std::span<const int32_t> context, const GenerateOptions& options,
                                  const std::function<void(std::string_view)>& onText = {},
                                  const std::function<void(int32_t)>& onToken = {}) = 0;

  // The token ids in the KV cache, in order.
  virtual const std::vector<int32_t>& tokens() const = 0;

  virtual int64_t length() const = 0;
  virtual int64_t mtpLength() const = 0;
  // Forgets everything after the first `tokens` tokens (edit, regenerate).
  virtual void truncate(int64_t tokens) = 0;
  virtual int64_t kvBytes() const = 0;

  // Saves the KV cache and token ids to `file` (docs/kv-file-format.md): the first save
  // writes everything, later ones only what changed since (a new turn is appended; after an
  // edit the file is cut back to the edit). Crash-safe: a save interrupted at any point leaves
  // the file as the previous save left it. Throws strata::Error naming the file.
  virtual void save(const std::filesystem::path& file) = 0;
  // Rows this session ran through the model (prefill, decode, and speculative drafts that were
  // then rejected). A resumed session starts at 0: what it loaded was not recomputed.
  virtual int64_t evaluatedTokens() const = 0;
};

// How much sessions' steps were shared (EngineSettings::batchSessions), since the engine opened.
struct BatchingStats {
  int64_t steps = 0;      // forward passes run
  int64_t sequences = 0;  // sessions' row groups in them: sequences / steps is the mean batch
  int64_t rows = 0;       // token rows in them
};

class Engine {
 public:
  static std::unique_ptr<Engine> open(const std::filesystem::path& modelDir,
                                      const EngineSettings& settings = {});
  // What open() would allocate, from the model's files alone. Throws strata::Error with the
  // numbers when the memory budget cannot hold the minimum (open() refuses the same way).
  static MemoryPlan plan(const std::filesystem::path& modelDir, const EngineSettings& settings = {});
  virtual ~Engine() = default;

  virtual const ModelInfo& info() const = 0;
  // The model's tokenizer (tokenizer.json in the model folder), or nullptr if it has none.
  virtual const Tokenizer* tokenizer() const = 0;
  virtual std::unique_ptr<Session> newSession() = 0;
  // A session holding what `file` saved, ready to continue (generate() keeps the saved tokens
  // that match the conversation and computes only the rest). Throws strata::Error saying why
  // the file cannot be used - not a saved session, another model, corrupt, truncated, a newer
  // format - and the caller starts a fresh session from the conversation's text instead.
  virtual std::unique_ptr<Session> resumeSession(const std::filesystem::path& file) = 0;

  // Expert tiers: heat, tier of every expert, counters, memory. Cheap (poll it 10 times a
  // second); streaming is false when every expert is simply resident (then the heat is
  // routingSnapshot()'s and every tier is Ram).
  virtual TierSnapshot tierSnapshot() const = 0;
  // Router choices: decayed heat per expert and the latest tokens' experts with their gate
  // weights, of every session or of `session`'s rows only (a chat beside API clients). Cheap
  // enough to poll 10 times a second.
  virtual RoutingSnapshot routingSnapshot() const = 0;
  virtual RoutingSnapshot routingSnapshot(const Session& session) const = 0;
  // Live retune while sessions run (ignored when not streaming, but threads always apply).
  virtual void retune(const TierTuning& tuning) = 0;
  // 0: every core; a negative count throws strata::Error (so does EngineSettings::threads < 0).
  virtual void setThreads(int threads) = 0;
  // Speculative decoding: per drafter, its setting, whether it is on now, its measured
  // acceptance and net speed-up (shared by the engine's sessions). Settings apply live.
  virtual std::vector<DrafterStats> speculationStats() const = 0;
  virtual void setSpeculation(const SpeculationSettings& settings) = 0;
  // Zero when sessions are not batched (EngineSettings::batchSessions).
  virtual BatchingStats batchingStats() const = 0;
  // Called with every MoE layer's experts at each step (routing traces); {} to stop.
  virtual void observeRouting(std::function<void(int64_t step, int layer, std::span<const int> experts)> observer) = 0;
};

// Index of the largest logit; ties go to the lowest index.
int32_t argmax(std::span<const float> logits);

}  // namespace strata
