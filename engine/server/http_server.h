#pragma once
// The OpenAI-compatible HTTP server (cpp-httplib): GET /health, GET /v1/models,
// POST /v1/chat/completions, POST /v1/completions. Each connection is served by a thread of
// httplib's pool; those threads only parse, enqueue and write. Generation runs on the
// scheduler's slot threads (scheduler.h).
#include <memory>

#include "server_settings.h"
#include "strata/engine.h"

namespace strata::server {

class OpenAiServer {
 public:
  // Starts the scheduler's slots; the engine must outlive the server.
  OpenAiServer(Engine& engine, ServerSettings settings);
  ~OpenAiServer();
  OpenAiServer(const OpenAiServer&) = delete;
  OpenAiServer& operator=(const OpenAiServer&) = delete;

  // Binds the listening socket; returns the port (the chosen one for port 0). Throws
  // strata::Error naming the address when it cannot be bound.
  int bind();
  // Serves until stop(). Returns false if the server failed (not after stop()).
  bool run();
  // From any thread (a signal handler thread): cancels every request and ends run().
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Compares two secrets in time that depends only on their lengths, not on where they differ.
bool constantTimeEquals(std::string_view a, std::string_view b);

}  // namespace strata::server
