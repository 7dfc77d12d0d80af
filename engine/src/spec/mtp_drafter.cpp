#include "spec/mtp_drafter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "strata/engine.h"  // argmax

namespace strata::spec {
namespace {
// Hidden rows kept while MTP drafting is paused; beyond this the oldest are dropped and the
// MTP cache restarts later (64 MiB: ~2,700 GLM-5 positions, far more for small models).
constexpr size_t kMaxPendingBytes = size_t{64} << 20;

// softmax(logits)[token], without forming the distribution.
double probabilityOf(std::span<const float> logits, int32_t token) {
  const float top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - top));
  return std::exp(static_cast<double>(logits[static_cast<size_t>(token)] - top)) / sum;
}

// The ends of turns from the model's config and the tokenizer's special tokens.
std::vector<int32_t> specialTokens(const model::ModelConfig& config, const Tokenizer* tokenizer) {
  std::vector<int32_t> ids(config.eosTokenIds.begin(), config.eosTokenIds.end());
  if (tokenizer) {
    const std::vector<int32_t> special = tokenizer->specialIds();
    ids.insert(ids.end(), special.begin(), special.end());
  }
  return ids;
}
}  // namespace

MtpDrafter::MtpDrafter(const model::Transformer& transformer, KvPrecision precision,
                       const Tokenizer* tokenizer)
    : transformer_(transformer),
      cache_(transformer.newMtpCache(precision)),
      vocabulary_(transformer.config().vocabSize, specialTokens(transformer.config(), tokenizer)) {}

int64_t MtpDrafter::pendingRows() const {
  return static_cast<int64_t>(pending_.size()) / transformer_.config().hiddenSize;
}

void MtpDrafter::resetTo(int64_t origin) {
  cache_.truncate(0);
  origin_ = origin;
  pending_.clear();
  pendingStart_ = origin;
}

void MtpDrafter::observe(int64_t firstPosition, std::span<const float> hidden, int64_t maxRows) {
  const size_t width = static_cast<size_t>(transformer_.config().hiddenSize);
  if (pending_.empty() || firstPosition != pendingStart_ + pendingRows()) {
    if (!pending_.empty() && firstPosition > pendingStart_ &&
        firstPosition < pendingStart_ + pendingRows()) {
      pending_.resize(static_cast<size_t>(firstPosition - pendingStart_) * width);  // overlap
    } else {
      pending_.clear();
      pendingStart_ = firstPosition;
    }
  }
  pending_.insert(pending_.end(), hidden.begin(), hidden.end());
  const size_t maxValues = std::max<size_t>(
      width, std::min<size_t>(kMaxPendingBytes / sizeof(float) / width, static_cast<size_t>(maxRows)) * width);
  if (pending_.size() > maxValues) {
    const size_t drop = pending_.size() - maxValues;
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(drop));
    pendingStart_ += static_cast<int64_t>(drop / width);
  }
}

void MtpDrafter::truncate(int64_t tokens) {
  vocabulary_.forget(tokens);
  // Cache row p used token p+1: rows p <= tokens - 2 stay. Hidden at p needs tokens <= p only.
  const int64_t keepRows = std::max<int64_t>(0, tokens - 1 - origin_);
  if (keepRows < cache_.length()) cache_.truncate(keepRows);
  if (tokens - 1 < origin_) resetTo(std::max<int64_t>(0, tokens));
  const int64_t width = transformer_.config().hiddenSize;
  if (pendingStart_ >= tokens) {
    pending_.clear();
  } else if (pendingStart_ + pendingRows() > tokens) {
    pending_.resize(static_cast<size_t>((tokens - pendingStart_) * width));
  }
}

// The MTP cache must end where the pending rows start; otherwise restart it there.
void MtpDrafter::alignCacheWithPending() {
  if (pendingStart_ >= origin_ && pendingStart_ <= origin_ + cache_.length()) {
    cache_.truncate(pendingStart_ - origin_);
    return;
  }
  cache_.truncate(0);
  origin_ = pendingStart_;
}

Draft MtpDrafter::draft(const DraftRequest& request) {
  const std::span<const int32_t> sequence = request.sequence;
  const int depth = std::min(request.maxTokens, request.settings.mtpDepth);
  Sampler& sampler = request.sampler;
  const bool sampled = request.settings.sampledMtpDrafts && sampler.params().temperature > 0.0f;
  const GrammarMatcher* grammar = request.grammar;
  Draft out;
  const auto last = static_cast<int64_t>(sequence.size()) - 1;  // position of the newest token
  const int64_t rows = pendingRows();
  // The rows up to the newest token's predecessor must be waiting (each draft feeds them).
  if (depth < 1 || last < 1 || rows == 0 || pendingStart_ + rows != last) return out;
  alignCacheWithPending();
  // Row p pairs hidden p with token p+1; only the newest row drafts (the others only add their
  // keys to the MTP cache).
  const std::span<const int32_t> next = sequence.subspan(static_cast<size_t>(pendingStart_ + 1),
                                                         static_cast<size_t>(rows));
  std::vector<float> z = transformer_.mtpForward(pending_.data(), next, cache_, true);
  pending_.clear();
  pendingStart_ = last;

  const int64_t kept = cache_.length();
  std::optional<GrammarMatcher> constraint;
  if (grammar) constraint.emplace(*grammar);
  std::vector<int32_t> history;  // what the sampler's penalties see (sampled drafts only)
  if (sampled) history.assign(sequence.begin(), sequence.end());
  const int64_t vocab = transformer_.config().vocabSize;
  const auto common = static_cast<int64_t>(std::ceil(request.settings.mtpDraftVocabulary * vocab));
  const bool whole = common >= vocab;
  std::span<const kernels::RowRange> tokens;
  if (!whole) tokens = vocabulary_.rows(sequence, common);
  for (int j = 0; j < depth; ++j) {
    std::vector<float> logits =
        whole ? transformer_.logits(z.data(), 1) : transformer_.logitsOver(z.data(), tokens);
    if (constraint) {
      constraint->mask(logits);
      if (std::all_of(logits.begin(), logits.end(),
                      [](float l) { return l == -std::numeric_limits<float>::infinity(); }))
        break;
    }
    int32_t token;
    if (sampled) {
      token = sampler.sample(logits, history);
      out.q.push_back(sampler.distribution(logits, history));
    } else {
      token = argmax(logits);
      if (j > 0 && request.settings.mtpMinProbability > 0 &&
          probabilityOf(logits, token) < request.settings.mtpMinProbability)
        break;
    }
    out.tokens.push_back(token);
    if (sampled) history.push_back(token);
    if (constraint && !constraint->accept(token)) break;
    if (j + 1 == depth) break;
    // Chain: the layer's own output stands in for the main model's hidden state.
    z = transformer_.mtpForward(z.data(), std::span<const int32_t>(&token, 1), cache_);
  }
  cache_.truncate(kept);  // the chained rows were guesses
  return out;
}

}  // namespace strata::spec
