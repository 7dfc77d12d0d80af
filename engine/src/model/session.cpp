#include "model/session.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
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
      cache_(transformer_.newCache(environment.kvPrecision)),
      mtpCache_(transformer_.newMtpCache(environment.kvPrecision)) {}

SessionImpl::SessionImpl(const SessionEnvironment& environment, kv::KvFileState state)
    : SessionImpl(environment) {
  if (state.cache.length() != static_cast<int64_t>(state.tokens.size()))
    throw Error("saved session: " + std::to_string(state.tokens.size()) + " token ids but " +
                std::to_string(state.cache.length()) + " cached tokens");
  // The saved vectors were rounded to the file's precision when written; this session keeps
  // rounding new rows to the engine's setting.
  cache_ = std::move(state.cache);
  for (int i = 0; i < transformer_.config().numHiddenLayers; ++i)
    cache_.layer(i).precision = env_.kvPrecision;
  tokens_ = std::move(state.tokens);
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
  useThreads(env_.threads.load());
  StepResult r;
  if (tokens.empty()) return r;
  const int64_t after = cache_.length() + static_cast<int64_t>(tokens.size());
  const int64_t maxTokens = env_.maxTokens;
  if (maxTokens > 0 && after > maxTokens)
    throw Error("the conversation would reach " + std::to_string(after) +
                " tokens; the memory plan holds a KV cache of " + std::to_string(maxTokens) +
                " (raise the context setting or start a new conversation)");
  r.hidden = transformer_.forward(tokens, cache_);  // validates ids before touching the cache
  evaluated_ += static_cast<int64_t>(tokens.size());
  r.logits = transformer_.logits(r.hidden.data(), static_cast<int64_t>(tokens.size()));
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  return r;
}

std::vector<float> SessionImpl::appendMtp(std::span<const float> hidden,
                                          std::span<const int32_t> nextTokens) {
  useThreads(env_.threads.load());
  const size_t width = static_cast<size_t>(transformer_.config().hiddenSize);
  if (hidden.size() != nextTokens.size() * width)
    throw Error("appendMtp: " + std::to_string(nextTokens.size()) + " tokens need " +
                std::to_string(nextTokens.size() * width) + " hidden values, got " +
                std::to_string(hidden.size()));
  if (nextTokens.empty()) return {};
  std::vector<float> z = transformer_.mtpForward(hidden.data(), nextTokens, mtpCache_);
  return transformer_.logits(z.data(), static_cast<int64_t>(nextTokens.size()));
}

void SessionImpl::truncate(int64_t tokens) {
  tokens = std::max<int64_t>(tokens, 0);
  cache_.truncate(tokens);
  mtpCache_.truncate(tokens);
  if (tokens < static_cast<int64_t>(tokens_.size())) tokens_.resize(static_cast<size_t>(tokens));
}

GenerateResult SessionImpl::generate(std::span<const int32_t> context,
                                     const GenerateOptions& options,
                                     const std::function<void(std::string_view)>& onText,
                                     const std::function<void(int32_t)>& onToken) {
  using Clock = std::chrono::steady_clock;
  if (context.empty()) throw Error("generate: the context is empty");
  if (options.maxNewTokens < 1) throw Error("generate: maxNewTokens must be at least 1");
  if (!options.stop.empty() && tokenizer_ == nullptr)
    throw Error("generate: stop strings need the model's tokenizer.json");
  Sampler sampler(options.sampling);
  const std::vector<int>& eosIds = transformer_.config().eosTokenIds;
  StopMatcher stops(options.stop, options.ignoreEos ? std::vector<int32_t>()
                                                    : std::vector<int32_t>(eosIds.begin(), eosIds.end()));

  GenerateResult result;
  result.promptTokens = static_cast<int64_t>(context.size());
  // Prefix reuse: keep what the cache shares with the context, but always evaluate at least
  // the last context token, whose logits give the first new token.
  // A fresh session copies what another conversation with the same opening computed.
  const bool fresh = tokens_.empty();
  if (fresh && env_.prefixes) {
    const int64_t copied = env_.prefixes->restore(context, cache_);
    tokens_.assign(context.begin(), context.begin() + copied);
  }
  const auto shared = std::mismatch(tokens_.begin(), tokens_.end(), context.begin(), context.end());
  result.reusedTokens = std::min<int64_t>(shared.first - tokens_.begin(),
                                          static_cast<int64_t>(context.size()) - 1);
  truncate(result.reusedTokens);

  const auto start = Clock::now();
  StepResult step = append(context.subspan(static_cast<size_t>(result.reusedTokens)));
  if (fresh && env_.prefixes) env_.prefixes->offer(context, cache_);
  const int vocab = transformer_.config().vocabSize;
  std::optional<Tokenizer::StreamDecoder> decoder;
  if (tokenizer_) decoder.emplace(*tokenizer_);
  std::vector<int32_t> history(context.begin(), context.end());
  auto firstToken = Clock::now();

  auto emit = [&](const StopMatcher::Output& out) {
    result.text += out.text;
    if (onText && !out.text.empty()) onText(out.text);
  };
  while (true) {
    const std::span<const float> last(step.logits.data() + step.logits.size() - vocab,
                                      static_cast<size_t>(vocab));
    const int32_t next = sampler.sample(last, history);
    if (result.tokens.empty()) firstToken = Clock::now();
    result.tokens.push_back(next);
    history.push_back(next);
    if (onToken) onToken(next);
    emit(stops.push(next, decoder ? decoder->push(next) : std::string()));
    if (stops.stopped()) {
      result.finishReason = "stop";
      break;
    }
    if (static_cast<int>(result.tokens.size()) >= options.maxNewTokens) {
      if (decoder) emit(stops.push(decoder->flush()));
      emit(stops.finish());
      result.finishReason = "length";
      break;
    }
    if (options.cancel && options.cancel->load()) {
      emit(stops.finish());
      result.finishReason = "cancelled";
      break;
    }
    step = append(std::span<const int32_t>(&next, 1));
  }
  result.prefillSeconds = std::chrono::duration<double>(firstToken - start).count();
  result.decodeSeconds = std::chrono::duration<double>(Clock::now() - firstToken).count();
  return result;
}

}  // namespace strata::model
