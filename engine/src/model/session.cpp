#include "model/session.h"

#include <omp.h>

#include <algorithm>
#include <optional>

namespace strata::model {

void useThreads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

kv::KvFileHeader SessionEnvironment::kvFileHeader() const {
  const ModelConfig& c = transformer.config();
  kv::KvFileHeader h;
  h.modelFingerprint = fingerprint;
  h.layerCount = c.numHiddenLayers;
  h.dims = {c.kvLoraRank, c.qkRopeHeadDim, c.indexHeadDim};
  h.layerHasIndexKey.assign(c.layerHasIndexer.begin(), c.layerHasIndexer.end());
  h.precision = kvPrecision;
  return h;
}

SessionImpl::SessionImpl(const SessionEnvironment& environment)
    : env_(environment),
      transformer_(environment.transformer),
      tokenizer_(environment.tokenizer),
      cache_(transformer_.newCache(environment.kvPrecision)) {
  if (tokenizer_) grammarDrafter_.emplace(*tokenizer_);
  if (transformer_.config().hasMtp())
    mtp_.emplace(transformer_, environment.kvPrecision, tokenizer_);
}

SessionImpl::SessionImpl(const SessionEnvironment& environment, kv::KvFileState state)
    : SessionImpl(environment) {
  if (state.cache.length() != static_cast<int64_t>(state.tokens.size()))
    throw Error("saved session: " + std::to_string(state.tokens.size()) + " token ids but " +
                std::to_string(state.cache.length()) + " cached tokens");
  // The saved rows are in the file's precision; the cache holds the engine's setting (widening
  // a 16-bit file into an f32 cache is exact; an f32 file in a 16-bit cache is rounded).
  cache_ = std::move(state.cache);
  cache_.convertTo(env_.kvPrecision);
  tokens_ = std::move(state.tokens);
  if (mtp_) mtp_->resetTo(cache_.length());  // the file holds no MTP rows: drafts start here
}

void SessionImpl::save(const std::filesystem::path& file) {
  if (!writer_ || writerPath_ != file) {
    writer_.reset();
    const kv::KvFileHeader header = env_.kvFileHeader();
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) {
      try {
        writer_.emplace(kv::KvFileWriter::open(file, header));
      } catch (const Error&) {
        // Another model's file, a damaged one, or not ours: this save replaces it.
      }
    }
    if (!writer_) writer_.emplace(kv::KvFileWriter::create(file, header));
    writerPath_ = file;
  }
  writer_->sync(tokens_, cache_);
}

Session::StepResult SessionImpl::append(std::span<const int32_t> tokens) {
  return appendRows(tokens, false, false);
}

Session::StepResult SessionImpl::appendRows(std::span<const int32_t> tokens, bool asDecode,
                                            bool lastLogitsOnly) {
  useThreads(env_.threads.load());
  StepResult r;
  if (tokens.empty()) return r;
  const int64_t after = cache_.length() + static_cast<int64_t>(tokens.size());
  const int64_t maxTokens = env_.maxTokens;
  if (maxTokens > 0 && after > maxTokens)
    throw Error("the conversation would reach " + std::to_string(after) +
                " tokens; the memory plan holds a KV cache of " + std::to_string(maxTokens) +
                " (raise the context setting or start a new conversation)");
  // Checked here, not in the shared step, so a bad id fails only this session.
  transformer_.checkTokenIds(tokens);
  if (env_.batcher) {
    r = env_.batcher->run(tokens, cache_, asDecode, lastLogitsOnly);
  } else {
    r.hidden = transformer_.forward(tokens, cache_, asDecode);
    const int64_t width = transformer_.config().hiddenSize;
    const int64_t first = lastLogitsOnly ? static_cast<int64_t>(tokens.size()) - 1 : 0;
    r.logits = transformer_.logits(r.hidden.data() + first * width,
                                   static_cast<int64_t>(tokens.size()) - first);
  }
  evaluated_ += static_cast<int64_t>(tokens.size());
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  return r;
}

std::vector<float> SessionImpl::appendMtp(std::span<const float> hidden,
                                          std::span<const int32_t> nextTokens) {
  return runMtp(hidden, nextTokens, false);
}

std::vector<float> SessionImpl::appendMtpLastRow(std::span<const float> hidden,
                                                 std::span<const int32_t> nextTokens) {
  return runMtp(hidden, nextTokens, true);
}

std::vector<float> SessionImpl::runMtp(std::span<const float> hidden,
                                       std::span<const int32_t> nextTokens, bool lastRowOnly) {
  useThreads(env_.threads.load());
  const size_t width = static_cast<size_t>(transformer_.config().hiddenSize);
  if (hidden.size() != nextTokens.size() * width)
    throw Error("appendMtp: " + std::to_string(nextTokens.size()) + " tokens need " +
                std::to_string(nextTokens.size() * width) + " hidden values, got " +
                std::to_string(hidden.size()));
  if (nextTokens.empty()) return {};
  if (!mtp_) throw Error("this model has no MTP layer (num_nextn_predict_layers is 0)");
  std::vector<float> z =
      transformer_.mtpForward(hidden.data(), nextTokens, mtp_->cache(), lastRowOnly);
  return transformer_.logits(z.data(), static_cast<int64_t>(z.size() / width));
}

SessionImpl::~SessionImpl() { transformer_.forgetRouting(cache_, 0); }

void SessionImpl::truncate(int64_t tokens) {
  tokens = std::max<int64_t>(tokens, 0);
  cache_.truncate(tokens);
  transformer_.forgetRouting(cache_, tokens);
  if (mtp_) mtp_->truncate(tokens);
  if (tokens < static_cast<int64_t>(tokens_.size())) tokens_.resize(static_cast<size_t>(tokens));
  const auto scoredKept = static_cast<size_t>(std::max<int64_t>(tokens - 1, 0));
  if (scored_.size() > scoredKept) scored_.resize(scoredKept);
}

}  // namespace strata::model
