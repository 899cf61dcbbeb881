#pragma once
// A TCP proxy on loopback in front of one Kafka broker that can hold back one produce request:
// the network delay of KIP-890's "late produce". Armed with hold_next_produce(), it keeps the
// next ProduceRequest (and whatever its connection sends after it) from the broker until
// release(), even after the client gave up on it and closed the connection, as a request still
// in the network would reach the broker. It then reads the broker's answer to that request (its
// first partition's error code). Everything else passes through untouched.
//
// Clients reach it through librdkafka's resolve_cb (redirect_to()): every broker address they
// resolve becomes the proxy's, so a single-broker cluster is wholly behind it.

#include <arpa/inet.h>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kafka_api_keys.hpp"

namespace processor::testing {

class HoldingProxy {
 public:
  // Forwards to 127.0.0.1:`broker_port`; listens on a free loopback port.
  explicit HoldingProxy(int broker_port) : broker_port_(broker_port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listener_ < 0) throw std::runtime_error("HoldingProxy: socket failed");
    int yes = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in address = loopback(0);
    socklen_t length = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ::close(listener_);
      throw std::runtime_error("HoldingProxy: cannot listen on loopback");
    }
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~HoldingProxy() {
    stop_ = true;
    acceptor_.join();
    for (auto& pump : pumps_) pump.join();
    ::close(listener_);
  }

  HoldingProxy(const HoldingProxy&) = delete;
  HoldingProxy& operator=(const HoldingProxy&) = delete;

  int port() const { return port_; }

  // Makes `conf`'s client resolve every broker address to this proxy.
  void redirect_to(rd_kafka_conf_t* conf) {
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_resolve_cb(conf, &HoldingProxy::resolve);
  }

  // The next ProduceRequest any connection sends is held back.
  void hold_next_produce() {
    std::lock_guard lock(mutex_);
    armed_ = true;
    released_ = false;
    answered_ = false;
    answer_.reset();
  }

  // Whether a ProduceRequest is held back now.
  bool holding() {
    std::lock_guard lock(mutex_);
    return held_;
  }

  // Lets the held request (and what followed it on its connection) go to the broker.
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
  }

  // The broker's error code for the first partition of the released request, once it answered;
  // nullopt when it did not within `timeout`.
  std::optional<std::int16_t> answer(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return answer_.has_value(); });
    return answer_;
  }

 private:
  static sockaddr_in loopback(int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
  }

  static int resolve(const char* node, const char* service, const struct addrinfo* hints,
                     struct addrinfo** result, void* opaque) {
    if (node == nullptr && service == nullptr) {  // librdkafka frees what we returned
      freeaddrinfo(*result);
      return 0;
    }
    const std::string port = std::to_string(static_cast<HoldingProxy*>(opaque)->port_);
    return getaddrinfo("127.0.0.1", port.c_str(), hints, result);
  }

  void accept_loop() {
    while (!stop_) {
      pollfd ready{listener_, POLLIN, 0};
      if (::poll(&ready, 1, 50) <= 0) continue;
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      const int broker = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address = loopback(broker_port_);
      if (broker < 0 || ::connect(broker, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        ::close(client);
        if (broker >= 0) ::close(broker);
        continue;
      }
      pumps_.emplace_back([this, client, broker] { pump(client, broker); });
    }
  }

  static std::int32_t read_int32(const std::string& bytes, std::size_t at) {
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
    return static_cast<std::int32_t>(value);
  }
  static std::int16_t read_int16(const std::string& bytes, std::size_t at) {
    return static_cast<std::int16_t>((static_cast<unsigned char>(bytes[at]) << 8) |
                                     static_cast<unsigned char>(bytes[at + 1]));
  }
  static std::uint32_t read_uvarint(const std::string& bytes, std::size_t& at) {
    std::uint32_t value = 0;
    for (int shift = 0; at < bytes.size(); shift += 7) {
      const auto byte = static_cast<unsigned char>(bytes[at++]);
      value |= static_cast<std::uint32_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    return value;
  }

  // The first partition's error code of a ProduceResponse frame (without its size) of `version`.
  static std::optional<std::int16_t> produce_error(const std::string& frame, std::int16_t version) {
    std::size_t at = 4;         // the correlation id
    if (version >= 9) {         // flexible versions
      read_uvarint(frame, at);  // the header's tagged fields
      read_uvarint(frame, at);  // topics + 1
      if (version >= 13) {
        at += 16;  // the topic id
      } else {
        at += read_uvarint(frame, at) - 1;  // the name: length + 1, then its bytes
      }
      if (at >= frame.size()) return std::nullopt;
      read_uvarint(frame, at);  // partitions + 1
    } else {
      at += 4;  // topics
      if (at + 2 > frame.size()) return std::nullopt;
      at += 2 + static_cast<std::size_t>(read_int16(frame, at));  // the name
      at += 4;                                                    // partitions
    }
    at += 4;  // the partition index
    if (at + 2 > frame.size()) return std::nullopt;
    return read_int16(frame, at);
  }

  // Complete frames (size prefix included) taken off the front of `buffer`.
  static std::vector<std::string> frames(std::string& buffer) {
    std::vector<std::string> out;
    while (buffer.size() >= 4) {
      const auto size = static_cast<std::size_t>(read_int32(buffer, 0));
      if (buffer.size() < 4 + size) break;
      out.push_back(buffer.substr(0, 4 + size));
      buffer.erase(0, 4 + size);
    }
    return out;
  }

  static bool send_all(int fd, const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // One client connection: client -> broker frame by frame (the held one kept back), broker ->
  // client as it comes, watching for the answer to the held request.
  void pump(int client, int broker) {
    std::string from_client;
    std::string from_broker;
    std::vector<std::string> held;  // this connection's frames held back, in order
    std::optional<std::int32_t> held_id;
    std::int16_t held_version = 0;
    bool client_open = true;
    bool released_here = false;
    char chunk[65536];
    while (!stop_) {
      if (!held.empty()) {
        std::lock_guard lock(mutex_);
        if (released_) {
          released_here = true;
          held_ = false;
        }
      }
      if (released_here && !held.empty()) {
        for (const auto& frame : held) send_all(broker, frame);
        held.clear();
      }
      if (!client_open && held.empty()) {
        std::lock_guard lock(mutex_);
        if (!held_id || answered_) break;
      }
      pollfd fds[2] = {{broker, POLLIN, 0}, {client_open ? client : -1, POLLIN, 0}};
      if (::poll(fds, 2, 20) <= 0) continue;
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = ::recv(broker, chunk, sizeof chunk, 0);
        if (n <= 0) break;
        if (client_open) send_all(client, std::string(chunk, static_cast<std::size_t>(n)));
        if (held_id) {
          from_broker.append(chunk, static_cast<std::size_t>(n));
          for (const auto& frame : frames(from_broker)) {
            if (read_int32(frame, 4) != *held_id) continue;
            std::lock_guard lock(mutex_);
            answer_ = produce_error(frame.substr(4), held_version);
            answered_ = true;
            changed_.notify_all();
          }
        }
      }
      if (client_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t n = ::recv(client, chunk, sizeof chunk, 0);
        if (n <= 0) {
          client_open = false;  // what is held still goes to the broker once released
          continue;
        }
        from_client.append(chunk, static_cast<std::size_t>(n));
        for (auto& frame : frames(from_client)) {
          if (!held.empty()) {  // behind the held request, in order
            held.push_back(std::move(frame));
            continue;
          }
          bool hold = false;
          if (frame.size() >= 12 && read_int16(frame, 4) == kProduceApiKey) {
            std::lock_guard lock(mutex_);
            if (armed_) {
              armed_ = false;
              held_ = true;
              hold = true;
            }
          }
          if (hold) {
            released_here = false;
            held_version = read_int16(frame, 6);
            held_id = read_int32(frame, 8);
            held.push_back(std::move(frame));
          } else {
            send_all(broker, frame);
          }
        }
      }
    }
    if (client_open) ::close(client);
    ::close(broker);
  }

  const int broker_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::list<std::thread> pumps_;  // only the acceptor adds, the destructor joins after it

  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false;
  bool held_ = false;
  bool released_ = false;
  bool answered_ = false;
  std::optional<std::int16_t> answer_;
};

}  // namespace processor::testing
