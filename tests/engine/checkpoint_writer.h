#pragma once
// Writes Hugging Face-style checkpoints for the converter tests: safetensors files built byte
// by byte (independently of the engine's writer), an index for sharded ones, and random
// tensors. Also reads a checkpoint's tensors back raw so a test can edit and rewrite it.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "quant/convert.h"

namespace testckpt {

namespace fs = std::filesystem;

struct Tensor {
  std::string name;
  std::string dtype;  // "F32", "BF16", "F8_E4M3", ...
  std::vector<int64_t> shape;
  std::string data;
};

inline void writeBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// 8-byte little-endian length, the JSON header padded to 8 bytes, the data back to back.
inline std::string safetensorsFile(const std::vector<Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::string data;
  for (const Tensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + t.data.size()}}};
    data += t.data;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  return file + text + data;
}

// One shard -> model.safetensors; several -> model-0000i-of-0000n.safetensors and an index.
inline void writeCheckpoint(const fs::path& dir, const std::string& configText,
                            const std::vector<std::vector<Tensor>>& shards) {
  fs::create_directories(dir);
  writeBytes(dir / "config.json", configText);
  if (shards.size() == 1) {
    writeBytes(dir / "model.safetensors", safetensorsFile(shards[0]));
    return;
  }
  nlohmann::json index;
  index["metadata"] = nlohmann::json::object();
  index["weight_map"] = nlohmann::json::object();
  for (size_t s = 0; s < shards.size(); ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", s + 1, shards.size());
    writeBytes(dir / name, safetensorsFile(shards[s]));
    for (const Tensor& t : shards[s]) index["weight_map"][t.name] = name;
  }
  writeBytes(dir / "model.safetensors.index.json", index.dump(1));
}

// Every tensor of a checkpoint directory, raw, grouped by shard file (sorted by name).
inline std::vector<std::vector<Tensor>> readCheckpoint(const fs::path& dir) {
  const auto store = strata::io::TensorStore::openDirectory(dir);
  std::map<int, std::vector<Tensor>> byFile;
  for (const std::string& name : store.names()) {
    const strata::io::TensorInfo& info = store.get(name);
    const auto raw = store.readRaw(info);
    byFile[info.fileIndex].push_back(
        {name, std::string(strata::io::dtypeName(info.dtype)), info.shape,
         std::string(reinterpret_cast<const char*>(raw.data()), raw.size())});
  }
  std::vector<std::vector<Tensor>> shards;
  for (auto& [file, tensors] : byFile) shards.push_back(std::move(tensors));
  return shards;
}

inline Tensor* findTensor(std::vector<std::vector<Tensor>>& shards, const std::string& name) {
  for (auto& shard : shards)
    for (Tensor& t : shard)
      if (t.name == name) return &t;
  return nullptr;
}

// Deterministic pseudo-random values, roughly N(0, scale^2).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  float normal(float scale) {
    float sum = 0;
    for (int i = 0; i < 4; ++i) sum += static_cast<float>(next() >> 40) / 16777216.0f - 0.5f;
    return sum * 1.7320508f * scale;
  }

 private:
  uint64_t state_;
};

inline int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline Tensor randomBf16(const std::string& name, std::vector<int64_t> shape, Random& rng,
                         float scale) {
  std::string data(static_cast<size_t>(elements(shape)) * 2, '\0');
  for (int64_t i = 0; i < elements(shape); ++i) {
    const uint16_t bits = strata::quant::f32ToBf16(rng.normal(scale));
    std::memcpy(data.data() + 2 * i, &bits, 2);
  }
  return {name, "BF16", std::move(shape), std::move(data)};
}

inline Tensor randomF32(const std::string& name, std::vector<int64_t> shape, Random& rng,
                        float scale) {
  std::string data(static_cast<size_t>(elements(shape)) * 4, '\0');
  for (int64_t i = 0; i < elements(shape); ++i) {
    const float v = rng.normal(scale);
    std::memcpy(data.data() + 4 * i, &v, 4);
  }
  return {name, "F32", std::move(shape), std::move(data)};
}

}  // namespace testckpt
