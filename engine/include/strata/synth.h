#pragma once
// Synthetic GLM-5-shaped models for benchmarks: random weights written directly as a Strata
// container, laid out exactly as `convert --policy NAME` lays out a BF16 checkpoint of that
// shape (by default routed experts int4 group 32, the rest int8 per row, router, norms and
// indexer weights_proj bf16, e_score_correction_bias f32), without a 400 GB download.
//
// The weights are random and only numerically sane (every linear has std 1/sqrt(fan_in), norms
// 1, embeddings std 1), so a forward pass neither overflows nor collapses but the model
// produces gibberish by design. Router biases give each MoE layer a skewed expert popularity:
// a token's experts look like k draws without replacement from a Zipf law
// (synth/router_skew.h), so expert caches see a realistic, tunable skew. The output is a pure
// function of the options and the build: the same seed gives byte-identical files whatever
// the thread count.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "strata/error.h"

namespace strata {

struct SynthOptions {
  std::filesystem::path output;      // must not exist, or be an empty directory
  std::string preset;                // see synthPresetNames(); empty when configFile is given
  std::filesystem::path configFile;  // any glm_moe_dsa config.json, instead of a preset
  // Expert popularity per MoE layer: the expert of rank r (in a random per-layer order) has
  // popularity proportional to 1 / r^zipf, and each token's experts are drawn from it without
  // replacement. 0 is uniform.
  double zipf = 1.0;
  uint64_t seed = 1;
  int threads = 0;  // 0: OpenMP's default
  std::string policy = "default";  // a convert policy (convert/policy.h policyNames())
  // Plan only: report the sizes (the container's, and what the engine would hold in RAM) and
  // write nothing; `output` is not needed. For any config.json, before downloading a model.
  bool dryRun = false;
};

struct SynthProgress {
  int64_t unitsDone = 0;  // tensors and experts written
  int64_t unitsTotal = 0;
  uint64_t bytesDone = 0;  // container data bytes written
  uint64_t bytesTotal = 0;
  double seconds = 0;
  double mbPerSecond = 0;  // MB (1e6 bytes) written per second
};

struct SynthReport {
  int64_t units = 0;            // resident tensors and routed experts written
  int64_t parameters = 0;       // logical weights of the model (MTP layer included)
  uint64_t containerBytes = 0;  // size of the container's safetensors files
  uint64_t residentBytes = 0;   // of which the resident file
  // What the engine holds in RAM for the resident file at native precision (the app's): some
  // small tensors are widened to f32 (tier/memory_plan.cpp).
  uint64_t heldResidentBytes = 0;
  int64_t experts = 0;       // routed experts, streamed from disk
  uint64_t expertBytes = 0;  // one read of an expert of the first MoE layer
  uint64_t kvBytesPerToken = 0;  // the engine's KV cache per token at its default f32
  double seconds = 0;
  double mbPerSecond = 0;
  std::string fingerprint;  // the container's source fingerprint (of the synthetic config)
};

// Writes the model into options.output. Refuses, deleting nothing, when the output is a
// non-empty directory or the disk lacks the room (the message gives both numbers). On a
// failure while writing it removes the files it created. Throws strata::Error naming the
// option, field or file at fault.
SynthReport synthesizeModel(const SynthOptions& options,
                            const std::function<void(const SynthProgress&)>& progress = {});

// "medium" (hidden 2048, 10 layers, 128 experts top-8, ~5.7B parameters), "large" (16 layers).
std::vector<std::string> synthPresetNames();
// The convert policies a synthetic model can be stored in ("default" first).
std::vector<std::string> synthPolicyNames();

}  // namespace strata
