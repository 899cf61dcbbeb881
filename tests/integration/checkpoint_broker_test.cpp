// Checkpoints and the committed view against a real Apache Kafka broker, cross-checked with
// Kafka's own kafka-consumer-groups: after every step, the committed offsets it describes equal
// OffsetManager::get_all_committed() partition by partition, and its LAG equals lag().

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include "consumer_groups_describe.hpp"
#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"

namespace processor::kafka {
namespace {

namespace fs = std::filesystem;
using testing::create_topic;
using testing::poll_until;
using testing::Producer;
using testing::unique_name;
using RestorePolicy = OffsetManagerOptions::RestorePolicy;

// A group member that checkpoints into RocksDB and resumes each assigned partition at its
// checkpoint, as README's checkpoint recipe wires it. `configure` adds to the consumer's options.
struct CheckpointingMember {
  using Configure = std::function<void(CheckpointingMember&, KafkaConsumerOptions&)>;
  CheckpointingMember(const std::string& bootstrap, const std::string& group, const std::string& topic,
                      const fs::path& dir, const std::string& assignment, const Configure& configure = {})
      : client(testing::GroupMember::make_client(bootstrap, group, assignment, {})),
        backend(std::make_shared<state::RocksDbStateBackend>(dir)),
        manager(group, backend, std::make_shared<KafkaOffsetStore>(client, testing::fast_retries()),
                OffsetCommitStrategy::on_checkpoint(),
                OffsetManagerOptions{std::make_shared<KafkaBrokerMetadata>(client),
                                     std::chrono::milliseconds(100)}),
        consumer(client, manager, options_for(topic, configure)) {}
  CheckpointingMember(const CheckpointingMember&) = delete;
  CheckpointingMember& operator=(const CheckpointingMember&) = delete;

  std::vector<int> owned() const {
    std::vector<int> partitions;
    for (const auto& tp : consumer.assignment()) partitions.push_back(tp.partition);
    return partitions;
  }

  std::shared_ptr<KafkaClient> client;
  std::shared_ptr<state::RocksDbStateBackend> backend;
  OffsetManager manager;
  KafkaConsumer consumer;

 private:
  KafkaConsumerOptions options_for(const std::string& topic, const Configure& configure) {
    auto options = testing::GroupMember::options_for(topic);
    options.checkpoint_position = [this](const TopicPartition& tp) {
      return manager.checkpointed_offset(tp.topic, tp.partition);
    };
    if (configure) configure(*this, options);
    return options;
  }
};

class CheckpointsOnBroker : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty())
      GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
    topic_ = unique_name("checkpoints");
    group_ = unique_name("checkpoints-group");
    dir_ = fs::temp_directory_path() / unique_name("processor-checkpoints");
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Kafka's describe output for the group equals `manager`'s committed view for `partitions`
  // (every partition Kafka lists when empty): the same committed offset, or none on both sides,
  // and the same lag.
  void expect_kafka_agrees(OffsetManager& manager, std::vector<int> partitions = {}) {
    const auto described = testing::describe_group(bootstrap_, group_, topic_);
    const auto committed = manager.get_all_committed();
    if (partitions.empty()) {
      for (const auto& [partition, row] : described.partitions) partitions.push_back(partition);
      for (const auto& [tp, info] : committed) {
        if (tp.topic == topic_ && !described.partitions.contains(tp.partition))
          partitions.push_back(tp.partition);
      }
    }
    for (const int partition : partitions) {
      SCOPED_TRACE("partition " + std::to_string(partition) + "; kafka-consumer-groups printed:\n" +
                   described.output);
      const auto row = described.partitions.find(partition);
      const auto ours = committed.find(TopicPartition(topic_, partition));
      const std::int64_t kafka_offset = row == described.partitions.end() ? -1 : row->second.current_offset;
      const std::int64_t our_offset = ours == committed.end() ? -1 : ours->second.offset;
      EXPECT_EQ(kafka_offset, our_offset) << "committed offset (-1: none)";
      if (kafka_offset >= 0) {
        EXPECT_EQ(row->second.lag, manager.lag(topic_, partition)) << "lag";
      }
    }
  }

  // One process's manager, as the checkpoint recipe builds it: RocksDB state, offsets in Kafka.
  struct Run {
    std::shared_ptr<KafkaClient> client;
    std::shared_ptr<state::RocksDbStateBackend> backend;
    std::unique_ptr<OffsetManager> manager;
  };
  Run open_run(RestorePolicy policy = RestorePolicy::TrustCheckpoint) {
    Run run;
    run.client = KafkaClient::create(testing::group_properties(bootstrap_, group_));
    run.backend = std::make_shared<state::RocksDbStateBackend>(dir_);
    OffsetManagerOptions options{std::make_shared<KafkaBrokerMetadata>(run.client),
                                 std::chrono::milliseconds(100)};
    options.restore_policy = policy;
    run.manager = std::make_unique<OffsetManager>(
        group_, run.backend, std::make_shared<KafkaOffsetStore>(run.client, testing::fast_retries()),
        OffsetCommitStrategy::on_checkpoint(), options);
    return run;
  }

  std::string bootstrap_;
  std::string topic_;
  std::string group_;
  fs::path dir_;
};

// Issue scenario 1: checkpoint 1 completed, checkpoint 2 taken, SIGKILL before its completion.
// The restart restores checkpoint 2, then takes and completes checkpoints 3-5 while partition 1
// receives no record. Kafka must end at checkpoint 2's offset for partition 1 (40), not stay
// at checkpoint 1's (30); and once checkpoint 2 is pruned, a restart finds no external move.
TEST_F(CheckpointsOnBroker, CompletionsAfterARestoreBringKafkaUpToTheRestoredCheckpoint) {
  create_topic(bootstrap_, topic_, 2);
  {
    Producer producer(bootstrap_);
    producer.produce(topic_, 0, 100);
    producer.produce(topic_, 1, 40);
  }
  // The first run, in a child process that dies by SIGKILL at the exact crash point. No Kafka
  // client or RocksDB exists in this process yet, so the child starts from a clean slate.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      Run run = open_run();
      run.manager->update_offset(topic_, 0, 30);
      run.manager->update_offset(topic_, 1, 30);
      run.manager->checkpoint(1);
      run.manager->notify_checkpoint_complete(1);
      run.manager->update_offset(topic_, 1, 40);
      run.manager->checkpoint(2);
      ::raise(SIGKILL);
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the first run failed before the crash point";

  {
    Run run = open_run();
    ASSERT_EQ(run.manager->restore_from_checkpoint()->id, 2u);
    EXPECT_EQ(run.manager->last_restore_report()->store_behind,
              std::vector<TopicPartition>{TopicPartition(topic_, 1)});
    expect_kafka_agrees(*run.manager);  // partition 1: 30 in Kafka and in our view
    for (std::uint64_t id = 3; id <= 5; ++id) {
      run.manager->update_offset(topic_, 0, static_cast<std::int64_t>(id * 10));
      run.manager->checkpoint(id);
      run.manager->notify_checkpoint_complete(id);
    }
    const auto described = testing::describe_group(bootstrap_, group_, topic_);
    EXPECT_EQ(described.partitions.at(1).current_offset, 40) << described.output;
    EXPECT_EQ(described.partitions.at(1).lag, 0) << described.output;
    EXPECT_EQ(run.manager->lag(topic_, 1), 0);
    expect_kafka_agrees(*run.manager);
  }
  {
    Run run = open_run(RestorePolicy::Fail);
    ASSERT_NO_THROW(run.manager->restore_from_checkpoint());
    EXPECT_TRUE(run.manager->last_restore_report()->external_moves.empty());
    expect_kafka_agrees(*run.manager);
  }
}

// Issue scenario 2: an assigned partition that never had a record has no committed offset,
// in Kafka's describe and in ours, until a commit writes its start position (as Kafka's own
// consumer commits its reset position).
TEST_F(CheckpointsOnBroker, AnEmptyPartitionHasNoCommittedOffsetUntilOneIsCommitted) {
  create_topic(bootstrap_, topic_, 2);
  Producer(bootstrap_).produce(topic_, 0, 20);  // partition 1 stays empty
  testing::GroupMember member(bootstrap_, group_, topic_, "range");
  int handled = 0;
  ASSERT_TRUE(poll_until(
      member.consumer, [&](const ConsumedRecord&) { ++handled; },
      [&] { return handled == 20 && member.consumer.assignment().size() == 2; }));
  EXPECT_TRUE(member.manager.get_all_committed().empty());
  EXPECT_FALSE(member.manager.get_offset(topic_, 1));
  expect_kafka_agrees(member.manager, {0, 1});

  EXPECT_EQ(member.manager.commit(), 2u);  // 20, and the empty partition's start, 0
  EXPECT_EQ(member.manager.get_all_committed().at(TopicPartition(topic_, 1)).offset, 0);
  expect_kafka_agrees(member.manager, {0, 1});
  OffsetManager fresh(
      group_, nullptr,
      std::make_shared<KafkaOffsetStore>(KafkaClient::create(testing::group_properties(bootstrap_, group_))),
      OffsetCommitStrategy::manual());
  EXPECT_EQ(fresh.restore(), 2u);
}

// Issue scenario 4: lag read right after consuming records that arrived after the assignment.
// The high watermark librdkafka holds for each fetched partition is used, so lag is never
// negative and equals Kafka's. (The periodic refresh is set out of reach to show that.)
TEST_F(CheckpointsOnBroker, LagRightAfterConsumingIsNeverNegativeAndEqualsKafkas) {
  create_topic(bootstrap_, topic_, 1);
  Producer producer(bootstrap_);
  producer.produce(topic_, 0, 10);
  auto options = testing::GroupMember::options_for(topic_);
  options.high_watermark_refresh = std::chrono::hours(1);
  testing::GroupMember member(bootstrap_, group_, options, "range");
  int handled = 0;
  const auto count = [&](const ConsumedRecord&) { ++handled; };
  ASSERT_TRUE(poll_until(member.consumer, count, [&] { return handled == 10; }));
  producer.produce(topic_, 0, 10, 10);  // after the assignment recorded a high watermark of 10
  ASSERT_TRUE(poll_until(member.consumer, count, [&] { return handled == 20; }));
  member.manager.commit();
  EXPECT_EQ(member.manager.lag(topic_, 0), 0);
  EXPECT_EQ(member.manager.total_lag(), 0);
  expect_kafka_agrees(member.manager, {0});
}

// Issue scenario 3, without a rebalance-aware checkpoint: under on_checkpoint() a revoke never
// commits past the last completed checkpoint (the pending offsets beyond it are not in any
// checkpoint of the state).
TEST_F(CheckpointsOnBroker, ARevokeUnderOnCheckpointNeverCommitsPastTheLastCompletedCheckpoint) {
  create_topic(bootstrap_, topic_, 2);
  {
    Producer producer(bootstrap_);
    producer.produce(topic_, 0, 500);
    producer.produce(topic_, 1, 500);
  }
  CheckpointingMember a(bootstrap_, group_, topic_, dir_, "range");
  KafkaConsumer& consumer_a = a.consumer;
  int handled = 0;
  ASSERT_TRUE(poll_until(
      consumer_a,
      [&](const ConsumedRecord&) {
        if (++handled == 300) consumer_a.stop();
      },
      [&] { return handled >= 300; }));
  const CheckpointInfo completed = a.manager.checkpoint(1);
  a.manager.notify_checkpoint_complete(1);
  ASSERT_TRUE(poll_until(
      consumer_a,
      [&](const ConsumedRecord&) {
        if (++handled == 600) consumer_a.stop();
      },
      [&] { return handled >= 600; }));
  ASSERT_FALSE(a.manager.get_all_pending().empty());  // processed past the checkpoint

  testing::GroupMember b(bootstrap_, group_, topic_, "range");
  // Until both hold their partition of the new generation: under load, b can be assigned while a
  // has not yet polled its own assignment (then a.owned() is empty, and nothing is compared).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((b.consumer.assignment().empty() || consumer_a.assignment().empty()) &&
         std::chrono::steady_clock::now() < deadline) {
    consumer_a.poll([](const ConsumedRecord&) {});
    b.consumer.poll([](const ConsumedRecord&) {});
  }
  ASSERT_FALSE(b.consumer.assignment().empty());
  ASSERT_FALSE(consumer_a.assignment().empty());
  EXPECT_GT(consumer_a.stats().revocations, 0u);
  const auto described = testing::describe_group(bootstrap_, group_, topic_);
  for (const auto& [tp, offset] : completed.offsets) {
    SCOPED_TRACE(tp.to_key() + "\n" + described.output);
    EXPECT_EQ(described.partitions.at(tp.partition).current_offset, offset);
  }
  expect_kafka_agrees(a.manager, a.owned());
  std::vector<int> owned_by_b;
  for (const auto& tp : b.consumer.assignment()) owned_by_b.push_back(tp.partition);
  expect_kafka_agrees(b.manager, owned_by_b);
}

// A member restores a checkpoint taken while it owned both partitions and before its
// completion (the store is behind on both), then joins a group where it gets only one. Its
// next checkpoint and completion carry only what it owns: completing must not try to commit
// the other member's partition (the store refuses that, which would block every completion).
TEST_F(CheckpointsOnBroker, ARestoredMemberCompletesCheckpointsOfWhatItOwnsOnly) {
  create_topic(bootstrap_, topic_, 2);
  {
    Producer producer(bootstrap_);
    producer.produce(topic_, 0, 10);
    producer.produce(topic_, 1, 10);
  }
  {
    Run run = open_run();
    run.manager->update_offset(topic_, 0, 5);
    run.manager->update_offset(topic_, 1, 5);
    run.manager->checkpoint(1);  // never completed
  }
  testing::GroupMember b(bootstrap_, group_, topic_, "range");
  ASSERT_TRUE(poll_until(
      b.consumer, [](const ConsumedRecord&) {}, [&] { return b.consumer.assignment().size() == 2; }));
  CheckpointingMember a(bootstrap_, group_, topic_, dir_, "range");
  ASSERT_EQ(a.manager.restore_from_checkpoint()->id, 1u);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((a.consumer.assignment().empty() || b.consumer.assignment().size() != 1) &&
         std::chrono::steady_clock::now() < deadline) {
    a.consumer.poll([](const ConsumedRecord&) {});
    b.consumer.poll([](const ConsumedRecord&) {});
  }
  ASSERT_EQ(a.owned().size(), 1u);
  const int mine = a.owned()[0];
  const auto checkpoint = a.manager.checkpoint(2);
  EXPECT_EQ(checkpoint.offsets.size(), 1u);
  EXPECT_TRUE(checkpoint.offsets.contains(TopicPartition(topic_, mine)));
  EXPECT_NO_THROW(a.manager.notify_checkpoint_complete(2));
  expect_kafka_agrees(a.manager, a.owned());
}

// Issue scenario 3, with the rebalance-aware checkpoint: a second member joins while the first
// has processed past its last checkpoint. take_checkpoint runs before the revoke, so the state
// and the offsets leave together: the partition that comes back to the first member and the
// one that moves to the second continue exactly where its state stands. 0 duplicates, 0 gaps.
class RebalanceOnCheckpoint : public CheckpointsOnBroker,
                              public ::testing::WithParamInterface<std::string> {};

TEST_P(RebalanceOnCheckpoint, ARebalanceAwareCheckpointHandsStateAndOffsetsOverTogether) {
  create_topic(bootstrap_, topic_, 2);
  {
    Producer producer(bootstrap_);
    producer.produce(topic_, 0, 500);
    producer.produce(topic_, 1, 500);
  }
  // Each member's state: how often it processed each record, written into every checkpoint.
  struct Member {
    std::map<std::pair<int, std::int64_t>, int> counted;
    std::unique_ptr<CheckpointingMember> member;
    std::uint64_t next_id = 1;
  };
  const auto make = [&](Member& m, const fs::path& dir) {
    m.member = std::make_unique<CheckpointingMember>(
        bootstrap_, group_, topic_, dir, GetParam(),
        [&m](CheckpointingMember& self, KafkaConsumerOptions& options) {
          options.take_checkpoint = [&m, &self] {
            state::WriteBatch state;
            state.put("records-counted", std::to_string(m.counted.size()));
            const std::uint64_t id = m.next_id++;
            self.manager.checkpoint(id, state);
            self.manager.notify_checkpoint_complete(id);
          };
        });
  };
  Member a;
  Member b;
  make(a, dir_);
  int handled = 0;
  const auto count_a = [&](const ConsumedRecord& r) {
    ++a.counted[{r.partition, r.offset}];
    if (++handled == 300) a.member->consumer.request_checkpoint();
    if (handled == 600) a.member->consumer.stop();
  };
  ASSERT_TRUE(poll_until(a.member->consumer, count_a, [&] { return handled >= 600; }));
  ASSERT_EQ(a.member->consumer.stats().checkpoints, 1u);
  ASSERT_FALSE(a.member->manager.get_all_pending().empty());  // processed past the checkpoint

  make(b, dir_.string() + "-b");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const auto seen = [&] {
    std::map<std::pair<int, std::int64_t>, int> all = a.counted;
    for (const auto& [record, times] : b.counted) all[record] += times;
    return all;
  };
  while (seen().size() < 1000 && std::chrono::steady_clock::now() < deadline) {
    // One record per poll for `a` until `b` has partitions, so that records remain to hand over.
    a.member->consumer.poll([&](const ConsumedRecord& r) {
      ++a.counted[{r.partition, r.offset}];
      if (b.member->consumer.assignment().empty()) a.member->consumer.stop();
    });
    b.member->consumer.poll([&](const ConsumedRecord& r) { ++b.counted[{r.partition, r.offset}]; });
  }
  EXPECT_GT(a.member->consumer.stats().revocations, 0u)
      << "lost " << a.member->consumer.stats().lost << ", seen " << seen().size() << ", b owns "
      << b.member->consumer.assignment().size() << ", a owns " << a.member->consumer.assignment().size();
  EXPECT_GE(a.member->consumer.stats().checkpoints, 2u);  // requested, then before the revoke
  const auto all = seen();
  EXPECT_EQ(all.size(), 1000u);
  int duplicates = 0;
  for (const auto& [record, times] : all) duplicates += times - 1;
  EXPECT_EQ(duplicates, 0);

  // Both members checkpoint what they hold; Kafka then describes exactly our views.
  for (Member* m : {&a, &b}) {
    const std::uint64_t id = m->next_id++;
    m->member->manager.checkpoint(id);
    m->member->manager.notify_checkpoint_complete(id);
  }
  expect_kafka_agrees(a.member->manager, a.member->owned());
  expect_kafka_agrees(b.member->manager, b.member->owned());
  b.member.reset();
  a.member.reset();
  std::error_code ignored;
  fs::remove_all(dir_.string() + "-b", ignored);
}

INSTANTIATE_TEST_SUITE_P(EagerAndCooperative, RebalanceOnCheckpoint,
                         ::testing::Values("range", "cooperative-sticky"), [](const auto& param_info) {
                           return param_info.param == "range" ? std::string("Eager")
                                                              : std::string("Cooperative");
                         });

// Issue scenario 5: the handler asks for a checkpoint after the current record, and learns when
// a partition is drained.
TEST_F(CheckpointsOnBroker, TheHandlerRequestsACheckpointAtARecordBoundaryAndSeesThePartitionEnd) {
  create_topic(bootstrap_, topic_, 1);
  Producer(bootstrap_).produce(topic_, 0, 50);
  int handled = 0;
  std::vector<std::int64_t> checkpointed;
  std::vector<std::pair<TopicPartition, std::int64_t>> ends;
  std::uint64_t next_id = 1;
  CheckpointingMember member(
      bootstrap_, group_, topic_, dir_, "range",
      [&](CheckpointingMember& self, KafkaConsumerOptions& options) {
        options.take_checkpoint = [&] {
          state::WriteBatch state;
          state.put("handled", std::to_string(handled));
          const std::uint64_t id = next_id++;
          checkpointed.push_back(self.manager.checkpoint(id, state).offsets.at(TopicPartition(topic_, 0)));
          self.manager.notify_checkpoint_complete(id);
        };
        options.on_partition_end = [&](const TopicPartition& tp, std::int64_t end_offset) {
          ends.emplace_back(tp, end_offset);
          if (handled == 50) self.consumer.request_checkpoint();  // drained: a natural boundary
        };
      });
  ASSERT_TRUE(poll_until(
      member.consumer,
      [&](const ConsumedRecord& r) {
        ++handled;
        if (r.offset == 24) member.consumer.request_checkpoint();
      },
      [&] { return !ends.empty() && handled == 50; }));
  // The first checkpoint holds records 0-24 and position 25, taken right after record 24.
  ASSERT_GE(checkpointed.size(), 1u);
  EXPECT_EQ(checkpointed[0], 25);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0], std::make_pair(TopicPartition(topic_, 0), std::int64_t{50}));
  ASSERT_EQ(checkpointed.size(), 2u);
  EXPECT_EQ(checkpointed[1], 50);
  EXPECT_EQ(member.backend->get("handled"), "50");
  EXPECT_EQ(member.consumer.stats().checkpoints, 2u);
  expect_kafka_agrees(member.manager, {0});
  // Without a hook, a request is refused.
  testing::GroupMember plain(bootstrap_, unique_name("no-hook"), topic_, "range");
  EXPECT_THROW(plain.consumer.request_checkpoint(), StateError);
}

}  // namespace
}  // namespace processor::kafka
