#pragma once
// Reads the PyTorch reference fixtures under tests/data/<name>/ (written by
// tools/reference/make_fixtures.py; see tools/reference/README.md for the format).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fixtures {

inline std::filesystem::path dataDir() { return STRATA_TEST_DATA_DIR; }

inline nlohmann::json readJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path.string());
  return nlohmann::json::parse(in);
}

inline std::vector<float> readFloats(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open fixture " + path.string());
  in.seekg(0, std::ios::end);
  const auto bytes = static_cast<size_t>(in.tellg());
  in.seekg(0);
  std::vector<float> values(bytes / sizeof(float));
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(bytes));
  return values;
}

struct Reference {
  std::filesystem::path dir;
  nlohmann::json meta;
  std::vector<int32_t> prompt;
  size_t vocab = 0;
  std::vector<float> logits;       // [prompt x vocab]
  std::vector<float> mtpLogits;    // [prompt-1 x vocab]
  std::vector<float> denseLogits;  // [prompt x vocab], DSA off

  static Reference load(const std::string& name) {
    Reference r;
    r.dir = dataDir() / name;
    r.meta = readJson(r.dir / "reference.json");
    r.prompt = r.meta.at("prompt").get<std::vector<int32_t>>();
    r.vocab = readJson(r.dir / "config.json").at("vocab_size").get<size_t>();
    r.logits = readFloats(r.dir / "logits.f32");
    r.mtpLogits = readFloats(r.dir / "mtp_logits.f32");
    r.denseLogits = readFloats(r.dir / "dense_logits.f32");
    return r;
  }
};

inline float maxAbs(const std::vector<float>& v) {
  float m = 0.0f;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Largest |a - b|; +inf when the sizes differ so a shape bug cannot pass.
inline float maxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  float m = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace fixtures
