// MetricsServer against slow, many and bad clients, on loopback: connections that hold half a
// request (plain and TLS) while Prometheus scrapes, a burst of scrapes from many clients, the
// connection limits and idle timeout, and requests that are too large, malformed or aimed outside
// the routes. The thread-per-request server before it answered nothing for as long as 300 half
// requests were held.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "http_client.hpp"
#include "processor/monitor/metrics_server.hpp"
#include "tls_test_files.hpp"

namespace processor::monitor {
namespace {

using namespace std::chrono_literals;
using processor::testing::http_get;
using processor::testing::HttpRequestOptions;
using processor::testing::HttpSession;
using processor::testing::TlsTestFiles;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kHalfRequest = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow";

// A TCP connection to 127.0.0.1:port that sends what the test says, byte for byte.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
  }

  // What the server sends until it closes the connection (closed() true) or `timeout` passes.
  std::string read_until_closed(std::chrono::milliseconds timeout) {
    std::string received;
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      pollfd ready{fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (::poll(&ready, 1, static_cast<int>(std::max<long>(left.count(), 1))) <= 0) continue;
      char chunk[4096];
      const ssize_t read = ::recv(fd_, chunk, sizeof chunk, 0);
      if (read <= 0) {
        closed_ = true;
        break;
      }
      received.append(chunk, static_cast<std::size_t>(read));
    }
    return received;
  }
  bool closed() const { return closed_; }

  // One response: its headers and Content-Length bytes of body, or what came before the server
  // closed the connection or `timeout` passed.
  std::string read_response(std::chrono::milliseconds timeout) {
    std::string received;
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline && !complete(received)) {
      pollfd ready{fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (::poll(&ready, 1, static_cast<int>(std::max<long>(left.count(), 1))) <= 0) continue;
      char chunk[4096];
      const ssize_t read = ::recv(fd_, chunk, sizeof chunk, 0);
      if (read <= 0) {
        closed_ = true;
        break;
      }
      received.append(chunk, static_cast<std::size_t>(read));
    }
    return received;
  }

  // Whether the server has closed or reset the connection, without waiting or reading.
  bool closed_by_server() const {
    pollfd ready{fd_, POLLRDHUP, 0};
    return ::poll(&ready, 1, 0) > 0 && (ready.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

 private:
  int fd_ = -1;
  static bool complete(const std::string& response) {
    const auto end = response.find("\r\n\r\n");
    if (end == std::string::npos) return false;
    const auto length = response.find("Content-Length: ");
    if (length == std::string::npos || length > end) return true;
    return response.size() >= end + 4 + std::stoul(response.substr(length + 16));
  }

  bool closed_ = false;
};

// The status line's code of a raw response ("HTTP/1.1 404 Not Found" -> 404), 0 without one.
int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::stoi(response.substr(9, 3));
}

// One raw request on a connection of its own, and the status of what came back.
int raw_status(int port, std::string_view request) {
  RawConnection connection(port);
  if (!connection.connected() || !connection.send(request)) return -1;
  return status_of(connection.read_response(5s));
}

struct Served {
  MetricsRegistry registry;
  Served() {
    registry.counter("app_records_total", "Records the application processed.", {"topic"})
        .with({"orders"})
        .inc(3);
  }
};

// Scrapes `url` once with a deadline of 1 s: how long it took, or an error.
::testing::AssertionResult scrapes_within_a_second(const std::string& url, HttpRequestOptions options = {}) {
  options.timeout_ms = 1000;
  const auto started = Clock::now();
  const auto response = http_get(url + "/metrics", options);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  if (!response)
    return ::testing::AssertionFailure() << "no answer in " << took.count() << " ms: " << response.error;
  if (response.status != 200 || response.body.find("app_records_total") == std::string::npos)
    return ::testing::AssertionFailure() << "status " << response.status << ": " << response.body;
  return ::testing::AssertionSuccess() << "answered in " << took.count() << " ms";
}

TEST(MetricsServerLimits, ThreeHundredHalfRequestsLeaveMetricsAnswering) {
  Served served;
  MetricsServer server(served.registry);
  server.start();
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 300; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(held.back()->connected()) << "connection " << i;
    ASSERT_TRUE(held.back()->send(kHalfRequest)) << "connection " << i;
  }
  std::this_thread::sleep_for(200ms);  // every held connection accepted and read by now

  EXPECT_TRUE(scrapes_within_a_second(server.url()));
  EXPECT_TRUE(scrapes_within_a_second(server.url()));
  int closed = 0;
  for (const auto& connection : held) closed += connection->closed_by_server() ? 1 : 0;
  EXPECT_EQ(closed, 0) << "the held connections must still be held while the scrapes pass";
}

TEST(MetricsServerLimits, ThreeHundredHalfTlsConnectionsLeaveHttpsMetricsAnswering) {
  std::string why;
  const std::unique_ptr<TlsTestFiles> files = TlsTestFiles::make(why);
  if (!files) GTEST_SKIP() << "no test certificates: " << why;
  Served served;
  MetricsServerOptions options;
  options.tls.cert_file = files->server_cert();
  options.tls.key_file = files->server_key();
  MetricsServer server(served.registry, options);
  server.start();

  const std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_client_method()),
                                                                  &SSL_CTX_free);
  ASSERT_TRUE(context);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_NONE, nullptr);
  std::vector<std::unique_ptr<RawConnection>> held;
  std::vector<std::unique_ptr<SSL, decltype(&SSL_free)>> sessions;
  // Half stop in the middle of the handshake (a ClientHello's first bytes), half after it, in the
  // middle of the request.
  for (int i = 0; i < 150; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(held.back()->connected()) << "connection " << i;
    ASSERT_TRUE(held.back()->send(std::string_view("\x16\x03\x01\x02\x00\x01\x00", 7))) << "connection " << i;
  }
  for (int i = 0; i < 150; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(held.back()->connected()) << "connection " << i;
    sessions.emplace_back(SSL_new(context.get()), &SSL_free);
    SSL* session = sessions.back().get();
    SSL_set_fd(session, held.back()->fd());
    ASSERT_EQ(SSL_connect(session), 1) << "handshake " << i;
    ASSERT_EQ(SSL_write(session, kHalfRequest.data(), static_cast<int>(kHalfRequest.size())),
              static_cast<int>(kHalfRequest.size()));
  }
  std::this_thread::sleep_for(200ms);

  HttpRequestOptions client;
  client.ca_file = files->ca_cert();
  EXPECT_TRUE(scrapes_within_a_second(server.url(), client));
  EXPECT_TRUE(scrapes_within_a_second(server.url(), client));
  int closed = 0;
  for (const auto& connection : held) closed += connection->closed_by_server() ? 1 : 0;
  EXPECT_EQ(closed, 0) << "the held connections must still be held while the scrapes pass";
}

TEST(MetricsServerLimits, ThousandScrapesFromFiftyClientsAllSucceed) {
  Served served;
  MetricsServer server(served.registry);
  server.start();
  const std::string url = server.url() + "/metrics";
  std::atomic<int> succeeded{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int client = 0; client < 50; ++client) {
    clients.emplace_back([&, client] {
      // Even clients keep their connection alive, as Prometheus does; odd ones connect each time.
      HttpSession kept_alive;
      for (int scrape = 0; scrape < 20; ++scrape) {
        const auto response = client % 2 == 0 ? kept_alive.get(url) : http_get(url);
        if (response && response.status == 200 &&
            response.body.find("app_records_total") != std::string::npos) {
          ++succeeded;
        } else {
          const std::lock_guard lock(failures_mutex);
          failures.push_back(std::to_string(response.status) + " " + response.error);
        }
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(succeeded.load(), 1000);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, the first: " << failures.front();
}

TEST(MetricsServerLimits, ASilentConnectionIsClosedAfterTheIdleTimeout) {
  Served served;
  MetricsServerOptions options;
  options.idle_timeout_seconds = 1;
  MetricsServer server(served.registry, options);
  server.start();
  RawConnection slow(server.port());
  ASSERT_TRUE(slow.send(kHalfRequest));
  const auto started = Clock::now();
  EXPECT_EQ(slow.read_until_closed(10s), "");
  EXPECT_TRUE(slow.closed());
  const auto took = Clock::now() - started;
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, 5s);
  EXPECT_TRUE(scrapes_within_a_second(server.url()));
}

TEST(MetricsServerLimits, ConnectionsPastThePerClientLimitAreClosedAtOnce) {
  Served served;
  MetricsServerOptions options;
  options.max_connections_per_client = 4;
  MetricsServer server(served.registry, options);
  server.start();
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(held.back()->send(kHalfRequest));
  }
  std::this_thread::sleep_for(200ms);
  RawConnection fifth(server.port());
  fifth.send(kHalfRequest);
  EXPECT_EQ(fifth.read_until_closed(3s), "");
  EXPECT_TRUE(fifth.closed()) << "the fifth connection from 127.0.0.1 stays open";
  held.pop_back();
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(scrapes_within_a_second(server.url()));
}

TEST(MetricsServerLimits, ConnectionsPastTheLimitWaitUntilOneCloses) {
  Served served;
  MetricsServerOptions options;
  options.max_connections = 4;
  MetricsServer server(served.registry, options);
  server.start();
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(held.back()->send(kHalfRequest));
  }
  std::this_thread::sleep_for(200ms);
  HttpRequestOptions impatient;
  impatient.timeout_ms = 500;
  EXPECT_FALSE(http_get(server.url() + "/metrics", impatient)) << "a fifth connection was served";
  held.pop_back();
  EXPECT_TRUE(scrapes_within_a_second(server.url()));
}

TEST(MetricsServerLimits, BadRequestsAreRefusedWithTheirStatus) {
  Served served;
  MetricsServer server(served.registry);
  server.start();
  const int port = server.port();
  const std::string huge(32 * 1024, 'a');
  EXPECT_EQ(raw_status(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Huge: " + huge + "\r\n\r\n"), 431);
  EXPECT_EQ(raw_status(port, "GET /" + huge + " HTTP/1.1\r\nHost: x\r\n\r\n"), 414);
  EXPECT_EQ(raw_status(port, "\x01\x02\x03 nonsense\r\n\r\n"), 400);
  EXPECT_EQ(raw_status(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nno colon in this header\r\n\r\n"), 400);
  EXPECT_EQ(raw_status(port, "GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"), 404);
  EXPECT_EQ(raw_status(port, "GET /%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"), 404);
  EXPECT_EQ(raw_status(port, "GET /metrics/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"), 404);
  // Headers under the limit pass.
  const std::string large(8 * 1024, 'a');
  EXPECT_EQ(raw_status(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Large: " + large +
                                 "\r\nConnection: close\r\n\r\n"),
            200);
  EXPECT_TRUE(scrapes_within_a_second(server.url()));
}

TEST(MetricsServerLimits, TheHeaderLimitIsTheOption) {
  Served served;
  MetricsServerOptions options;
  options.max_request_header_bytes = 2048;
  MetricsServer server(served.registry, options);
  server.start();
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Padding: ";
  EXPECT_EQ(raw_status(server.port(), request + std::string(1500, 'a') + "\r\n\r\n"), 200);
  EXPECT_EQ(raw_status(server.port(), request + std::string(2100, 'a') + "\r\n\r\n"), 431);
  EXPECT_EQ(raw_status(server.port(), "GET /" + std::string(2100, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n"),
            414);
}

TEST(MetricsServerLimits, ScrapesReuseTheirConnection) {
  Served served;
  MetricsServer server(served.registry);
  server.start();
  HttpSession prometheus;
  ASSERT_EQ(prometheus.get(server.url() + "/metrics").connections_opened, 1);
  for (const char* path : {"/metrics", "/healthz", "/nothing-here", "/metrics"}) {
    const auto response = prometheus.get(server.url() + path);
    ASSERT_TRUE(response) << path << ": " << response.error;
    EXPECT_EQ(response.connections_opened, 0) << path << " opened a new connection";
  }
}

TEST(MetricsServerLimits, HeadAnswersWithoutABodyAndOtherMethodsAreNotAllowed) {
  Served served;
  MetricsServer server(served.registry);
  server.start();
  HttpRequestOptions head;
  head.method = "HEAD";
  const auto headers = http_get(server.url() + "/metrics", head);
  ASSERT_TRUE(headers) << headers.error;
  EXPECT_EQ(headers.status, 200);
  EXPECT_EQ(headers.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(headers.body, "");

  RawConnection post(server.port());
  ASSERT_TRUE(
      post.send("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"));
  const std::string response = post.read_response(5s);
  EXPECT_EQ(status_of(response), 405) << response;
  EXPECT_NE(response.find("Allow: GET, HEAD\r\n"), std::string::npos) << response;
}

}  // namespace
}  // namespace processor::monitor
