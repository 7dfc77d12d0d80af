// bench cache: replacement policies' hit rates on a routing trace, each as a ratio to
// Belady's optimal hit rate on the same accesses.
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "strata/cache_bench.h"

namespace strata::cli {
namespace {

double parseFraction(const std::string& text) {
  const double value = parseDouble(text, "--capacity-fraction");
  if (!(value > 0 && value <= 1))
    throw UsageError("--capacity-fraction: '" + text + "' is not a number in (0, 1]");
  return value;
}

void printTable(const CacheBenchReport& r, const std::string& path) {
  const size_t all = size_t(r.layers) * size_t(r.expertsPerLayer);
  std::printf("trace %s: model %s, %d MoE layers x %d experts, %d steps, %llu accesses\n",
              path.c_str(), r.model.c_str(), r.layers, r.expertsPerLayer, r.steps,
              static_cast<unsigned long long>(r.accesses));
  std::printf("capacity %zu experts (%.1f%% of %zu, %.2f GiB)\n\n", r.capacity,
              100.0 * double(r.capacity) / double(all), all,
              double(r.capacity) * double(r.expertBytes) / double(1ull << 30));
  std::printf("%-10s %9s %10s\n", "policy", "hit rate", "vs belady");
  for (const CachePolicyResult& p : r.policies)
    std::printf("%-10s %8.2f%% %10.3f%s\n", p.policy.c_str(), 100 * p.hitRate, p.ratioToBelady,
                p.isDefault ? "  (default)" : "");
  std::printf("%-10s %8.2f%% %10.3f\n", "belady", 100 * r.beladyHitRate, 1.0);
  std::printf("%-10s %8.2f%% %10.3f  (best fixed set: the online bound on independent routing)\n",
              "static", 100 * r.staticHitRate,
              r.beladyHitRate > 0 ? r.staticHitRate / r.beladyHitRate : 1.0);
}

}  // namespace

int runBenchCache(const Args& args) {
  args.allowOnly({"trace", "capacity", "capacity-fraction", "json"});
  CacheBenchOptions options;
  options.tracePath = args.require("trace");
  if (args.has("capacity") && args.has("capacity-fraction"))
    throw UsageError("give --capacity or --capacity-fraction, not both");
  if (args.has("capacity")) {
    const int capacity = parseInt(args.require("capacity"), "--capacity");
    if (capacity < 1) throw UsageError("--capacity must be at least 1");
    options.capacity = size_t(capacity);
  }
  if (args.has("capacity-fraction"))
    options.capacityFraction = parseFraction(args.require("capacity-fraction"));
  const CacheBenchReport report = benchCache(options);
  if (!args.has("json")) {
    printTable(report, options.tracePath);
    return 0;
  }
  for (const CachePolicyResult& p : report.policies) {
    const nlohmann::json line = {{"policy", p.policy},
                                 {"hit_rate", p.hitRate},
                                 {"belady_hit_rate", report.beladyHitRate},
                                 {"static_hit_rate", report.staticHitRate},
                                 {"ratio", p.ratioToBelady},
                                 {"capacity", report.capacity},
                                 {"accesses", report.accesses},
                                 {"default", p.isDefault}};
    std::puts(line.dump().c_str());
  }
  return 0;
}

}  // namespace strata::cli
