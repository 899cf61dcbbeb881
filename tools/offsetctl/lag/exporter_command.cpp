// offsetctl exporter: the lag of consumer groups as Prometheus metrics (kafka-lag-exporter's names)
// and a page with the lag chart, served over HTTP until SIGINT or SIGTERM; over HTTPS and behind
// basic auth with --web-config (Prometheus exporter-toolkit's web configuration file).

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "lag/stop_signal.hpp"
#include "lag/watch_args.hpp"
#include "lag/web_config.hpp"
#include "processor/error.hpp"
#include "processor/monitor/lag_metrics.hpp"
#include "processor/monitor/metrics_server.hpp"

namespace processor::offsetctl {

namespace {

struct ExporterArgs {
  WatchArgs watch;
  std::string listen;
  std::size_t history = 60;
  std::string cluster_name = "default";
  std::string web_config;
};

struct ListenAddress {
  std::string host;
  int port = 0;
};

// "HOST:PORT" or "[IPv6]:PORT"; PORT 0 asks for an ephemeral port.
ListenAddress parse_listen(const std::string& listen) {
  const auto bad = [&listen](const std::string& why) {
    return CLI::ValidationError("--listen",
                                "'" + listen + "': " + why + " (expected HOST:PORT, e.g. 127.0.0.1:8000)");
  };
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) throw bad("no host or no port");
  ListenAddress address;
  address.host = listen.substr(0, colon);
  if (address.host.front() == '[' && address.host.back() == ']')
    address.host = address.host.substr(1, address.host.size() - 2);
  const std::string port = listen.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    throw bad("the port is not a number");
  address.port = std::stoi(port);
  if (address.port > 65535) throw bad("the port is above 65535");
  return address;
}

int run_exporter(const ExporterArgs& args, const ListenAddress& address) {
  // Read when the command runs, not when its arguments are parsed (parsing reads no file), and
  // before anything connects or binds.
  const WebConfig web_config = args.web_config.empty() ? WebConfig{} : load_web_config(args.web_config);
  const StopSignalScope signals;
  const std::unique_ptr<monitor::LagMonitor> monitor = make_lag_monitor(args.watch, args.history);
  monitor::LagMonitor& lag_monitor = *monitor;

  monitor::MetricsRegistry registry;
  monitor::LagMetricsOptions metrics_options;
  metrics_options.cluster_name = args.cluster_name;
  registry.add_collector(monitor::lag_metrics_collector(
      [&lag_monitor]() -> std::shared_ptr<const monitor::LagSnapshot> {
        auto snapshot = std::make_shared<const monitor::LagSnapshot>(lag_monitor.latest());
        // Before the first poll there is nothing to say (no sample rather than zeros).
        if (snapshot->taken_at == std::chrono::system_clock::time_point{}) return nullptr;
        return snapshot;
      },
      metrics_options));

  monitor::MetricsServerOptions server_options;
  server_options.host = address.host;
  server_options.port = address.port;
  server_options.page_refresh_seconds = std::max(1, static_cast<int>(args.watch.interval_seconds + 0.5));
  apply_web_config(web_config, server_options);
  monitor::MetricsServer server(registry, server_options, [&lag_monitor] { return lag_monitor.history(); });
  server.start();
  lag_monitor.start();
  std::cout << "offsetctl exporter: serving " << server.url() << "/metrics" << std::endl;

  while (!StopSignalScope::stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server.stop();
  lag_monitor.stop();
  std::cout << "offsetctl exporter: stopped" << std::endl;
  return kExitOk;
}

}  // namespace

void add_exporter_commands(CLI::App& app, Invocation& invocation) {
  auto args = std::make_shared<ExporterArgs>();
  auto* exporter = app.add_subcommand("exporter",
                                      "serve the lag of consumer groups as Prometheus metrics "
                                      "(kafka-lag-exporter's names) at /metrics, and a "
                                      "page with the lag chart at /, until SIGINT or SIGTERM");
  add_watch_options(*exporter, args->watch, "seconds between polls of the cluster (default 5)");
  exporter
      ->add_option("--listen", args->listen,
                   "HOST:PORT to serve on, e.g. 127.0.0.1:8000 (port 0: any free one)")
      ->required();
  exporter
      ->add_option("--history", args->history,
                   "polls the chart at / keeps (default 60); each holds every partition watched, so lower it "
                   "for clusters of 10^5 partitions")
      ->check(CLI::Range(1, 100000));
  exporter->add_option("--cluster-name", args->cluster_name,
                       "the cluster_name label of every lag metric (default \"default\")");
  exporter->add_option("--web-config", args->web_config,
                       "Prometheus exporter-toolkit's web configuration file (YAML): tls_server_config "
                       "(HTTPS, client certificates) and basic_auth_users (bcrypt hashes); relative paths "
                       "in it resolve against its directory");
  exporter->callback([args, &invocation] {
    check_watch_args(args->watch, "exporter");
    const ListenAddress address = parse_listen(args->listen);
    invocation.run = [args, address] { return run_exporter(*args, address); };
  });
}

}  // namespace processor::offsetctl
