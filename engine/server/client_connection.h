#pragma once
// Whether the client of a request still waits for its answer. cpp-httplib 0.11 (Debian 12)
// gives a handler no access to its connection, and a non-streaming answer writes nothing until
// it is done, so a client that hung up would go unnoticed while its reply is generated. The
// connection is found by its addresses instead: the socket of this process whose local and
// peer addresses are the request's (found once, in /proc/self/fd), which reads as end-of-file
// once the client has closed it. httplib keeps it open until the handler returns.
#include <chrono>
#include <optional>
#include <string>

namespace strata::server {

// How often a request waiting for its job looks whether its client is still there.
inline constexpr std::chrono::milliseconds kClientCheckInterval{25};

class ClientConnection {
 public:
  // The request's connection, or nothing where it cannot be found (then it is never "closed").
  static std::optional<ClientConnection> find(const std::string& remoteAddr, int remotePort,
                                              const std::string& localAddr, int localPort);
  // True once the client has closed its side (or the connection failed); never blocks.
  bool closed() const;

 private:
  explicit ClientConnection(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace strata::server
