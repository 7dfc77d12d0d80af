#pragma once
// `strata-cli bench spec`: what each drafter buys, measured against plain decoding in the same
// run. For every mode (the model in RAM; streamed from a container under a budget that holds
// only part of its experts) and drafter, the model's eval prompts are decoded greedily with
// that drafter forced on, and with every drafter on self-tuning ("auto"); plain decoding runs
// interleaved with them, and the speed-up is the median over repeats of the ratio of decode
// tokens/s (prefill excluded). The grammar drafter runs on the JSON prompts under a JSON Schema
// built from each prompt's expected keys, against plain decoding under the same grammar.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "strata/engine.h"

namespace strata {

struct SpecBenchOptions {
  std::filesystem::path model;    // a Hugging Face folder or a Strata container
  std::filesystem::path prompts;  // eval rows {"task", "messages", "answer"}; empty: model/eval.jsonl
  std::vector<std::string> modes{"ram", "stream"};
  int promptCount = 12;           // prompts per run (spread over the file)
  int maxNewTokens = 64;
  int repeats = 3;
  int mtpDepth = 3;
  double mtpMinProbability = SpeculationSettings{}.mtpMinProbability;
  double mtpDraftVocabulary = SpeculationSettings{}.mtpDraftVocabulary;
  double streamExpertFraction = 0.25;  // stream mode: cache for this fraction of the experts
  std::filesystem::path workDirectory;  // stream mode converts a checkpoint here (empty: temp)
  EngineSettings settings;             // threads, precision, kernels
};

struct SpecBenchRow {
  std::string drafter;  // "mtp", "ngram", "grammar", "auto"
  std::string mode;     // "ram" or "stream"
  double acceptance = 0;        // first draft token kept, per verify pass
  double tokensPerForward = 0;  // tokens per forward pass after the prompt
  double speedup = 0;           // median ratio of decode tokens/s to plain decoding
  double tokensPerSecond = 0;   // median, with the drafter
  double plainTokensPerSecond = 0;
  // Where a round's time goes, in plain decode steps (medians): proposing its drafts, and what
  // its verify pass costs beyond a plain step (the extra rows, their experts, the rollback).
  // speedup ~ tokensPerForward / (1 + draftCost + verifyCost); `ceiling` is the speed-up these
  // drafts would give if verifying them were free: tokensPerForward / (1 + draftCost).
  double draftCost = 0, verifyCost = 0, ceiling = 0;
  int64_t drafted = 0, accepted = 0, rounds = 0;
};

// `progress` sees a line per run. Throws strata::Error (no prompts, a model without MTP for
// the mtp rows is skipped rather than failed).
std::vector<SpecBenchRow> benchSpeculation(const SpecBenchOptions& options,
                                           const std::function<void(const std::string&)>& progress = {});

}  // namespace strata
