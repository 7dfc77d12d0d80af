// bench serve: aggregate tokens/s of 1, 2, 4 concurrent streams with and without batching the
// sessions' steps (strata/serve_bench.h).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "commands.h"
#include "memory_options.h"
#include "precision_options.h"
#include "strata/serve_bench.h"

namespace strata::cli {

int runBenchServe(const Args& args) {
  args.allowOnly({"model", "streams", "tokens", "prompt-tokens", "repeats", "threads", "ram-gb",
                  "io", "json", "precision", "kv-precision"});
  ServeBenchOptions o;
  o.model = args.require("model");
  o.streams.clear();
  std::stringstream streams(args.get("streams", "1,2,4"));
  for (std::string s; std::getline(streams, s, ',');) o.streams.push_back(parseInt(s, "--streams"));
  o.tokens = parseInt(args.get("tokens", "32"), "--tokens");
  o.promptTokens = parseInt(args.get("prompt-tokens", "16"), "--prompt-tokens");
  o.repeats = parseInt(args.get("repeats", "3"), "--repeats");
  o.settings.threads = parseInt(args.get("threads", "0"), "--threads");
  applyPrecisionOptions(args, o.settings);
  applyMemoryOptions(args, o.settings.memory);
  const bool json = args.has("json");

  const auto rows = benchServe(o, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  std::printf("%-8s %-10s %10s %12s %8s %11s\n", "streams", "steps", "tok/s", "per stream", "scaling",
              "mean batch");
  for (const ServeBenchRow& r : rows)
    std::printf("%-8d %-10s %10.1f %12.1f %8.2f %11.2f\n", r.streams, r.batched ? "batched" : "separate",
                r.tokS, r.perStreamTokS, r.scaling, r.meanBatch);
  if (json)
    for (const ServeBenchRow& r : rows) {
      const nlohmann::json j = {{"streams", r.streams},   {"batched", r.batched},
                                {"tok_s", r.tokS},         {"per_stream_tok_s", r.perStreamTokS},
                                {"scaling", r.scaling},    {"mean_batch", r.meanBatch},
                                {"seconds", r.seconds},    {"tokens_per_stream", o.tokens}};
      std::puts(j.dump().c_str());
    }
  return 0;
}

}  // namespace strata::cli
