#pragma once
// The config.json of a synthetic model: a preset's or a given file's, plus a
// "strata_synthetic" object recording how the weights were made (so inspect, and a user
// reading the file, can tell the model is random), validated as the engine will load it.
#include <string>
#include <vector>

#include "model/config.h"
#include "strata/synth.h"

namespace strata::synth {

inline constexpr const char* kGeneratorName = "strata-synth 1";

struct SyntheticConfig {
  std::string text;  // config.json as written into the container
  model::ModelConfig config;
  std::string origin;  // "preset medium" or "config NAME.json", recorded in the model
};

// Throws strata::Error for an unknown preset or an invalid config file (naming it).
SyntheticConfig makeSyntheticConfig(const SynthOptions& options);

const std::vector<std::string>& presetNames();

}  // namespace strata::synth
