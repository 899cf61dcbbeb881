#pragma once
// Internal to the MetricsServer: its listening socket, bound before the HTTP server starts so that
// the server's own errors (address in use, not an address of this host) are the library's.

#include <string>

namespace processor::monitor::http {

// A bound, listening TCP socket; closes it on destruction unless release()d.
// Neither copyable nor movable: it lives where it was bound until handed over.
class ListenSocket {
 public:
  // Binds host:port (port 0: an ephemeral one) with SO_REUSEADDR and without SO_REUSEPORT, so that
  // a second server on the same port fails to bind rather than sharing the scrapes with the first,
  // and listens. An IPv6 host listens on IPv4 too where the host allows it ("::").
  // valid() is false when no address of `host` could be bound; error() says why.
  ListenSocket(const std::string& host, int port);
  ~ListenSocket();
  ListenSocket(const ListenSocket&) = delete;
  ListenSocket& operator=(const ListenSocket&) = delete;

  bool valid() const noexcept { return fd_ >= 0; }
  int fd() const noexcept { return fd_; }
  int port() const noexcept { return port_; }
  bool ipv6() const noexcept { return ipv6_; }
  const std::string& error() const noexcept { return error_; }

  // Hands the descriptor over: the caller closes it from now on.
  int release() noexcept;

 private:
  int fd_ = -1;
  int port_ = -1;
  bool ipv6_ = false;
  std::string error_;
};

}  // namespace processor::monitor::http
