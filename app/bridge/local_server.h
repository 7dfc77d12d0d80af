#pragma once
// The app's OpenAI-compatible server: an OpenAiServer (engine/server/) over the app's engine,
// served on a thread of its own. Owned by the EngineWorker, which stops it before the engine
// is replaced or destroyed (the server's slots hold sessions of that engine).
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "server_settings.h"

namespace strata {
class Engine;
namespace server {
class OpenAiServer;
}
}  // namespace strata

namespace strata::app {

class LocalServer {
 public:
  LocalServer();
  ~LocalServer();  // stops
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  // Stops a running server, then binds and serves `engine`, which must outlive the server (or
  // stop() be called first). Returns an error message (the port in use, say), empty on success.
  std::string start(Engine& engine, const server::ServerSettings& settings);
  // Cancels every request, stops listening and joins the thread. Nothing when not running.
  void stop();

  bool running() const { return server_ != nullptr; }
  int port() const { return port_; }  // the bound one (the chosen one for port 0)

 private:
  std::unique_ptr<server::OpenAiServer> server_;
  std::thread thread_;
  std::atomic<bool> runCalled_{false};  // the thread is about to call run()
  std::atomic<bool> finished_{false};   // run() has returned
  int port_ = 0;
};

}  // namespace strata::app
