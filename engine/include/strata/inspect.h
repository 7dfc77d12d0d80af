#pragma once
// What a model folder holds and whether it fits this machine, without loading it: the basis of
// `strata-cli inspect` and of the app's model list. Works on Hugging Face folders (reading only
// config.json and the safetensors headers) and on Strata containers (the manifest and headers).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "strata/error.h"

namespace strata {

// Tensors of one role stored in one format.
struct TensorCensusRow {
  std::string role;    // "routed_expert", "attention", "norm", ... (convert/policy.h roles)
  std::string format;  // container: "int4-g32", "int8-row", "bf16", "f32"; HF: the dtype
  int64_t tensors = 0;
  uint64_t bytes = 0;
};

// A Hugging Face folder's sizes once converted with one policy.
struct ConvertedSize {
  std::string policy;
  uint64_t residentBytes = 0;  // as the engine will hold them
  uint64_t streamedBytes = 0;
  uint64_t expertBytes = 0;
};

struct ModelSummary {
  std::filesystem::path directory;
  bool isContainer = false;  // else a Hugging Face folder
  std::string architecture;  // config.json "architectures"[0]
  std::string modelType;
  int hiddenSize = 0;
  int vocabSize = 0;
  int layers = 0;  // decoder layers, MTP excluded
  int denseLayers = 0;
  int moeLayers = 0;
  bool hasMtp = false;
  int routedExperts = 0;  // per MoE layer
  int expertsPerToken = 0;
  int sharedExperts = 0;
  std::string weightFormat;  // HF: "fp8-e4m3 (128x128 blocks)" / "bf16" ...; container: policy

  uint64_t bytesOnDisk = 0;    // every file in the folder
  uint64_t residentBytes = 0;  // held in RAM (all but routed experts), as the app holds them
  uint64_t streamedBytes = 0;  // routed experts, as stored
  uint64_t expertBytes = 0;    // one routed expert: the unit of streaming
  // Hugging Face folders: the same after conversion with the default policy.
  uint64_t convertedResidentBytes = 0;
  uint64_t convertedStreamedBytes = 0;
  uint64_t convertedExpertBytes = 0;
  // Hugging Face folders: the same under every convert policy, "default" first.
  std::vector<ConvertedSize> conversions;
  uint64_t kvBytesPerToken = 0;  // the engine's KV cache (f32 latent, rope key, indexer key)
  std::string sourceFingerprint;
  std::vector<TensorCensusRow> census;  // sorted by bytes, largest first
};

struct MachineSummary {
  uint64_t ramTotal = 0;      // /proc/meminfo MemTotal
  uint64_t ramAvailable = 0;  // MemAvailable
  uint64_t diskFree = 0;      // statvfs of the model's filesystem, for an unprivileged user
  int cpus = 0;
  std::string cpuModel;
  bool avx2 = false;
  bool avx512f = false;
  bool avx512vnni = false;
  bool avxvnni = false;
  std::string integerKernels;  // the int8/int4 kernel path the engine picks here, e.g. "avx512vnni-256"
};

struct FitVerdict {
  uint64_t neededBytes = 0;  // resident weights + KV for `contextTokens`
  bool fits = false;         // needed <= RAM available
  bool fitsTotal = false;    // needed <= RAM total (fits once other programs give memory back)
  std::string text;          // one sentence for the user
};

// Throws strata::Error naming the file at fault.
ModelSummary inspectModel(const std::filesystem::path& dir);
MachineSummary inspectMachine(const std::filesystem::path& diskPath);
FitVerdict fitVerdict(const ModelSummary& model, const MachineSummary& machine,
                      int contextTokens = 8192);
// A Hugging Face folder: the policy to convert it with for this machine, the most exact whose
// resident weights and KV cache for `contextTokens` fit the RAM available ("default", then
// "int4-g32", "int4-g64", "int4-g128", "int4-row"); empty when none does, or for a container.
std::string policyThatFits(const ModelSummary& model, const MachineSummary& machine,
                           int contextTokens = 8192);

}  // namespace strata
