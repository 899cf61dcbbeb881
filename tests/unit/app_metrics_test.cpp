// The application's own metrics (app_metrics.hpp) rendered by a MetricsRegistry and read back by
// Prometheus' own parser.

#include "processor/monitor/app_metrics.hpp"

#include <gtest/gtest.h>

#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "prometheus_parser.hpp"
#include "test_support.hpp"

namespace processor::monitor {
namespace {

using kafka::OffsetCommitStrategy;
using kafka::OffsetManager;
using processor::testing::FlakyOffsetStore;
using processor::testing::parse_with_prometheus_client;

struct TwoGroups {
  TwoGroups() {
    store->fail_writes(1);
    orders->update_offset("orders", 0, 10);
    EXPECT_THROW(orders->commit(), StateError);
    orders->commit();
    orders->update_offset("orders", 1, 7);
    orders->commit();
    orders->checkpoint(1);
    payments->mark_committed({{kafka::TopicPartition("payments", 0), kafka::OffsetInfo(3)}});
  }
  std::shared_ptr<FlakyOffsetStore> store = std::make_shared<FlakyOffsetStore>();
  std::shared_ptr<OffsetManager> orders = std::make_shared<OffsetManager>(
      "orders-app", std::make_shared<state::MemoryStateBackend>(), store, OffsetCommitStrategy::manual());
  std::shared_ptr<OffsetManager> payments =
      std::make_shared<OffsetManager>("payments-app", nullptr, std::make_shared<kafka::InMemoryOffsetStore>(),
                                      OffsetCommitStrategy::manual());
};

TEST(AppMetrics, OffsetManagersOfTwoGroupsRenderAsOneFamilyEachThatPrometheusParses) {
  TwoGroups groups;
  MetricsRegistry registry;
  add_offset_manager_metrics(registry, groups.orders, {{"group", "orders-app"}});
  add_offset_manager_metrics(registry, groups.payments, {{"group", "payments-app"}});
  const auto parsed = parse_with_prometheus_client(registry.scrape());

  EXPECT_EQ(parsed.types.at("processor_commit_latency_seconds"), "histogram");
  EXPECT_EQ(parsed.types.at("processor_commits"), "counter");
  EXPECT_EQ(parsed.types.at("processor_checkpoint_duration_seconds"), "histogram");
  EXPECT_EQ(parsed.types.at("processor_restore_duration_seconds"), "histogram");
  const auto& s = parsed.samples;
  EXPECT_EQ(s.at(R"(processor_commits_total{group="orders-app",result="success",store="memory"})"), 2);
  EXPECT_EQ(s.at(R"(processor_commits_total{group="orders-app",result="failure",store="memory"})"), 1);
  EXPECT_EQ(s.at(R"(processor_commits_total{group="payments-app",result="success",store="memory"})"), 0);
  EXPECT_EQ(s.at(R"(processor_commits_total{group="payments-app",result="success",store="transaction"})"), 1);
  EXPECT_EQ(s.at(R"(processor_offsets_committed_total{group="orders-app"})"), 2);
  EXPECT_EQ(s.at(R"(processor_commit_latency_seconds_count{group="orders-app",store="memory"})"), 2);
  EXPECT_EQ(s.at(R"(processor_commit_latency_seconds_bucket{group="orders-app",le="+Inf",store="memory"})"),
            2);
  EXPECT_GT(s.at(R"(processor_commit_latency_seconds_sum{group="orders-app",store="memory"})"), 0);
  EXPECT_EQ(s.at(R"(processor_checkpoint_duration_seconds_count{group="orders-app"})"), 1);
  EXPECT_EQ(s.at(R"(processor_restore_duration_seconds_count{group="orders-app",source="checkpoint"})"), 0);
  EXPECT_GT(s.at(R"(processor_last_commit_timestamp_seconds{group="orders-app"})"), 1.7e9);
  // The consumer's families are absent: no consumer was added.
  EXPECT_EQ(parsed.types.count("processor_records_processed"), 0u);
}

TEST(AppMetrics, HistogramBucketsAreTheLatencyHistogramsCumulativeCountsInSeconds) {
  TwoGroups groups;
  MetricsRegistry registry;
  add_offset_manager_metrics(registry, groups.orders);
  const auto parsed = parse_with_prometheus_client(registry.scrape());
  const kafka::OffsetStats stats = groups.orders->stats();
  std::size_t buckets = 0;
  for (const auto& bucket : stats.commit_latency.cumulative_buckets()) {
    std::string bound;
    append_metric_value(bound, bucket.upper_bound_seconds);
    const std::string name =
        R"(processor_commit_latency_seconds_bucket{le=")" + bound + R"(",store="memory"})";
    ASSERT_EQ(parsed.samples.count(name), 1u) << name;
    EXPECT_EQ(parsed.samples.at(name), static_cast<double>(bucket.cumulative_count)) << name;
    ++buckets;
  }
  EXPECT_EQ(buckets, 34u);
}

TEST(AppMetrics, ARemovedSourceLeavesTheNextScrape) {
  TwoGroups groups;
  MetricsRegistry registry;
  add_offset_manager_metrics(registry, groups.orders, {{"group", "orders-app"}});
  const AppMetricsId payments =
      add_offset_manager_metrics(registry, groups.payments, {{"group", "payments-app"}});
  remove_app_metrics(registry, payments);
  remove_app_metrics(registry, 987654);  // unknown: ignored
  const std::string scrape = registry.scrape();
  EXPECT_EQ(scrape.find("payments-app"), std::string::npos);
  EXPECT_NE(scrape.find("orders-app"), std::string::npos);
}

TEST(AppMetrics, ASecondRegistryHasItsOwnSources) {
  TwoGroups groups;
  MetricsRegistry first;
  add_offset_manager_metrics(first, groups.orders, {{"group", "orders-app"}});
  {
    MetricsRegistry second;
    add_offset_manager_metrics(second, groups.payments, {{"group", "payments-app"}});
    EXPECT_EQ(second.scrape().find("orders-app"), std::string::npos);
  }
  MetricsRegistry third;  // may reuse the address of `second`: starts empty all the same
  EXPECT_EQ(third.scrape(), "");
  EXPECT_EQ(first.scrape().find("payments-app"), std::string::npos);
}

TEST(AppMetrics, RefusesBadLabelsAndNullSourcesNamingThem) {
  TwoGroups groups;
  MetricsRegistry registry;
  const auto refused = [&](MetricLabels labels, const std::string& named) {
    try {
      add_offset_manager_metrics(registry, groups.orders, std::move(labels));
      ADD_FAILURE() << "accepted labels with " << named;
    } catch (const StateError& error) {
      EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(error.what()).find(named), std::string::npos) << error.what();
    }
  };
  refused({{"store", "x"}}, "store");
  refused({{"le", "x"}}, "le");
  refused({{"bad-name", "x"}}, "bad-name");
  refused({{"group", "a"}, {"group", "b"}}, "group");
  EXPECT_THROW(add_offset_manager_metrics(registry, nullptr), StateError);
  EXPECT_THROW(add_kafka_consumer_metrics(registry, nullptr), StateError);
  EXPECT_THROW(add_parallel_consumer_metrics(registry, nullptr), StateError);
  EXPECT_THROW(add_stream_processor_metrics(registry, nullptr), StateError);
  EXPECT_EQ(registry.scrape(), "");  // nothing was added
}

}  // namespace
}  // namespace processor::monitor
