#include "model/attention.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>

#include "kernels/exponentials.h"
#include "kernels/matmul.h"
#include "model/indexer.h"

namespace strata::model {
namespace {

struct Dims {
  int heads, nope, rope, qk, v, latent;
};

// Which keys query row s reads: the selected ones, or all visible ones.
template <typename Fn>
void forEachKey(const KeySelection& sel, int64_t visible, Fn&& fn) {
  if (sel.all) {
    for (int64_t t = 0; t < visible; ++t) fn(t);
  } else {
    for (int32_t t : sel.keys) fn(t);
  }
}

bool useExpandedForm(const ModelContext& ctx, const Dims& d, const TokenBatch& batch) {
  if (ctx.options.mlaForm != MlaForm::Automatic) return ctx.options.mlaForm == MlaForm::Expanded;
  // Multiply-adds of each form; both share the projections, so only the differences count.
  const double keys = static_cast<double>(batch.start + batch.count);
  const double perQuery = std::min(keys, static_cast<double>(ctx.config.indexTopk) + keys / 2);
  const double reads = batch.count * perQuery * d.heads;
  const double expanded = keys * d.heads * (d.nope + d.v) * d.latent + reads * (d.qk + d.v);
  const double absorbed =
      batch.count * d.heads * (d.nope + d.v) * static_cast<double>(d.latent) + reads * (2.0 * d.latent + d.rope);
  return expanded < absorbed;
}

// §3.4: expand every cached latent to per-head keys and values, then attend. Prefill runs
// this form over up to thousands of keys, one head per thread at a time. The head's keys are
// transposed once, so a group of rows gets its logits over every key up to its last row's from
// addScaledRows over the transposed keys' rows (keys along the vectors: a short head needs no
// horizontal sums); a causal row uses its prefix of them, a DSA row picks its selection,
// unless the selection is much smaller than what the row sees (long prompts), where its own
// keys' dot products cost less. A row's numbers do not depend on its group.
void attendExpanded(const Dims& d, const Matrix& kvB, const kv::LayerCache& cache, const float* q,
                    const TokenBatch& batch, std::span<const KeySelection> selection, float scale,
                    float* o) {
  constexpr int64_t kRowGroup = 4;
  constexpr int64_t kSpanPerSelected = 4;  // all keys' logits while <= 4x the selection
  const int64_t keys = batch.start + batch.count;
  const int64_t headWidth = d.nope + d.v;
  std::vector<float> widenedLatent, widenedRope;  // a 16-bit cache's rows as f32
  // Each head's keys and values are expanded by the thread that attends with them, into its
  // own buffer: all heads at once would hold keys x heads x (nope + v) floats (GLM-5: 115 KB a
  // key, a gigabyte for a 9,000-token prompt), far past the memory plan's scratch.
  const kernels::RowProduct expand(kvB, cache.latent.rowsF32(0, keys, widenedLatent), keys, nullptr,
                                   false, kernels::KernelConfig{}.intKernels);
  const float* ropeKeys = cache.ropeKey.rowsF32(0, keys, widenedRope);

  const bool parallel =
      keys * d.heads * headWidth * (kvB.cols() + batch.count) >= kernels::kParallelThreshold;
#pragma omp parallel if (parallel)
  {
    std::vector<float> headKV(static_cast<size_t>(keys * headWidth));  // key t's at t * headWidth
    std::vector<float> scratch;                                        // a dequantized kv_b row
    std::vector<float> keysT;  // the head's keys (nope, then rope) transposed: [qk][keys]
    std::vector<const float*> keysTRows(static_cast<size_t>(d.qk));  // row j: component j
    std::vector<float> logits(static_cast<size_t>(kRowGroup * keys));
    std::vector<float> queries(static_cast<size_t>(kRowGroup * d.qk));
    std::vector<const float*> values(static_cast<size_t>(keys));  // key t's value, by t
    std::vector<float> picked(static_cast<size_t>(keys));         // a DSA row's weights
    std::vector<const float*> pickedValues(static_cast<size_t>(keys));
#pragma omp for schedule(dynamic)
    for (int h = 0; h < d.heads; ++h) {
      expand.computeRowsInto(h * headWidth, (h + 1) * headWidth, headKV.data(), headWidth, scratch);
      const float* headKeys = headKV.data();
      for (int64_t t = 0; t < keys; ++t)
        values[static_cast<size_t>(t)] = headKeys + t * headWidth + d.nope;
      keysT.clear();
      auto transposeKeys = [&] {
        keysT.resize(static_cast<size_t>(d.qk * keys));
        for (int64_t t = 0; t < keys; ++t) {
          for (int j = 0; j < d.nope; ++j)
            keysT[static_cast<size_t>(j * keys + t)] = headKeys[t * headWidth + j];
          for (int j = 0; j < d.rope; ++j)
            keysT[static_cast<size_t>((d.nope + j) * keys + t)] = ropeKeys[t * d.rope + j];
        }
        for (int j = 0; j < d.qk; ++j) keysTRows[static_cast<size_t>(j)] = keysT.data() + j * keys;
      };
      // Row s's output from `len` weights (logits before softmax) over `rows`.
      auto finishRow = [&](int64_t s, float* weights, int64_t len, const float* const* rows) {
        kernels::softmax(weights, len);
        float* oh = o + (s * d.heads + h) * d.v;
        std::fill(oh, oh + d.v, 0.0f);
        kernels::addScaledRows(rows, len, weights, 0, 1, d.v, oh, d.v);
      };
      for (int64_t first = 0; first < batch.count; first += kRowGroup) {
        const int64_t n = std::min(kRowGroup, batch.count - first);
        // Rows whose logits come from the transposed keys (all of a causal row's keys, or a
        // selection not much smaller than what the row sees), by row of the group; the rest
        // take their own keys' dot products. Decided per row, so no row depends on its group.
        int64_t fast[kRowGroup], fastCount = 0;
        bool dense = true;
        for (int64_t s = first; s < first + n; ++s) {
          const KeySelection& sel = selection[static_cast<size_t>(s)];
          dense = dense && sel.all;
          if (sel.all ||
              batch.visibleKeys(s) <= kSpanPerSelected * static_cast<int64_t>(sel.keys.size())) {
            fast[fastCount++] = s;
            continue;
          }
          const float* qh = q + (s * d.heads + h) * d.qk;
          int64_t len = 0;
          forEachKey(sel, batch.visibleKeys(s), [&](int64_t t) {
            const float* key = headKeys + t * headWidth;
            picked[static_cast<size_t>(len)] =
                (kernels::dot(qh, key, d.nope) +
                 kernels::dot(qh + d.nope, ropeKeys + t * d.rope, d.rope)) *
                scale;
            pickedValues[static_cast<size_t>(len++)] = values[static_cast<size_t>(t)];
          });
          finishRow(s, picked.data(), len, pickedValues.data());
        }
        if (fastCount == 0) continue;
        if (keysT.empty()) transposeKeys();
        for (int64_t k = 0; k < fastCount; ++k) {
          const float* qh = q + (fast[k] * d.heads + h) * d.qk;
          std::copy(qh, qh + d.qk, queries.begin() + k * d.qk);
        }
        const int64_t span = batch.visibleKeys(fast[fastCount - 1]);
        // Each logit is one chain of adds from zero in component order.
        for (int64_t k = 0; k < fastCount; ++k) std::fill_n(logits.data() + k * keys, span, 0.0f);
        kernels::addScaledRows(keysTRows.data(), d.qk, queries.data(), d.qk, fastCount, span,
                               logits.data(), keys);
        if (dense) {  // causal rows: prefixes of the span, one weighted sum for the group
          for (int64_t k = 0; k < n; ++k) {
            float* row = logits.data() + k * keys;
            const int64_t visible = batch.visibleKeys(first + k);
            for (int64_t t = 0; t < visible; ++t) row[t] *= scale;
            kernels::softmax(row, visible);
            std::fill(row + visible, row + span, 0.0f);  // adding 0 * value changes no sum
          }
          float* groupO = o + (first * d.heads + h) * d.v;  // row k's at k * heads * v
          for (int64_t k = 0; k < n; ++k) std::fill_n(groupO + k * d.heads * d.v, d.v, 0.0f);
          kernels::addScaledRows(values.data(), span, logits.data(), keys, n, d.v, groupO,
                                 int64_t{d.heads} * d.v);
          continue;
        }
        for (int64_t k = 0; k < fastCount; ++k) {
          const float* row = logits.data() + k * keys;
          int64_t len = 0;
          forEachKey(selection[static_cast<size_t>(fast[k])], batch.visibleKeys(fast[k]),
                     [&](int64_t t) {
                       picked[static_cast<size_t>(len)] = row[t] * scale;
                       pickedValues[static_cast<size_t>(len++)] = values[static_cast<size_t>(t)];
                     });
          finishRow(fast[k], picked.data(), len, pickedValues.data());
        }
      }
    }
  }
}

// The latent and rope key of one query row's keys as f32, by position in its key list. An
// f32 cache is read in place; a 16-bit one is widened once per thread and query row, not once
// per head.
class RowKeys {
 public:
  explicit RowKeys(const kv::LayerCache& cache)
      : cache_(cache), widen_(cache.latent.precision() != KvPrecision::F32),
        stride_(cache.latent.width() + cache.ropeKey.width()) {}

  void prepare(int64_t s, const KeySelection& sel, int64_t visible) {
    if (!widen_ || preparedFor_ == s) return;
    const int64_t count = sel.all ? visible : static_cast<int64_t>(sel.keys.size());
    rows_.resize(static_cast<size_t>(count * stride_));
    int64_t i = 0;
    forEachKey(sel, visible, [&](int64_t t) {
      float* out = rows_.data() + i++ * stride_;
      cache_.latent.row(t, out);
      cache_.ropeKey.row(t, out + cache_.latent.width());
    });
    preparedFor_ = s;
  }
  // Key i of the prepared row's list, which is token t.
  const float* latent(int64_t i, int64_t t) const {
    return widen_ ? rows_.data() + i * stride_ : cache_.latent.row(t, nullptr);
  }
  const float* rope(int64_t i, int64_t t) const {
    return widen_ ? rows_.data() + i * stride_ + cache_.latent.width() : cache_.ropeKey.row(t, nullptr);
  }

 private:
  const kv::LayerCache& cache_;
  bool widen_;
  int64_t stride_;
  std::vector<float> rows_;
  int64_t preparedFor_ = -1;
};

// §3.5: fold W_UK into the query and W_UV into the output, attending over latents directly.
// A few heads at a time meet each cached key, loaded once (the heads of a row share its keys):
// a long context makes this the largest part of a decode step's arithmetic, so it runs in the
// per-vector-width kernels (float_rows.cpp) rather than in this file's baseline x86-64 code.
void attendAbsorbed(const Dims& d, const Matrix& kvB, const kv::LayerCache& cache, const float* q,
                    const TokenBatch& batch, std::span<const KeySelection> selection, float scale,
                    float* o) {
  constexpr int kHeadGroup = 4;  // the row kernels take up to four inputs per pass over a key
  // kv_b's rows meet q and the latent output as stored: int8 ones (a converted checkpoint's)
  // through the int8 row kernels, widened in registers (GLM-5's would otherwise be 59 MB of
  // f32 written and read again per layer and token), f32 ones in place. Others (bf16, int4)
  // are widened into the thread's buffer; every form gives the numbers of an f32 copy.
  const bool int8 = kvB.format() == kernels::WeightFormat::Int8;
  const bool inPlace = kvB.format() == kernels::WeightFormat::F32;
  auto kvBRows = [&](int64_t first, int64_t count, std::vector<float>& buffer,
                     std::vector<const float*>& rows) -> const float* {
    const float* base = inPlace ? kvB.f32Data() + first * d.latent : buffer.data();
    for (int64_t i = 0; i < count; ++i) {
      if (!inPlace) kvB.row(first + i, buffer.data() + i * d.latent);
      rows[static_cast<size_t>(i)] = base + i * d.latent;
    }
    return base;
  };
  const int64_t rowsPerHead = d.nope + d.v;
  const int64_t keys = batch.start + batch.count;
  const int groups = (d.heads + kHeadGroup - 1) / kHeadGroup;
  const bool parallel =
      batch.count * d.heads * (keys + rowsPerHead) * d.latent >= kernels::kParallelThreshold;
#pragma omp parallel if (parallel)
  {
    // Per head of the group: its logits over the keys, its latent query and rope query, its
    // latent output.
    std::vector<float> logits(static_cast<size_t>(kHeadGroup * keys));
    std::vector<float> ropeLogits(static_cast<size_t>(kHeadGroup * keys));
    std::vector<float> qLatent(static_cast<size_t>(kHeadGroup * d.latent));
    std::vector<float> qRope(static_cast<size_t>(kHeadGroup * d.rope));
    std::vector<float> oLatent(static_cast<size_t>(kHeadGroup * d.latent));
    // One head's W_UK or W_UV rows as f32, and pointers to them.
    std::vector<float> kvBBuffer(
        inPlace || int8 ? 0 : static_cast<size_t>(std::max(d.nope, d.v) * d.latent));
    std::vector<const float*> kvBRowPointers(static_cast<size_t>(std::max(d.nope, d.v)));
    std::vector<const float*> latentRows(static_cast<size_t>(keys)),
        ropeRows(static_cast<size_t>(keys));
    RowKeys rowKeys(cache);
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t s = 0; s < batch.count; ++s) {
      for (int g = 0; g < groups; ++g) {
        const int first = g * kHeadGroup;
        const int heads = std::min(kHeadGroup, d.heads - first);
        // q~ = W_UK^T q_nope for each head: a sum of W_UK's rows weighted by q_nope, in row
        // order (addScaledRows adds as addScaledRow row by row would).
        std::fill(qLatent.begin(), qLatent.end(), 0.0f);
        for (int k = 0; k < heads; ++k) {
          const float* qh = q + (s * d.heads + first + k) * d.qk;
          const int64_t wUK = (first + k) * rowsPerHead;  // first of its [nope x latent] rows
          float* qk = qLatent.data() + k * d.latent;
          if (int8) {
            kernels::int8AddScaledRows(kvB.quantized(), wUK, d.nope, qh, 0, 1, qk, d.latent);
          } else {
            kvBRows(wUK, d.nope, kvBBuffer, kvBRowPointers);
            kernels::addScaledRows(kvBRowPointers.data(), d.nope, qh, 0, 1, d.latent, qk, d.latent);
          }
          std::copy(qh + d.nope, qh + d.qk, qRope.begin() + k * d.rope);
        }

        const KeySelection& sel = selection[static_cast<size_t>(s)];
        rowKeys.prepare(s, sel, batch.visibleKeys(s));
        int64_t len = 0;
        forEachKey(sel, batch.visibleKeys(s), [&](int64_t t) {
          latentRows[static_cast<size_t>(len)] = rowKeys.latent(len, t);
          ropeRows[static_cast<size_t>(len)] = rowKeys.rope(len, t);
          ++len;
        });
        kernels::gatheredRowsTimesInputs(latentRows.data(), len, qLatent.data(), heads, d.latent,
                                         keys, logits.data());
        kernels::gatheredRowsTimesInputs(ropeRows.data(), len, qRope.data(), heads, d.rope, keys,
                                         ropeLogits.data());
        std::fill(oLatent.begin(), oLatent.end(), 0.0f);
        for (int k = 0; k < heads; ++k) {
          float* headLogits = logits.data() + k * keys;
          const float* headRope = ropeLogits.data() + k * keys;
          for (int64_t i = 0; i < len; ++i) headLogits[i] = (headLogits[i] + headRope[i]) * scale;
          kernels::softmax(headLogits, len);
        }
        kernels::addScaledRows(latentRows.data(), len, logits.data(), keys, heads, d.latent,
                               oLatent.data(), d.latent);
        for (int k = 0; k < heads; ++k) {
          const int64_t wUV = (first + k) * rowsPerHead + d.nope;  // first of its [v x latent] rows
          float* oh = o + (s * d.heads + first + k) * d.v;
          const float* ok = oLatent.data() + k * d.latent;
          if (int8) {
            kernels::int8RowsTimesInputs(kvB.quantized(), wUV, d.v, ok, 1, d.v, oh);
          } else {
            const float* rows = kvBRows(wUV, d.v, kvBBuffer, kvBRowPointers);
            kernels::rowsTimesInputs(rows, d.v, ok, 1, d.latent, d.v, oh);
          }
        }
      }
    }
  }
}

// The normalized latents and rope keys of `batch`'s rows from their kv_a products.
void appendLatents(const ModelContext& ctx, const AttentionWeights& w, const float* kvA,
                   const TokenBatch& batch, kv::LayerCache& cache) {
  const int64_t latentDim = ctx.config.kvLoraRank, ropeDim = ctx.config.qkRopeHeadDim;
  const int64_t n = batch.count;
  std::vector<float> latent(static_cast<size_t>(n * latentDim)),
      rope(static_cast<size_t>(n * ropeDim));
  for (int64_t s = 0; s < n; ++s) {
    const float* row = kvA + s * (latentDim + ropeDim);
    rmsNorm(row, w.kvANorm.data(), latentDim, 1e-6f, latent.data() + s * latentDim);
    float* kpe = rope.data() + s * ropeDim;
    std::copy(row + latentDim, row + latentDim + ropeDim, kpe);
    ctx.rope.apply(kpe, batch.position(s));
  }
  cache.latent.append(latent.data(), latent.size());  // rounded to the cache's precision
  cache.ropeKey.append(rope.data(), rope.size());
}

}  // namespace

void appendKeys(const ModelContext& ctx, const LayerWeights& layer, const float* x,
                const TokenBatch& batch, kv::LayerCache& cache) {
  const ModelConfig& c = ctx.config;
  const AttentionWeights& w = layer.attention;
  std::vector<float> kvA(static_cast<size_t>(batch.count * (c.kvLoraRank + c.qkRopeHeadDim)));
  std::vector<float> kRaw;  // the indexer's raw keys
  if (layer.indexer) {
    kRaw.resize(static_cast<size_t>(batch.count * c.indexHeadDim));
    kernels::matmulMany({{w.kvA, kvA.data()}, {layer.indexer->wk, kRaw.data()}}, x, batch.count,
                        ctx.kernels);
  } else {
    kernels::matmul(w.kvA, x, batch.count, kvA.data(), ctx.kernels);
  }
  appendLatents(ctx, w, kvA.data(), batch, cache);
  if (layer.indexer) appendIndexKeys(ctx, *layer.indexer, kRaw.data(), batch, cache);
}

void runAttention(const ModelContext& ctx, const LayerWeights& layer, const float* x, int64_t rows,
                  const std::vector<SequenceStep>& sequences, float* out) {
  const ModelConfig& c = ctx.config;
  const AttentionWeights& w = layer.attention;
  const Dims d{c.numAttentionHeads, c.qkNopeHeadDim, c.qkRopeHeadDim, c.qkHeadDim(), c.vHeadDim,
               c.kvLoraRank};
  const std::vector<int64_t> positions = rowPositions(sequences, rows);

  // The projections run once for every row of the step (each weight matrix read once, rows
  // computed independently of each other); only the attention itself is per sequence.
  // The products of x (q latent, kv latent and rope key, the indexer's keys and gates) run in
  // one parallel region, those of the q latent in another.
  std::vector<float> qLatent(static_cast<size_t>(rows * c.qLoraRank));
  std::vector<float> kvA(static_cast<size_t>(rows * (d.latent + d.rope)));
  std::optional<IndexerProjections> indexer;
  if (layer.indexer) {
    indexer.emplace(c, rows);
    kernels::matmulMany({{w.qA, qLatent.data()}, {w.kvA, kvA.data()},
                         {layer.indexer->wk, indexer->kRaw.data()},
                         {layer.indexer->weightsProj, indexer->gates.data()}},
                        x, rows, ctx.kernels);
  } else {
    kernels::matmulMany({{w.qA, qLatent.data()}, {w.kvA, kvA.data()}}, x, rows, ctx.kernels);
  }
  // 1. q latent (also the indexer's input), eps 1e-6 as in the Hugging Face reference.
  for (int64_t s = 0; s < rows; ++s) {
    float* row = qLatent.data() + s * c.qLoraRank;
    rmsNorm(row, w.qANorm.data(), c.qLoraRank, 1e-6f, row);
  }
  // 2. Per-head queries (and the indexer's); RoPE on the last qk_rope_head_dim dims of each.
  std::vector<float> q(static_cast<size_t>(rows * d.heads * d.qk));
  if (indexer)
    kernels::matmulMany({{w.qB, q.data()}, {layer.indexer->wqB, indexer->q.data()}}, qLatent.data(),
                        rows, ctx.kernels);
  else
    kernels::matmul(w.qB, qLatent.data(), rows, q.data(), ctx.kernels);
  for (int64_t s = 0; s < rows; ++s) {
    const Rope::Angles angles = ctx.rope.at(positions[static_cast<size_t>(s)]);
    for (int h = 0; h < d.heads; ++h)
      ctx.rope.apply(q.data() + (s * d.heads + h) * d.qk + d.nope, angles);
  }

  // 3. Latent c (normalized) and the shared rope key, appended to each sequence's cache.
  for (const SequenceStep& seq : sequences)
    appendLatents(ctx, w, kvA.data() + seq.firstRow * (d.latent + d.rope), seq.batch, *seq.cache);

  // DSA: a full layer selects keys with its own indexer; a shared layer keeps each sequence's
  // selection from its most recent full layer.
  if (indexer) runIndexer(ctx, *layer.indexer, *indexer, sequences);

  // 4-7. Attention per sequence, in whichever form is cheaper for its rows.
  const float scale = 1.0f / std::sqrt(static_cast<float>(d.qk));
  std::vector<float> o(static_cast<size_t>(rows * d.heads * d.v));
  for (const SequenceStep& seq : sequences) {
    const TokenBatch& batch = seq.batch;
    const int64_t n = batch.count;
    std::vector<KeySelection>& selection = *seq.selection;
    if (ctx.options.denseAttention || selection.size() != static_cast<size_t>(n))
      selection.assign(static_cast<size_t>(n), KeySelection{});
    const float* seqQ = q.data() + seq.firstRow * d.heads * d.qk;
    float* seqO = o.data() + seq.firstRow * d.heads * d.v;
    // Rows [first, first + count) of the sequence, in one form.
    auto attend = [&](int64_t first, int64_t count, bool expanded) {
      const TokenBatch part{batch.start + first, count, batch.asDecode};
      const std::span<const KeySelection> partSelection(selection.data() + first,
                                                        static_cast<size_t>(count));
      const float* partQ = seqQ + first * d.heads * d.qk;
      float* partO = seqO + first * d.heads * d.v;
      if (expanded)
        attendExpanded(d, w.kvB, *seq.cache, partQ, part, partSelection, scale, partO);
      else
        attendAbsorbed(d, w.kvB, *seq.cache, partQ, part, partSelection, scale, partO);
    };
    if (!batch.asDecode || n == 1) {
      attend(0, n, useExpandedForm(ctx, d, batch));
      continue;
    }
    // Each row in the form (and so the rounding) a single-token decode step would use. Rows do
    // not depend on each other in the absorbed form, so a run of them goes in one call (one
    // parallel region for a verify pass instead of one per row); expanded rows go one by one.
    auto expandedAlone = [&](int64_t s) {
      return useExpandedForm(ctx, d, TokenBatch{batch.start + s, 1});
    };
    for (int64_t s = 0; s < n;) {
      const bool expanded = expandedAlone(s);
      int64_t end = s + 1;
      while (!expanded && end < n && !expandedAlone(end)) ++end;
      attend(s, end - s, expanded);
      s = end;
    }
  }

  // 8. Output projection.
  kernels::matmul(w.o, o.data(), rows, out, ctx.kernels);
}

}  // namespace strata::model
