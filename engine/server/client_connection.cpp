#include "client_connection.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <filesystem>

namespace strata::server {
namespace {

// The numeric host and port of a socket address, as httplib reports them (getnameinfo).
bool hostAndPort(const sockaddr_storage& address, socklen_t length, std::string& host, int& port) {
  char h[NI_MAXHOST], s[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, h, sizeof h, s, sizeof s,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return false;
  host = h;
  port = std::atoi(s);
  return true;
}

bool matches(int fd, const std::string& remoteAddr, int remotePort, const std::string& localAddr,
             int localPort) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  std::string host;
  int port = 0;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      !hostAndPort(address, length, host, port) || port != remotePort || host != remoteAddr)
    return false;
  length = sizeof address;
  return getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
         hostAndPort(address, length, host, port) && port == localPort && host == localAddr;
}

}  // namespace

std::optional<ClientConnection> ClientConnection::find(const std::string& remoteAddr,
                                                       int remotePort, const std::string& localAddr,
                                                       int localPort) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    struct stat info {};
    if (fstat(fd, &info) == 0 && S_ISSOCK(info.st_mode) &&
        matches(fd, remoteAddr, remotePort, localAddr, localPort))
      return ClientConnection(fd);
  }
  return std::nullopt;
}

bool ClientConnection::closed() const {
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;  // nothing new: still there
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  // Readable: the next request of a pipelining client, or end-of-file.
  char byte;
  return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace strata::server
