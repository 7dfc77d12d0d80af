#pragma once
// Converting a Hugging Face glm_moe_dsa checkpoint (FP8 with 128x128 block scales, BF16, F16
// or F32 safetensors) into a Strata container: int8/int4 weights, routed experts laid out for
// one-read streaming (docs/container-format.md).
//
// The conversion reads shard by shard with bounded memory (a few row chunks of one tensor at a
// time, whatever the tensor's size), is resumable (a journal in the output directory: kill it
// at any moment, rerun with the same arguments, and it continues; the result is byte-identical
// to an uninterrupted run), and with deleteInput removes each source shard once everything it
// held is converted and synced, so it never needs room for both copies.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "strata/error.h"

namespace strata {

struct ConvertOptions {
  std::filesystem::path input;     // Hugging Face model folder
  std::filesystem::path output;    // new or empty directory, or an interrupted conversion's
  std::string policy = "default";  // see convertPolicyNames()
  int threads = 0;                 // quantization threads; 0: OpenMP's default
  bool deleteInput = false;        // remove source shards as soon as they are converted
  // Source bytes read at once from a large tensor (its rows are converted chunk by chunk).
  uint64_t chunkBytes = uint64_t{64} << 20;
  // Output bytes written between syncs of the output and the journal; a kill redoes at most
  // this much. 0 syncs after every tensor.
  uint64_t commitBytes = uint64_t{256} << 20;
  bool keepJournal = false;  // keep the work directory (.strata-convert) after success
};

struct ConvertProgress {
  enum class Phase { Converting, Finishing, Done };
  Phase phase = Phase::Converting;
  int64_t unitsDone = 0;  // tensors and experts finished, earlier runs included
  int64_t unitsTotal = 0;
  uint64_t bytesDone = 0;  // source bytes converted, earlier runs included
  uint64_t bytesTotal = 0;
  double seconds = 0;      // since this run started
  double mbPerSecond = 0;  // source MB (1e6 bytes) converted per second in this run
  double etaSeconds = -1;  // -1 until there is a rate
  std::string current;     // the unit just finished
  int shardsDeleted = 0;

  double percent() const { return bytesTotal ? 100.0 * double(bytesDone) / double(bytesTotal) : 0; }
};

struct ConvertReport {
  bool alreadyComplete = false;  // the output was a finished container of this input and policy
  int64_t unitsConverted = 0;    // in this run
  int64_t unitsResumed = 0;      // found done by an earlier run
  uint64_t sourceBytes = 0;      // converted in this run
  uint64_t containerBytes = 0;   // size of the container's files
  uint64_t residentBytes = 0;    // of which the resident file
  double seconds = 0;
  double mbPerSecond = 0;
  int shardsDeleted = 0;
  std::string fingerprint;  // of the source
};

// Throws strata::Error with a message naming the file, tensor or option at fault. A failed or
// interrupted conversion leaves no manifest: the output never looks like a finished container.
// An exception thrown by `progress` stops the conversion where it is (as a kill would).
ConvertReport convertModel(const ConvertOptions& options,
                           const std::function<void(const ConvertProgress&)>& progress = {});

// "default", "int8", "int4-g32", "int4-g64", "int4-g128", "int4-row".
std::vector<std::string> convertPolicyNames();

}  // namespace strata
