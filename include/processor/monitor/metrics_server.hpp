#pragma once
// processor::monitor::MetricsServer: an embedded HTTP(S) server for Prometheus and for people:
//   /metrics   the registry's text exposition (Content-Type text/plain; version=0.0.4; charset=utf-8)
//   /          a small HTML page with the lag chart (lag_chart.hpp), refreshed every few seconds
//   /lag.svg   the chart alone
//   /healthz   "ok"
// `offsetctl exporter` runs one; an application embeds one to export its own metrics. It can
// serve HTTPS only (with client certificates if asked) and require basic auth, configured as
// Prometheus' exporter-toolkit configures every exporter (its web configuration file).

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "processor/monitor/lag_chart.hpp"
#include "processor/monitor/lag_snapshot.hpp"
#include "processor/monitor/metrics.hpp"

namespace processor::monitor {

// HTTPS for the MetricsServer: the `tls_server_config` of exporter-toolkit's web configuration,
// field for field. TLS is on when any field differs from its default; then cert_file and key_file
// are required, and the server speaks HTTPS only.
struct MetricsServerTlsOptions {
  // The server's certificate, PEM (the chain may follow it). Default: "" (no TLS).
  std::string cert_file;

  // The certificate's private key, PEM, unencrypted. Default: "" (no TLS).
  std::string key_file;

  // The oldest TLS version a client may speak: "TLS12" or "TLS13". Default: "TLS12" (as
  // exporter-toolkit). "TLS13" when every scraper speaks it.
  std::string min_version = "TLS12";

  // Whether clients show a certificate, in exporter-toolkit's (Go's) names:
  //   NoClientCert                none is asked for
  //   RequestClientCert           asked for, not required, not verified
  //   RequireAnyClientCert        required, not verified
  //   VerifyClientCertIfGiven     not required; one given must be signed by client_ca_file
  //   RequireAndVerifyClientCert  required, and signed by client_ca_file (mutual TLS)
  // Default: "NoClientCert". RequireAndVerifyClientCert lets only the holders of a certificate
  // of your CA scrape.
  std::string client_auth_type = "NoClientCert";

  // The CAs that sign client certificates, PEM. Default: "" (none). Required by the two Verify
  // types; refused with NoClientCert, which would ignore it.
  std::string client_ca_file;
};

struct MetricsServerOptions {
  // The address to listen on. Default: "127.0.0.1" (this machine only). "0.0.0.0" lets a
  // Prometheus on another host scrape it.
  std::string host = "127.0.0.1";

  // The TCP port. Default: 0, an ephemeral port chosen by the system (read it with port()).
  // Prometheus needs a fixed one: kafka-lag-exporter uses 8000.
  int port = 0;

  // How often the page at `/` reloads its chart, in seconds. Default: 5. Match the poll interval.
  int page_refresh_seconds = 5;

  // The chart of the page and of /lag.svg. Default: LagChartOptions's.
  LagChartOptions chart;

  // Threads answering requests, each polling its share of the connections (epoll). Default: 2 (a
  // scrape and a browser at once). Connections waiting on a client cost no thread, so more only
  // helps when several scrapes render at the same moment.
  int worker_threads = 2;

  // HTTPS instead of HTTP. Default: off (every field at its default).
  MetricsServerTlsOptions tls;

  // Users allowed in, as user name -> bcrypt hash ($2a$, $2b$ or $2y$; `htpasswd -nBC 10 USER`
  // prints one). When not empty, every request without the credentials of one of them gets 401
  // with `WWW-Authenticate: Basic`. Default: empty (no authentication). Basic auth sends the
  // password in the clear: configure tls with it.
  std::map<std::string, std::string> basic_auth_users;

  // Seconds a connection may stay silent (while it sends its request, or between two requests)
  // before the server closes it. Default: 10. Raise it above the scrape interval to keep
  // Prometheus' connections alive between scrapes.
  int idle_timeout_seconds = 10;

  // Connections open at once; past it new ones wait in the kernel's queue until one closes.
  // Default: 1024, lowered at start() to half the process's descriptor limit (RLIMIT_NOFILE) so
  // that a flood of connections cannot starve the rest of the process of descriptors.
  int max_connections = 1024;

  // Connections open at once from one client address; past it new ones are closed at once.
  // Default: 512. Lower it when the scrapers are known and few, so that one client cannot take
  // every connection.
  int max_connections_per_client = 512;

  // The bytes of a request's line and headers: a longer URL gets 414, longer headers 431.
  // Default: 16384. Raise it only for clients that send large cookies or tokens.
  int max_request_header_bytes = 16384;
};

// What the page draws: the lag history at the time of the request. Called on a server thread.
using LagHistoryProvider = std::function<LagHistory()>;

// MetricsServer serves one registry (which must outlive it) and, when given a provider, the lag
// page; without one the page says there is no lag monitor. It answers on its own threads from
// start() until stop() or destruction. It is event-driven: a connection that holds a request
// half sent costs a descriptor, not a thread, so slow or idle clients cannot keep a scrape out.
//
// start(), stop() and port() may be called from any thread, but not concurrently with each other
// or with the destructor. Scrapes run concurrently with anything done to the registry.
class MetricsServer {
 public:
  MetricsServer(MetricsRegistry& registry, MetricsServerOptions options = {},
                LagHistoryProvider lag_history = {});
  ~MetricsServer();  // stops; never throws
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and starts answering; returns once the server accepts connections.
  // Throws StateError(InvalidArgument) when the port is outside 0..65535, page_refresh_seconds,
  // worker_threads or a limit below 1, or when already started; when tls names a file that cannot
  // be read or holds no certificate or key, a key that does not match the certificate, an unknown
  // min_version or client_auth_type, or a Verify type without client_ca_file; when a user name of
  // basic_auth_users is empty or holds ':', or its hash is not bcrypt (naming the field or file,
  // never a hash). All of these are checked before anything binds.
  // Throws StateError(Unavailable) when the address cannot be bound (in use, not an address of
  // this host), naming host:port.
  void start();

  // Stops answering, closes every connection and joins the server's threads. Does nothing when
  // not running.
  void stop() noexcept;

  // The bound port (the ephemeral one when options.port is 0).
  // Throws StateError(Unavailable) when the server is not running.
  int port() const;

  // "http://HOST:PORT", or "https://HOST:PORT" with tls, with the bound port. Throws as port().
  std::string url() const;

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace processor::monitor
