#include "processor/monitor/metrics_server.hpp"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/log_internal.hpp"
#include "monitor/http/page.hpp"
#include "processor/error.hpp"

namespace processor::monitor {

namespace {

constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kComponent = "metrics-server";

}  // namespace

struct MetricsServer::Impl {
 public:
  Impl(MetricsRegistry& registry, MetricsServerOptions options, LagHistoryProvider lag_history)
      : registry_(registry), options_(std::move(options)), lag_history_(std::move(lag_history)) {}

  void start() {
    if (thread_.joinable())
      throw StateError(ErrorKind::InvalidArgument, "metrics server on " + address() + " already started");
    if (options_.port < 0 || options_.port > 65535) {
      throw StateError(ErrorKind::InvalidArgument, "metrics server port " + std::to_string(options_.port) +
                                                       ": must be 0 (ephemeral) to 65535");
    }
    if (options_.page_refresh_seconds < 1 || options_.worker_threads < 1) {
      throw StateError(ErrorKind::InvalidArgument,
                       "metrics server page_refresh_seconds " +
                           std::to_string(options_.page_refresh_seconds) + " and worker_threads " +
                           std::to_string(options_.worker_threads) + ": both must be 1 or more");
    }
    server_ = std::make_unique<httplib::Server>();
    const auto workers = static_cast<std::size_t>(options_.worker_threads);
    server_->new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second exporter on the
    // same port binds too and the kernel splits the scrapes between the two.
    server_->set_socket_options([](socket_t sock) {
      const int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    add_routes();
    if (options_.port == 0) {
      port_ = server_->bind_to_any_port(options_.host);
    } else {
      port_ = server_->bind_to_port(options_.host, options_.port) ? options_.port : -1;
    }
    if (port_ < 0) {
      server_.reset();
      throw StateError(ErrorKind::Unavailable, "metrics server cannot listen on " + address() +
                                                   " (address in use, or not one of this host)");
    }
    listen_returned_ = false;
    thread_ = std::thread([this] {
      server_->listen_after_bind();
      listen_returned_ = true;
    });
    // stop() before the listening loop runs would be lost: wait for it (it starts at once).
    while (!server_->is_running() && !listen_returned_)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (listen_returned_) {
      thread_.join();
      server_.reset();
      const std::string where = address();
      port_ = -1;
      throw StateError(ErrorKind::Unavailable, "metrics server on " + where + " stopped as it started");
    }
    internal::log(LogLevel::Debug, kComponent, "serving http://", options_.host, ":", port_, "/metrics");
  }

  void stop() noexcept {
    if (!thread_.joinable()) return;
    server_->stop();
    thread_.join();
    server_.reset();
    port_ = -1;
  }

  int port() const {
    if (port_ < 0)
      throw StateError(ErrorKind::Unavailable, "metrics server on " + address() + " is not running");
    return port_;
  }

  const MetricsServerOptions& options() const noexcept { return options_; }

 private:
  std::string address() const {
    const bool ipv6 = options_.host.find(':') != std::string::npos;
    const std::string host = ipv6 ? "[" + options_.host + "]" : options_.host;
    return host + ":" + std::to_string(port_ >= 0 ? port_ : options_.port);
  }

  void add_routes() {
    server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
      try {
        std::string body;
        registry_.scrape(body);
        response.set_content(std::move(body), kMetricsContentType);
      } catch (const std::exception& error) {
        internal::log(LogLevel::Error, kComponent, "scrape failed: ", error.what());
        response.status = 500;
        response.set_content(std::string("scrape failed: ") + error.what() + "\n",
                             "text/plain; charset=utf-8");
      }
    });
    server_->Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("ok\n", "text/plain; charset=utf-8");
    });
    server_->Get("/lag.svg", [this](const httplib::Request&, httplib::Response& response) {
      respond(
          response, [this] { return render_lag_svg(history(), options_.chart); }, "image/svg+xml");
    });
    server_->Get("/", [this](const httplib::Request&, httplib::Response& response) {
      respond(
          response,
          [this] {
            const std::string svg = lag_history_ ? render_lag_svg(history(), options_.chart) : std::string();
            return page::render_page(svg, "This server has no lag monitor: see /metrics.",
                                     options_.page_refresh_seconds);
          },
          "text/html; charset=utf-8");
    });
  }

  LagHistory history() const { return lag_history_ ? lag_history_() : LagHistory{}; }

  template <class Render>
  static void respond(httplib::Response& response, Render render, const char* content_type) {
    try {
      response.set_content(render(), content_type);
    } catch (const std::exception& error) {
      internal::log(LogLevel::Error, kComponent, "rendering the lag chart failed: ", error.what());
      response.status = 500;
      response.set_content(std::string("rendering failed: ") + error.what() + "\n",
                           "text/plain; charset=utf-8");
    }
  }

  MetricsRegistry& registry_;
  const MetricsServerOptions options_;
  const LagHistoryProvider lag_history_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};  // seq_cst: read once per start, no need to be clever
  int port_ = -1;
};

MetricsServer::MetricsServer(MetricsRegistry& registry, MetricsServerOptions options,
                             LagHistoryProvider lag_history)
    : impl_(std::make_unique<Impl>(registry, std::move(options), std::move(lag_history))) {}

MetricsServer::~MetricsServer() { impl_->stop(); }

void MetricsServer::start() { impl_->start(); }

void MetricsServer::stop() noexcept { impl_->stop(); }

int MetricsServer::port() const { return impl_->port(); }

std::string MetricsServer::url() const {
  const int bound = impl_->port();
  const std::string& host = impl_->options().host;
  return "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(bound);
}

}  // namespace processor::monitor
