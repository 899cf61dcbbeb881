// MetricsRegistry and MetricWriter: the Prometheus text format 0.0.4 as a scraper reads it.

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "processor/monitor/metrics.hpp"
#include "state_error_of.hpp"

namespace processor::monitor {
namespace {

using processor::testing::error_of;
using processor::testing::mentions;

bool contains(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

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

TEST(MetricsRegistry, HelpIsEscapedButKeepsQuotes) {
  MetricsRegistry registry;
  registry.gauge("g", "line one\nback\\slash \"quoted\"").with().set(1);
  EXPECT_TRUE(contains(registry.scrape(), "# HELP g line one\\nback\\\\slash \"quoted\"\n")) << registry.scrape();
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

}  // namespace
}  // namespace processor::monitor
