// The fault matrix, cluster faults: the coordinator moving mid-commit, a broker down for 10 s
// during a commit and during a transaction, and round trips longer than the timeouts.

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "fault_matrix_cases.hpp"
#include "fault_matrix_support.hpp"

namespace processor::kafka {
namespace {

using testing::CommitHistory;
using testing::expect_names_the_code;
using testing::failure_of_call;
using testing::kCoordinator;
using Clock = std::chrono::steady_clock;

constexpr auto kBrokerDown = std::chrono::seconds(10);

class ClusterFault : public ::testing::Test {
 protected:
  void committed(std::int64_t offset) {
    for (int p = 0; p < 2; ++p) history_.committed(TopicPartition(cluster_.topic, p), offset);
  }
  void expect_broker_at(std::int64_t offset, const std::string& when) {
    const auto committed = cluster_.broker_committed(history_, when);
    EXPECT_EQ(committed.at(0).value_or(-1), offset) << when;
    EXPECT_EQ(committed.at(1).value_or(-1), offset) << when;
  }
  void update_both(OffsetManager& manager, std::int64_t offset) {
    manager.update_offset(cluster_.topic, 0, offset);
    manager.update_offset(cluster_.topic, 1, offset);
  }
  // A manager that committed 10, on a store whose commits give up after 1.5 s (500 ms a try).
  std::unique_ptr<OffsetManager> manager_with_short_commits() {
    auto options = testing::matrix_store_options();
    options.request_timeout = std::chrono::milliseconds(500);
    options.retry_deadline = std::chrono::milliseconds(1500);
    auto store = std::make_shared<KafkaOffsetStore>(cluster_.standalone_client(), options);
    auto manager =
        std::make_unique<OffsetManager>(cluster_.group, nullptr, store, OffsetCommitStrategy::manual());
    update_both(*manager, 10);
    manager->commit();
    committed(10);
    return manager;
  }
  // Calls `call` until it succeeds, for up to 15 s: its last failure, nullopt once it succeeded.
  static std::optional<StateError> failure_until_answered(const std::function<void()>& call) {
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    std::optional<StateError> failure;
    while ((failure = failure_of_call(call)) && Clock::now() < deadline) {
    }
    return failure;
  }
  // Commits what is pending, trying for up to 15 s: the commits given up on are answered first.
  void commit_once_answered(OffsetManager& manager) {
    const auto failure = failure_until_answered([&] { manager.commit(); });
    ASSERT_FALSE(failure) << "the pending offsets were not committed: " << failure->what();
  }
  // Takes broker 1 (every coordinator and leader) down now and up after kBrokerDown.
  std::thread outage() {
    rd_kafka_mock_broker_set_down(cluster_.cluster.get(), kCoordinator);
    return std::thread([this] {
      std::this_thread::sleep_for(kBrokerDown);
      rd_kafka_mock_broker_set_up(cluster_.cluster.get(), kCoordinator);
    });
  }

  testing::PinnedCluster cluster_;
  CommitHistory history_;
};
// The suite's name in ctest: `ctest -R fault_matrix` selects the whole matrix.
using fault_matrix_cluster = ClusterFault;

// Commits run back to back while the group coordinator hops between the three brokers every
// 150 ms: each commit that meets NOT_COORDINATOR finds the new coordinator and is retried.
TEST_F(fault_matrix_cluster, CoordinatorMovingMidCommitIsRetriedToSuccess) {
  auto store =
      std::make_shared<KafkaOffsetStore>(cluster_.standalone_client(), testing::matrix_store_options());
  OffsetManager manager(cluster_.group, nullptr, store, OffsetCommitStrategy::manual());
  std::atomic<bool> done{false};
  std::atomic<int> moves{0};
  std::thread mover([&] {
    for (int broker = 2; !done.load(); broker = broker % 3 + 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      rd_kafka_mock_coordinator_set(cluster_.cluster.get(), "group", cluster_.group.c_str(), broker);
      ++moves;
    }
  });
  int failures = 0;
  std::int64_t last = 0;
  const auto until = Clock::now() + std::chrono::seconds(3);
  for (std::int64_t offset = 1; Clock::now() < until; ++offset) {
    update_both(manager, offset);
    if (const auto failure = failure_of_call([&] { manager.commit(); })) {
      ++failures;
      ADD_FAILURE() << "commit of " << offset << " failed while the coordinator moved: " << failure->what();
    } else {
      committed(offset);
      last = offset;
    }
    if (offset % 10 == 0) cluster_.broker_committed(history_, "during the moves");
  }
  done = true;
  mover.join();
  EXPECT_GE(moves.load(), 10);
  EXPECT_GT(last, 10) << "too few commits to have met a move";
  EXPECT_EQ(failures, 0);
  expect_broker_at(last, "after the moves");
}

// The coordinator is down for 10 s while a commit runs: a commit whose retry deadline (8 s) is
// shorter surfaces a retriable error and keeps its offsets pending; one given a longer deadline
// rides the outage out; the next commit after either writes what was asked.
TEST_F(fault_matrix_cluster, CoordinatorDownForTenSecondsDuringACommit) {
  auto client = cluster_.standalone_client();
  auto store = std::make_shared<KafkaOffsetStore>(client, testing::matrix_store_options());
  OffsetManager manager(cluster_.group, nullptr, store, OffsetCommitStrategy::manual());
  update_both(manager, 10);
  manager.commit();
  committed(10);

  update_both(manager, 20);
  const auto started = Clock::now();
  std::thread restore = outage();
  const auto failure = failure_of_call([&] { manager.commit(); });
  ASSERT_TRUE(failure) << "committed with the coordinator down";
  EXPECT_TRUE(failure->retriable()) << failure->what();
  EXPECT_TRUE(failure->kind() == ErrorKind::Kafka || failure->kind() == ErrorKind::Timeout)
      << failure->what();
  EXPECT_TRUE(failure->kafka_error_code().has_value()) << failure->what();
  EXPECT_EQ(manager.get_all_pending().at(TopicPartition(cluster_.topic, 0)).offset, 20);

  auto patient = testing::matrix_store_options();
  patient.retry_deadline = std::chrono::seconds(30);
  KafkaOffsetStore patient_store(client, patient);
  const std::vector<PartitionOffset> asked{{TopicPartition(cluster_.topic, 0), OffsetInfo(20)},
                                           {TopicPartition(cluster_.topic, 1), OffsetInfo(20)}};
  patient_store.store_offsets(cluster_.group, asked);
  EXPECT_GE(Clock::now() - started, kBrokerDown - std::chrono::seconds(1)) << "the outage was not met";
  restore.join();
  committed(20);
  EXPECT_EQ(manager.commit(), 2u) << "the pending offsets";
  expect_broker_at(20, "after the outage");
}

// The transaction coordinator (and group coordinator, and the output's leader) is down for 10 s
// while a transaction commits: TransactionalProducer::commit, with a 30 s timeout, waits it
// out. transaction.timeout.ms must outlast the outage too: with 10 s, commit() surfaced
// _TIMED_OUT instead (it caps message.timeout.ms and the transaction's requests).
TEST_F(fault_matrix_cluster, CoordinatorDownForTenSecondsDuringATransaction) {
  // librdkafka 2.14 against its own mock: the broker set down disappears from the mock's metadata,
  // librdkafka decommissions it, and once it is back FindCoordinator names a broker librdkafka no
  // longer knows ("Transaction coordinator 1 is unknown"): send_offsets_to_transaction then waits
  // past its 30 s timeout for good. The same outage on the real broker (BrokerKill*,
  // BrokerKillStreams*: the broker killed mid-transaction and restarted) recovers.
  GTEST_SKIP() << "librdkafka 2.14's mock: a coordinator set down and up again stays unknown";
  auto client = cluster_.standalone_client();
  auto store = std::make_shared<KafkaOffsetStore>(client, testing::matrix_store_options());
  OffsetManager manager(cluster_.group, nullptr, store, OffsetCommitStrategy::manual());
  auto properties = cluster_.producer_properties();
  properties["transaction.timeout.ms"] = "30000";
  TransactionalProducer producer(properties, std::chrono::seconds(30));
  producer.begin();
  producer.produce(cluster_.output, "key", "value", 0);
  manager.update_offset(cluster_.topic, 0, 10);
  ASSERT_EQ(producer.commit(*client, manager), 1u);

  producer.begin();
  producer.produce(cluster_.output, "key", "value", 0);
  manager.update_offset(cluster_.topic, 0, 20);
  const auto started = Clock::now();
  std::thread restore = outage();
  const auto failure = failure_of_call([&] { producer.commit(*client, manager); });
  restore.join();
  EXPECT_GE(Clock::now() - started, kBrokerDown - std::chrono::seconds(1)) << "the outage was not met";
  ASSERT_FALSE(failure) << failure->what();
  EXPECT_EQ(manager.get_offset(cluster_.topic, 0), 20);
}

// Round trips of 3 s against a 500 ms request timeout and a 1.5 s retry deadline: the commit
// surfaces as a retriable Timeout. The request reached the broker, so the commit may have been
// applied even so: the broker shows the old or the new offset, never an older one; once the
// round trip is back to normal, the next commit writes the new one.
TEST_F(fault_matrix_cluster, CommitSlowerThanItsTimeoutSurfacesAsATimeout) {
  const auto owned = manager_with_short_commits();
  OffsetManager& manager = *owned;
  rd_kafka_mock_broker_set_rtt(cluster_.cluster.get(), kCoordinator, 3000);
  update_both(manager, 20);
  const auto failure = failure_of_call([&] { manager.commit(); });
  ASSERT_TRUE(failure) << "a commit met its timeout and succeeded";
  EXPECT_EQ(failure->kind(), ErrorKind::Timeout) << failure->what();
  EXPECT_TRUE(failure->retriable()) << failure->what();
  EXPECT_EQ(manager.get_offset(cluster_.topic, 0), 10) << "the manager took a timed-out commit as done";
  rd_kafka_mock_broker_set_rtt(cluster_.cluster.get(), kCoordinator, 0);
  const auto shown = cluster_.broker_committed(history_, "after the timed-out commit");
  EXPECT_TRUE(shown.at(0) == 10 || shown.at(0) == 20) << shown.at(0).value_or(-1);
  commit_once_answered(manager);
  committed(20);
  expect_broker_at(20, "after the next commit");
}

// A commit given up on unanswered is still sent by librdkafka, and may land after a newer one:
// on a 3-node cluster whose broker restarted, a group's offset went from 1368 (the commit on
// revoke) back to 762 (an automatic commit given up 4 s before). So no commit is sent while an
// earlier one of the client is unanswered: it fails as a retriable Timeout that says so, and
// goes out once the earlier ones are answered.
TEST_F(fault_matrix_cluster, NoCommitIsSentWhileAnEarlierOneIsUnanswered) {
  const auto owned = manager_with_short_commits();
  OffsetManager& manager = *owned;
  // Answered 5 s late: the commit of 20 gives up after 1.5 s, and the one of 30 after 1.5 s more.
  rd_kafka_mock_broker_set_rtt(cluster_.cluster.get(), kCoordinator, 5000);
  update_both(manager, 20);
  const auto given_up = failure_of_call([&] { manager.commit(); });
  ASSERT_TRUE(given_up) << "a commit met its timeout and succeeded";
  update_both(manager, 30);
  const auto held = failure_of_call([&] { manager.commit(); });
  ASSERT_TRUE(held) << "a commit was sent while the one before was unanswered";
  EXPECT_EQ(held->kind(), ErrorKind::Timeout) << held->what();
  EXPECT_TRUE(held->retriable()) << held->what();
  EXPECT_NE(std::string(held->what()).find("an earlier commit of this client is still unanswered"),
            std::string::npos)
      << held->what();
  rd_kafka_mock_broker_set_rtt(cluster_.cluster.get(), kCoordinator, 0);
  commit_once_answered(manager);
  committed(30);
  expect_broker_at(30, "after the earlier commits were answered");
}

// The same for a read: an OffsetFetch slower than its timeout. (ListOffsets is left out: with a
// 3 s round trip and socket.timeout.ms 3 s, KafkaBrokerMetadata::log_range (500 ms) once
// answered in time, and once, called first, the case never finished while librdkafka's
// connection kept timing out its ApiVersion request; neither is something to assert.)
TEST_F(fault_matrix_cluster, ReadSlowerThanItsTimeoutSurfacesAsATimeout) {
  auto options = testing::matrix_store_options();
  options.request_timeout = std::chrono::milliseconds(500);
  options.retry_deadline = std::chrono::milliseconds(1500);
  KafkaOffsetStore store(cluster_.standalone_client(), options);
  store.store_offset(cluster_.group, {cluster_.topic, 0}, OffsetInfo(10));

  rd_kafka_mock_broker_set_rtt(cluster_.cluster.get(), kCoordinator, 3000);
  const auto failure = failure_of_call([&] { store.get_offset(cluster_.group, {cluster_.topic, 0}); });
  rd_kafka_mock_broker_set_rtt(cluster_.cluster.get(), kCoordinator, 0);
  ASSERT_TRUE(failure) << "an OffsetFetch met its timeout and succeeded";
  EXPECT_EQ(failure->kind(), ErrorKind::Timeout) << failure->what();
  EXPECT_TRUE(failure->retriable());
  EXPECT_EQ(store.get_offset(cluster_.group, {cluster_.topic, 0})->offset, 10) << "the next read";
}

// A transaction whose coordinator answers in 4 s, against a 1 s producer timeout: commit()
// surfaces a Timeout; after abort the same offsets commit in a new transaction.
TEST_F(fault_matrix_cluster, TransactionSlowerThanItsTimeoutSurfacesAndCommitsAfterAbort) {
  auto client = cluster_.standalone_client();
  auto store = std::make_shared<KafkaOffsetStore>(client, testing::matrix_store_options());
  OffsetManager manager(cluster_.group, nullptr, store, OffsetCommitStrategy::manual());
  TransactionalProducer producer(cluster_.producer_properties(), std::chrono::seconds(1));
  producer.begin();
  producer.produce(cluster_.output, "key", "value", 0);
  manager.update_offset(cluster_.topic, 0, 10);

  rd_kafka_mock_broker_set_rtt(cluster_.cluster.get(), kCoordinator, 4000);
  const auto failure = failure_of_call([&] { producer.commit(*client, manager); });
  rd_kafka_mock_broker_set_rtt(cluster_.cluster.get(), kCoordinator, 0);
  ASSERT_TRUE(failure) << "a transaction met its timeout and committed";
  EXPECT_EQ(failure->kind(), ErrorKind::Timeout) << failure->what();
  EXPECT_FALSE(manager.get_offset(cluster_.topic, 0))
      << "the manager took a timed-out transaction as committed";

  ASSERT_FALSE(failure_of_call([&] { producer.abort(); }));
  producer.begin();
  producer.produce(cluster_.output, "key", "value", 0);
  EXPECT_EQ(producer.commit(*client, manager), 1u);
  EXPECT_EQ(manager.get_offset(cluster_.topic, 0), 10);
}

// Admin calls to the group coordinator (DescribeGroups, OffsetFetch) given up on while the
// coordinator is still being looked up surface a Timeout, and the admin client works on once the
// lookup is answered. librdkafka 2.14.2 kept such a call's coordinator request waiting and, when
// the coordinator was found, dropped the request's reference twice and aborted the process
// (`eonce->refcnt > 0`): a streams worker that described its group during a broker kill died that
// way in CI (scripts/librdkafka-patches/admin-coord-request-after-timeout.patch).
TEST_F(fault_matrix_cluster, AdminCallsGivenUpWhileTheCoordinatorWasLookedUpLeaveTheClientWorking) {
  auto admin = GroupAdmin::create({{"bootstrap.servers", cluster_.bootstrap()}}, std::chrono::seconds(1));
  // Every broker answers the next two FindCoordinator requests in 2.5 s, after the calls' 1 s.
  for (int broker = 1; broker <= 3; ++broker) {
    rd_kafka_mock_broker_push_request_error_rtts(
        cluster_.cluster.get(), broker, testing::kFindCoordinatorApiKey, 2, RD_KAFKA_RESP_ERR_NO_ERROR, 2500,
        RD_KAFKA_RESP_ERR_NO_ERROR, 2500);
  }
  const auto described = failure_of_call([&] { admin->describe_groups({cluster_.group}); });
  const auto listed = failure_of_call([&] { admin->committed_offsets(cluster_.group); });
  ASSERT_TRUE(described) << "a group was described before its coordinator was found";
  EXPECT_EQ(described->kind(), ErrorKind::Timeout) << described->what();
  ASSERT_TRUE(listed) << "a group's offsets were read before its coordinator was found";
  EXPECT_EQ(listed->kind(), ErrorKind::Timeout) << listed->what();

  // The lookups are answered and the requests given up on meet the coordinator; the calls after
  // that are answered, by a process still alive. (The mock cluster does not serve DescribeGroups.)
  std::this_thread::sleep_for(std::chrono::seconds(3));
  std::vector<CommittedOffset> offsets{CommittedOffset{}};
  const auto failure = failure_until_answered([&] { offsets = admin->committed_offsets(cluster_.group); });
  ASSERT_FALSE(failure) << "the group's offsets were still not read: " << failure->what();
  EXPECT_TRUE(offsets.empty()) << "a group that never committed has " << offsets.size() << " offsets";
}

}  // namespace
}  // namespace processor::kafka
