// MetricsServer on loopback (an ephemeral port, no broker): what Prometheus and a browser get.
// /metrics is parsed with Prometheus' own Python parser (tests/support/prometheus_parse.py).

#include "processor/monitor/metrics_server.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "command_output.hpp"
#include "http_client.hpp"
#include "processor/monitor/lag_metrics.hpp"
#include "state_error_of.hpp"
#include "synthetic_lag.hpp"

namespace processor::monitor {
namespace {

using processor::testing::http_get;
using processor::testing::run_command;
using std::chrono::system_clock;

const system_clock::time_point kTaken = system_clock::time_point(std::chrono::seconds(1700000000));

// A registry with an application counter and the lag collector over a synthetic snapshot.
struct ServedRegistry {
  MetricsRegistry registry;
  std::shared_ptr<const LagSnapshot> snapshot =
      std::make_shared<const LagSnapshot>(processor::testing::synthetic_snapshot(kTaken));
  ServedRegistry() {
    registry.counter("app_records_total", "Records the application processed.", {"topic"})
        .with({"orders"})
        .inc(42);
    auto& latency = registry.histogram("app_commit_seconds", "Commit latency.", {0.01, 0.1}).with();
    for (const double seconds : {0.005, 0.05, 0.5}) latency.observe(seconds);
    registry.add_collector(lag_metrics_collector([this] { return snapshot; }));
  }
};

std::string temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "metrics-server-test-XXXXXX").string();
  return ::mkdtemp(pattern.data()) ? pattern : std::string();
}

TEST(MetricsServer, ServesMetricsThatPrometheusParses) {
  ServedRegistry served;
  MetricsServer server(served.registry);
  server.start();
  ASSERT_GT(server.port(), 0);

  const auto response = http_get(server.url() + "/metrics");
  ASSERT_TRUE(response) << response.error;
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");

  const std::string dir = temp_dir();
  const std::string file = dir + "/metrics.txt";
  std::ofstream(file) << response.body;
  const auto parsed =
      run_command("python3 " PROCESSOR_TEST_SUPPORT_DIR "/prometheus_parse.py " + file + " 2>&1");
  std::filesystem::remove_all(dir);
  if (parsed.exit_code == 2) GTEST_SKIP() << "prometheus_client is not installed: " << parsed.output;
  ASSERT_EQ(parsed.exit_code, 0) << parsed.output << "\n--- scraped:\n" << response.body;

  const std::string& out = parsed.output;
  const auto has = [&out](const std::string& line) { return out.find(line + "\n") != std::string::npos; };
  // The parser drops a counter's _total from the family name, not from the sample's.
  EXPECT_TRUE(has("FAMILY app_records counter")) << out;
  EXPECT_TRUE(has("SAMPLE app_records_total topic=orders 42.0")) << out;
  EXPECT_TRUE(has("FAMILY app_commit_seconds histogram")) << out;
  EXPECT_TRUE(has("SAMPLE app_commit_seconds_bucket le=0.1 2.0")) << out;
  EXPECT_TRUE(has("SAMPLE app_commit_seconds_bucket le=+Inf 3.0")) << out;
  EXPECT_TRUE(has("SAMPLE app_commit_seconds_count  3.0")) << out;
  for (const char* family :
       {"kafka_consumergroup_group_offset", "kafka_consumergroup_group_lag",
        "kafka_consumergroup_group_lag_seconds", "kafka_consumergroup_group_max_lag",
        "kafka_consumergroup_group_max_lag_seconds", "kafka_consumergroup_group_sum_lag",
        "kafka_consumergroup_group_topic_sum_lag", "kafka_partition_latest_offset",
        "kafka_partition_earliest_offset", "kafka_consumergroup_group_status",
        "kafka_consumergroup_partition_status", "processor_lag_monitor_poll_duration_seconds"}) {
    EXPECT_TRUE(has(std::string("FAMILY ") + family + " gauge")) << family << "\n" << out;
  }
  EXPECT_TRUE(has("FAMILY processor_lag_monitor_polls counter")) << out;
  EXPECT_TRUE(
      has("SAMPLE kafka_consumergroup_group_lag client_id=consumer-1,cluster_name=default,"
          "consumer_id=consumer-1-uuid,group=orders,member_host=/127.0.0.1,partition=0,topic=orders 120.0"))
      << out;
  EXPECT_TRUE(
      has("SAMPLE kafka_consumergroup_group_lag_seconds client_id=consumer-1,cluster_name=default,"
          "consumer_id=consumer-1-uuid,group=billing,member_host=/127.0.0.1,partition=0,"
          "source=interpolated,topic=payments 2.5"))
      << out;
  EXPECT_TRUE(
      has("SAMPLE kafka_consumergroup_group_max_lag "
          "cluster_name=default,group=orders,group_type=classic,is_simple_consumer=false 120.0"))
      << out;
  EXPECT_TRUE(has("SAMPLE processor_lag_monitor_polls_total  12.0")) << out;
  // orders-2 has no committed offset: no lag sample (nor NaN) for it.
  EXPECT_EQ(
      out.find("group_lag client_id=consumer-1,cluster_name=default,consumer_id=consumer-1-uuid,group=orders,"
               "member_host=/127.0.0.1,partition=2"),
      std::string::npos)
      << out;
  EXPECT_EQ(out.find("nan"), std::string::npos) << out;
}

TEST(MetricsServer, ServesHealthThePageAndTheChart) {
  ServedRegistry served;
  LagHistory history = processor::testing::synthetic_history(6, kTaken);
  MetricsServer server(served.registry, {}, [&history] { return history; });
  server.start();
  const std::string url = server.url();

  const auto health = http_get(url + "/healthz");
  ASSERT_TRUE(health) << health.error;
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");

  const auto page = http_get(url + "/");
  ASSERT_TRUE(page) << page.error;
  EXPECT_EQ(page.header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(page.body.find("fetch('/lag.svg'"), std::string::npos);  // the refresh
  EXPECT_NE(page.body.find(">orders (ERR)</text>"), std::string::npos);

  const auto svg = http_get(url + "/lag.svg");
  ASSERT_TRUE(svg) << svg.error;
  EXPECT_EQ(svg.header("Content-Type"), "image/svg+xml");
  EXPECT_EQ(svg.body.rfind("<svg", 0), 0u);

  EXPECT_EQ(http_get(url + "/nothing-here").status, 404);
}

TEST(MetricsServer, PageWithoutAMonitorSaysSo) {
  MetricsRegistry registry;
  MetricsServer server(registry);
  server.start();
  const auto page = http_get(server.url() + "/");
  ASSERT_TRUE(page) << page.error;
  EXPECT_NE(page.body.find("no lag monitor"), std::string::npos);
}

TEST(MetricsServer, StopsAndStartsAgain) {
  MetricsRegistry registry;
  MetricsServer server(registry);
  server.start();
  const int port = server.port();
  server.stop();
  EXPECT_THROW(server.port(), StateError);
  EXPECT_FALSE(http_get("http://127.0.0.1:" + std::to_string(port) + "/healthz"));
  server.start();
  EXPECT_TRUE(http_get(server.url() + "/healthz"));
}

TEST(MetricsServer, BadOptionsThrowNamingTheValue) {
  MetricsRegistry registry;
  MetricsServerOptions options;
  options.port = 70000;
  MetricsServer bad_port(registry, options);
  const StateError error = processor::testing::error_of([&] { bad_port.start(); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(processor::testing::mentions(error, "70000"));
}

TEST(MetricsServer, PortInUseIsUnavailable) {
  MetricsRegistry registry;
  MetricsServer first(registry);
  first.start();
  MetricsServerOptions options;
  options.port = first.port();
  MetricsServer second(registry, options);
  const StateError error = processor::testing::error_of([&] { second.start(); });
  EXPECT_EQ(error.kind(), ErrorKind::Unavailable);
  EXPECT_TRUE(processor::testing::mentions(error, "127.0.0.1:" + std::to_string(first.port())));
  EXPECT_TRUE(http_get(first.url() + "/healthz"));  // the first one is untouched
}

TEST(MetricsServer, RestartsOnTheSamePortAtOnce) {
  // SO_REUSEADDR: the connections the first server closed (TIME_WAIT) do not keep the port.
  MetricsRegistry registry;
  MetricsServer first(registry);
  first.start();
  const int port = first.port();
  processor::testing::HttpSession keep_alive;
  ASSERT_TRUE(keep_alive.get(first.url() + "/healthz"));
  first.stop();  // closes the kept-alive connection from the server's side
  MetricsServerOptions options;
  options.port = port;
  MetricsServer second(registry, options);
  second.start();
  EXPECT_EQ(second.port(), port);
  EXPECT_TRUE(http_get(second.url() + "/healthz"));
}

TEST(MetricsServer, ServesOnIpv6Loopback) {
  MetricsRegistry registry;
  MetricsServerOptions options;
  options.host = "::1";
  MetricsServer server(registry, options);
  try {
    server.start();
  } catch (const StateError& error) {
    GTEST_SKIP() << "no IPv6 loopback here: " << error.what();
  }
  EXPECT_EQ(server.url(), "http://[::1]:" + std::to_string(server.port()));
  const auto health = http_get(server.url() + "/healthz");
  ASSERT_TRUE(health) << health.error;
  EXPECT_EQ(health.body, "ok\n");
}

TEST(MetricsServer, BadLimitsThrowNamingTheField) {
  MetricsRegistry registry;
  for (const auto& [field, set] : std::vector<std::pair<std::string, void (*)(MetricsServerOptions&)>>{
           {"idle_timeout_seconds 0", [](MetricsServerOptions& o) { o.idle_timeout_seconds = 0; }},
           {"max_connections -1", [](MetricsServerOptions& o) { o.max_connections = -1; }},
           {"max_connections_per_client 0",
            [](MetricsServerOptions& o) { o.max_connections_per_client = 0; }},
           {"max_request_header_bytes 0", [](MetricsServerOptions& o) { o.max_request_header_bytes = 0; }},
           {"worker_threads 0", [](MetricsServerOptions& o) { o.worker_threads = 0; }}}) {
    MetricsServerOptions options;
    set(options);
    MetricsServer server(registry, options);
    const StateError error = processor::testing::error_of([&] { server.start(); });
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument) << field;
    EXPECT_TRUE(processor::testing::mentions(error, field));
  }
}

TEST(MetricsServer, StartingTwiceIsRefused) {
  MetricsRegistry registry;
  MetricsServer server(registry);
  server.start();
  const StateError error = processor::testing::error_of([&] { server.start(); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(processor::testing::mentions(error, "already started"));
  EXPECT_TRUE(http_get(server.url() + "/healthz"));
}

TEST(MetricsServer, FailingCollectorAnswers500NamingTheError) {
  MetricsRegistry registry;
  registry.add_collector(
      [](MetricWriter&) { throw StateError(ErrorKind::Unavailable, "stats source gone"); });
  MetricsServer server(registry);
  server.start();
  const auto response = http_get(server.url() + "/metrics");
  ASSERT_TRUE(response) << response.error;
  EXPECT_EQ(response.status, 500);
  EXPECT_NE(response.body.find("stats source gone"), std::string::npos);
}

}  // namespace
}  // namespace processor::monitor
