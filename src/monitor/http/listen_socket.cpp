#include "monitor/http/listen_socket.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace processor::monitor::http {

namespace {

struct AddressInfoDeleter {
  void operator()(addrinfo* info) const noexcept { ::freeaddrinfo(info); }
};

int bound_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return -1;
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  return -1;
}

}  // namespace

ListenSocket::ListenSocket(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int resolved = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (resolved != 0) {
    error_ = ::gai_strerror(resolved);
    return;
  }
  const std::unique_ptr<addrinfo, AddressInfoDeleter> addresses(found);
  for (const addrinfo* address = addresses.get(); address != nullptr; address = address->ai_next) {
    const int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (fd < 0) {
      error_ = std::strerror(errno);
      continue;
    }
    const int yes = 1;
    const int no = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (address->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);
    if (::bind(fd, address->ai_addr, address->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      error_ = std::strerror(errno);
      ::close(fd);
      continue;
    }
    fd_ = fd;
    port_ = bound_port(fd);
    ipv6_ = address->ai_family == AF_INET6;
    error_.clear();
    return;
  }
}

ListenSocket::~ListenSocket() {
  if (fd_ >= 0) ::close(fd_);
}

int ListenSocket::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

}  // namespace processor::monitor::http
