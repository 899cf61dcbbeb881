#include "processor/monitor/metrics_server.hpp"

#include <microhttpd.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/log_internal.hpp"
#include "monitor/http/basic_auth.hpp"
#include "monitor/http/listen_socket.hpp"
#include "monitor/http/page.hpp"
#include "monitor/http/tls_credentials.hpp"
#include "processor/error.hpp"

namespace processor::monitor {

namespace {

constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kTextContentType = "text/plain; charset=utf-8";
constexpr const char* kComponent = "metrics-server";
constexpr const char* kRealm = "metrics";
// A connection's memory beyond its request's line and headers: the response's headers and
// libmicrohttpd's bookkeeping of the request.
constexpr std::size_t kResponseHeaderRoom = 4096;

struct ResponseDeleter {
  void operator()(MHD_Response* response) const noexcept { MHD_destroy_response(response); }
};
using Response = std::unique_ptr<MHD_Response, ResponseDeleter>;

void free_body(void* body) { delete static_cast<std::string*>(body); }

// A response owning `body` (a scrape can be megabytes: it is moved, not copied).
Response make_response(std::string body, const char* content_type) {
  auto owned = std::make_unique<std::string>(std::move(body));
  MHD_Response* response = MHD_create_response_from_buffer_with_free_callback_cls(
      owned->size(), owned->data(), &free_body, owned.get());
  if (response == nullptr) return nullptr;
  owned.release();  // free_body's from now on
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  return Response(response);
}

// What a request gets, before it becomes a libmicrohttpd response.
struct Reply {
  unsigned int status = MHD_HTTP_OK;
  std::string body;
  const char* content_type = kTextContentType;
};

// libmicrohttpd's messages (a refused connection, a failed handshake) are the client's trouble,
// not the application's: debug level.
void log_from_libmicrohttpd(void*, const char* format, va_list arguments) {
  char message[512];
  std::vsnprintf(message, sizeof message, format, arguments);
  std::string_view text(message);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  internal::log(LogLevel::Debug, kComponent, "libmicrohttpd: ", text);
}

}  // namespace

struct MetricsServer::Impl {
 public:
  Impl(MetricsRegistry& registry, MetricsServerOptions options, LagHistoryProvider lag_history)
      : registry_(registry), options_(std::move(options)), lag_history_(std::move(lag_history)) {}

  void start() {
    if (daemon_ != nullptr)
      throw StateError(ErrorKind::InvalidArgument, "metrics server on " + address() + " already started");
    check_options();
    // Everything that reads a file or can be refused comes before the bind.
    std::optional<http::TlsCredentials> tls;
    if (http::tls_configured(options_.tls)) tls = http::load_tls_credentials(options_.tls);
    std::unique_ptr<http::BasicAuth> basic_auth;
    if (!options_.basic_auth_users.empty())
      basic_auth = std::make_unique<http::BasicAuth>(options_.basic_auth_users);

    http::ListenSocket listener(options_.host, options_.port);
    if (!listener.valid()) {
      throw StateError(ErrorKind::Unavailable,
                       "metrics server cannot listen on " + address() +
                           " (address in use, or not one of this host: " + listener.error() + ")");
    }
    tls_ = std::move(tls);
    basic_auth_ = std::move(basic_auth);
    daemon_ = start_daemon(listener);
    if (daemon_ == nullptr) {
      tls_.reset();
      basic_auth_.reset();
      throw StateError(ErrorKind::Unavailable, "metrics server on " + address() +
                                                   " could not start its threads (libmicrohttpd refused)");
    }
    port_ = listener.port();
    internal::log(LogLevel::Debug, kComponent, "serving ", tls_ ? "https" : "http", "://", options_.host, ":",
                  port_, "/metrics");
  }

  void stop() noexcept {
    if (daemon_ == nullptr) return;
    MHD_stop_daemon(daemon_);  // closes every connection and the listening socket, joins the threads
    daemon_ = nullptr;
    tls_.reset();
    basic_auth_.reset();
    port_ = -1;
  }

  int port() const {
    if (port_ < 0)
      throw StateError(ErrorKind::Unavailable, "metrics server on " + address() + " is not running");
    return port_;
  }

  const MetricsServerOptions& options() const noexcept { return options_; }
  bool serves_tls() const noexcept { return tls_.has_value(); }

 private:
  std::string address() const {
    const bool ipv6 = options_.host.find(':') != std::string::npos;
    const std::string host = ipv6 ? "[" + options_.host + "]" : options_.host;
    return host + ":" + std::to_string(port_ >= 0 ? port_ : options_.port);
  }

  void check_options() const {
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
    const std::pair<const char*, int> limits[] = {
        {"idle_timeout_seconds", options_.idle_timeout_seconds},
        {"max_connections", options_.max_connections},
        {"max_connections_per_client", options_.max_connections_per_client},
        {"max_request_header_bytes", options_.max_request_header_bytes}};
    for (const auto& [name, value] : limits) {
      if (value < 1) {
        throw StateError(ErrorKind::InvalidArgument, std::string("metrics server ") + name + " " +
                                                         std::to_string(value) + ": must be 1 or more");
      }
    }
  }

  // options_.max_connections, or half the descriptors the process may open if that is less.
  unsigned int connection_limit() const {
    auto limit = static_cast<rlim_t>(options_.max_connections);
    rlimit descriptors{};
    if (::getrlimit(RLIMIT_NOFILE, &descriptors) == 0 && descriptors.rlim_cur != RLIM_INFINITY &&
        limit > descriptors.rlim_cur / 2) {
      limit = std::max<rlim_t>(1, descriptors.rlim_cur / 2);
      internal::log(LogLevel::Warning, kComponent, "max_connections ", options_.max_connections,
                    " lowered to ", limit, ", half the process's descriptor limit (RLIMIT_NOFILE ",
                    descriptors.rlim_cur, ")");
    }
    return static_cast<unsigned int>(limit);
  }

  // Starts libmicrohttpd on `listener` (handed over on success), with epoll and its own threads.
  MHD_Daemon* start_daemon(http::ListenSocket& listener) {
    const auto option = [](MHD_OPTION name, intptr_t value, void* pointer = nullptr) {
      return MHD_OptionItem{name, value, pointer};
    };
    std::vector<MHD_OptionItem> items = {
        option(MHD_OPTION_LISTEN_SOCKET, listener.fd()),
        option(MHD_OPTION_CONNECTION_TIMEOUT, options_.idle_timeout_seconds),
        option(MHD_OPTION_CONNECTION_LIMIT, connection_limit()),
        option(MHD_OPTION_PER_IP_CONNECTION_LIMIT, options_.max_connections_per_client),
        option(MHD_OPTION_CONNECTION_MEMORY_LIMIT,
               static_cast<intptr_t>(static_cast<std::size_t>(options_.max_request_header_bytes) +
                                     kResponseHeaderRoom)),
        option(MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&log_from_libmicrohttpd)),
    };
    if (options_.worker_threads > 1)
      items.push_back(option(MHD_OPTION_THREAD_POOL_SIZE, options_.worker_threads));
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (listener.ipv6()) flags |= MHD_USE_IPv6;
    if (tls_) {
      flags |= MHD_USE_TLS;
      // libmicrohttpd keeps these pointers: tls_ outlives the daemon.
      items.push_back(option(MHD_OPTION_HTTPS_MEM_CERT, 0, tls_->cert_pem.data()));
      items.push_back(option(MHD_OPTION_HTTPS_MEM_KEY, 0, tls_->key_pem.data()));
      items.push_back(option(MHD_OPTION_HTTPS_PRIORITIES, 0, tls_->priorities.data()));
      if (!tls_->client_ca_pem.empty())
        items.push_back(option(MHD_OPTION_HTTPS_MEM_TRUST, 0, tls_->client_ca_pem.data()));
      items.push_back(option(MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&on_connection), this));
    }
    items.push_back(option(MHD_OPTION_END, 0));
    // The daemon takes a duplicate: libmicrohttpd closes the descriptor it was given on some of
    // its failures and not on others, so the original stays ours until it has started.
    const int handed = ::dup(listener.fd());
    if (handed < 0) return nullptr;
    items.front().value = handed;
    MHD_Daemon* daemon = MHD_start_daemon(flags, 0, nullptr, nullptr, &handle_request, this, MHD_OPTION_ARRAY,
                                          items.data(), MHD_OPTION_END);
    if (daemon == nullptr) return nullptr;  // `handed` may leak: the failure is one of memory or threads
    return daemon;                          // `listener` closes the original: the daemon's copy listens
  }

  // Sets up a new TLS connection's client certificate policy, before its handshake.
  static void on_connection(void* server, MHD_Connection* connection, void**,
                            MHD_ConnectionNotificationCode code) {
    if (code != MHD_CONNECTION_NOTIFY_STARTED) return;
    const Impl& impl = *static_cast<const Impl*>(server);
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info != nullptr && info->tls_session != nullptr && impl.tls_)
      http::apply_client_auth(info->tls_session, impl.tls_->client_auth);
  }

  // libmicrohttpd's request handler, called on a server thread: once when the request's headers
  // are in, then once per piece of its body, then once with nothing left. A response queued before
  // the last call closes the connection (the rest of the request is unread), so a GET or HEAD
  // without a body is answered on the last call, keeping the connection alive; anything else is
  // answered at once, and its body never read.
  // Nothing throws into libmicrohttpd (C frames): a failure closes the connection.
  static MHD_Result handle_request(void* server, MHD_Connection* connection, const char* url,
                                   const char* method, const char*, const char*, size_t* upload_data_size,
                                   void** request_state) {
    static char request_started;  // the marker of a request whose headers were seen
    try {
      if (*request_state == nullptr) {
        *request_state = &request_started;
        const std::string_view verb(method);
        const char* length =
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        const bool has_body = (length != nullptr && std::string_view(length) != "0") ||
                              MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                          MHD_HTTP_HEADER_TRANSFER_ENCODING) != nullptr;
        if (!has_body && (verb == MHD_HTTP_METHOD_GET || verb == MHD_HTTP_METHOD_HEAD)) return MHD_YES;
      } else if (*upload_data_size != 0) {
        *upload_data_size = 0;  // a body its headers did not announce: dropped unread
        return MHD_YES;
      }
      return static_cast<Impl*>(server)->answer(connection, url, method);
    } catch (const std::exception& error) {
      internal::log(LogLevel::Error, kComponent, "answering ", url, " failed: ", error.what());
    } catch (...) {
      internal::log(LogLevel::Error, kComponent, "answering ", url, " failed");
    }
    return MHD_NO;
  }

  MHD_Result answer(MHD_Connection* connection, std::string_view url, std::string_view method) {
    // libmicrohttpd refuses what overflows the connection's memory; the exact limit is ours.
    const MHD_ConnectionInfo* header =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    const auto limit = static_cast<std::size_t>(options_.max_request_header_bytes);
    if (url.size() > limit) return queue_reply(connection, {MHD_HTTP_URI_TOO_LONG, "414 URI too long\n"});
    if (header != nullptr && header->header_size > limit) {
      return queue_reply(connection,
                         {MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, "431 request header fields too large\n"});
    }
    if (basic_auth_ && !authenticated(connection)) {
      const Response response = make_response("401 unauthorized\n", kTextContentType);
      if (!response) return MHD_NO;
      return MHD_queue_basic_auth_fail_response(connection, kRealm, response.get());
    }
    if (method != MHD_HTTP_METHOD_GET && method != MHD_HTTP_METHOD_HEAD)
      return queue_reply(connection, {MHD_HTTP_METHOD_NOT_ALLOWED, "405 method not allowed\n"});
    return queue_reply(connection, route(url));
  }

  static MHD_Result queue_reply(MHD_Connection* connection, Reply reply) {
    const Response response = make_response(std::move(reply.body), reply.content_type);
    if (!response) return MHD_NO;
    if (reply.status == MHD_HTTP_METHOD_NOT_ALLOWED)
      MHD_add_response_header(response.get(), MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    return MHD_queue_response(connection, reply.status, response.get());
  }

  bool authenticated(MHD_Connection* connection) {
    char* password = nullptr;
    char* user = MHD_basic_auth_get_username_password(connection, &password);
    const bool allowed = user != nullptr && password != nullptr && basic_auth_->allows(user, password);
    if (password != nullptr) {
      ::explicit_bzero(password, std::strlen(password));
      MHD_free(password);
    }
    if (user != nullptr) MHD_free(user);
    return allowed;
  }

  Reply route(std::string_view path) {
    if (path == "/metrics") {
      try {
        Reply reply{MHD_HTTP_OK, {}, kMetricsContentType};
        registry_.scrape(reply.body);
        return reply;
      } catch (const std::exception& error) {
        internal::log(LogLevel::Error, kComponent, "scrape failed: ", error.what());
        return {MHD_HTTP_INTERNAL_SERVER_ERROR, std::string("scrape failed: ") + error.what() + "\n"};
      }
    }
    if (path == "/healthz") return {MHD_HTTP_OK, "ok\n"};
    if (path == "/lag.svg") {
      return render([this] { return render_lag_svg(history(), options_.chart); }, "image/svg+xml");
    }
    if (path == "/") {
      return render(
          [this] {
            const std::string svg = lag_history_ ? render_lag_svg(history(), options_.chart) : std::string();
            return page::render_page(svg, "This server has no lag monitor: see /metrics.",
                                     options_.page_refresh_seconds);
          },
          "text/html; charset=utf-8");
    }
    return {MHD_HTTP_NOT_FOUND, "404 page not found\n"};
  }

  LagHistory history() const { return lag_history_ ? lag_history_() : LagHistory{}; }

  template <class Render>
  static Reply render(Render render_body, const char* content_type) {
    try {
      return {MHD_HTTP_OK, render_body(), content_type};
    } catch (const std::exception& error) {
      internal::log(LogLevel::Error, kComponent, "rendering the lag chart failed: ", error.what());
      return {MHD_HTTP_INTERNAL_SERVER_ERROR, std::string("rendering failed: ") + error.what() + "\n"};
    }
  }

  MetricsRegistry& registry_;
  const MetricsServerOptions options_;
  const LagHistoryProvider lag_history_;
  // Set by start() before the daemon's threads exist and reset by stop() after they are joined:
  // the threads only read them.
  std::optional<http::TlsCredentials> tls_;
  std::unique_ptr<http::BasicAuth> basic_auth_;
  MHD_Daemon* daemon_ = nullptr;
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
  return std::string(impl_->serves_tls() ? "https://" : "http://") +
         (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(bound);
}

}  // namespace processor::monitor
