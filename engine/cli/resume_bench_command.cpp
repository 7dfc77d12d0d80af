// bench resume: how long reopening a saved conversation takes (load its KV cache) against
// recomputing it (prefill), for conversations of several lengths.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "commands.h"
#include "memory_options.h"
#include "precision_options.h"
#include "strata/engine.h"

namespace strata::cli {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

int runBenchResume(const Args& args) {
  args.allowOnly({"model", "tokens", "precision", "kv-precision", "json", "work", "threads",
                  "ram-gb", "io", "seed"});
  EngineSettings settings;
  settings.threads = parseInt(args.get("threads", "0"), "--threads");
  applyMemoryOptions(args, settings.memory);
  applyPrecisionOptions(args, settings);
  const std::vector<int32_t> lengths = parseIds(args.get("tokens", "512,4096"), "--tokens");
  const bool json = args.has("json");
  const std::filesystem::path model = args.require("model");
  const std::filesystem::path work = args.get("work", std::filesystem::temp_directory_path().string());
  std::mt19937_64 rng(static_cast<uint64_t>(parseInt(args.get("seed", "1"), "--seed")));

  const auto engine = Engine::open(model, settings);
  const int vocab = engine->info().vocabSize;
  int64_t longest = 0;
  for (int32_t n : lengths) longest = std::max<int64_t>(longest, n);
  if (settings.memory.budgetBytes > 0 && longest + 1 > settings.memory.contextTokens)
    settings.memory.contextTokens = longest + 1;
  for (int32_t n : lengths) {
    if (n < 1) throw UsageError("--tokens: lengths must be positive");
    std::vector<int32_t> conversation(static_cast<size_t>(n));
    for (int32_t& id : conversation) id = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab));
    const int32_t next = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab));
    const std::filesystem::path file = work / ("strata-bench-resume-" + std::to_string(n) + ".kv");

    // Re-prefill: what reopening costs without a saved cache.
    auto original = engine->newSession();
    Clock::time_point start = Clock::now();
    original->append(conversation);
    const double reprefillMs = msSince(start);
    start = Clock::now();
    original->save(file);
    const double saveMs = msSince(start);
    const std::vector<float> expected = original->append(std::vector<int32_t>{next}).logits;
    original.reset();

    start = Clock::now();
    auto resumed = engine->resumeSession(file);
    const double resumeMs = msSince(start);
    const int64_t recomputed = resumed->evaluatedTokens();
    const std::vector<float> actual = resumed->append(std::vector<int32_t>{next}).logits;
    const bool identical = actual == expected;
    const auto fileBytes = static_cast<int64_t>(std::filesystem::file_size(file));
    std::filesystem::remove(file);

    const nlohmann::json line = {{"model", model.filename().string()},
                                 {"tokens", n},
                                 {"resume_ms", resumeMs},
                                 {"reprefill_ms", reprefillMs},
                                 {"speedup", reprefillMs / resumeMs},
                                 {"save_ms", saveMs},
                                 {"file_bytes", fileBytes},
                                 {"kv_precision", std::string(kvPrecisionName(settings.kvPrecision))},
                                 {"recomputed_tokens", recomputed},
                                 {"next_token_identical", identical}};
    if (json) {
      std::puts(line.dump().c_str());
    } else {
      std::printf("%6d tokens: resume %8.1f ms, re-prefill %9.1f ms (%.0fx), save %7.1f ms, file %.1f MiB, "
                  "%lld recomputed, next token %s\n",
                  n, resumeMs, reprefillMs, reprefillMs / resumeMs, saveMs, fileBytes / 1048576.0,
                  static_cast<long long>(recomputed), identical ? "identical" : "DIFFERENT");
    }
    std::fflush(stdout);
    if (!identical) throw Error("the resumed session's next logits differ from the uninterrupted one's");
  }
  return 0;
}

}  // namespace strata::cli
