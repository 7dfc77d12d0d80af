// serve: the OpenAI-compatible HTTP server (engine/server/) over one loaded model, until
// SIGINT or SIGTERM.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "commands.h"
#include "http_server.h"
#include "memory_options.h"
#include "precision_options.h"
#include "speculation_options.h"
#include "strata/engine.h"

namespace strata::cli {
namespace {

server::ServerSettings serverSettings(const Args& args, const std::filesystem::path& model) {
  server::ServerSettings s;
  s.host = args.get("host", s.host);
  s.port = parseInt(args.get("port", std::to_string(s.port)), "--port");
  if (s.port < 0 || s.port > 65535) throw UsageError("--port must be in [0, 65535]");
  s.apiKey = args.get("api-key", "");
  if (args.has("api-key") && s.apiKey.empty()) throw UsageError("--api-key must not be empty");
  s.modelId =
      args.get("model-id", model.filename().empty() ? model.parent_path().filename().string()
                                                    : model.filename().string());
  s.slotCount = parseInt(args.get("slots", std::to_string(s.slotCount)), "--slots");
  if (s.slotCount < 1) throw UsageError("--slots must be at least 1");
  s.queue = parseInt(args.get("queue", std::to_string(s.queue)), "--queue");
  if (s.queue < 0) throw UsageError("--queue must be 0 or more");
  s.maxBodyBytes =
      parseInt(args.get("max-body-bytes", std::to_string(s.maxBodyBytes)), "--max-body-bytes");
  if (s.maxBodyBytes < 1) throw UsageError("--max-body-bytes must be positive");
  s.maxPromptTokens = parseInt(args.get("max-prompt-tokens", std::to_string(s.maxPromptTokens)),
                               "--max-prompt-tokens");
  if (s.maxPromptTokens < 1) throw UsageError("--max-prompt-tokens must be positive");
  s.timeoutSeconds = parseDouble(args.get("timeout-s", "600"), "--timeout-s");
  if (s.timeoutSeconds <= 0) throw UsageError("--timeout-s must be positive");
  s.cors = args.has("cors");
  s.prefillChunkTokens = parseInt(args.get("prefill-chunk", std::to_string(s.prefillChunkTokens)),
                                  "--prefill-chunk");
  if (s.prefillChunkTokens < 0)
    throw UsageError("--prefill-chunk must be 0 (the largest step, 512 tokens) or more");
  return s;
}

}  // namespace

int runServe(const Args& args) {
  args.allowOnly({"model",        "model-id",    "host",           "port",
                  "api-key",      "slots",       "queue",          "ram-gb",
                  "io",           "threads",     "max-body-bytes", "max-prompt-tokens",
                  "timeout-s",    "cors",        "speculate",      "mtp-depth",
                  "mtp-min-prob", "mtp-vocab",   "prefill-chunk",  "batch",
                  "precision",    "kv-precision"});
  const std::filesystem::path model = args.require("model");
  const server::ServerSettings settings = serverSettings(args, model);
  EngineSettings engineSettings;
  if (args.has("threads")) engineSettings.threads = parseInt(args.require("threads"), "--threads");
  applyPrecisionOptions(args, engineSettings);
  applyMemoryOptions(args, engineSettings.memory);
  engineSettings.memory.sessions = settings.slotCount;  // each slot's KV cache is in the plan
  applySpeculationOptions(args, engineSettings.speculation);
  const std::string batch = args.get("batch", "auto");
  if (batch == "on") engineSettings.batchSessions = SessionBatching::On;
  else if (batch == "off") engineSettings.batchSessions = SessionBatching::Off;
  else if (batch != "auto") throw UsageError("--batch must be auto, on or off, not " + batch);

  // Block the stop signals in every thread (threads inherit the mask, so before any is
  // created); one thread waits for them with sigwait and stops the server.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error return, not a signal

  const auto engine = Engine::open(model, engineSettings);
  if (!engine->tokenizer())
    throw Error(model.string() + ": no tokenizer.json, so there is nothing to serve");
  server::OpenAiServer server(*engine, settings);
  const int port = server.bind();
  std::printf("strata-cli serve: listening on http://%s:%d (model '%s', %d slots, queue %d%s)\n",
              settings.host.c_str(), port, settings.modelId.c_str(), settings.slotCount,
              settings.queue, settings.apiKey.empty() ? "" : ", API key required");
  std::fflush(stdout);

  std::atomic<bool> finished{false};
  std::thread stopper([&] {
    int received = 0;
    sigwait(&stopSignals, &received);
    // stop() may come before run() has started listening: repeat until run() returns.
    while (!finished.load()) {
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  const bool ok = server.run();
  finished.store(true);
  pthread_kill(stopper.native_handle(), SIGTERM);  // wakes the waiter if no signal came
  stopper.join();
  std::fputs(ok ? "strata-cli serve: stopped\n" : "strata-cli serve: the server failed\n", stderr);
  return ok ? 0 : 1;
}

}  // namespace strata::cli
