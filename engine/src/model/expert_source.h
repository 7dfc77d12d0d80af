#pragma once
// Where the forward pass gets routed experts from. ResidentExperts (model/weights.cpp) holds all
// of them; tier::ExpertStore streams them from a container through its cache tiers. The MoE
// code announces what a layer needs before it computes, so a streaming source can read several
// experts at once and the compute can start on those already in memory.
#include <cstdint>
#include <memory>
#include <span>

namespace strata::model {

struct FeedForwardWeights;

// Keeps an expert's weights alive while the caller computes with it, even if a cache evicts it
// meanwhile (its bytes are released when the last handle goes).
using ExpertHandle = std::shared_ptr<const FeedForwardWeights>;

class ExpertSource {
 public:
  virtual ~ExpertSource() = default;

  // `experts` of `layer` will be needed soon: start reading the missing ones. `predicted`:
  // a guess for a later layer, most likely expert first (may be wrong; read after the certain
  // ones). Without `predicted`, the set is exactly what the layer uses in this step.
  virtual void prefetch(int layer, std::span<const int> experts, bool predicted) = 0;
  // The expert if it is in memory now, else nullptr; never waits.
  virtual ExpertHandle tryGet(int layer, int expert) = 0;
  // The expert, waiting for its read if needed. Throws strata::Error on I/O or checksum errors.
  virtual ExpertHandle get(int layer, int expert) = 0;
  // Whether prefetching a predicted next layer is worth its router cost (streaming sources).
  virtual bool wantsPrediction() const = 0;
  virtual int64_t residentBytes() const = 0;  // expert bytes held in memory now
};

}  // namespace strata::model
