// A KafkaConsumer's and a ParallelConsumer's metrics against librdkafka's mock cluster: records
// processed, out-of-range resets by cause, and the parallel consumer's workers, buffers and
// failures, in their stats and as parsed from a scrape.

#include <gtest/gtest.h>

#include <stdexcept>

#include "kafka_test_support.hpp"
#include "parallel_consumer_support.hpp"
#include "processor/kafka.hpp"
#include "processor/monitor/app_metrics.hpp"
#include "prometheus_parser.hpp"

namespace processor::kafka {
namespace {

using Member = testing::GroupMember;
using testing::fast_retries;
using testing::MockCluster;
using testing::poll_until;
using testing::Producer;
using testing::unique_name;

class AppMetricsMock : public ::testing::Test {
 protected:
  void SetUp() override {
    topic_ = unique_name("orders");
    group_ = unique_name("group");
    cluster_.create_topic(topic_, 4);
  }

  void commit_standalone(std::int32_t partition, std::int64_t offset) {
    KafkaOffsetStore store(KafkaClient::create(testing::group_properties(cluster_.bootstrap(), group_)),
                           fast_retries());
    store.store_offsets(
        group_, std::vector<PartitionOffset>{{TopicPartition(topic_, partition), OffsetInfo(offset)}});
  }

  MockCluster cluster_;
  std::string topic_;
  std::string group_;
};

TEST_F(AppMetricsMock, ResetsAreCountedByCauseAndRecordsAsProcessed) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 100);
  producer.produce(topic_, 1, 30);
  commit_standalone(0, 500);  // above the log end of partition 0 (100)
  commit_standalone(1, 10);   // in range
  // Partitions 2 and 3 have no committed offset.
  Member member(cluster_.bootstrap(), group_, topic_, "range");
  std::uint64_t handled = 0;
  ASSERT_TRUE(poll_until(
      member.consumer, [&](const ConsumedRecord&) { ++handled; },
      [&] { return member.consumer.assignment().size() == 4 && handled == 20; }));
  const ConsumerStats stats = member.consumer.stats();
  EXPECT_EQ(stats.records, 20u);  // partition 1 from 10 to 30; partition 0 starts at its end
  EXPECT_EQ(stats.above_log_end_resets, 1u);
  EXPECT_EQ(stats.no_offset_resets, 2u);
  EXPECT_EQ(stats.below_log_start_resets, 0u);
  EXPECT_EQ(stats.out_of_range_resets, 3u);

  monitor::MetricsRegistry registry;
  // The member outlives the registry: a non-owning pointer.
  monitor::add_kafka_consumer_metrics(
      registry, std::shared_ptr<const KafkaConsumer>(std::shared_ptr<void>(), &member.consumer),
      {{"group", group_}});
  const auto parsed = testing::parse_with_prometheus_client(registry.scrape());
  const std::string group = "group=\"" + group_ + "\"";
  EXPECT_EQ(parsed.types.at("processor_records_processed"), "counter");
  EXPECT_EQ(parsed.samples.at("processor_records_processed_total{" + group + "}"), 20);
  EXPECT_EQ(parsed.samples.at("processor_offset_resets_total{cause=\"above_log_end\"," + group + "}"), 1);
  EXPECT_EQ(parsed.samples.at("processor_offset_resets_total{cause=\"no_offset\"," + group + "}"), 2);
  EXPECT_EQ(parsed.samples.at("processor_offset_resets_total{cause=\"below_log_start\"," + group + "}"), 0);
  EXPECT_EQ(parsed.samples.at("processor_records_skipped_total{" + group + "}"), 0);
  EXPECT_EQ(parsed.types.count("processor_commit_latency_seconds"), 0u);  // no manager added
}

TEST_F(AppMetricsMock, SkippedRecordsAreCountedPerPartitionAndAction) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 1, 100);
  KafkaConsumerOptions options = Member::options_for(topic_);
  options.failure.action = FailureAction::Skip;
  options.failure.retry = {2, std::chrono::milliseconds(1), std::chrono::milliseconds(1)};
  Member member(cluster_.bootstrap(), group_, options, "range");
  std::uint64_t handled = 0;
  ASSERT_TRUE(poll_until(
      member.consumer,
      [&](const ConsumedRecord& r) {
        if (r.offset % 50 == 10) throw std::runtime_error("cannot parse");
        ++handled;
      },
      [&] { return handled == 98; }));
  monitor::MetricsRegistry registry;
  monitor::add_kafka_consumer_metrics(
      registry, std::shared_ptr<const KafkaConsumer>(std::shared_ptr<void>(), &member.consumer),
      {{"group", group_}});
  const auto parsed = testing::parse_with_prometheus_client(registry.scrape());
  const std::string group = "group=\"" + group_ + "\"";
  const std::string partition = "partition=\"1\",topic=\"" + topic_ + "\"";
  EXPECT_EQ(parsed.types.at("processor_failed_records"), "counter");
  EXPECT_EQ(
      parsed.samples.at("processor_failed_records_total{action=\"skipped\"," + group + "," + partition + "}"),
      2);
  EXPECT_EQ(parsed.samples.at("processor_failed_records_total{action=\"dead_lettered\"," + group + "," +
                              partition + "}"),
            0);
  EXPECT_EQ(parsed.samples.at("processor_record_failures_total{" + group + "}"), 4);  // two tries each
}

TEST_F(AppMetricsMock, CommitsToKafkaAreAttributedToTheKafkaStore) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 5);
  Member member(cluster_.bootstrap(), group_, topic_, "range");
  std::uint64_t handled = 0;
  ASSERT_TRUE(poll_until(
      member.consumer, [&](const ConsumedRecord&) { ++handled; }, [&] { return handled == 5; }));
  EXPECT_EQ(member.manager.commit(), 4u);  // one commit of the four partitions' positions
  const OffsetStats stats = member.manager.stats();
  ASSERT_EQ(stats.commits_by_store.size(), 1u);
  EXPECT_EQ(stats.commits_by_store[0].store, "kafka");
  EXPECT_EQ(stats.commits_by_store[0].successful, 1u);
  EXPECT_EQ(stats.commit_latency.count(), 1u);
  EXPECT_GE(stats.commit_latency_max_us, 1u);  // a round trip to the (mock) coordinator
}

TEST_F(AppMetricsMock, AParallelConsumersRunningHandlersFailuresAndDeadLettersAreScraped) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 6);
  testing::Gate last_record;
  auto options = testing::parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.consumer.failure.retry.max_attempts = 2;
  options.on_failure = [](const FailedRecord&) {};
  testing::ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& record) {
    if (record.offset == 2) throw std::runtime_error("poison record 2");
    if (record.offset == 5) last_record.pass();
  });
  // Offsets 0-4 done (2 dead-lettered after its two tries), 5 running behind the gate.
  ASSERT_TRUE(testing::poll_until(member.consumer, [&] {
    const auto stats = member.consumer.stats();
    return last_record.arrived() == 1 && stats.processed == 4 && stats.dead_lettered == 1;
  }));

  monitor::MetricsRegistry registry;
  monitor::add_parallel_consumer_metrics(
      registry, std::shared_ptr<const ParallelConsumer>(std::shared_ptr<void>(), &member.consumer),
      {{"group", group_}});
  const auto parsed = testing::parse_with_prometheus_client(registry.scrape());
  last_record.open();
  const std::string group = "{group=\"" + group_ + "\"}";
  EXPECT_EQ(parsed.types.at("processor_parallel_in_flight_records"), "gauge");
  EXPECT_EQ(parsed.samples.at("processor_parallel_in_flight_records" + group), 1);
  EXPECT_EQ(parsed.samples.at("processor_parallel_buffered_records" + group), 1);
  EXPECT_GT(parsed.samples.at("processor_parallel_buffered_bytes" + group), 0);
  EXPECT_GE(parsed.samples.at("processor_parallel_buffered_bytes_peak" + group),
            parsed.samples.at("processor_parallel_buffered_bytes" + group));
  EXPECT_EQ(parsed.types.at("processor_parallel_handler_failures"), "counter");
  EXPECT_EQ(parsed.samples.at("processor_parallel_handler_failures_total" + group), 2);
  EXPECT_EQ(parsed.samples.at("processor_parallel_dead_lettered_total" + group), 1);
  EXPECT_EQ(parsed.samples.at("processor_parallel_abandoned_total" + group), 0);
  EXPECT_EQ(parsed.samples.at("processor_parallel_executor_rejections_total" + group), 0);
  // Handlers that returned, not records fetched (6): the dead-lettered record's handler never did.
  EXPECT_EQ(parsed.samples.at("processor_records_processed_total" + group), 4);
  // The consumer's own families, of the ParallelConsumer's consumer.
  EXPECT_EQ(parsed.samples.at("processor_offset_resets_total{cause=\"no_offset\"," + group.substr(1)), 4);
  ASSERT_TRUE(testing::poll_until(member.consumer, [&] { return member.consumer.stats().in_flight == 0; }));
}

}  // namespace
}  // namespace processor::kafka
