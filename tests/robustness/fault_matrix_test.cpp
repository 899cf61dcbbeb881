// The fault matrix, error codes: every error Kafka's protocol lists for the APIs the library
// drives, injected on librdkafka's mock cluster against the operation as a user runs it, and
// the outcome the user observes asserted (fault_matrix_cases.hpp holds the table).

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "fault_matrix_cases.hpp"
#include "fault_matrix_support.hpp"

namespace processor::kafka {
namespace {

using testing::CommitHistory;
using testing::failure_of_call;
using testing::Fault;
using testing::Outcome;

class FaultMatrix : public ::testing::TestWithParam<Fault> {
 protected:
  void inject(std::int16_t api_key) {
    pushed_ = testing::times_injected(GetParam());
    cluster_.push_errors(api_key, GetParam().code, pushed_);
  }
  // What a user catching the error reads: the code, its name, and whether retrying can help.
  void expect_surfaced(const StateError& error) {
    const Fault& fault = GetParam();
    testing::expect_names_the_code(error, testing::reported_code(fault));
    EXPECT_EQ(error.retriable(), fault.kafka_retriable) << error.what();
  }
  // Every fault injected was met by a request: a case whose fault nobody met proves nothing.
  void expect_fault_met(std::int16_t api_key) {
    EXPECT_EQ(cluster_.errors_left(api_key), 0u) << pushed_ << " pushed, not all met";
  }
  // For an error librdkafka surfaces at the first or the second try, depending on timing: at
  // least one was met, and what is left is met by `call` before the case goes on (a fault left
  // queued would hit the recovery that follows).
  void expect_fault_met_then_drain(std::int16_t api_key, const std::function<void()>& call) {
    ASSERT_LT(cluster_.errors_left(api_key), static_cast<std::size_t>(pushed_))
        << pushed_ << " pushed, none met";
    for (int tries = 0; tries < pushed_ && cluster_.errors_left(api_key) > 0; ++tries)
      (void)failure_of_call(call);
    expect_fault_met(api_key);
  }
  void expect_broker_at(std::int64_t p0, std::int64_t p1, const std::string& when) {
    const auto committed = cluster_.broker_committed(history_, when);
    EXPECT_EQ(committed.at(0).value_or(-1), p0) << when;
    EXPECT_EQ(committed.at(1).value_or(-1), p1) << when;
  }
  std::vector<PartitionOffset> offsets(std::int64_t offset) const {
    return {{TopicPartition(cluster_.topic, 0), OffsetInfo(offset)},
            {TopicPartition(cluster_.topic, 1), OffsetInfo(offset)}};
  }
  void committed(std::int64_t offset) {
    for (int p = 0; p < 2; ++p) history_.committed(TopicPartition(cluster_.topic, p), offset);
  }

  testing::PinnedCluster cluster_;
  CommitHistory history_;
  int pushed_ = 0;
};

// ---- OffsetCommit: OffsetManager::commit() through a KafkaOffsetStore ----

class OffsetCommitFault : public FaultMatrix {};

TEST_P(OffsetCommitFault, ManagerCommitRetriesOrSurfacesAndNeverGoesBack) {
  const Fault& fault = GetParam();
  auto store =
      std::make_shared<KafkaOffsetStore>(cluster_.standalone_client(), testing::matrix_store_options());
  OffsetManager manager(cluster_.group, nullptr, store, OffsetCommitStrategy::manual());
  const std::string& topic = cluster_.topic;
  manager.update_offset(topic, 0, 10);
  manager.update_offset(topic, 1, 10);
  ASSERT_EQ(manager.commit(), 2u);
  committed(10);

  inject(testing::kOffsetCommitApiKey);
  manager.update_offset(topic, 0, 20);
  manager.update_offset(topic, 1, 20);
  const auto failure = failure_of_call([&] { manager.commit(); });
  expect_fault_met(testing::kOffsetCommitApiKey);
  if (fault.outcome == Outcome::Retried) {
    ASSERT_FALSE(failure) << failure->what();
    committed(20);
    expect_broker_at(20, 20, "after the retried commit");
    return;
  }
  ASSERT_TRUE(failure) << "the commit succeeded despite " << rd_kafka_err2name(fault.code);
  expect_surfaced(*failure);
  expect_broker_at(10, 10, "after the failed commit");
  EXPECT_EQ(manager.get_all_pending().at(TopicPartition(topic, 0)).offset, 20)
      << "the failed offsets were dropped";
  EXPECT_EQ(manager.get_offset(topic, 0), 10);
  // What the user does: commit again once the cause is gone.
  EXPECT_EQ(manager.commit(), 2u);
  committed(20);
  expect_broker_at(20, 20, "after the next commit");
}

INSTANTIATE_TEST_SUITE_P(fault_matrix, OffsetCommitFault,
                         ::testing::ValuesIn(testing::offset_commit_faults()),
                         [](const auto& param_info) { return testing::fault_name(param_info.param); });

// ---- OffsetFetch: OffsetManager::get_offset() reading the KafkaOffsetStore ----

class OffsetFetchFault : public FaultMatrix {};

TEST_P(OffsetFetchFault, CommittedOffsetIsReadOrTheErrorSurfaces) {
  const Fault& fault = GetParam();
  auto client = cluster_.standalone_client();
  auto store = std::make_shared<KafkaOffsetStore>(client, testing::matrix_store_options());
  store->store_offsets(cluster_.group, offsets(10));
  committed(10);
  // A manager that has not seen the partition asks the store: an OffsetFetch.
  OffsetManager manager(cluster_.group, nullptr, store, OffsetCommitStrategy::manual());

  inject(testing::kOffsetFetchApiKey);
  std::optional<std::int64_t> read;
  const auto failure = failure_of_call([&] { read = manager.get_offset(cluster_.topic, 0); });
  expect_fault_met(testing::kOffsetFetchApiKey);
  if (fault.outcome == Outcome::Retried) {
    ASSERT_FALSE(failure) << failure->what();
    EXPECT_EQ(read, 10);
  } else {
    ASSERT_TRUE(failure) << "read " << read.value_or(-1) << " despite " << rd_kafka_err2name(fault.code);
    expect_surfaced(*failure);
    EXPECT_EQ(manager.get_offset(cluster_.topic, 0), 10) << "the next read";
  }
  expect_broker_at(10, 10, "after the fetch");
}

INSTANTIATE_TEST_SUITE_P(fault_matrix, OffsetFetchFault, ::testing::ValuesIn(testing::offset_fetch_faults()),
                         [](const auto& param_info) { return testing::fault_name(param_info.param); });

// ---- ListOffsets: OffsetManager::reset_offset(latest) asking KafkaBrokerMetadata ----

class ListOffsetsFault : public FaultMatrix {};

TEST_P(ListOffsetsFault, ResetToTheLogEndRetriesOrSurfacesWithoutCommitting) {
  const Fault& fault = GetParam();
  testing::Producer(cluster_.bootstrap()).produce(cluster_.topic, 0, 5);
  auto client = cluster_.standalone_client();
  auto store = std::make_shared<KafkaOffsetStore>(client, testing::matrix_store_options());
  OffsetManagerOptions options;
  options.broker = std::make_shared<KafkaBrokerMetadata>(client, std::chrono::seconds(3));
  OffsetManager manager(cluster_.group, nullptr, store, OffsetCommitStrategy::manual(), options);
  store->store_offsets(cluster_.group, offsets(1));
  committed(1);

  inject(testing::kListOffsetsApiKey);
  std::int64_t reset_to = -1;
  const auto failure = failure_of_call(
      [&] { reset_to = manager.reset_offset(cluster_.topic, 0, OffsetResetStrategy::latest()); });
  if (failure && fault.outcome == Outcome::SurfacedOrRetried) {
    expect_fault_met_then_drain(testing::kListOffsetsApiKey,
                                [&] { options.broker->log_range(TopicPartition(cluster_.topic, 0)); });
  } else {
    expect_fault_met(testing::kListOffsetsApiKey);
  }
  if (fault.outcome == Outcome::Retried || (fault.outcome == Outcome::SurfacedOrRetried && !failure)) {
    ASSERT_FALSE(failure) << failure->what();
    EXPECT_EQ(reset_to, 5);
    history_.committed(TopicPartition(cluster_.topic, 0), 5);
    expect_broker_at(5, 1, "after the reset");
    return;
  }
  ASSERT_TRUE(failure) << "reset to " << reset_to << " despite " << rd_kafka_err2name(fault.code);
  expect_surfaced(*failure);
  expect_broker_at(1, 1, "after the failed reset");
  EXPECT_EQ(manager.reset_offset(cluster_.topic, 0, OffsetResetStrategy::latest()), 5) << "the next reset";
  history_.committed(TopicPartition(cluster_.topic, 0), 5);
  expect_broker_at(5, 1, "after the next reset");
}

INSTANTIATE_TEST_SUITE_P(fault_matrix, ListOffsetsFault, ::testing::ValuesIn(testing::list_offsets_faults()),
                         [](const auto& param_info) { return testing::fault_name(param_info.param); });

// ---- FindCoordinator: the first commit of a new client has to find the group coordinator ----

class FindCoordinatorFault : public FaultMatrix {};

TEST_P(FindCoordinatorFault, FirstCommitFindsTheCoordinatorOrSurfaces) {
  const Fault& fault = GetParam();
  cluster_.broker_committed(history_, "before the fault");  // the reader finds the coordinator now
  // Queued on every broker: the client asks whichever it is connected to.
  for (int broker = 1; broker <= 3; ++broker) {
    rd_kafka_mock_broker_push_request_error_rtts(cluster_.cluster.get(), broker,
                                                 testing::kFindCoordinatorApiKey, 1, fault.code, 0);
  }
  auto store =
      std::make_shared<KafkaOffsetStore>(cluster_.standalone_client(), testing::matrix_store_options());
  OffsetManager manager(cluster_.group, nullptr, store, OffsetCommitStrategy::manual());
  manager.update_offset(cluster_.topic, 0, 10);
  manager.update_offset(cluster_.topic, 1, 10);
  const auto failure = failure_of_call([&] { manager.commit(); });
  std::size_t left = 0;
  for (int broker = 1; broker <= 3; ++broker) {
    std::size_t on_broker = 0;
    rd_kafka_mock_broker_error_stack_cnt(cluster_.cluster.get(), broker, testing::kFindCoordinatorApiKey,
                                         &on_broker);
    left += on_broker;
  }
  EXPECT_LT(left, 3u) << "no FindCoordinator met the fault";
  if (fault.outcome == Outcome::Retried) {
    ASSERT_FALSE(failure) << failure->what();
    committed(10);
    expect_broker_at(10, 10, "after the commit");
    return;
  }
  ASSERT_TRUE(failure) << "the commit succeeded despite " << rd_kafka_err2name(fault.code);
  expect_surfaced(*failure);
  EXPECT_EQ(manager.commit(), 2u) << "the next commit";
  committed(10);
  expect_broker_at(10, 10, "after the next commit");
}

INSTANTIATE_TEST_SUITE_P(fault_matrix, FindCoordinatorFault,
                         ::testing::ValuesIn(testing::find_coordinator_faults()),
                         [](const auto& param_info) { return testing::fault_name(param_info.param); });

// ---- JoinGroup, SyncGroup, Heartbeat: a KafkaConsumer's membership ----

class GroupMembershipFault : public FaultMatrix {
 protected:
  std::unique_ptr<testing::GroupMember> join() {
    // A short session: the mock coordinator waits session.timeout.ms - 1 s for a member that
    // rejoined under a new id to be expired. Not below 4 s: it holds a first JoinGroup for 3 s.
    // The default socket.timeout.ms: a SyncGroup the mock holds (a fenced member not yet
    // expired) and the client resends trips an assertion in librdkafka 2.0.2's mock
    // (rd_kafka_mock_cgrp_member_sync_set: !member->resp).
    return std::make_unique<testing::GroupMember>(
        cluster_.bootstrap(), cluster_.group, cluster_.topic, "range", OffsetCommitStrategy::manual(),
        KafkaProperties{{"session.timeout.ms", "4000"}, {"heartbeat.interval.ms", "250"}});
  }

  // Polls until the member handled partition 0's records up to `end` in its current assignment
  // (its manager's position: a rejoin may hand it the partition back at the last commit, to
  // handle again) and owns both partitions; returns the error poll() threw, if any. 45 s: a
  // rejoin after a refused JoinGroup waits on the mock's holds (3 s for a first join, the 4 s
  // session of a member that rejoined under a new id), and took over 20 s once under ctest -j 4
  // with librdkafka 2.14.
  std::optional<StateError> consume_until(testing::GroupMember& member, std::int64_t end,
                                          std::chrono::milliseconds timeout = std::chrono::seconds(45)) {
    const TopicPartition partition(cluster_.topic, 0);
    const auto position = [&] {
      const auto pending = member.manager.get_all_pending();
      const auto at = pending.find(partition);
      return at != pending.end() ? at->second.offset
                                 : member.manager.get_offset(partition.topic, 0).value_or(-1);
    };
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto failure = failure_of_call([&] { member.consumer.poll(record_); });
      if (failure) return failure;
      if (next_offset_ >= end && position() >= end && member.consumer.assignment().size() == 2)
        return std::nullopt;
    }
    ADD_FAILURE() << "consumed up to " << next_offset_ << " of " << end << ", "
                  << member.consumer.assignment().size() << " partitions owned";
    return std::nullopt;
  }

  void commit_and_check(testing::GroupMember& member, std::int64_t end, const std::string& when) {
    if (member.manager.commit() > 0) history_.committed(TopicPartition(cluster_.topic, 0), end);
    const auto committed = cluster_.broker_committed(history_, when);
    EXPECT_EQ(committed.at(0).value_or(-1), end) << when;
  }

  // The offset after the last record of partition 0 the member now polling handled.
  std::int64_t next_offset_ = 0;
  const KafkaConsumer::RecordHandler record_ = [this](const ConsumedRecord& r) {
    next_offset_ = std::max(next_offset_, r.offset + 1);
  };
};

TEST_P(GroupMembershipFault, ConsumerRejoinsAndCommitsOrSurfaces) {
  const Fault& fault = GetParam();
  testing::Producer producer(cluster_.bootstrap());
  producer.produce(cluster_.topic, 0, 3);
  const bool during_join = fault.api_key != testing::kHeartbeatApiKey;
  if (during_join) inject(fault.api_key);
  auto member = join();
  if (!during_join) {
    ASSERT_FALSE(consume_until(*member, 3));
    commit_and_check(*member, 3, "before the heartbeat fault");
    inject(fault.api_key);
    producer.produce(cluster_.topic, 0, 3, 3);
  }
  const std::int64_t end = during_join ? 3 : 6;
  std::optional<StateError> failure;
  // The faults are met in the background (a heartbeat every 250 ms): poll until they were, and
  // after a heartbeat a second longer, for the client to act on the answer (rejoin, or give up).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const auto settle = during_join ? std::chrono::seconds(0) : std::chrono::seconds(1);
  auto settled = deadline;
  while (!failure && std::chrono::steady_clock::now() < std::min(deadline, settled)) {
    failure = failure_of_call([&] { member->consumer.poll(record_); });
    if (settled == deadline && cluster_.errors_left(fault.api_key) == 0) {
      settled = std::chrono::steady_clock::now() + settle;
    }
  }
  if (!failure) failure = consume_until(*member, end);
  expect_fault_met(fault.api_key);

  if (fault.outcome == Outcome::Retried) {
    ASSERT_FALSE(failure) << failure->what();
    commit_and_check(*member, end, "after the consumer recovered");
    return;
  }
  ASSERT_TRUE(failure) << "poll() never reported " << rd_kafka_err2name(fault.code);
  expect_surfaced(*failure);
  if (fault.outcome == Outcome::Surfaced) {
    // What the user does: keep polling; the consumer rejoins.
    ASSERT_FALSE(consume_until(*member, end));
    commit_and_check(*member, end, "after the consumer rejoined");
    return;
  }
  EXPECT_NE(std::string(failure->what()).find("fatal"), std::string::npos) << failure->what();
  // What the user does: a new consumer (client) in place of the dead one. It resumes at the
  // last commit and handles the rest again.
  member.reset();
  next_offset_ = 0;
  member = join();
  ASSERT_FALSE(consume_until(*member, end));
  commit_and_check(*member, end, "after a new consumer took over");
}

INSTANTIATE_TEST_SUITE_P(fault_matrix, GroupMembershipFault,
                         ::testing::ValuesIn(testing::group_membership_faults()),
                         [](const auto& param_info) { return testing::fault_name(param_info.param); });

// ---- AddOffsetsToTxn, TxnOffsetCommit, EndTxn: TransactionalProducer::commit ----
//
// The mock coordinator answers TxnOffsetCommit without storing the offsets (librdkafka 2.0.2's
// rdkafka_mock_handlers.c), so a transaction's offsets cannot be read back from the mock
// broker: the outcome is read from what the user sees, commit()'s result and the manager's
// committed view (which moves only on a successful commit).

class TransactionFault : public FaultMatrix {
 protected:
  // One transaction: a record out, partition 0's offset in; returns commit()'s failure.
  std::optional<StateError> transaction(TransactionalProducer& producer, OffsetManager& manager,
                                        KafkaClient& consumer, std::int64_t offset) {
    return failure_of_call([&] {
      producer.begin();
      producer.produce(cluster_.output, "key", "value-" + std::to_string(offset), 0);
      manager.update_offset(cluster_.topic, 0, offset);
      EXPECT_EQ(producer.commit(consumer, manager), 1u);
    });
  }
  void expect_manager_at(OffsetManager& manager, std::int64_t offset, const std::string& when) {
    const auto committed = manager.get_offset(cluster_.topic, 0);
    history_.observed(TopicPartition(cluster_.topic, 0), committed, when);
    EXPECT_EQ(committed.value_or(-1), offset) << when;
  }
};

TEST_P(TransactionFault, CommitRetriesAbortsOrIsFatal) {
  const Fault& fault = GetParam();
  auto client = cluster_.standalone_client();
  auto store = std::make_shared<KafkaOffsetStore>(client, testing::matrix_store_options());
  OffsetManager manager(cluster_.group, nullptr, store, OffsetCommitStrategy::manual());
  constexpr auto kTimeout = std::chrono::seconds(5);
  auto producer = std::make_unique<TransactionalProducer>(cluster_.producer_properties(), kTimeout);
  ASSERT_FALSE(transaction(*producer, manager, *client, 10));
  history_.committed(TopicPartition(cluster_.topic, 0), 10);
  expect_manager_at(manager, 10, "after the first transaction");

  inject(fault.api_key);
  const auto failure = transaction(*producer, manager, *client, 20);
  expect_fault_met(fault.api_key);
  switch (fault.outcome) {
    case Outcome::Retried:
      ASSERT_FALSE(failure) << failure->what();
      history_.committed(TopicPartition(cluster_.topic, 0), 20);
      expect_manager_at(manager, 20, "after the retried transaction");
      return;
    case Outcome::Surfaced: {
      ASSERT_TRUE(failure) << "the transaction committed despite " << rd_kafka_err2name(fault.code);
      expect_surfaced(*failure);
      EXPECT_NE(std::string(failure->what()).find("must be aborted"), std::string::npos) << failure->what();
      expect_manager_at(manager, 10, "after the failed transaction");
      // What the user does: abort, rewind (here: the pending offset is kept), try again.
      ASSERT_FALSE(failure_of_call([&] { producer->abort(); }));
      ASSERT_FALSE(transaction(*producer, manager, *client, 20));
      history_.committed(TopicPartition(cluster_.topic, 0), 20);
      expect_manager_at(manager, 20, "after abort and retry");
      return;
    }
    case Outcome::SurfacedOrRetried:
      FAIL() << "no transactional fault has a timing-dependent outcome";
    case Outcome::Fatal: {
      ASSERT_TRUE(failure) << "the transaction committed despite " << rd_kafka_err2name(fault.code);
      expect_surfaced(*failure);
      EXPECT_NE(std::string(failure->what()).find("fatal"), std::string::npos) << failure->what();
      expect_manager_at(manager, 10, "after the fatal error");
      const auto abort_failure = failure_of_call([&] { producer->abort(); });
      EXPECT_TRUE(abort_failure) << "a fatal producer aborted";
      // What the user does: a new producer with the same transactional.id (fencing the old).
      producer.reset();
      producer = std::make_unique<TransactionalProducer>(cluster_.producer_properties(), kTimeout);
      ASSERT_FALSE(transaction(*producer, manager, *client, 20));
      history_.committed(TopicPartition(cluster_.topic, 0), 20);
      expect_manager_at(manager, 20, "after a new producer");
      return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(fault_matrix, TransactionFault, ::testing::ValuesIn(testing::transaction_faults()),
                         [](const auto& param_info) { return testing::fault_name(param_info.param); });

}  // namespace
}  // namespace processor::kafka
