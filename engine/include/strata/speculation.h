#pragma once
// Speculative decoding: drafters guess the next tokens, one forward pass verifies them all.
//
// Lossless by construction: every verified position is sampled from the model's own logits
// exactly as plain decoding would sample it (same sampler, same random draws), and a draft
// token is kept only when it equals that sample. Output is therefore identical to plain
// decoding for the same seed, greedy or not; a verify pass computes each row exactly as a
// decode step would (bit-identical logits). Optionally (sampledMtpDrafts) the MTP head's
// drafts are sampled at temperature > 0 and verified by rejection sampling, which keeps the
// output distribution exactly the model's and accepts more often, but consumes randomness in
// a pattern that depends on which drafts were made, so a seed no longer fixes the reply (the
// self-tuner decides from measured timings).
//
// Self-tuning: each drafter's acceptance and net speed (tokens per second with it versus
// plain decoding, measured in the same run, expert reads included) are tracked; a drafter that
// loses is switched off and probed again later, after longer and longer pauses.
#include <cstdint>
#include <string>
#include <vector>

namespace strata {

// Auto: on while it measurably wins. On: always (benchmarks). Off: never.
enum class DrafterMode { Auto, On, Off };

struct SpeculationSettings {
  DrafterMode mtp = DrafterMode::Auto;      // the model's multi-token-prediction head
  DrafterMode ngram = DrafterMode::Auto;    // continuations of earlier text (prompt lookup)
  DrafterMode grammar = DrafterMode::Auto;  // what the active grammar forces
  // Most draft tokens per MTP round (the one layer chained), 1..8. In Auto the self-tuner
  // drafts fewer when measured acceptance and verify times say that is faster.
  int mtpDepth = 3;
  // A round's chain stops before a draft token (after the first) whose probability under the
  // MTP head is below this: an unsure guess is mostly rejected, yet its verify row and the
  // chain step after it cost as much as a kept one's. 0: always mtpDepth tokens. Argmax drafts
  // only (sampled drafts are accepted by probability already). 0..1.
  double mtpMinProbability = 0.8;
  // The share of the vocabulary MTP drafts come from: its first ids (byte-level BPE numbers
  // tokens in merge order, frequent ones first), plus the special tokens and every token of
  // the conversation (spec/draft_vocabulary.h). A draft's lm_head pass then reads this share of
  // the lm_head only. 1: the whole vocabulary. 0..1.
  double mtpDraftVocabulary = 0.25;
  int ngramMaxDraft = 8;   // longest n-gram draft, 1..32
  int ngramMinMatch = 2;   // tokens that must match before a draft is proposed, 1..8
  // Sample MTP drafts at temperature > 0 and verify them by rejection sampling (higher
  // acceptance; same output distribution, but not the same reply for a seed). Off: the MTP
  // head's argmax, verified like every other draft (replies reproducible per seed).
  bool sampledMtpDrafts = false;
};

// Throws strata::Error naming the first setting out of range.
void validateSpeculationSettings(const SpeculationSettings& settings);

struct DrafterStats {
  std::string name;         // "mtp", "ngram", "grammar"
  DrafterMode mode = DrafterMode::Auto;
  bool active = false;      // proposing drafts now (Auto: currently winning or being probed)
  int64_t rounds = 0;       // verify passes with this drafter's drafts
  int64_t drafted = 0;      // draft tokens proposed
  int64_t accepted = 0;     // of those, kept
  int64_t firstAccepted = 0;    // rounds whose first draft token was kept
  double acceptance = 0;        // firstAccepted / rounds (the first draft token)
  double tokensPerForward = 0;  // tokens produced per verify pass (accepted + 1)
  double speedup = 0;           // measured tokens/s with this drafter / plain decoding (0: unknown)
  int depth = 0;                // MTP, n-grams: the longest draft it makes now (tuned in Auto); grammar 0
};

// What one generate() call's speculation did.
struct SpeculationSummary {
  int64_t forwards = 0;  // forward passes after the prompt (plain steps and verify passes)
  int64_t drafted = 0;
  int64_t accepted = 0;
  double draftSeconds = 0;  // proposing drafts (MTP layer passes, n-gram scans, grammar walks)
  double tokensPerForward() const;
};

}  // namespace strata
