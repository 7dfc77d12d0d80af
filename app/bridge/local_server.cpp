#include "bridge/local_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>

#include "http_server.h"
#include "strata/engine.h"

namespace strata::app {
namespace {

// httplib binds with SO_REUSEPORT, so on a port where another server of ours already listens
// (strata-cli serve, a second Strata) its bind succeeds and the two share the connections. A
// connection attempt tells whether something listens there. (A plain bind would also fail on
// our own closed connections' TIME_WAIT leftovers, for a minute after a stop.) Only IPv4
// literals are checked (the app uses 127.0.0.1); for anything else httplib's bind decides.
bool someoneListens(const std::string& host, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (port == 0 || inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) return false;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  bool connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  if (!connected && errno == EINPROGRESS) {
    pollfd writable{fd, POLLOUT, 0};
    int error = 0;
    socklen_t size = sizeof error;
    connected = poll(&writable, 1, 500) == 1 &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0;
  }
  close(fd);
  return connected;
}

}  // namespace

LocalServer::LocalServer() = default;
LocalServer::~LocalServer() { stop(); }

std::string LocalServer::start(Engine& engine, const server::ServerSettings& settings) {
  stop();
  if (someoneListens(settings.host, settings.port))
    return "cannot listen on " + settings.host + ":" + std::to_string(settings.port) +
           ": another server already listens there";
  try {
    auto server = std::make_unique<server::OpenAiServer>(engine, settings);
    port_ = server->bind();
    server_ = std::move(server);
  } catch (const std::exception& e) {
    return e.what();
  }
  runCalled_.store(false);
  finished_.store(false);
  thread_ = std::thread([this] {
    // httplib writes with send flags 0, so a write to a connection its client has reset can raise
    // SIGPIPE, which would end the whole app. Blocked in this thread (and so in the connection
    // threads httplib starts from it), such a write returns EPIPE instead.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    runCalled_.store(true);
    server_->run();
    finished_.store(true);
  });
  return {};
}

void LocalServer::stop() {
  if (!server_) return;
  // httplib ignores a stop that comes before its accept loop has started, so it is repeated
  // until run() returns (as strata-cli serve does). A stop in the few instructions between the
  // thread's start and run()'s own check makes run() return without listening, and httplib
  // then never closes the bound socket; only a stop right after start() can hit that.
  while (!runCalled_.load()) std::this_thread::yield();
  while (!finished_.load()) {
    server_->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  thread_.join();
  server_.reset();
  port_ = 0;
}

}  // namespace strata::app
