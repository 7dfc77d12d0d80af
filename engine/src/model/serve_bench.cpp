#include "strata/serve_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "core/median.h"

namespace strata {
namespace {

// One run: `prompts.size()` sessions generating at once; returns the wall seconds.
double runStreams(Engine& engine, const std::vector<std::vector<int32_t>>& prompts, int tokens) {
  GenerateOptions o;
  o.sampling.temperature = 0;
  o.maxNewTokens = tokens;
  o.ignoreEos = true;
  std::vector<std::unique_ptr<Session>> sessions;
  for (size_t i = 0; i < prompts.size(); ++i) sessions.push_back(engine.newSession());
  std::vector<std::string> errors(prompts.size());
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (size_t i = 0; i < prompts.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        sessions[i]->generate(prompts[i], o);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string& e : errors)
    if (!e.empty()) throw Error("bench serve: " + e);
  return seconds;
}

}  // namespace

std::vector<ServeBenchRow> benchServe(const ServeBenchOptions& options,
                                      const std::function<void(const std::string&)>& progress) {
  if (options.streams.empty()) throw Error("bench serve: no stream counts given");
  for (const int s : options.streams)
    if (s < 1 || s > 64) throw Error("bench serve: stream counts must be in 1..64, not " + std::to_string(s));
  if (options.tokens < 1 || options.promptTokens < 1 || options.repeats < 1)
    throw Error("bench serve: tokens, prompt tokens and repeats must be at least 1");
  const int most = *std::max_element(options.streams.begin(), options.streams.end());

  EngineSettings settings = options.settings;
  settings.speculation.mtp = settings.speculation.ngram = settings.speculation.grammar = DrafterMode::Off;
  settings.batchSessions = SessionBatching::On;
  std::unique_ptr<Engine> batched = Engine::open(options.model, settings);
  settings.batchSessions = SessionBatching::Off;
  std::unique_ptr<Engine> unbatched = Engine::open(options.model, settings);

  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<int32_t> id(0, batched->info().vocabSize - 1);
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(most));
  for (auto& p : prompts)
    for (int i = 0; i < options.promptTokens; ++i) p.push_back(id(rng));

  // Warm-up (first touches of weights and caches), then runs interleaved so that drifting
  // machine load affects every configuration alike.
  runStreams(*batched, {prompts[0]}, std::min(options.tokens, 8));
  runStreams(*unbatched, {prompts[0]}, std::min(options.tokens, 8));
  struct Config {
    int streams = 0;
    bool batched = false;
    std::vector<double> seconds;
    BatchingStats steps;  // what the runs added to the engine's counters
  };
  std::vector<Config> configs;
  for (const int s : options.streams) {
    configs.push_back({s, true, {}, {}});
    if (s > 1) configs.push_back({s, false, {}, {}});
  }
  for (int r = 0; r < options.repeats; ++r)
    for (Config& config : configs) {
      Engine& engine = config.batched ? *batched : *unbatched;
      const std::vector<std::vector<int32_t>> runPrompts(prompts.begin(), prompts.begin() + config.streams);
      const BatchingStats before = engine.batchingStats();
      const double seconds = runStreams(engine, runPrompts, options.tokens);
      const BatchingStats after = engine.batchingStats();
      config.steps.steps += after.steps - before.steps;
      config.steps.sequences += after.sequences - before.sequences;
      config.seconds.push_back(seconds);
      if (progress) {
        char line[160];
        std::snprintf(line, sizeof line, "run %d/%d: %d stream%s %s: %.2f s, %.1f tok/s", r + 1,
                      options.repeats, config.streams, config.streams > 1 ? "s" : "",
                      config.batched ? "batched" : "unbatched", seconds,
                      config.streams * options.tokens / seconds);
        progress(line);
      }
    }
  std::vector<ServeBenchRow> rows;
  double single = 0;
  for (const Config& config : configs) {
    ServeBenchRow row;
    row.streams = config.streams;
    row.batched = config.batched;
    row.seconds = median(config.seconds);
    row.tokS = config.streams * options.tokens / row.seconds;
    row.perStreamTokS = row.tokS / config.streams;
    const BatchingStats& st = config.steps;
    row.meanBatch = config.batched && st.steps > 0 ? double(st.sequences) / double(st.steps) : 1.0;
    if (config.streams == 1 && config.batched) single = row.tokS;
    rows.push_back(row);
  }
  // Scaling against one stream (measured in this run; the first configuration when 1 is absent).
  if (single == 0) single = rows.front().tokS / rows.front().streams;
  for (ServeBenchRow& row : rows) row.scaling = row.tokS / single;
  return rows;
}

}  // namespace strata
