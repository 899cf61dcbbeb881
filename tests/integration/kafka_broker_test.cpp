// The Kafka layer against a real Apache Kafka broker (scripts/kafka/broker.sh, KAFKA_BOOTSTRAP).

#include <gtest/gtest.h>

#include "consumer_groups_describe.hpp"
#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"

namespace processor::kafka {
namespace {

using testing::create_topic;
using testing::group_properties;
using testing::poll_until;
using testing::Producer;
using testing::unique_name;

// Fails the test with librdkafka's message when `error` is set.
void expect_ok(rd_kafka_error_t* error) {
  if (error != nullptr) {
    ADD_FAILURE() << rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
  }
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class KafkaBroker : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty())
      GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
    topic_ = unique_name("real");
    group_ = unique_name("real-group");
  }

  using Member = testing::GroupMember;

  // A client outside the group, as an operator's tool would be.
  std::shared_ptr<KafkaClient> standalone() {
    return KafkaClient::create(group_properties(bootstrap_, group_));
  }

  void delete_records_before(std::int32_t partition, std::int64_t offset) {
    Producer admin(bootstrap_);
    auto list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic_.c_str(), partition)->offset = offset;
    rd_kafka_DeleteRecords_t* request = rd_kafka_DeleteRecords_new(list);
    rd_kafka_topic_partition_list_destroy(list);
    rd_kafka_queue_t* queue = rd_kafka_queue_new(admin.handle());
    rd_kafka_DeleteRecords(admin.handle(), &request, 1, nullptr, queue);
    rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30'000);
    ASSERT_NE(event, nullptr);
    EXPECT_EQ(rd_kafka_event_error(event), RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_event_error_string(event);
    rd_kafka_event_destroy(event);
    rd_kafka_queue_destroy(queue);
    rd_kafka_DeleteRecords_destroy(request);
  }

  std::string bootstrap_;
  std::string topic_;
  std::string group_;
};

TEST_F(KafkaBroker, ListsEveryCommittedOffsetOfTheGroup) {
  create_topic(bootstrap_, topic_, 3);
  KafkaOffsetStore store(standalone());
  std::vector<PartitionOffset> offsets{{TopicPartition(topic_, 0), OffsetInfo(0)},
                                       {TopicPartition(topic_, 2), OffsetInfo(0)}};
  offsets[1].second.metadata = "hello";
  store.store_offsets(group_, offsets);
  const auto all = store.get_all_offsets(group_);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.at(TopicPartition(topic_, 2)).metadata, "hello");
  store.delete_offset(group_, {topic_, 0});
  EXPECT_EQ(store.get_all_offsets(group_).size(), 1u);
  store.clear_offsets(group_);
  EXPECT_TRUE(store.get_all_offsets(group_).empty());
}

class RealRebalance : public KafkaBroker, public ::testing::WithParamInterface<std::string> {};

// A second member joins mid-way. Commit-on-revoke hands each partition over at the exact offset
// where the first member stopped: no record is processed twice and none is skipped.
TEST_P(RealRebalance, HandsPartitionsOverWithoutDuplicatesOrGaps) {
  create_topic(bootstrap_, topic_, 4);
  const auto run = testing::hand_over(bootstrap_, group_, topic_, GetParam());
  ASSERT_TRUE(run.first_started);
  std::string missing;
  for (int p = 0; p < 4; ++p) {
    for (int o = 0; o < 200; ++o) {
      if (run.times_seen.count({p, o}) == 0) missing += " " + std::to_string(p) + ":" + std::to_string(o);
    }
  }
  EXPECT_EQ(run.times_seen.size(), 800u) << "never handled:" << missing;
  int duplicates = 0;
  for (const auto& [key, count] : run.times_seen) duplicates += count - 1;
  EXPECT_EQ(duplicates, 0);
  EXPECT_GT(run.a.revocations, 0u);
  EXPECT_EQ(run.a.failed_revoke_commits, 0u);
  EXPECT_GT(run.b.assignments, 0u);
}

INSTANTIATE_TEST_SUITE_P(EveryProtocol, RealRebalance, ::testing::ValuesIn(testing::group_protocols()),
                         [](const auto& param_info) {
                           return testing::group_protocol_name(param_info.param);
                         });

// Transaction markers occupy offsets that no record reports: a consumer that commits
// "last record + 1" stays one behind the log end forever. Ours ends at the log end.
TEST_F(KafkaBroker, DrainedTransactionalTopicShowsLagZero) {
  create_topic(bootstrap_, topic_, 1);
  {
    Producer producer(bootstrap_, {{"transactional.id", unique_name("tx")}});
    expect_ok(rd_kafka_init_transactions(producer.handle(), 30'000));
    for (int transaction = 0; transaction < 3; ++transaction) {
      expect_ok(rd_kafka_begin_transaction(producer.handle()));
      producer.produce(topic_, 0, 10, transaction * 10);
      if (transaction == 1) {
        expect_ok(rd_kafka_abort_transaction(producer.handle(), 30'000));
      } else {
        expect_ok(rd_kafka_commit_transaction(producer.handle(), 30'000));
      }
    }
  }
  Member member(bootstrap_, group_, topic_, "range", OffsetCommitStrategy::manual(),
                {{"isolation.level", "read_committed"}});
  int handled = 0;
  const std::int64_t log_end = KafkaBrokerMetadata(member.client).log_range({topic_, 0}).high_watermark;
  EXPECT_EQ(log_end, 33);  // 30 records and 3 transaction markers
  ASSERT_TRUE(poll_until(
      member.consumer, [&](const ConsumedRecord&) { ++handled; },
      [&] {
        const auto pending = member.manager.get_all_pending();
        return handled == 20 && pending.contains(TopicPartition(topic_, 0)) &&
               pending.at(TopicPartition(topic_, 0)).offset == log_end;
      }));
  member.manager.commit();
  EXPECT_EQ(member.store->get_offset(group_, {topic_, 0})->offset, log_end);
  EXPECT_EQ(member.manager.lag(topic_, 0), 0);
}

// Under read_committed the end of the log is the last stable offset: an open transaction's
// records are not there yet for the reader.
TEST_F(KafkaBroker, ReadCommittedLogEndIsTheLastStableOffset) {
  create_topic(bootstrap_, topic_, 1);
  Producer(bootstrap_).produce(topic_, 0, 5);
  Producer transactional(bootstrap_, {{"transactional.id", unique_name("open-tx")}});
  expect_ok(rd_kafka_init_transactions(transactional.handle(), 30'000));
  expect_ok(rd_kafka_begin_transaction(transactional.handle()));
  transactional.produce(topic_, 0, 7);  // left open
  auto committed_reader = KafkaClient::create(
      {{"bootstrap.servers", bootstrap_}, {"group.id", group_}, {"isolation.level", "read_committed"}});
  auto uncommitted_reader = KafkaClient::create(
      {{"bootstrap.servers", bootstrap_}, {"group.id", group_}, {"isolation.level", "read_uncommitted"}});
  EXPECT_EQ(KafkaBrokerMetadata(committed_reader).log_range({topic_, 0}).high_watermark, 5);
  EXPECT_EQ(KafkaBrokerMetadata(uncommitted_reader).log_range({topic_, 0}).high_watermark, 12);
  expect_ok(rd_kafka_abort_transaction(transactional.handle(), 30'000));
}

// KIP-320: a commit carries the leader epoch of the records it follows, which Kafka stores with
// the offset and hands to the next owner, whose consumer validates its start with it (a log
// truncated by an unclean leader change). A topic's first leader has epoch 0.
TEST_F(KafkaBroker, CommitsCarryTheLeaderEpochOfTheirRecords) {
  create_topic(bootstrap_, topic_, 2);
  Producer(bootstrap_).produce(topic_, 0, 5);
  Producer(bootstrap_).produce(topic_, 1, 3);
  Member member(bootstrap_, group_, topic_, "cooperative-sticky");
  int handled = 0;
  ASSERT_TRUE(poll_until(
      member.consumer, [&](const ConsumedRecord&) { ++handled; }, [&] { return handled == 8; }));
  member.manager.commit();
  const auto committed =
      KafkaOffsetStore(standalone()).committed({TopicPartition(topic_, 0), TopicPartition(topic_, 1)});
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed.at(TopicPartition(topic_, 0)).offset, 5);
  EXPECT_EQ(committed.at(TopicPartition(topic_, 0)).leader_epoch, std::optional<std::int32_t>(0));
  EXPECT_EQ(committed.at(TopicPartition(topic_, 1)).leader_epoch, std::optional<std::int32_t>(0));
  EXPECT_EQ(member.manager.get_offset_info(topic_, 1)->leader_epoch, std::optional<std::int32_t>(0));
}

TEST_F(KafkaBroker, PositionBelowTheLogStartMovesToTheStartAndCountsTheLostRecords) {
  create_topic(bootstrap_, topic_, 1);
  Producer(bootstrap_).produce(topic_, 0, 100);
  KafkaOffsetStore(standalone()).store_offset(group_, {topic_, 0}, OffsetInfo(10));
  delete_records_before(0, 50);
  Member member(bootstrap_, group_, topic_, "range");
  std::int64_t first = -1;
  int handled = 0;
  ASSERT_TRUE(poll_until(
      member.consumer,
      [&](const ConsumedRecord& r) {
        if (first < 0) first = r.offset;
        ++handled;
      },
      [&] { return handled == 50; }));
  EXPECT_EQ(first, 50);
  EXPECT_EQ(member.consumer.stats().out_of_range_resets, 1u);
  EXPECT_EQ(member.consumer.stats().records_skipped, 40u);
}

TEST_F(KafkaBroker, ResetsUseTheBrokersLogStartEndAndTimestamps) {
  create_topic(bootstrap_, topic_, 1);
  {
    Producer producer(bootstrap_);
    const std::int64_t now = now_ms();
    for (int i = 0; i < 30; ++i) {
      const std::int64_t timestamp = now - (3 - i / 10) * 3'600'000;  // 3 h, 2 h and 1 h ago
      const std::string value = std::to_string(i);
      ASSERT_EQ(
          rd_kafka_producev(producer.handle(), RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_PARTITION(0),
                            RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp),
                            RD_KAFKA_V_END),
          RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    ASSERT_EQ(rd_kafka_flush(producer.handle(), 30'000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  delete_records_before(0, 5);
  auto client = standalone();
  OffsetManager manager(
      group_, nullptr, std::make_shared<KafkaOffsetStore>(client), OffsetCommitStrategy::manual(),
      OffsetManagerOptions{std::make_shared<KafkaBrokerMetadata>(client), std::chrono::milliseconds(100)});
  using Reset = OffsetResetStrategy;
  EXPECT_EQ(manager.reset_offset(topic_, 0, Reset::earliest()), 5);
  EXPECT_EQ(manager.reset_offset(topic_, 0, Reset::latest()), 30);
  EXPECT_EQ(manager.reset_offset(topic_, 0, Reset::specific(2)), 5);    // clamped to the log start
  EXPECT_EQ(manager.reset_offset(topic_, 0, Reset::specific(99)), 30);  // clamped to the log end
  EXPECT_EQ(manager.reset_offset(topic_, 0, Reset::timestamp(now_ms() - 2 * 3'600'000 - 60'000)), 10);
  EXPECT_EQ(manager.reset_offset(topic_, 0, Reset::by_duration(std::chrono::minutes(90))), 20);
  EXPECT_EQ(manager.reset_offset(topic_, 0, Reset::timestamp(now_ms() + 60'000)), 30);  // nothing that new
  EXPECT_EQ(manager.reset_offset(topic_, 0, Reset::shift_by(-12)), 18);
  EXPECT_EQ(manager.lag(topic_, 0), 12);
  EXPECT_EQ(KafkaOffsetStore(standalone()).get_offset(group_, {topic_, 0})->offset, 18);
}

// ---- Cross-check with Kafka's own kafka-consumer-groups ----

TEST_F(KafkaBroker, OffsetsAndLagAgreeWithKafkaConsumerGroups) {
  create_topic(bootstrap_, topic_, 3);
  Producer producer(bootstrap_);
  producer.produce(topic_, 0, 100);
  producer.produce(topic_, 1, 50);
  producer.produce(topic_, 2, 10);

  auto client = standalone();
  OffsetManager manager(
      group_, nullptr, std::make_shared<KafkaOffsetStore>(client), OffsetCommitStrategy::manual(),
      OffsetManagerOptions{std::make_shared<KafkaBrokerMetadata>(client), std::chrono::milliseconds(100)});
  manager.update_offset(topic_, 0, 60);
  manager.update_offset(topic_, 1, 50);
  manager.update_offset(topic_, 2, 3);
  ASSERT_EQ(manager.commit(), 3u);

  const auto group = testing::describe_group(bootstrap_, group_, topic_);
  const auto& described = group.partitions;
  ASSERT_EQ(described.size(), 3u) << group.output;
  std::int64_t total_lag = 0;
  for (int p = 0; p < 3; ++p) {
    SCOPED_TRACE("partition " + std::to_string(p));
    const std::int64_t lag = manager.lag(topic_, p);
    total_lag += lag;
    EXPECT_EQ(described.at(p).current_offset, *manager.get_offset(topic_, p));
    EXPECT_EQ(described.at(p).lag, lag);
    EXPECT_EQ(described.at(p).log_end_offset, *manager.get_offset(topic_, p) + lag);
  }
  EXPECT_EQ(total_lag, 40 + 0 + 7);
  EXPECT_EQ(manager.refresh_high_watermarks(), 3u);
  EXPECT_EQ(manager.total_lag(), total_lag);
}

}  // namespace
}  // namespace processor::kafka
