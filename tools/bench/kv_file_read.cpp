// Read time of a KV cache file with GLM-5's dims (78 layers, kv_lora_rank 512, rope 64, index 128
// on every layer) for 4,096 tokens in one precision, against the same run's cost of allocating
// and copying an f32 cache of that size in memory. The first read of a process pays for fresh
// pages; later ones mostly reuse memory the allocator kept, so both are reported. One JSON line;
// run through tools/bench/kv_file_read.sh (needs ~1 GB of free disk and ~3 GB of RAM).
//
//   kv_file_read_bench WORK_DIR f32|bf16|f16
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kv/kv_file.h"

using namespace strata;
using namespace strata::kv;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int kTokens = 4096, kLayers = 78, kRepeats = 5;
  const std::optional<KvPrecision> precision = parseKvPrecision(argc > 2 ? argv[2] : "");
  if (argc != 3 || !precision) {
    std::fprintf(stderr, "usage: kv_file_read_bench WORK_DIR f32|bf16|f16\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  KvFileHeader h;
  h.modelFingerprint = "0123456789abcdef";
  h.layerCount = kLayers;
  h.dims = {512, 64, 128};
  h.layerHasIndexKey.assign(kLayers, true);

  KvCache cache(kLayers, h.dims);
  uint32_t state = 1;
  const auto fill = [&](std::vector<float>& v, size_t count) {
    v.resize(count);
    for (float& x : v) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<float>(static_cast<int32_t>(state) >> 8) * 1e-6f;
    }
  };
  for (int l = 0; l < kLayers; ++l) {
    fill(cache.layer(l).latent, size_t{kTokens} * 512);
    fill(cache.layer(l).ropeKey, size_t{kTokens} * 64);
    fill(cache.layer(l).indexKey, size_t{kTokens} * 128);
  }
  cache.commit(kTokens);
  std::vector<int32_t> tokens(kTokens);
  for (int i = 0; i < kTokens; ++i) tokens[static_cast<size_t>(i)] = i * 7 % 150000;

  {
    const KvPrecision p = *precision;
    h.precision = p;
    const auto path = dir / ("strata-kv-read-bench-" + std::string(kvPrecisionName(p)) + ".kv");
    Clock::time_point start = Clock::now();
    KvFileWriter::create(path, h).sync(tokens, cache);
    const double saveMs = msSince(start);
    const auto bytes = static_cast<double>(std::filesystem::file_size(path));
    std::vector<double> reads, copies;
    for (int r = 0; r < kRepeats; ++r) {
      start = Clock::now();
      const KvFileState read = readKvFile(path, h.modelFingerprint, &h);
      reads.push_back(msSince(start));
      if (read.tokens != tokens) throw Error("the file read back other tokens");
    }
    for (int r = 0; r < kRepeats; ++r) {
      start = Clock::now();
      KvCache copy(kLayers, h.dims);
      for (int l = 0; l < kLayers; ++l) {
        copy.layer(l).latent = cache.layer(l).latent;
        copy.layer(l).ropeKey = cache.layer(l).ropeKey;
        copy.layer(l).indexKey = cache.layer(l).indexKey;
      }
      copies.push_back(msSince(start));
    }
    std::filesystem::remove(path);
    const double first = reads.front();
    const double later = median(std::vector<double>(reads.begin() + 1, reads.end()));
    std::printf(
        "{\"precision\":\"%s\",\"tokens\":%d,\"file_bytes\":%.0f,\"save_ms\":%.1f,"
        "\"first_read_ms\":%.1f,\"later_read_ms\":%.1f,\"alloc_copy_f32_ms\":%.1f,"
        "\"later_read_to_alloc_copy\":%.2f}\n",
        std::string(kvPrecisionName(p)).c_str(), kTokens, bytes, saveMs, first, later,
        median(copies), later / median(copies));
  }
  return 0;
}
