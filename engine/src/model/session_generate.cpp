// Session::generate: prefill, then sampling with stop strings, grammars and speculative
// decoding (strata/speculation.h explains why the output is exactly plain decoding's).
#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "model/session.h"
#include "sampling/logprobs.h"

namespace strata::model {
namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The drafts' sampler: the generation's settings with its own random stream, so drafting never
// changes the draws plain decoding would make.
SamplingParams draftParams(SamplingParams p) {
  p.seed ^= 0x9E3779B97F4A7C15ull;
  return p;
}

// The most positions the MTP layer catches up on at once: a prompt, or what passed while its
// drafting was paused or another drafter's won. Older positions are left out of its cache
// (drafts then see less context), because catching up costs an MTP-layer prefill before the
// first draft — on a streamed model one that reads most of that layer's experts. Measured on
// the tiny model's eval prompts (bench spec): windows of 1 / 4 / 16 positions keep 41 / 66 / 86 %
// of first draft tokens, the whole prompt 86 %.
constexpr int64_t kMtpCatchUpRows = 32;
}  // namespace

std::pair<spec::DrafterKind, spec::Draft> SessionImpl::chooseDraft(std::span<const int32_t> history,
                                                                   int maxTokens,
                                                                   const GrammarMatcher* grammar,
                                                                   Sampler& draftSampler) {
  spec::SpeculationTuner* tuner = env_.speculation;
  if (!tuner || maxTokens <= 0 || tuner->wantsPlainSample()) return {};
  const SpeculationSettings settings = tuner->draftSettings();
  const spec::DraftRequest request{history, maxTokens, settings, grammar, draftSampler};
  spec::Drafter* drafters[] = {grammarDrafter_ ? &*grammarDrafter_ : nullptr, &ngram_,
                               mtp_ ? &*mtp_ : nullptr};
  for (spec::Drafter* drafter : drafters) {
    if (!drafter || !tuner->allows(drafter->kind())) continue;
    spec::Draft d = drafter->draft(request);
    if (!d.tokens.empty()) return {drafter->kind(), std::move(d)};
  }
  return {};
}

void SessionImpl::scorePrompt(std::span<const int32_t> context, int64_t firstPosition,
                              std::span<const float> hidden, int top,
                              GenerateResult& result) const {
  // The logits of a few rows at a time: a whole prompt's would be prompt x vocabulary floats.
  constexpr int64_t kRowsPerPass = 32;
  const int64_t width = transformer_.config().hiddenSize;
  const auto vocab = static_cast<size_t>(transformer_.config().vocabSize);
  const auto end = std::min<int64_t>(firstPosition + static_cast<int64_t>(hidden.size()) / width,
                                     static_cast<int64_t>(context.size()) - 1);
  for (int64_t p = firstPosition; p < end; p += kRowsPerPass) {
    const int64_t rows = std::min(kRowsPerPass, end - p);
    const std::vector<float> logits =
        transformer_.logits(hidden.data() + (p - firstPosition) * width, rows);
    for (int64_t r = 0; r < rows; ++r)  // row p + r predicts context token p + r + 1
      result.promptLogprobs.push_back(tokenLogprob({logits.data() + r * vocab, vocab},
                                                   context[static_cast<size_t>(p + r + 1)], top));
  }
}

GenerateResult SessionImpl::generate(std::span<const int32_t> context,
                                     const GenerateOptions& options,
                                     const std::function<void(std::string_view)>& onText,
                                     const std::function<void(int32_t)>& onToken) {
  if (context.empty()) throw Error("generate: the context is empty");
  if (options.maxNewTokens < 0) throw Error("generate: maxNewTokens must not be negative");
  if (!options.stop.empty() && tokenizer_ == nullptr)
    throw Error("generate: stop strings need the model's tokenizer.json");
  if (options.grammar && (tokenizer_ == nullptr || !env_.grammarVocabulary))
    throw Error("generate: a grammar needs the model's tokenizer.json");
  const int vocab = transformer_.config().vocabSize;
  if (options.grammarAfterToken < -1 || options.grammarAfterToken >= vocab)
    throw Error("generate: grammarAfterToken " + std::to_string(options.grammarAfterToken) +
                " is not a token of this model (vocabulary " + std::to_string(vocab) + ")");
  if (options.topLogprobs < -1 || options.topLogprobs > kMaxTopLogprobs)
    throw Error("generate: topLogprobs must be -1 (none) or in [0, " + std::to_string(kMaxTopLogprobs) +
                "], got " + std::to_string(options.topLogprobs));
  Sampler sampler(options.sampling);
  Sampler draftSampler(draftParams(options.sampling));
  const std::vector<int>& eosIds = transformer_.config().eosTokenIds;
  StopMatcher stops(options.stop, options.ignoreEos ? std::vector<int32_t>()
                                                    : std::vector<int32_t>(eosIds.begin(), eosIds.end()));
  std::optional<GrammarMatcher> grammar;
  if (options.grammar) grammar.emplace(options.grammar, env_.grammarVocabulary());
  // The grammar in force: from the start, or once grammarAfterToken has been generated.
  GrammarMatcher* active = grammar && options.grammarAfterToken < 0 ? &*grammar : nullptr;
  const bool feedMtp =
      mtp_ && env_.speculation && env_.speculation->settings().mtp != DrafterMode::Off;

  GenerateResult result;
  result.promptTokens = static_cast<int64_t>(context.size());
  // Prefix reuse: keep what the cache shares with the context, but always evaluate at least
  // the last context token, whose logits give the first new token.
  // A fresh session copies what another conversation with the same opening computed.
  const bool fresh = tokens_.empty();
  if (fresh && env_.prefixes && !options.promptLogprobs) {
    const int64_t copied = env_.prefixes->restore(context, cache_);
    tokens_.assign(context.begin(), context.begin() + copied);
  }
  const auto shared = std::mismatch(tokens_.begin(), tokens_.end(), context.begin(), context.end());
  const int64_t sharedTokens = shared.first - tokens_.begin();
  result.reusedTokens = std::min<int64_t>(sharedTokens, static_cast<int64_t>(context.size()) - 1);
  // Scoring reuses the rows whose scores an earlier scoring kept (entry k scores token k + 1,
  // which must be the context's too), with at least as many alternatives.
  const int wantedTop = std::max(options.topLogprobs, 0);
  if (options.promptLogprobs) {
    const int64_t valid =
        scoredTop_ >= wantedTop ? std::min<int64_t>(static_cast<int64_t>(scored_.size()), sharedTokens - 1) : 0;
    result.reusedTokens = std::clamp<int64_t>(valid, 0, result.reusedTokens);
    for (int64_t k = 0; k < result.reusedTokens; ++k) {
      result.promptLogprobs.push_back(scored_[static_cast<size_t>(k)]);
      result.promptLogprobs.back().top.resize(
          std::min(result.promptLogprobs.back().top.size(), static_cast<size_t>(wantedTop)));
    }
  }
  truncate(result.reusedTokens);

  // While generating, this session's steps may be batched with other sessions'.
  const StepBatcher::Membership membership(env_.batcher);
  const auto start = Clock::now();
  // Prefill in chunks (each a step other sessions' rows can join), never longer than the
  // memory plan's scratch holds.
  const std::span<const int32_t> newTokens = context.subspan(static_cast<size_t>(result.reusedTokens));
  const auto chunk =
      static_cast<size_t>(options.prefillChunkTokens > 0
                              ? std::min<int64_t>(options.prefillChunkTokens, kPrefillChunkTokens)
                              : kPrefillChunkTokens);
  StepResult step;
  for (size_t done = 0; done < newTokens.size(); done += chunk) {
    if (done > 0 && options.cancel && options.cancel->load()) {
      result.finishReason = "cancelled";
      result.prefillSeconds = secondsSince(start);
      return result;
    }
    const int64_t position = cache_.length();
    step = appendRows(newTokens.subspan(done, std::min(chunk, newTokens.size() - done)), false, true);
    if (feedMtp) mtp_->observe(position, step.hidden, kMtpCatchUpRows);
    if (options.promptLogprobs) scorePrompt(context, position, step.hidden, wantedTop, result);
    if (options.onPrefillProgress) options.onPrefillProgress(cache_.length(), static_cast<int64_t>(context.size()));
  }
  if (fresh && env_.prefixes) env_.prefixes->offer(context, cache_);
  if (options.promptLogprobs) {
    scored_ = result.promptLogprobs;
    scoredTop_ = wantedTop;
    if (options.onPromptLogprobs) options.onPromptLogprobs(result.promptLogprobs);
  }
  if (options.maxNewTokens == 0) {  // evaluating (and scoring) the context only
    result.finishReason = "length";
    result.prefillSeconds = secondsSince(start);
    return result;
  }
  std::optional<Tokenizer::StreamDecoder> decoder;
  if (tokenizer_) decoder.emplace(*tokenizer_);
  std::vector<int32_t> history(context.begin(), context.end());
  auto firstToken = Clock::now();

  auto emitText = [&](const StopMatcher::Output& out) {
    result.text += out.text;
    if (onText && !out.text.empty()) onText(out.text);
  };
  // One sampled token out; true when generation ends with it.
  auto emit = [&](int32_t token) {
    if (result.tokens.empty()) firstToken = Clock::now();
    result.tokens.push_back(token);
    history.push_back(token);
    if (onToken) onToken(token);
    if (grammar && !active && token == options.grammarAfterToken) active = &*grammar;
    const bool grammarDone = active && active->finished();
    emitText(stops.push(token, decoder ? decoder->push(token) : std::string()));
    if (stops.stopped() || grammarDone) {
      if (!stops.stopped()) emitText(stops.finish());
      result.finishReason = "stop";
      return true;
    }
    if (static_cast<int>(result.tokens.size()) >= options.maxNewTokens) {
      if (decoder) emitText(stops.push(decoder->flush()));
      emitText(stops.finish());
      result.finishReason = "length";
      return true;
    }
    if (options.cancel && options.cancel->load()) {
      emitText(stops.finish());
      result.finishReason = "cancelled";
      return true;
    }
    return false;
  };
  std::vector<float> masked;
  auto constrained = [&](const float* row) -> std::span<const float> {
    if (!grammar) return {row, static_cast<size_t>(vocab)};
    masked.assign(row, row + vocab);
    if (!active) {  // free text before the grammar starts, but no end yet
      for (const int eos : eosIds)
        if (eos >= 0 && eos < vocab) masked[static_cast<size_t>(eos)] = -std::numeric_limits<float>::infinity();
      return masked;
    }
    active->mask(masked);
    if (std::all_of(masked.begin(), masked.end(),
                    [](float l) { return l == -std::numeric_limits<float>::infinity(); }))
      throw Error("generate: the grammar allows no token here (it needs an end token the model lacks, or text the vocabulary cannot spell)");
    return masked;
  };
  auto accept = [&](int32_t token) {
    if (active && !active->accept(token))
      throw Error("generate: token " + std::to_string(token) + " was sampled against the grammar");
  };

  // The token chosen from a logits row: its log probability there, when asked for.
  auto noteLogprob = [&](const float* row, int32_t token) {
    if (options.topLogprobs < 0) return;
    result.logprobs.push_back(
        tokenLogprob({row, static_cast<size_t>(vocab)}, token, options.topLogprobs));
    if (options.onLogprob) options.onLogprob(result.logprobs.back());
  };

  const float* lastRow = step.logits.data() + step.logits.size() - vocab;
  int32_t next = sampler.sample(constrained(lastRow), history);
  noteLogprob(lastRow, next);
  accept(next);
  bool done = emit(next);
  while (!done) {
    const auto roundStart = Clock::now();
    const int64_t before = cache_.length();  // `next` goes here
    const int budget = options.maxNewTokens - static_cast<int>(result.tokens.size());
    auto [kind, draft] = chooseDraft(history, budget - 1, active, draftSampler);
    result.speculation.draftSeconds += secondsSince(roundStart);
    const auto drafted = static_cast<int>(draft.tokens.size());
    std::vector<int32_t> batch{next};
    batch.insert(batch.end(), draft.tokens.begin(), draft.tokens.end());
    step = appendRows(batch, drafted > 0, false);

    // Row i holds the logits after batch[i]: sample it as plain decoding would; the draft
    // token stands when it is what was sampled.
    int accepted = 0;
    int rows = 0;
    for (int i = 0; i <= drafted; ++i) {
      const float* row = step.logits.data() + static_cast<size_t>(i) * vocab;
      const std::span<const float> logits = constrained(row);
      int32_t token;
      if (i < drafted && !draft.q.empty()) {
        bool kept = false;
        token = sampler.verifyDraft(logits, history, draft.tokens[i], draft.q[i], kept);
      } else {
        token = sampler.sample(logits, history);
      }
      noteLogprob(row, token);
      accept(token);
      done = emit(token);
      rows = i + 1;
      if (done || i == drafted || token != draft.tokens[i]) {
        next = token;
        break;
      }
      ++accepted;
    }
    // Roll back the rows of rejected drafts (every layer's latent, rope and indexer keys).
    truncate(before + rows);
    if (feedMtp)
      mtp_->observe(
          before,
          {step.hidden.data(), static_cast<size_t>(rows) * transformer_.config().hiddenSize},
          kMtpCatchUpRows);
    ++result.speculation.forwards;
    result.speculation.drafted += drafted;
    result.speculation.accepted += accepted;
    if (env_.speculation) {
      const double seconds = secondsSince(roundStart);
      if (drafted == 0) env_.speculation->recordPlain(seconds);
      else env_.speculation->recordRound(kind, drafted, accepted, rows, seconds);
    }
  }
  result.prefillSeconds = std::chrono::duration<double>(firstToken - start).count();
  result.decodeSeconds = secondsSince(firstToken);
  return result;
}

}  // namespace strata::model
