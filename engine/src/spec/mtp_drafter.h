#pragma once
// Drafts with the model's multi-token-prediction layer (glm5-architecture.md §4): depth 1
// combines the main model's hidden state at p with token p+1 to predict p+2; deeper drafts
// chain the one layer, feeding back its post-shared_head.norm output and the drafted token.
//
// The MTP layer keeps its own KV cache over the positions whose main-model hidden state it has
// seen. Hidden states arrive as the main model computes them (observe) and are run through the
// MTP layer in one batch when the next draft is needed, so plain decoding pays nothing while
// MTP drafting is paused. Chained rows are speculative and removed after each draft; accepted
// positions come back through observe() with their true hidden states. When hidden states are
// missing (a resumed or truncated session) the MTP cache restarts at the first position it has:
// RoPE is relative, so a constant offset is harmless, and drafts only see less context.
#include <cstdint>
#include <span>
#include <vector>

#include "kv/kv_cache.h"
#include "model/transformer.h"
#include "spec/draft_vocabulary.h"
#include "spec/drafter.h"
#include "strata/tokenizer.h"

namespace strata::spec {

class MtpDrafter final : public Drafter {
 public:
  // `tokenizer` (may be null) names the special tokens every draft vocabulary keeps.
  MtpDrafter(const model::Transformer& transformer, KvPrecision precision,
             const Tokenizer* tokenizer);

  // Final-normed hidden states of the main model for positions first, first+1, ...
  // `maxRows` caps what waits to be run (only the newest are kept): catching up on a long
  // backlog (a prompt, a paused stretch) would cost more than the context is worth.
  void observe(int64_t firstPosition, std::span<const float> hidden, int64_t maxRows);
  // The session now holds only its first `tokens` tokens.
  void truncate(int64_t tokens);

  DrafterKind kind() const override { return DrafterKind::Mtp; }
  // Up to settings.mtpDepth tokens after the newest, whose predecessor's hidden state must
  // have been observed; argmax drafts after the first stop at one the head is unsure of
  // (settings.mtpMinProbability); the grammar, when given, masks them. Drafted from
  // settings.mtpDraftVocabulary of the vocabulary. Empty when the hidden states are not there. The
  // MTP head's argmax, or with settings.sampledMtpDrafts and temperature > 0 drawn by the sampler,
  // q filled for rejection sampling.
  Draft draft(const DraftRequest& request) override;

  // Low-level access for Session::appendMtp (diagnostics and reference checks).
  kv::KvCache& cache() { return cache_; }
  const kv::KvCache& cache() const { return cache_; }
  void resetTo(int64_t origin);
  int64_t bytes() const { return cache_.bytes() + static_cast<int64_t>(pending_.size() * sizeof(float)); }

 private:
  int64_t pendingRows() const;
  void alignCacheWithPending();

  const model::Transformer& transformer_;
  kv::KvCache cache_;
  DraftVocabulary vocabulary_;
  int64_t origin_ = 0;          // absolute position of the MTP cache's row 0
  std::vector<float> pending_;  // observed hidden rows not yet run through the MTP layer
  int64_t pendingStart_ = 0;    // absolute position of pending_'s first row
};

}  // namespace strata::spec
