#pragma once
// The container a conversion will write, decided before any data is read: every file, every
// tensor's format and byte offset, and the units of work. It depends only on the source table,
// the config and the policy, never on timing, so an interrupted and resumed conversion writes
// the same bytes to the same places as an uninterrupted one.
#include <cstdint>
#include <string>
#include <vector>

#include "convert/policy.h"
#include "convert/source.h"
#include "io/container_format.h"

namespace strata::convert {

// One unit of work: a resident tensor, or a routed expert (its gate, up and down together, so
// the expert's bytes and checksum are produced in one piece and written with one pwrite).
struct ConvertUnit {
  std::string id;            // the tensor name, or "layer L expert E"
  int file = 0;              // index into ContainerPlan::files
  int tensor = -1;           // resident units: index into that file's tensors
  int expert = -1;           // expert units: index into that file's experts
  std::vector<int> sources;  // source tensor indices (expert units: gate, up, down)
  std::vector<int> shards;   // every shard the unit reads (weights and scales), ascending
  uint64_t sourceBytes = 0;  // bytes it reads
};

struct ContainerPlan {
  io::ContainerIdentity identity;
  std::vector<io::ContainerFile> files;  // resident first, then experts files by layer
  std::vector<ConvertUnit> units;        // in processing order: by first shard, then layout
  uint64_t sourceBytes = 0;
};

inline constexpr const char* kConverterName = "strata-convert 1";

// Throws strata::Error naming the tensor when the checkpoint does not fit the config (a missing
// or misshapen routed expert, experts in a dense layer).
ContainerPlan planContainer(const SourceTable& table, const model::ModelConfig& config,
                            const Policy& policy);

// Sorts names with their numbers compared as numbers: layers.2 < layers.10.
bool naturalLess(const std::string& a, const std::string& b);

}  // namespace strata::convert
