#include "model/session.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace strata::model {

void useThreads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

SessionImpl::SessionImpl(const Transformer& transformer, const Tokenizer* tokenizer,
                         const std::atomic<int>& threads, int64_t maxTokens)
    : transformer_(transformer),
      tokenizer_(tokenizer),
      threads_(threads),
      maxTokens_(maxTokens),
      cache_(transformer.newCache()),
      mtpCache_(transformer.newMtpCache()) {}

Session::StepResult SessionImpl::append(std::span<const int32_t> tokens) {
  useThreads(threads_.load());
  StepResult r;
  if (tokens.empty()) return r;
  const int64_t after = cache_.length() + static_cast<int64_t>(tokens.size());
  if (maxTokens_ > 0 && after > maxTokens_)
    throw Error("the conversation would reach " + std::to_string(after) +
                " tokens; the memory plan holds a KV cache of " + std::to_string(maxTokens_) +
                " (raise the context setting or start a new conversation)");
  r.hidden = transformer_.forward(tokens, cache_);  // validates ids before touching the cache
  r.logits = transformer_.logits(r.hidden.data(), static_cast<int64_t>(tokens.size()));
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  return r;
}

std::vector<float> SessionImpl::appendMtp(std::span<const float> hidden,
                                          std::span<const int32_t> nextTokens) {
  useThreads(threads_.load());
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
  StopMatcher stops(options.stop, std::vector<int32_t>(eosIds.begin(), eosIds.end()));

  GenerateResult result;
  result.promptTokens = static_cast<int64_t>(context.size());
  // Prefix reuse: keep what the cache shares with the context, but always evaluate at least
  // the last context token, whose logits give the first new token.
  const auto shared = std::mismatch(tokens_.begin(), tokens_.end(), context.begin(), context.end());
  result.reusedTokens = std::min<int64_t>(shared.first - tokens_.begin(),
                                          static_cast<int64_t>(context.size()) - 1);
  truncate(result.reusedTokens);

  const auto start = Clock::now();
  StepResult step = append(context.subspan(static_cast<size_t>(result.reusedTokens)));
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
