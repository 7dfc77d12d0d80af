#pragma once
// --speculate, --mtp-depth, --mtp-min-prob and --mtp-vocab for the commands that generate (run,
// chat, serve).
#include <sstream>
#include <string>

#include "args.h"
#include "strata/error.h"
#include "strata/speculation.h"

namespace strata::cli {

inline const char* kSpeculationOptionsUsage =
    "[--speculate auto|off|mtp,ngram,grammar] [--mtp-depth N] [--mtp-min-prob P] [--mtp-vocab F]";

// auto (default): every drafter self-tuning; off: plain decoding; a list: those drafters
// always on, the others off.
inline void applySpeculationOptions(const Args& args, SpeculationSettings& s) {
  const std::string mode = args.get("speculate", "auto");
  if (mode == "off") {
    s.mtp = s.ngram = s.grammar = DrafterMode::Off;
  } else if (mode != "auto") {
    s.mtp = s.ngram = s.grammar = DrafterMode::Off;
    std::stringstream list(mode);
    for (std::string name; std::getline(list, name, ',');) {
      if (name == "mtp") s.mtp = DrafterMode::On;
      else if (name == "ngram") s.ngram = DrafterMode::On;
      else if (name == "grammar") s.grammar = DrafterMode::On;
      else throw UsageError("--speculate: expected auto, off or a list of mtp, ngram, grammar; got '" + name + "'");
    }
  }
  if (args.has("mtp-depth")) s.mtpDepth = parseInt(args.require("mtp-depth"), "--mtp-depth");
  if (args.has("mtp-min-prob"))
    s.mtpMinProbability = parseDouble(args.require("mtp-min-prob"), "--mtp-min-prob");
  if (args.has("mtp-vocab"))
    s.mtpDraftVocabulary = parseDouble(args.require("mtp-vocab"), "--mtp-vocab");
  try {
    validateSpeculationSettings(s);
  } catch (const Error& e) {
    throw UsageError(std::string("--mtp-depth/--mtp-min-prob/--mtp-vocab: ") + e.what());
  }
}

}  // namespace strata::cli
