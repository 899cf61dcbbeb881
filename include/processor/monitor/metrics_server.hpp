#pragma once
// processor::monitor::MetricsServer: an embedded HTTP server for Prometheus and for people:
//   /metrics   the registry's text exposition (Content-Type text/plain; version=0.0.4; charset=utf-8)
//   /          a small HTML page with the lag chart (lag_chart.hpp), refreshed every few seconds
//   /lag.svg   the chart alone
//   /healthz   "ok"
// `offsetctl exporter` runs one; an application embeds one to export its own metrics.

#include <functional>
#include <memory>
#include <string>

#include "processor/monitor/lag_chart.hpp"
#include "processor/monitor/lag_snapshot.hpp"
#include "processor/monitor/metrics.hpp"

namespace processor::monitor {

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

  // Threads answering requests. Default: 2 (a scrape and a browser at once). More only helps
  // with several scrapers.
  int worker_threads = 2;
};

// What the page draws: the lag history at the time of the request. Called on a server thread.
using LagHistoryProvider = std::function<LagHistory()>;

// MetricsServer serves one registry (which must outlive it) and, when given a provider, the lag
// page; without one the page says there is no lag monitor. It answers on its own threads from
// start() until stop() or destruction.
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
  // Throws StateError(InvalidArgument) when the port is outside 0..65535, page_refresh_seconds or
  // worker_threads below 1, or when already started; StateError(Unavailable) when the address
  // cannot be bound (in use, not an address of this host), naming host:port.
  void start();

  // Stops answering and joins the server's threads. Does nothing when not running.
  void stop() noexcept;

  // The bound port (the ephemeral one when options.port is 0).
  // Throws StateError(Unavailable) when the server is not running.
  int port() const;

  // "http://HOST:PORT", with the bound port. Throws as port().
  std::string url() const;

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace processor::monitor
