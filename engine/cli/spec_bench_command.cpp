// bench spec: acceptance and speed-up of each drafter against plain decoding measured in the
// same run (strata/spec_bench.h).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "commands.h"
#include "precision_options.h"
#include "strata/spec_bench.h"

namespace strata::cli {

int runBenchSpec(const Args& args) {
  args.allowOnly({"model", "prompts", "modes", "count", "tokens", "repeats", "depth",
                  "mtp-min-prob", "mtp-vocab", "expert-fraction", "work", "threads", "json",
                  "precision", "kv-precision"});
  SpecBenchOptions o;
  o.model = args.require("model");
  o.prompts = args.get("prompts", "");
  o.modes.clear();
  std::stringstream modes(args.get("modes", "ram,stream"));
  for (std::string m; std::getline(modes, m, ',');) o.modes.push_back(m);
  o.promptCount = parseInt(args.get("count", "12"), "--count");
  o.maxNewTokens = parseInt(args.get("tokens", "64"), "--tokens");
  o.repeats = parseInt(args.get("repeats", "3"), "--repeats");
  o.mtpDepth = parseInt(args.get("depth", "3"), "--depth");
  if (args.has("mtp-min-prob")) o.mtpMinProbability = parseDouble(args.require("mtp-min-prob"), "--mtp-min-prob");
  if (args.has("mtp-vocab"))
    o.mtpDraftVocabulary = parseDouble(args.require("mtp-vocab"), "--mtp-vocab");
  o.streamExpertFraction = parseDouble(args.get("expert-fraction", "0.25"), "--expert-fraction");
  if (o.streamExpertFraction <= 0 || o.streamExpertFraction >= 1)
    throw UsageError("--expert-fraction must be in (0, 1): streaming needs a cache smaller than the experts");
  o.workDirectory = args.get("work", "");
  o.settings.threads = parseInt(args.get("threads", "0"), "--threads");
  applyPrecisionOptions(args, o.settings);
  const bool json = args.has("json");

  const auto rows = benchSpeculation(o, [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
  });
  std::printf("%-8s %-7s %10s %12s %8s %10s %10s %6s %7s %8s\n", "drafter", "mode", "acceptance",
              "tok/forward", "speedup", "tok/s", "plain", "draft", "verify", "ceiling");
  for (const SpecBenchRow& r : rows)
    std::printf("%-8s %-7s %10.3f %12.2f %8.2f %10.1f %10.1f %6.2f %7.2f %8.2f\n", r.drafter.c_str(),
                r.mode.c_str(), r.acceptance, r.tokensPerForward, r.speedup, r.tokensPerSecond,
                r.plainTokensPerSecond, r.draftCost, r.verifyCost, r.ceiling);
  if (json)
    for (const SpecBenchRow& r : rows) {
      const nlohmann::json j = {{"drafter", r.drafter},
                                {"mode", r.mode},
                                {"acceptance", r.acceptance},
                                {"tokens_per_forward", r.tokensPerForward},
                                {"speedup", r.speedup},
                                {"tok_s", r.tokensPerSecond},
                                {"plain_tok_s", r.plainTokensPerSecond},
                                {"draft_cost", r.draftCost},
                                {"verify_cost", r.verifyCost},
                                {"ceiling", r.ceiling},
                                {"rounds", r.rounds},
                                {"drafted", r.drafted},
                                {"accepted", r.accepted}};
      std::puts(j.dump().c_str());
    }
  return 0;
}

}  // namespace strata::cli
