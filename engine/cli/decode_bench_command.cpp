// bench decode: decode tokens/s of a container under a memory budget, with the limit measured in
// the same run (strata/decode_bench.h).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "strata/decode_bench.h"

namespace strata::cli {
namespace {

double mib(double bytes) { return bytes / 1048576.0; }

}  // namespace

int runBenchDecode(const Args& args) {
  args.allowOnly({"model", "ram-gb", "expert-fraction", "io", "io-depth", "tokens", "prompt-tokens",
                  "json", "record-trace", "warmup", "threads", "policy", "pinned-fraction", "no-prefetch",
                  "page-cache", "context", "seed", "data-dir"});
  DecodeBenchOptions o;
  o.model = args.require("model");
  MemorySettings& m = o.settings.memory;
  if (args.has("ram-gb") == args.has("expert-fraction"))
    throw UsageError("give exactly one of --ram-gb and --expert-fraction");
  if (args.has("ram-gb")) {
    const double gb = parseDouble(args.require("ram-gb"), "--ram-gb");
    if (gb <= 0) throw UsageError("--ram-gb must be positive");
    m.budgetBytes = static_cast<int64_t>(gb * 1e9);
  } else {
    o.expertFraction = parseDouble(args.require("expert-fraction"), "--expert-fraction");
    if (o.expertFraction < 0 || o.expertFraction > 1) throw UsageError("--expert-fraction must be in [0, 1]");
  }
  const auto io = parseIoBackend(args.get("io", "direct"));
  if (!io) throw UsageError("--io must be direct, buffered or uring");
  m.io = *io;
  m.ioDepth = parseInt(args.get("io-depth", "4"), "--io-depth");
  if (m.ioDepth < 1 || m.ioDepth > 256) throw UsageError("--io-depth must be in 1..256");
  m.cachePolicy = args.get("policy", "");
  m.pinnedFraction = parseDouble(args.get("pinned-fraction", "0.25"), "--pinned-fraction");
  m.prefetch = !args.has("no-prefetch");
  m.pageCache = args.has("page-cache");
  m.contextTokens = parseInt(args.get("context", "4096"), "--context");
  // The usage history (read at start: pinned set and cache counts; written at the end), as
  // run/chat keep it in the user's data folder. Without it every run starts cold.
  if (args.has("data-dir")) m.dataDirectory = args.require("data-dir");
  o.settings.threads = parseInt(args.get("threads", "0"), "--threads");
  o.tokens = parseInt(args.get("tokens", "32"), "--tokens");
  o.promptTokens = parseInt(args.get("prompt-tokens", "16"), "--prompt-tokens");
  o.warmupTokens = parseInt(args.get("warmup", "0"), "--warmup");
  if (o.warmupTokens < 0) throw UsageError("--warmup must not be negative");
  if (o.tokens < 1 || o.promptTokens < 1) throw UsageError("--tokens and --prompt-tokens must be at least 1");
  o.recordTrace = args.get("record-trace", "");
  o.seed = static_cast<uint64_t>(parseInt(args.get("seed", "1"), "--seed"));
  const bool json = args.has("json");

  const DecodeBenchResult r = benchDecode(o, [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
  });
  const TierSnapshot& t = r.tiers;
  const double tokens = o.tokens;
  std::printf("budget %.0f MiB: resident %.0f MiB, KV %.0f MiB, scratch %.0f MiB, pinned %.0f MiB, cache %.0f MiB (%.1f%% of %lld experts)\n",
              mib(r.budgetBytes), mib(r.plan.residentBytes), mib(r.plan.kvBytes), mib(r.plan.scratchBytes),
              mib(r.plan.pinnedBytes), mib(r.plan.cacheBytes),
              100.0 * (r.plan.pinnedBytes + r.plan.cacheBytes) / (double(r.plan.expertBytes) * r.plan.expertCount),
              static_cast<long long>(r.plan.expertCount));
  std::printf(
      "disk %.2f GB/s (%s; %.2f GB/s while decoding), memory %.2f GB/s (probes %.2f-%.2f)\n",
      r.diskGbps, t.io.c_str(), r.decodeReadGbps, r.memGbps, r.memGbpsMin, r.memGbpsMax);
  std::printf(
      "decode %.2f tok/s (median step: %.2f tok/s), limit %.2f tok/s, ratio %.2f (medians of %d "
      "segments)\n",
      r.tokS, r.medianTokS, r.limitTokS, r.ratio, r.segments);
  std::printf("hit rate %.3f (policy %s), read %.1f MiB/token, stall %.1f ms/token, prefetch precision %.2f recall %.2f, %.1f wrong guesses/token dropped unread\n",
              r.hitRate, t.cachePolicy.c_str(), mib(r.bytesReadPerToken), 1e3 * r.stallSecondsPerToken,
              r.prefetchPrecision, r.prefetchRecall, r.guessesDroppedPerToken);
  std::printf("tier snapshot %.3f ms\n", 1e3 * r.snapshotSeconds);
  if (t.pageCacheBytes >= 0)
    std::printf("page cache holds %.0f of %.0f MiB of experts (estimated)\n", mib(t.pageCacheBytes),
                mib(t.pageCacheTotal));
  std::printf("peak RSS %.0f MiB (program alone %.0f MiB), budget %.0f MiB\n", mib(r.peakRssBytes),
              mib(r.baselineRssBytes), mib(r.budgetBytes));
  (void)tokens;
  if (json) {
    const nlohmann::json j = {
        {"tok_s", r.tokS},
        {"limit_tok_s", r.limitTokS},
        {"ratio", r.ratio},
        {"median_tok_s", r.medianTokS},
        {"hit_rate", r.hitRate},
        {"bytes_read_per_token", r.bytesReadPerToken},
        {"stall_s_per_token", r.stallSecondsPerToken},
        {"disk_gbps", r.diskGbps},
        {"decode_read_gbps", r.decodeReadGbps},
        {"mem_gbps", r.memGbps},
        {"mem_gbps_min", r.memGbpsMin},
        {"mem_gbps_max", r.memGbpsMax},
        {"segments", r.segments},
        {"prefill_s", r.prefillSeconds},
        {"pinned_load_s", r.pinnedLoadSeconds},
        {"snapshot_s", r.snapshotSeconds},
        {"prefetch_precision", r.prefetchPrecision},
        {"prefetch_recall", r.prefetchRecall},
        {"guesses_dropped_per_token", r.guessesDroppedPerToken},
        {"peak_rss_bytes", r.peakRssBytes},
        {"baseline_rss_bytes", r.baselineRssBytes},
        {"budget_bytes", r.budgetBytes},
        {"resident_bytes", r.plan.residentBytes},
        {"pinned_bytes", r.plan.pinnedBytes},
        {"cache_bytes", r.plan.cacheBytes},
        {"expert_bytes", r.plan.expertBytes},
        {"expert_count", r.plan.expertCount},
        {"hits_pinned", t.counters.hitsPinned},
        {"hits_ram", t.counters.hitsRam},
        {"misses", t.counters.misses},
        {"misses_in_flight", t.counters.missesInFlight},
        {"page_cache_bytes", t.pageCacheBytes},
        {"io", t.io},
        {"policy", t.cachePolicy},
        {"tokens", o.tokens},
        {"warmup_tokens", o.warmupTokens}};
    std::puts(j.dump().c_str());
  }
  return 0;
}

}  // namespace strata::cli
