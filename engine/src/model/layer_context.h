#pragma once
// What one decoder layer's steps share while processing a batch of consecutive tokens.
#include <cstdint>
#include <vector>

#include "kernels/matmul.h"
#include "model/config.h"
#include "model/ops.h"

namespace strata::kv {
struct LayerCache;
}

namespace strata::model {

// Which form of MLA to run (glm5-architecture.md §3.4, §3.5). Automatic picks the cheaper by a
// flop estimate: absorbed for decode (few queries, long cache), expanded for prefill.
enum class MlaForm { Automatic, Expanded, Absorbed };

struct ForwardOptions {
  MlaForm mlaForm = MlaForm::Automatic;
  bool denseAttention = false;  // ignore DSA top-k (diagnostics: shows what pruning changes)
};

// The keys one query attends to. `all` means every visible key (t <= position): the indexer
// did not prune because at most index_topk keys are visible, or dense attention was forced.
struct KeySelection {
  bool all = true;
  std::vector<int32_t> keys;  // ascending, when !all
};

// A batch of `count` consecutive tokens at absolute positions start, start+1, ...
struct TokenBatch {
  int64_t start = 0;
  int64_t count = 0;
  // Every row computed exactly as if it were decoded alone (speculative verification: its
  // logits must be bit-identical to plain decoding, so greedy output does not change).
  bool asDecode = false;
  int64_t position(int64_t row) const { return start + row; }
  int64_t visibleKeys(int64_t row) const { return start + row + 1; }
};

// One sequence's share of a step that may batch several (sessions decoding together): rows
// [firstRow, firstRow + batch.count) of the step's activations, its layer cache, and its
// IndexShare state (the key sets of its most recent full layer).
struct SequenceStep {
  int64_t firstRow = 0;
  TokenBatch batch;
  kv::LayerCache* cache = nullptr;
  std::vector<KeySelection>* selection = nullptr;
};

// Every row's absolute position in its own sequence, in step order.
inline std::vector<int64_t> rowPositions(const std::vector<SequenceStep>& sequences, int64_t rows) {
  std::vector<int64_t> positions(static_cast<size_t>(rows));
  for (const SequenceStep& s : sequences)
    for (int64_t r = 0; r < s.batch.count; ++r)
      positions[static_cast<size_t>(s.firstRow + r)] = s.batch.position(r);
  return positions;
}

struct ModelContext {
  const ModelConfig& config;
  Rope rope;  // qk_rope_head_dim pairs; shared by MLA and the indexer
  ForwardOptions options;
  kernels::KernelConfig kernels;  // how quantized weights are multiplied
};

}  // namespace strata::model
