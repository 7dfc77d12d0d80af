#pragma once
// Choosing the next token from logits, and stopping generation at stop strings or eos ids.
//
// Order of operations in Sampler::sample (the order vLLM and Hugging Face transformers use):
//   1. the logit bias, then penalties over `history`: repetition (divide positive logits,
//      multiply negative ones, once per distinct token), then frequency (count x penalty) and
//      presence (penalty once);
//   2. temperature 0: the argmax of the penalized logits (lowest index on ties) - nothing else;
//   3. temperature: logits / T;
//   4. top-k, 5. top-p, 6. min-p, each on what the previous step kept;
//   7. a draw from the softmax of what is left.
// Temperature comes before the truncations, so top-p and min-p act on the distribution that is
// actually sampled (top_p 0.9 keeps 90% of the mass that will be drawn from). llama.cpp's
// default chain applies temperature last instead; top-k is the same either way, top-p and
// min-p differ when T != 1.
//
// Cost per token is O(vocab): top-k selects (nth_element) and sorts only the k kept; top-p
// buckets candidates by logit and sorts only the bucket where the nucleus ends; nothing sorts
// the whole vocabulary unless the logits are all equal.
//
// A Sampler is deterministic for a given seed, build and platform: std::mt19937_64 with our own
// uniform draw (no std::*_distribution, whose results differ across standard libraries) and a
// total order (logit, then token id) wherever candidates are sorted.
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/error.h"

namespace strata {

struct SamplingParams {
  float temperature = 1.0f;        // >= 0; 0 = greedy (argmax)
  int topK = 0;                    // >= 0; 0 = off
  float topP = 1.0f;               // (0, 1]; 1 = off
  float minP = 0.0f;               // [0, 1]; 0 = off; keeps p >= minP * p_max
  float repetitionPenalty = 1.0f;  // > 0; 1 = off (llama.cpp / HF "repetition_penalty")
  float presencePenalty = 0.0f;    // [-2, 2] as in the OpenAI API; 0 = off
  float frequencyPenalty = 0.0f;   // [-2, 2] as in the OpenAI API; 0 = off
  uint64_t seed = 0;
  // (token id, bias in [-100, 100]) added to that token's logit before everything else (the
  // OpenAI API's logit_bias: -100 all but bans a token, +100 all but forces it). Ids must be in
  // the vocabulary; a repeated id adds up.
  std::vector<std::pair<int32_t, float>> logitBias;
};

// Throws strata::Error naming the first parameter out of range and the allowed range.
void validateSamplingParams(const SamplingParams& params);

struct TokenProbability {
  int32_t id;
  double p;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);  // validates

  // The next token. `history` is the window the penalties look at (the caller chooses it:
  // the whole context, or only the generated tokens); ids must be < logits.size().
  // Throws strata::Error on an empty or NaN logit row and on out-of-range history ids.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);

  // The distribution sample() draws from (steps 1-6), probabilities summing to 1, best first
  // for top-k, otherwise in an unspecified but deterministic order. Greedy: the argmax with p 1.
  std::vector<TokenProbability> distribution(std::span<const float> logits,
                                             std::span<const int32_t> history);

  // Speculative sampling (Leviathan et al. 2023; Chen et al. 2023): `draft` was drawn from the
  // draft model's distribution `q` (as distribution() gave it). Keeps it with probability
  // min(1, p/q), else draws from max(p - q, 0) renormalized; the result is distributed exactly
  // as sample() would draw. Sets `accepted`. Greedy: the argmax (accepted when it is `draft`).
  int32_t verifyDraft(std::span<const float> logits, std::span<const int32_t> history,
                      int32_t draft, std::span<const TokenProbability> q, bool& accepted);

  // Step 1 alone, in place (logit bias, then penalties): the logits the rest of the chain sees.
  void applyPenalties(std::span<float> logits, std::span<const int32_t> history);

  const SamplingParams& params() const { return params_; }

 private:
  struct Candidate {
    float logit;
    int32_t id;
  };
  size_t prepare(std::span<const float> logits, std::span<const int32_t> history);  // steps 1-6
  size_t truncateTopK(size_t count);
  size_t truncateTopP(size_t count);
  size_t truncateMinP(size_t count);
  int32_t draw(size_t count);
  double uniform();  // [0, 1)

  SamplingParams params_;
  std::mt19937_64 rng_;
  // Scratch reused across calls (a 155k-entry vocabulary is not reallocated per token).
  std::vector<float> logits_;
  std::vector<Candidate> candidates_;
  std::vector<Candidate> regrouped_;  // top-p's bucket pass
  std::vector<uint8_t> buckets_;      // top-p's bucket of each undecided candidate
  std::vector<double> weights_;
  std::vector<double> qById_;         // verifyDraft's draft distribution by token id
  std::vector<int32_t> counts_;  // per-token occurrences in history; zero between calls
};

// Watches streamed text for stop strings. Text that could be the start of a stop string (or an
// incomplete UTF-8 character) is held back until it is known not to be one, so a client never
// sees part of a stop string or half a character.
class StopMatcher {
 public:
  // Throws strata::Error on an empty stop string.
  StopMatcher(std::vector<std::string> stopStrings, std::vector<int32_t> eosIds);

  struct Output {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string or eos was reached; later pushes return nothing
  };

  // One token's decoded text (possibly part of a UTF-8 character). Stop strings are matched
  // anywhere in the text so far, also across tokens; the stop string and everything after it
  // are dropped.
  Output push(std::string_view text);
  // As push(text), except that an eos id stops without emitting its text (what was held back
  // is released).
  Output push(int32_t token, std::string_view text);
  // End of stream (length limit): releases what was held back, incomplete UTF-8 included.
  Output finish();

  bool isEos(int32_t token) const;
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::vector<int32_t> eos_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace strata
