// ParallelConsumer on librdkafka's mock cluster: what runs concurrently under each
// ProcessingOrder, where commits stop while a record is slow, what a restarted member skips,
// and back-pressure. (Failures, revokes, checkpoints and executors: parallel_consumer_failure_test.cpp.)

#include "processor/kafka/parallel_consumer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "kafka_test_support.hpp"
#include "parallel_consumer_support.hpp"
#include "processor/kafka.hpp"
#include "processor/log.hpp"
#include "recording_log_sink.hpp"

namespace processor::kafka {
namespace {

using testing::acked_offsets;
using testing::ConcurrencyGauge;
using testing::Gate;
using testing::HandlerLog;
using testing::MockCluster;
using testing::parallel_options;
using testing::ParallelMember;
using testing::pending_acks;
using testing::poll_times;
using testing::poll_until;
using testing::Producer;
using testing::unique_name;

class ParallelConsumerMock : public ::testing::Test {
 protected:
  void SetUp() override {
    topic_ = unique_name("parallel");
    group_ = unique_name("parallel-group");
  }

  // Makes handlers wait until `count` of them run at once (once, then they run freely): with a
  // consumer that allows it they meet, and the gauges show the overlap without timing. A
  // consumer that never lets them meet makes the first handler give up after `limit`.
  void meet(ConcurrencyGauge& gauge, int count, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    if (met_.load()) return;
    if (gauge.wait_for_running(count, limit)) met_ = true;
  }

  MockCluster cluster_;
  std::string topic_;
  std::string group_;
  std::atomic<bool> met_{false};
};

// Records "a" "a" "b" "b" "c" "c" "d" "d", five times: neighbours share a key, so a consumer that
// ran one partition's records freely would run two of one key together.
std::vector<std::string> paired_keys() {
  std::vector<std::string> keys;
  for (int round = 0; round < 5; ++round) {
    for (const char* key : {"a", "b", "c", "d"}) keys.insert(keys.end(), 2, key);
  }
  return keys;
}

TEST_F(ParallelConsumerMock, KeyOrderRunsOneKeyAtATimeInOffsetOrderWhileKeysOverlap) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  const auto keys = paired_keys();
  testing::produce_keys(producer, topic_, 0, keys);
  ConcurrencyGauge by_key;
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Key;
  options.max_concurrency = 4;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    auto running = by_key.enter(std::string(r.key));
    meet(by_key, 2);
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == keys.size(); }));

  EXPECT_EQ(by_key.peak_in_group(), 1) << "two records of one key ran at once";
  EXPECT_GE(by_key.peak_groups(), 2) << "different keys never overlapped";
  std::map<std::string, std::vector<std::int64_t>> offsets_by_key;
  for (const auto& start : log.order()) offsets_by_key[start.key].push_back(start.offset);
  for (const auto& [key, offsets] : offsets_by_key) {
    EXPECT_TRUE(std::is_sorted(offsets.begin(), offsets.end()))
        << "key " << key << " ran out of offset order";
    EXPECT_EQ(offsets.size(), 10u) << "key " << key;
  }
  EXPECT_EQ(member.consumer.stats().processed, keys.size());
}

TEST_F(ParallelConsumerMock, PartitionOrderRunsOneRecordPerPartitionInOffsetOrderWhilePartitionsOverlap) {
  cluster_.create_topic(topic_, 3);
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 3; ++p) producer.produce(topic_, p, 10);  // distinct keys
  ConcurrencyGauge by_partition;
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Partition;
  options.max_concurrency = 4;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    auto running = by_partition.enter(std::to_string(r.partition));
    meet(by_partition, 2);
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 30; }));

  EXPECT_EQ(by_partition.peak_in_group(), 1) << "two records of one partition ran at once";
  EXPECT_GE(by_partition.peak_groups(), 2) << "partitions never overlapped";
  std::map<std::int32_t, std::vector<std::int64_t>> offsets_by_partition;
  for (const auto& start : log.order()) offsets_by_partition[start.partition].push_back(start.offset);
  for (const auto& [partition, offsets] : offsets_by_partition) {
    EXPECT_EQ(offsets, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}))
        << "partition " << partition;
  }
}

TEST_F(ParallelConsumerMock, UnorderedRunsRecordsOfOnePartitionAndOneKeyAtOnce) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  testing::produce_keys(producer, topic_, 0, std::vector<std::string>(20, "same-key"));
  ConcurrencyGauge by_partition;
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.max_concurrency = 4;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    auto running = by_partition.enter(std::to_string(r.partition));
    meet(by_partition, 3);
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 20; }));
  EXPECT_GE(by_partition.peak_in_group(), 3) << "records of one partition never overlapped";
  for (const auto& [record, calls] : log.calls()) EXPECT_EQ(calls, 1) << "offset " << record.second;
}

TEST_F(ParallelConsumerMock, MaxConcurrencyIsNeverExceeded) {
  cluster_.create_topic(topic_, 2);
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 2; ++p) producer.produce(topic_, p, 20);
  ConcurrencyGauge gauge;
  HandlerLog log;
  Gate gate;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.max_concurrency = 3;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    auto running = gauge.enter();
    gate.pass();
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] { return gate.arrived() >= 3; }));
  poll_times(member.consumer, 20);  // 37 records wait for a worker
  EXPECT_EQ(gauge.running(), 3);
  EXPECT_EQ(member.consumer.stats().in_flight, 3u);
  gate.open();
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 40; }));
  EXPECT_EQ(gauge.peak(), 3);
}

// Regression: a worker whose records were quick took several at a time (up to 32, as many as
// free slots) and ran them one after the other: records of other keys taken with a slow one
// waited for it, and held the concurrency slots they were taken in.
TEST_F(ParallelConsumerMock, ASlowRecordDoesNotHoldBackRecordsOfOtherKeys) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 200);  // quick records first: the workers see only quick ones
  Gate slow;
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Key;  // every key distinct
  options.max_concurrency = 2;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    if (r.offset == 200) slow.pass();
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 200; }));
  producer.produce(topic_, 0, 40, 200);
  const bool others_done = poll_until(
      member.consumer, [&] { return log.finished() == 239; }, std::chrono::seconds(30));
  slow.open();
  EXPECT_TRUE(others_done) << log.finished() - 200 << " of the 39 records behind the slow one finished";
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 240; }));
}

TEST_F(ParallelConsumerMock, CommitStopsAtASlowRecordAndCarriesTheLaterAcksUntilItFinishes) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 10);
  Gate slow;
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Key;  // distinct keys: all may run
  options.max_concurrency = 4;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    if (r.offset == 3) slow.pass();
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer,
                         [&] {
                           const auto acks = pending_acks(member.manager, topic_, 0);
                           return acks && acks->committable == 3 && acks->size() == 6;
                         }))
      << "finished " << log.finished();
  member.manager.commit();
  const auto held = member.committed(topic_, 0);
  ASSERT_TRUE(held);
  EXPECT_EQ(held->offset, 3) << "the commit passed a record still being processed";
  ASSERT_TRUE(held->metadata);
  const AckedSet carried = PartitionAcks::decode_metadata(*held->metadata);
  EXPECT_EQ(carried.committable, 3);
  EXPECT_EQ(acked_offsets(carried), (std::vector<std::int64_t>{4, 5, 6, 7, 8, 9}));

  slow.open();
  ASSERT_TRUE(poll_until(member.consumer, [&] {
    const auto acks = pending_acks(member.manager, topic_, 0);
    return acks && acks->committable == 10;
  }));
  member.manager.commit();
  EXPECT_EQ(member.committed(topic_, 0)->offset, 10);
}

TEST_F(ParallelConsumerMock, RestartedMemberProcessesTheUnackedRecordsAndSkipsTheAckedOnes) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 10);
  {
    auto options = parallel_options(topic_);
    options.ordering = ProcessingOrder::Unordered;
    options.consumer.failure.retry.max_attempts = 1;
    options.drain_timeout = std::chrono::milliseconds(0);
    ParallelMember first(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
      if (r.offset == 2) throw std::runtime_error("record 2 fails in the first member");
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::optional<AckedSet> acks;
    while (!(acks && acks->committable == 2 && acks->size() == 7) &&
           std::chrono::steady_clock::now() < deadline) {
      try {
        first.consumer.poll();
      } catch (const std::runtime_error&) {
        // record 2's failure, rethrown: it stays unacknowledged
      }
      acks = pending_acks(first.manager, topic_, 0);
    }
    ASSERT_TRUE(acks && acks->committable == 2 && acks->size() == 7);
    first.consumer.close();  // commits offset 2 with 3..9 in its metadata
  }
  const auto committed = testing::committed_offset(cluster_.bootstrap(), group_, topic_, 0);
  ASSERT_TRUE(committed);
  ASSERT_EQ(committed->offset, 2);
  producer.produce(topic_, 0, 2, 10);  // offsets 10 and 11: after the skipped ones

  HandlerLog log;
  ParallelMember second(cluster_.bootstrap(), group_, parallel_options(topic_), [&](const ConsumedRecord& r) {
    log.started(r);
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(second.consumer,
                         [&] { return log.finished(0, 2) && log.finished(0, 10) && log.finished(0, 11); }));
  poll_times(second.consumer, 5);
  EXPECT_EQ(log.calls(),
            (std::map<std::pair<std::int32_t, std::int64_t>, int>{{{0, 2}, 1}, {{0, 10}, 1}, {{0, 11}, 1}}));
  EXPECT_EQ(second.consumer.stats().skipped_after_restart, 7u);
  EXPECT_EQ(second.consumer.stats().metadata_warnings, 0u);
}

// Commit metadata the consumer did not write: another tool's text, or an acknowledgement
// encoding written for another offset (the offset was moved since).
class ForeignMetadata : public ParallelConsumerMock, public ::testing::WithParamInterface<std::string> {};

std::string acks_written_for_offset_2() {
  PartitionAcks acks(2);
  for (std::int64_t offset : {2, 3, 4}) acks.try_track(offset);
  acks.ack(3);
  return acks.encode_metadata();
}

TEST_P(ForeignMetadata, IsIgnoredWithAWarningAndEveryRecordFromTheCommittedOffsetIsProcessed) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 10);
  {
    KafkaOffsetStore tool(KafkaClient::create(testing::group_properties(cluster_.bootstrap(), group_)),
                          testing::fast_retries());
    OffsetInfo info(4);
    info.metadata = GetParam();
    tool.store_offset(group_, {topic_, 0}, info);
  }
  testing::RecordingSink recording;
  set_log_sink(recording.sink());
  HandlerLog log;
  {
    ParallelMember member(cluster_.bootstrap(), group_, parallel_options(topic_),
                          [&](const ConsumedRecord& r) {
                            log.started(r);
                            log.finished(r);
                          });
    ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 6; }));
    poll_times(member.consumer, 5);
    EXPECT_EQ(member.consumer.stats().metadata_warnings, 1u);
    EXPECT_EQ(member.consumer.stats().skipped_after_restart, 0u);
  }
  set_log_sink({});
  std::map<std::pair<std::int32_t, std::int64_t>, int> expected;
  for (std::int64_t offset = 4; offset < 10; ++offset) expected[{0, offset}] = 1;
  EXPECT_EQ(log.calls(), expected);
  bool warned = false;
  for (const auto& record : recording.records()) {
    if (record.level == LogLevel::Warning && record.component != "rdkafka" &&
        record.message.find(topic_) != std::string::npos) {
      warned = true;
    }
  }
  EXPECT_TRUE(warned) << "no warning naming " << topic_ << " reached the log sink";
}

INSTANTIATE_TEST_SUITE_P(AnotherToolOrAnotherOffset, ForeignMetadata,
                         ::testing::Values(std::string("hello"), acks_written_for_offset_2()),
                         [](const auto& param_info) {
                           return param_info.param == "hello" ? std::string("AnotherToolsText")
                                                              : std::string("AcksOfAnotherOffset");
                         });

// The bound holds to within what ParallelConsumerOptions::max_buffered_bytes allows past it:
// the 64 records between two checks (and the 64 not yet counted) and the rest of the batch
// already taken from librdkafka when the pause begins (at most 500). Without back-pressure the
// consumer would buffer the whole topic (2,000 records) while the handlers are held.
TEST_F(ParallelConsumerMock,
       BufferedBytesStayWithinTheBoundAndPausedPartitionsResumeWithoutGapsOrDuplicates) {
  cluster_.create_topic(topic_, 2);
  Producer producer(cluster_.bootstrap());
  constexpr std::size_t kValueBytes = 1000;
  constexpr int kPerPartition = 1000;
  for (int p = 0; p < 2; ++p) {
    std::vector<std::string> keys;
    for (int i = 0; i < kPerPartition; ++i) keys.push_back("key-" + std::to_string(i));
    testing::produce_keys(producer, topic_, p, keys, kValueBytes);
  }
  constexpr std::size_t kBound = 8 * kValueBytes;
  constexpr std::size_t kRecordsPast = 500 + 2 * 64;
  Gate gate;
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.max_concurrency = 4;
  options.max_buffered_bytes = kBound;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    gate.pass();
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(
      member.consumer, [&] { return gate.arrived() >= 4 && member.consumer.stats().partition_pauses >= 2; }));
  poll_times(member.consumer, 40);
  const auto held = member.consumer.stats();
  ASSERT_GT(held.buffered_records, 0u);
  // A record counts as the memory it holds: its key and value and the consumer's bookkeeping
  // (the keys differ by up to 2 bytes).
  const std::size_t record_bytes = held.buffered_bytes / held.buffered_records + 2;
  EXPECT_GT(record_bytes, kValueBytes);
  const std::size_t allowed_bytes = kBound + kRecordsPast * record_bytes;
  EXPECT_LE(held.peak_buffered_bytes, allowed_bytes);
  EXPECT_LE(held.buffered_records, kRecordsPast + kBound / kValueBytes);
  std::cout << "buffered while held: " << held.buffered_records << " records, " << held.buffered_bytes
            << " bytes (bound " << kBound << ", " << record_bytes << " bytes a record); peak "
            << held.peak_buffered_bytes << " bytes\n";

  gate.open();
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 2 * kPerPartition; }));
  poll_times(member.consumer, 5);
  for (int p = 0; p < 2; ++p) {
    for (int offset = 0; offset < kPerPartition; ++offset) {
      EXPECT_EQ(log.calls_of(p, offset), 1) << "partition " << p << " offset " << offset;
    }
  }
  const auto done = member.consumer.stats();
  EXPECT_LE(done.peak_buffered_bytes, allowed_bytes);
  std::cout << "peak after the handlers were let go: " << done.peak_buffered_bytes << " bytes\n";
  EXPECT_EQ(done.processed, 2u * kPerPartition);
  member.manager.commit();
  for (int p = 0; p < 2; ++p) EXPECT_EQ(member.committed(topic_, p)->offset, kPerPartition);
}

TEST_F(ParallelConsumerMock, FullAckTrackingPausesThePartitionUntilAcknowledgementsFreeRoom) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 30);
  Gate gate;
  HandlerLog log;
  ConcurrencyGauge gauge;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.max_concurrency = 8;
  OffsetManagerOptions manager_options;
  manager_options.acks.max_outstanding = 3;
  ParallelMember member(
      cluster_.bootstrap(), group_, options,
      [&](const ConsumedRecord& r) {
        log.started(r);
        auto running = gauge.enter();
        gate.pass();
        log.finished(r);
      },
      manager_options);
  ASSERT_TRUE(poll_until(
      member.consumer, [&] { return gate.arrived() >= 3 && member.consumer.stats().partition_pauses > 0; }));
  poll_times(member.consumer, 20);
  EXPECT_EQ(gauge.running(), 3) << "more records in flight than the tracking holds";
  gate.open();
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 30; }));
  poll_times(member.consumer, 5);
  for (int offset = 0; offset < 30; ++offset) EXPECT_EQ(log.calls_of(0, offset), 1) << "offset " << offset;
  EXPECT_EQ(gauge.peak(), 3);
  member.manager.commit();
  EXPECT_EQ(member.committed(topic_, 0)->offset, 30);
}

}  // namespace
}  // namespace processor::kafka
