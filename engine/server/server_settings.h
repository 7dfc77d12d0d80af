#pragma once
// How `strata-cli serve` runs: one plain struct, filled from the command line.
#include <cstdint>
#include <string>

namespace strata::server {

struct ServerSettings {
  std::string host = "127.0.0.1";  // loopback unless asked otherwise
  int port = 8080;                 // 0: any free port (the bound one is printed)
  std::string apiKey;              // empty: no authentication
  std::string modelId;             // the name /v1/models lists and requests must use
  int slotCount = 1;               // requests generating at once, each with its own session
  int queue = 8;                   // admitted requests waiting for a slot; more get 429
  // Long prompts are evaluated in steps of this many tokens, so the other slots' streams keep
  // flowing (their decode rows join those steps) and a disconnect is seen between steps.
  int prefillChunkTokens = 256;
  int64_t maxBodyBytes = 4 << 20;  // larger request bodies get 413
  int64_t maxPromptTokens = 8192;  // longer prompts get 400 (context_length_exceeded)
  int defaultMaxTokens = 1024;     // chat completions without max_tokens
  double timeoutSeconds = 600;     // queueing plus generation; then the request is cancelled
  double keepAliveSeconds = 1;     // SSE comment interval while a stream has nothing to send
  bool cors = false;               // Access-Control-Allow-Origin: * and preflight answers
};

}  // namespace strata::server
