// ParallelConsumer when partitions leave under running records (close, a joining member) and at
// checkpoints: on librdkafka's mock cluster, and on the real broker where a revoke must commit
// (the mock coordinator refuses commits while a rebalance is pending).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "kafka_api_keys.hpp"
#include "kafka_test_support.hpp"
#include "parallel_consumer_support.hpp"
#include "processor/kafka.hpp"
#include "processor/kafka/parallel_consumer.hpp"

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
using testing::poll_until;
using testing::Producer;
using testing::unique_name;

class ParallelConsumerRevoke : public ::testing::Test {
 protected:
  void SetUp() override {
    topic_ = unique_name("parallel");
    group_ = unique_name("parallel-group");
  }

  MockCluster cluster_;
  std::string topic_;
  std::string group_;
};

// ---- Revokes ----

TEST_F(ParallelConsumerRevoke, CloseCommitsARunningRecordThatFinishesWithinTheDrainTimeout) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 5);
  Gate slow;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.drain_timeout = std::chrono::seconds(60);
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    if (r.offset == 3) slow.pass();
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] {
    const auto acks = pending_acks(member.manager, topic_, 0);
    return slow.arrived() == 1 && acks && acks->committable == 3 && acks->size() == 1;
  }));
  // Record 3 is running when close() starts; it finishes while close() drains.
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    slow.open();
  });
  member.consumer.close();
  release.join();
  EXPECT_EQ(member.consumer.stats().abandoned_on_revoke, 0u);
  EXPECT_EQ(member.consumer.stats().late_acks_ignored, 0u);
  const auto committed = testing::committed_offset(cluster_.bootstrap(), group_, topic_, 0);
  ASSERT_TRUE(committed);
  EXPECT_EQ(committed->offset, 5);
}

TEST_F(ParallelConsumerRevoke, CloseAbandonsARecordStillRunningAfterTheDrainTimeoutAndIgnoresItsCompletion) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 5);
  Gate slow;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.drain_timeout = std::chrono::milliseconds(200);
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    if (r.offset == 3) slow.pass(std::chrono::seconds(30));
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] {
    const auto acks = pending_acks(member.manager, topic_, 0);
    return slow.arrived() == 1 && acks && acks->committable == 3 && acks->size() == 1;
  }));
  // Record 3 finishes only once close() has committed: after the drain timed out.
  member.notifying_store->on_commit([&] { slow.open(); });
  member.consumer.close();
  EXPECT_TRUE(slow.is_open()) << "close() committed nothing";
  // close() does not join the workers: record 3's late completion comes when it comes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (member.consumer.stats().late_acks_ignored == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto stats = member.consumer.stats();
  EXPECT_EQ(stats.abandoned_on_revoke, 1u);
  EXPECT_EQ(stats.late_acks_ignored, 1u);
  const auto committed = testing::committed_offset(cluster_.bootstrap(), group_, topic_, 0);
  ASSERT_TRUE(committed);
  EXPECT_EQ(committed->offset, 3) << "an abandoned record was committed";
  EXPECT_EQ(acked_offsets(PartitionAcks::decode_metadata(committed->metadata.value_or(""))),
            (std::vector<std::int64_t>{4}));
}

// Issue 22, defect 6: close() waited for a handler that ran 6 s although drain_timeout was 1 s.
// It returns after the drain and the commit; the handler is abandoned (not committed) and the
// consumer's destructor joins it.
TEST_F(ParallelConsumerRevoke, CloseReturnsAfterTheDrainTimeoutWhileAHandlerRunsOn) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 5);
  Gate slow;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.drain_timeout = std::chrono::seconds(1);
  {
    ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
      if (r.offset == 3) slow.pass(std::chrono::seconds(60));
    });
    ASSERT_TRUE(poll_until(member.consumer, [&] {
      const auto acks = pending_acks(member.manager, topic_, 0);
      return slow.arrived() == 1 && acks && acks->committable == 3 && acks->size() == 1;
    }));
    const auto started = std::chrono::steady_clock::now();
    member.consumer.close();
    const auto took = std::chrono::steady_clock::now() - started;
    EXPECT_LT(std::chrono::duration_cast<std::chrono::seconds>(took).count(), 20)
        << "close() waited for the handler (it runs until the gate opens, 60 s)";
    EXPECT_FALSE(slow.is_open());
    EXPECT_EQ(member.consumer.stats().abandoned_on_revoke, 1u);
    const auto committed = testing::committed_offset(cluster_.bootstrap(), group_, topic_, 0);
    ASSERT_TRUE(committed);
    EXPECT_EQ(committed->offset, 3) << "the abandoned record was committed";
    slow.open();  // the destructor joins the handler
  }
}

// Regression: a record abandoned after drain_timeout that finished before the revoke's commit
// (here: while on_revoked runs) was acknowledged and committed, and its next owner skipped it.
TEST_F(ParallelConsumerRevoke,
       ARecordAbandonedAfterTheDrainTimeoutIsNotCommittedWhenItFinishesBeforeTheCommit) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 5);
  Gate slow;
  ParallelMember* self = nullptr;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.drain_timeout = std::chrono::milliseconds(200);
  options.consumer.on_revoked = [&](const std::vector<TopicPartition>&) {
    // After the drain, before the commit: the abandoned record finishes now.
    slow.open();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (self->consumer.stats().late_acks_ignored == 0 && std::chrono::steady_clock::now() < deadline) {
      const auto acks = pending_acks(self->manager, topic_, 0);
      if (acks && acks->committable == 5) break;  // its acknowledgement was taken
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    if (r.offset == 3) slow.pass(std::chrono::seconds(30));
  });
  self = &member;
  ASSERT_TRUE(poll_until(member.consumer, [&] {
    const auto acks = pending_acks(member.manager, topic_, 0);
    return slow.arrived() == 1 && acks && acks->committable == 3 && acks->size() == 1;
  }));
  member.consumer.close();
  EXPECT_EQ(member.consumer.stats().abandoned_on_revoke, 1u);
  EXPECT_EQ(member.consumer.stats().late_acks_ignored, 1u);
  const auto committed = testing::committed_offset(cluster_.bootstrap(), group_, topic_, 0);
  ASSERT_TRUE(committed);
  EXPECT_EQ(committed->offset, 3) << "a record abandoned after the drain timeout was committed";
}

// A second member takes a partition while its first record runs in the first member, which
// abandons it at once (drain_timeout 0): the new owner processes it, and the first member's late
// completion commits nothing.
TEST_F(ParallelConsumerRevoke, AJoiningMemberTakesOverAbandonedRecordsAndTheLateCompletionIsIgnored) {
  cluster_.create_topic(topic_, 2);
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 2; ++p) producer.produce(topic_, p, 6);
  Gate first_records;
  HandlerLog log_a;
  HandlerLog log_b;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Partition;
  options.drain_timeout = std::chrono::milliseconds(0);
  ParallelMember a(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log_a.started(r);
    if (r.offset == 0) first_records.pass();
    log_a.finished(r);
  });
  ASSERT_TRUE(poll_until(a.consumer, [&] { return first_records.arrived() == 2; }));

  ParallelMember b(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log_b.started(r);
    log_b.finished(r);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!(b.consumer.assignment().size() == 1 && log_b.finished() == 6) &&
         std::chrono::steady_clock::now() < deadline) {
    a.consumer.poll();
    b.consumer.poll();
  }
  ASSERT_EQ(b.consumer.assignment().size(), 1u);
  const std::int32_t moved = b.consumer.assignment().front().partition;
  const std::int32_t kept = 1 - moved;
  ASSERT_EQ(log_b.finished(), 6u);
  EXPECT_EQ(log_b.calls_of(moved, 0), 1) << "the abandoned record was not processed by the new owner";
  EXPECT_GE(a.consumer.stats().abandoned_on_revoke, 1u);

  first_records.open();
  ASSERT_TRUE(poll_until(
      a.consumer, [&] { return a.consumer.stats().late_acks_ignored == 1 && log_a.finished(kept, 5); }));
  a.manager.commit();
  const auto moved_committed = a.committed(topic_, moved);
  EXPECT_TRUE(!moved_committed || moved_committed->offset == 0)
      << "the first member committed " << moved_committed->offset << " for a partition it gave away";
  EXPECT_EQ(a.committed(topic_, kept)->offset, 6);
  EXPECT_EQ(log_a.calls_of(moved, 1), 0) << "a record of the revoked partition started after the revoke";
  b.manager.commit();
  EXPECT_EQ(b.committed(topic_, moved)->offset, 6);
}

// ---- Losses ----

// A member whose assignment is lost (fenced: here the coordinator forgets it, on a cluster a
// broker failure can) and that gets the partition back before anyone committed it resumes with
// its own acknowledgements: nothing it processed is processed again, although none of it was
// committed. Only the record that was running at the loss runs again: its completion came after
// the partition had left (not acknowledged).
TEST_F(ParallelConsumerRevoke, APartitionLostAndAssignedBackSkipsWhatThisMemberAcknowledged) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 60);
  constexpr std::int64_t kHeld = 10;  // running when the assignment is lost
  Gate held;
  std::atomic<int> held_calls{0};
  HandlerLog log;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.max_concurrency = 4;
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    if (r.offset == kHeld && held_calls.fetch_add(1) == 0) held.pass();
    log.finished(r);
  });
  // Everything but record 10 acknowledged, nothing committed (the strategy is manual).
  ASSERT_TRUE(poll_until(member.consumer, [&] {
    const auto acks = pending_acks(member.manager, topic_, 0);
    return held.arrived() == 1 && acks && acks->committable == kHeld && acks->size() == 49;
  }));
  rd_kafka_mock_push_request_errors(cluster_.get(), testing::kHeartbeatApiKey, 1,
                                    RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID);
  ASSERT_TRUE(poll_until(member.consumer, [&] { return member.consumer.stats().consumer.lost > 0; }));
  held.open();
  ASSERT_FALSE(member.committed(topic_, 0)) << "a lost partition was committed";
  // Back with the partition: the records produced meanwhile are processed once, and so is
  // record 10, whose first run ended after the loss.
  producer.produce(topic_, 0, 20);
  ASSERT_TRUE(
      poll_until(member.consumer, [&] { return log.calls_of(0, 79) == 1 && log.calls_of(0, kHeld) == 2; }));
  testing::poll_times(member.consumer, 5);
  for (std::int64_t offset = 0; offset < 80; ++offset) {
    EXPECT_EQ(log.calls_of(0, offset), offset == kHeld ? 2 : 1) << "offset " << offset;
  }
  const auto stats = member.consumer.stats();
  EXPECT_EQ(stats.skipped_after_restart, 59u);
  EXPECT_EQ(stats.late_acks_ignored, 1u);
  member.manager.commit();
  ASSERT_TRUE(member.committed(topic_, 0));
  EXPECT_EQ(member.committed(topic_, 0)->offset, 80);
}

// ---- Checkpoints ----

TEST_F(ParallelConsumerRevoke, TakeCheckpointNeverRunsWhileAHandlerRuns) {
  cluster_.create_topic(topic_, 1);
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 20);
  ConcurrencyGauge gauge;
  Gate gate;
  HandlerLog log;
  std::vector<int> running_at_checkpoints;
  auto options = parallel_options(topic_);
  options.ordering = ProcessingOrder::Unordered;
  options.max_concurrency = 4;
  options.consumer.take_checkpoint = [&] { running_at_checkpoints.push_back(gauge.running()); };
  ParallelMember member(cluster_.bootstrap(), group_, options, [&](const ConsumedRecord& r) {
    log.started(r);
    auto running = gauge.enter();
    gate.pass();
    log.finished(r);
  });
  ASSERT_TRUE(poll_until(member.consumer, [&] { return gate.arrived() >= 4; }));
  member.consumer.request_checkpoint();
  // The handlers are released from another thread, so that a poll() waiting at the barrier can
  // return; a consumer without a barrier checkpoints while all four still run.
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    gate.open();
  });
  const bool checkpointed = poll_until(member.consumer, [&] { return !running_at_checkpoints.empty(); });
  release.join();
  ASSERT_TRUE(checkpointed);
  ASSERT_TRUE(poll_until(member.consumer, [&] { return log.finished() == 20; }));
  for (int running : running_at_checkpoints) EXPECT_EQ(running, 0) << "take_checkpoint ran beside handlers";
  EXPECT_EQ(member.consumer.stats().consumer.checkpoints, running_at_checkpoints.size());
}

// ---- On the real broker ----

// A joining member takes a partition whose record is running in the first member: the record
// finishes within drain_timeout, so the revoke commits it and the new owner starts after it.
// The held records are released once a poll() of the first member has run for 2 s, which it
// does only while it drains a revoke (a poll returns within poll_timeout otherwise).
TEST(ParallelConsumerBroker, ARevokeCommitsARunningRecordThatFinishesWithinTheDrainTimeout) {
  const std::string bootstrap = testing::real_broker();
  if (bootstrap.empty())
    GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
  const std::string topic = unique_name("parallel-real");
  const std::string group = unique_name("parallel-real-group");
  testing::create_topic(bootstrap, topic, 2);
  Producer producer(bootstrap);
  for (int p = 0; p < 2; ++p) producer.produce(topic, p, 6);
  Gate held;  // record 3 of each partition
  HandlerLog log_a;
  HandlerLog log_b;
  auto options = parallel_options(topic);
  options.ordering = ProcessingOrder::Partition;
  options.drain_timeout = std::chrono::seconds(60);
  ParallelMember a(bootstrap, group, options, [&](const ConsumedRecord& r) {
    log_a.started(r);
    if (r.offset == 3) held.pass();
    log_a.finished(r);
  });
  ASSERT_TRUE(poll_until(a.consumer, [&] { return held.arrived() == 2; }));

  using Clock = std::chrono::steady_clock;
  std::atomic<Clock::rep> poll_started{0};  // 0: a is not polling
  std::atomic<bool> finished{false};
  std::atomic<bool> released_during_a_poll{false};
  std::thread watch([&] {
    while (!finished && !held.is_open()) {
      const Clock::rep started = poll_started.load();
      if (started != 0 && Clock::now().time_since_epoch().count() - started >
                              std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(2)).count()) {
        released_during_a_poll = true;
        held.open();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  ParallelMember b(bootstrap, group, options, [&](const ConsumedRecord& r) {
    log_b.started(r);
    log_b.finished(r);
  });
  const auto deadline = Clock::now() + std::chrono::seconds(90);
  while (!(b.consumer.assignment().size() == 1 && log_b.finished() >= 2) && Clock::now() < deadline) {
    poll_started = Clock::now().time_since_epoch().count();
    a.consumer.poll();
    poll_started = 0;
    b.consumer.poll();
  }
  finished = true;
  held.open();
  watch.join();
  ASSERT_EQ(b.consumer.assignment().size(), 1u);
  const std::int32_t moved = b.consumer.assignment().front().partition;
  EXPECT_TRUE(released_during_a_poll) << "the revoke did not wait for the running record";
  EXPECT_TRUE(log_a.finished(moved, 3));
  EXPECT_EQ(log_b.calls_of(moved, 3), 0) << "a record finished within the drain timeout was processed again";
  EXPECT_EQ(log_b.calls_of(moved, 4), 1);
  EXPECT_EQ(log_b.calls_of(moved, 5), 1);
  EXPECT_EQ(a.consumer.stats().late_acks_ignored, 0u);
}

}  // namespace
}  // namespace processor::kafka
