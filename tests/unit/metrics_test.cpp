// MetricsRegistry and MetricWriter: the Prometheus text format 0.0.4 as a scraper reads it.

#include "processor/monitor/metrics.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "processor/monitor/lag_metrics.hpp"
#include "state_error_of.hpp"
#include "synthetic_lag.hpp"

namespace processor::monitor {
namespace {

using processor::testing::error_of;
using processor::testing::mentions;

bool contains(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(MetricsRegistry, CounterHasHelpTypeAndSample) {
  MetricsRegistry registry;
  registry.counter("jobs_total", "Jobs done.", {"queue"}).with({"fast"}).inc(3);
  EXPECT_EQ(registry.scrape(),
            "# HELP jobs_total Jobs done.\n"
            "# TYPE jobs_total counter\n"
            "jobs_total{queue=\"fast\"} 3\n");
}

TEST(MetricsRegistry, LabelValuesAreEscaped) {
  MetricsRegistry registry;
  registry.gauge("g", "x", {"path"}).with({"a\\b\"c\nd"}).set(1);
  EXPECT_TRUE(contains(registry.scrape(), "g{path=\"a\\\\b\\\"c\\nd\"} 1\n")) << registry.scrape();
}

TEST(MetricsRegistry, LongLabelValuesAreEscapedWhereverTheCharacterIs) {
  // Values are scanned eight bytes at a time, then byte by byte: an escape in each part.
  MetricsRegistry registry;
  auto& family = registry.gauge("g", "x", {"v"});
  family.with({"0123456789abcdef\"quoted\" and more"}).set(1);
  family.with({"0123456789abcdefghijklm\\"}).set(2);
  family.with({"0123456789abcdefghijklmnop"}).set(3);
  const std::string text = registry.scrape();
  EXPECT_TRUE(contains(text, "g{v=\"0123456789abcdef\\\"quoted\\\" and more\"} 1\n")) << text;
  EXPECT_TRUE(contains(text, "g{v=\"0123456789abcdefghijklm\\\\\"} 2\n")) << text;
  EXPECT_TRUE(contains(text, "g{v=\"0123456789abcdefghijklmnop\"} 3\n")) << text;
}

TEST(MetricsRegistry, HelpIsEscapedButKeepsQuotes) {
  MetricsRegistry registry;
  registry.gauge("g", "line one\nback\\slash \"quoted\"").with().set(1);
  EXPECT_TRUE(contains(registry.scrape(), "# HELP g line one\\nback\\\\slash \"quoted\"\n"))
      << registry.scrape();
}

TEST(MetricsRegistry, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry registry;
  auto& latency = registry.histogram("latency_seconds", "Latency.", {0.1, 0.5, 1}, {"op"}).with({"read"});
  for (const double seconds : {0.05, 0.1, 0.3, 0.7, 2.0, 3.0}) latency.observe(seconds);
  const std::string text = registry.scrape();
  EXPECT_TRUE(contains(text, "# TYPE latency_seconds histogram\n")) << text;
  EXPECT_TRUE(contains(text,
                       "latency_seconds_bucket{op=\"read\",le=\"0.1\"} 2\n"
                       "latency_seconds_bucket{op=\"read\",le=\"0.5\"} 3\n"
                       "latency_seconds_bucket{op=\"read\",le=\"1\"} 4\n"
                       "latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 6\n"
                       "latency_seconds_sum{op=\"read\"} 6.15\n"
                       "latency_seconds_count{op=\"read\"} 6\n"))
      << text;
}

TEST(MetricsRegistry, UnknownGaugeHasNoSample) {
  MetricsRegistry registry;
  auto& family = registry.gauge("lag", "Lag.", {"p"});
  family.with({"0"}).set(std::numeric_limits<double>::quiet_NaN());
  family.with({"1"}).set(7);
  const std::string text = registry.scrape();
  EXPECT_FALSE(contains(text, "p=\"0\"")) << text;
  EXPECT_FALSE(contains(text, "NaN")) << text;
  EXPECT_TRUE(contains(text, "lag{p=\"1\"} 7\n")) << text;
}

TEST(MetricWriter, OptionalWithoutValueWritesNoSample) {
  std::string text;
  MetricWriter writer(text);
  writer.family("lag", "Lag.", MetricType::Gauge);
  writer.sample({{"p", "0"}}, std::optional<std::int64_t>{});
  writer.sample({{"p", "1"}}, std::optional<std::int64_t>{5});
  EXPECT_EQ(text, "# HELP lag Lag.\n# TYPE lag gauge\nlag{p=\"1\"} 5\n");
}

TEST(MetricWriter, DoublesReadBackExactly) {
  std::string text;
  for (const double value : {0.1, 1e21, 123456789.0, -2.5e-7}) {
    text.clear();
    append_metric_value(text, value);
    EXPECT_EQ(std::stod(text), value) << text;
  }
  text.clear();
  append_metric_value(text, std::numeric_limits<double>::infinity());
  EXPECT_EQ(text, "+Inf");
}

TEST(MetricWriter, Int64IsExact) {
  std::string text;
  MetricWriter writer(text);
  writer.family("offset", "Offset.", MetricType::Gauge);
  writer.sample({}, std::int64_t{9007199254740993});  // 2^53 + 1: not a double
  EXPECT_TRUE(contains(text, "offset 9007199254740993\n")) << text;
}

TEST(MetricsRegistry, CollectorsRunAtEachScrape) {
  MetricsRegistry registry;
  int reads = 0;
  const CollectorId id = registry.add_collector([&reads](MetricWriter& writer) {
    ++reads;
    writer.family("app_reads", "Reads of the app's stats.", MetricType::Counter);
    writer.sample({}, static_cast<std::int64_t>(reads));
  });
  registry.scrape();
  EXPECT_TRUE(contains(registry.scrape(), "app_reads 2\n"));
  registry.remove_collector(id);
  EXPECT_FALSE(contains(registry.scrape(), "app_reads"));
}

TEST(MetricsRegistry, CollectorRepeatingARegisteredNameFailsTheScrape) {
  MetricsRegistry registry;
  registry.gauge("dup", "x").with().set(1);
  registry.add_collector([](MetricWriter& writer) { writer.family("dup", "y", MetricType::Gauge); });
  EXPECT_TRUE(mentions(error_of([&] { registry.scrape(); }), "dup"));
}

TEST(MetricsRegistry, BadInputThrowsNamingTheValue) {
  MetricsRegistry registry;
  EXPECT_TRUE(mentions(error_of([&] { registry.counter("1bad", "x"); }), "1bad"));
  EXPECT_TRUE(mentions(error_of([&] { registry.gauge("g", "x", {"bad-label"}); }), "bad-label"));
  EXPECT_TRUE(mentions(error_of([&] { registry.histogram("h", "x", {1, 0.5}); }), "0.5"));
  EXPECT_TRUE(mentions(error_of([&] { registry.histogram("h", "x", {1}, {"le"}); }), "le"));
  registry.counter("c", "x", {"a"});
  EXPECT_TRUE(mentions(error_of([&] { registry.gauge("c", "x", {"a"}); }), "counter"));
  EXPECT_TRUE(mentions(error_of([&] { registry.counter("c", "x", {"a"}).with({"1", "2"}); }), "[1,2]"));
  EXPECT_TRUE(mentions(error_of([&] { registry.counter("c", "x", {"a"}).with({"1"}).inc(-1); }), "-1"));
  // The child {a="1"} exists (with() made it); the bad increment left it at 0.
  EXPECT_EQ(registry.scrape(), "# HELP c x\n# TYPE c counter\nc{a=\"1\"} 0\n");
}

TEST(MetricsRegistry, ConcurrentIncrementsAreAllCounted) {
  MetricsRegistry registry;
  auto& counter = registry.counter("events_total", "x").with();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) counter.inc();
    });
  }
  for (int i = 0; i < 20; ++i) registry.scrape();
  for (auto& thread : threads) thread.join();
  EXPECT_TRUE(contains(registry.scrape(), "events_total 40000\n"));
}

// kafka-lag-exporter's names and labels, from the synthetic snapshot of synthetic_lag.hpp.
std::string lag_metrics_text() {
  MetricsRegistry registry;
  const auto snapshot = std::make_shared<const LagSnapshot>(processor::testing::synthetic_snapshot(
      std::chrono::system_clock::time_point(std::chrono::seconds(1700000000))));
  LagMetricsOptions options;
  options.cluster_name = "local";
  registry.add_collector(lag_metrics_collector([snapshot] { return snapshot; }, options));
  return registry.scrape();
}

TEST(LagMetrics, PartitionFamiliesCarryKafkaLagExporterLabels) {
  const std::string text = lag_metrics_text();
  const std::string labels =
      "{cluster_name=\"local\",group=\"orders\",topic=\"orders\",partition=\"0\",member_host=\"/127.0.0.1\","
      "consumer_id=\"consumer-1-uuid\",client_id=\"consumer-1\"";
  EXPECT_TRUE(contains(text, "# TYPE kafka_consumergroup_group_offset gauge\n")) << text;
  EXPECT_TRUE(contains(text, "kafka_consumergroup_group_offset" + labels + "} 880\n")) << text;
  EXPECT_TRUE(contains(text, "kafka_consumergroup_group_lag" + labels + "} 120\n")) << text;
  EXPECT_TRUE(
      contains(text, "kafka_consumergroup_group_lag_seconds" + labels + ",source=\"interpolated\"} 12\n"))
      << text;
}

TEST(LagMetrics, GroupAndPartitionFamilies) {
  const std::string text = lag_metrics_text();
  EXPECT_TRUE(contains(
      text,
      "kafka_consumergroup_group_max_lag{cluster_name=\"local\",group=\"orders\",group_type=\"classic\","
      "is_simple_consumer=\"false\"} 120\n"));
  EXPECT_TRUE(contains(text,
                       "kafka_consumergroup_group_max_lag_seconds{cluster_name=\"local\",group=\"billing\","
                       "group_type=\"consumer\",is_simple_consumer=\"false\"} 2.5\n"));
  EXPECT_TRUE(contains(text,
                       "kafka_consumergroup_group_sum_lag{cluster_name=\"local\",group=\"orders\",group_type="
                       "\"classic\"} 200\n"));
  EXPECT_TRUE(contains(text,
                       "kafka_consumergroup_group_topic_sum_lag{cluster_name=\"local\",group=\"billing\","
                       "group_type=\"consumer\","
                       "topic=\"payments\"} 40\n"));
  EXPECT_TRUE(contains(
      text, "kafka_partition_latest_offset{cluster_name=\"local\",topic=\"orders\",partition=\"2\"} 700\n"));
  EXPECT_TRUE(contains(
      text,
      "kafka_partition_earliest_offset{cluster_name=\"local\",topic=\"payments\",partition=\"1\"} 0\n"));
  EXPECT_TRUE(contains(
      text,
      "kafka_consumergroup_group_status{cluster_name=\"local\",group=\"orders\",group_type=\"classic\","
      "status=\"ERR\"} 5\n"));
  EXPECT_TRUE(contains(text,
                       "kafka_consumergroup_partition_status{cluster_name=\"local\",group=\"billing\","
                       "topic=\"payments\",partition=\"1\",status=\"OK\"} 0\n"));
  EXPECT_TRUE(contains(text, "1 WARN, 2 STALL, 3 STOP, 4 REWIND, 5 ERR"));  // the codes, in HELP
  // Each group's state and member count, under its type.
  EXPECT_TRUE(
      contains(text,
               "kafka_consumergroup_members{cluster_name=\"local\",group=\"orders\",group_type=\"classic\","
               "state=\"Stable\"} 2\n"))
      << text;
  EXPECT_TRUE(contains(text,
                       "kafka_consumergroup_members{cluster_name=\"local\",group=\"billing\","
                       "group_type=\"consumer\",state=\"Stable\"} 1\n"))
      << text;
}

TEST(LagMetrics, GroupNotYetDescribedHasUnknownTypeAndState) {
  LagSnapshot snapshot;
  GroupLag group;
  group.group = "new";
  snapshot.groups.push_back(group);
  MetricsRegistry registry;
  const auto shared = std::make_shared<const LagSnapshot>(snapshot);
  registry.add_collector(lag_metrics_collector([shared] { return shared; }, {}));
  const std::string text = registry.scrape();
  EXPECT_TRUE(
      contains(text,
               "kafka_consumergroup_members{cluster_name=\"default\",group=\"new\",group_type=\"unknown\","
               "state=\"unknown\"} 0\n"))
      << text;
}

TEST(LagMetrics, UnknownLagHasNoSample) {
  const std::string text = lag_metrics_text();
  // orders-2 has no committed offset: no offset, lag or lag_seconds sample, but its status and
  // log offsets are known.
  for (const std::string family : {"group_offset{", "group_lag{", "group_lag_seconds{"}) {
    const std::string prefix = "kafka_consumergroup_" + family;
    for (auto at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
      EXPECT_EQ(text.substr(at, text.find('\n', at) - at).find("partition=\"2\""), std::string::npos);
    }
  }
  EXPECT_TRUE(contains(text, "topic=\"orders\",partition=\"2\",status=\"ERR\"} 5\n"));
  EXPECT_FALSE(contains(text, "NaN"));
  EXPECT_FALSE(contains(text, " -1\n"));
}

TEST(LagMetrics, MonitorsOwnFigures) {
  const std::string text = lag_metrics_text();
  EXPECT_TRUE(contains(
      text, "# TYPE processor_lag_monitor_polls_total counter\nprocessor_lag_monitor_polls_total 12\n"));
  EXPECT_TRUE(contains(text, "processor_lag_monitor_poll_errors_total 1\n"));
  EXPECT_TRUE(contains(text, "processor_lag_monitor_poll_duration_seconds 0.25\n"));
  EXPECT_TRUE(contains(text, "processor_lag_monitor_evaluation_duration_seconds 0.003\n"));
  EXPECT_TRUE(contains(text, "processor_lag_monitor_partitions 5\n"));
  EXPECT_TRUE(contains(text, "processor_lag_monitor_last_poll_timestamp_seconds 1700000000\n"));
}

TEST(LagMetrics, NoSnapshotYetWritesNothing) {
  MetricsRegistry registry;
  registry.add_collector(lag_metrics_collector([] { return std::shared_ptr<const LagSnapshot>(); }));
  EXPECT_EQ(registry.scrape(), "");
}

}  // namespace
}  // namespace processor::monitor
