#pragma once
// Random weights written straight into their stored form: int8/int4 tensors get random codes
// and one scale per group chosen so the values have the wanted standard deviation (no float
// matrix is ever quantized, which is what makes writing gigabytes disk-bound), f32/bf16 ones
// get their values. Every row draws from its own generator, seeded from the model seed, the
// tensor name and the row, so the bytes do not depend on chunking or thread count.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convert/policy.h"
#include "io/container_format.h"

namespace strata::synth {

// xoshiro256** (Blackman and Vigna), seeded through splitmix64: fast, and good enough that
// weights look like noise to every kernel.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();  // [0, 1), 53 bits

 private:
  uint64_t s_[4];
};

// A seed for one tensor (or other named stream) of the model.
uint64_t streamSeed(uint64_t modelSeed, const std::string& name);

// How a tensor's values are drawn: uniform with standard deviation `value`, or all `value`.
struct ValueRule {
  enum class Kind { Random, Constant };
  Kind kind = Kind::Random;
  float value = 0;
};

// Embeddings std 1; linears (router and lm_head included) std 1/sqrt(fan_in), which keeps
// activations O(1) through every layer; norm weights 1 and biases 0. Router biases are not
// drawn (synth/router_skew.h).
ValueRule valueRule(const convert::TensorName& tensor, const io::TensorEntry& entry);

// Writes rows [row0, row0 + rows) of `entry` as stored: data at `data` (row row0 first) and,
// for integer formats, scales at `scales`. Padding columns get code 0 and groups lying wholly
// in the padding scale 0, as quant::quantizeMatrix writes them.
void fillRows(const io::TensorEntry& entry, const ValueRule& rule, uint64_t tensorSeed,
              int64_t row0, int64_t rows, std::byte* data, std::byte* scales);

// Writes given values (a 1-D f32 or bf16 tensor) as stored.
void storeValues(const io::TensorEntry& entry, const std::vector<float>& values, std::byte* data);

}  // namespace strata::synth
