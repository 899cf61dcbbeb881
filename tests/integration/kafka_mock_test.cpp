// The Kafka layer against librdkafka's mock cluster: commits, fault injection, rebalances.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kafka/group/start_offsets.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka_api_keys.hpp"
#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"

namespace processor::kafka {
namespace {

using testing::group_properties;
using testing::MockCluster;
using testing::poll_until;
using testing::Producer;
using testing::unique_name;

using testing::kHeartbeatApiKey;
using testing::kOffsetCommitApiKey;

using testing::fast_retries;

// One properties map for several clients (StreamProcessor's): each client takes those that
// librdkafka's property table gives its kind, and its own map over them, whole.
TEST(ClientProperties, ASharedMapGivesEachClientKindItsOwnPropertiesAndTheClientsMapWins) {
  const KafkaProperties shared = {{"bootstrap.servers", "b:9092"},
                                  {"session.timeout.ms", "6000"},              // consumers only
                                  {"partition.assignment.strategy", "range"},  // consumers only
                                  {"auto.offset.reset", "earliest"},           // consumers only (topic)
                                  {"linger.ms", "5"},                          // producers only
                                  {"acks", "all"},                             // producers only (topic)
                                  {"no.such.property", "x"}};  // unknown: librdkafka refuses it
  const auto producer = internal::properties_for(RD_KAFKA_PRODUCER, shared, {{"session.timeout.ms", "7000"}});
  EXPECT_EQ(producer, (KafkaProperties{{"bootstrap.servers", "b:9092"},
                                       {"linger.ms", "5"},
                                       {"acks", "all"},
                                       {"no.such.property", "x"},
                                       {"session.timeout.ms", "7000"}}));
  const auto consumer = internal::properties_for(RD_KAFKA_CONSUMER, shared);
  EXPECT_EQ(consumer, (KafkaProperties{{"bootstrap.servers", "b:9092"},
                                       {"session.timeout.ms", "6000"},
                                       {"partition.assignment.strategy", "range"},
                                       {"auto.offset.reset", "earliest"},
                                       {"no.such.property", "x"}}));
}

class KafkaMock : public ::testing::Test {
 protected:
  void SetUp() override {
    topic_ = unique_name("orders");
    group_ = unique_name("group");
    cluster_.create_topic(topic_, 4);
  }

  // A client that is not a group member: it commits as a standalone, like an admin tool.
  std::shared_ptr<KafkaClient> standalone_client() {
    return KafkaClient::create(group_properties(cluster_.bootstrap(), group_));
  }

  std::vector<PartitionOffset> offsets(std::initializer_list<std::pair<int, std::int64_t>> entries) {
    std::vector<PartitionOffset> out;
    for (auto [partition, offset] : entries) {
      OffsetInfo info(offset);
      info.metadata = "m" + std::to_string(offset);
      out.emplace_back(TopicPartition(topic_, partition), info);
    }
    return out;
  }

  MockCluster cluster_;
  std::string topic_;
  std::string group_;
};

TEST_F(KafkaMock, CommitsCarryMetadataAndReadBackThroughOffsetFetch) {
  KafkaOffsetStore store(standalone_client(), fast_retries());
  store.store_offsets(group_, offsets({{0, 10}, {1, 20}, {3, 40}}));
  const auto read = store.get_offset(group_, {topic_, 1});
  ASSERT_TRUE(read);
  EXPECT_EQ(read->offset, 20);
  EXPECT_EQ(read->metadata, "m20");
  EXPECT_FALSE(store.get_offset(group_, {topic_, 2}));
  const auto committed = store.committed({{topic_, 0}, {topic_, 2}, {topic_, 3}});
  EXPECT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed.at(TopicPartition(topic_, 3)).offset, 40);
}

// A changelog's partition that librdkafka's metadata does not know for a moment (a broker
// restarting, a topic seconds old) is waited for: a StreamProcessor restoring it once exited on
// `_UNKNOWN_PARTITION` while one broker of three restarted.
TEST_F(KafkaMock, ALogRangeOfAPartitionTheMetadataDoesNotKnowYetIsWaitedFor) {
  const std::string late = unique_name("late");
  auto client = internal::create_client(RD_KAFKA_CONSUMER, group_properties(cluster_.bootstrap(), group_), {},
                                        "the test's consumer");
  std::thread creator([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    cluster_.create_topic(late, 1);
  });
  std::optional<StateError> failure;
  try {
    const auto range =
        internal::query_log_range(client.get(), TopicPartition(late, 0), std::chrono::seconds(2),
                                  internal::RetryPolicy{std::chrono::seconds(20)});
    EXPECT_EQ(range.low, 0);
    EXPECT_EQ(range.high, 0);
  } catch (const StateError& error) {
    failure = error;
  }
  creator.join();
  ASSERT_FALSE(failure) << failure->what();
  // A partition that never appears still fails, once the policy gives up, naming it.
  try {
    internal::query_log_range(client.get(), TopicPartition(late, 7), std::chrono::milliseconds(500),
                              internal::RetryPolicy{std::chrono::seconds(2)});
    FAIL() << "a partition that does not exist has a log range";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) << error.what();
    EXPECT_NE(std::string(error.what()).find(late + ":7"), std::string::npos) << error.what();
  }
}

// A log range is the leader's two answers, and an answer without an offset is no range: on a topic
// seconds old, a real broker answered the log start of a partition with 40 records by -1 under no
// error code, librdkafka's watermark query took its log end for its log start, and a member with no
// committed offset started at 40 and never consumed the 40 records (GroupProtocol,
// TwoMembersStartedRightAfterCreateTopics, eager, once in a CI run).
TEST_F(KafkaMock, ALogRangeIsTheLeadersTwoAnswersAndAnAnswerWithoutAnOffsetIsRetried) {
  const std::string topic = unique_name("range");
  cluster_.create_topic(topic, 2);
  Producer(cluster_.bootstrap()).produce(topic, 1, 40);
  auto client = internal::create_client(RD_KAFKA_CONSUMER, group_properties(cluster_.bootstrap(), group_), {},
                                        "the test's consumer");
  const internal::RetryPolicy once{std::chrono::seconds(5)};
  const auto filled =
      internal::query_log_range(client.get(), TopicPartition(topic, 1), std::chrono::seconds(2), once);
  EXPECT_EQ(filled.low, 0);
  EXPECT_EQ(filled.high, 40);
  const auto empty =
      internal::query_log_range(client.get(), TopicPartition(topic, 0), std::chrono::seconds(2), once);
  EXPECT_EQ(empty.low, 0);
  EXPECT_EQ(empty.high, 0);

  const TopicPartition tp(topic, 1);
  internal::LogRange range{7, 9};
  for (const auto& [earliest, latest] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{-1, 40}, {0, -1}, {41, 40}}) {
    const auto failure = internal::log_range_of(tp, earliest, latest, &range);
    ASSERT_TRUE(failure) << earliest << ".." << latest << " was taken for a range";
    EXPECT_TRUE(failure->retriable()) << failure->what();
    EXPECT_NE(std::string(failure->what()).find(tp.to_key()), std::string::npos) << failure->what();
    EXPECT_EQ(range.low, 7) << "a refused answer changed the range";
    EXPECT_EQ(range.high, 9);
  }
  EXPECT_FALSE(internal::log_range_of(tp, 40, 40, &range));  // an emptied log: start and end agree
  EXPECT_EQ(range.low, 40);
  EXPECT_EQ(range.high, 40);
}

TEST_F(KafkaMock, RefusesAnotherGroup) {
  KafkaOffsetStore store(standalone_client(), fast_retries());
  EXPECT_THROW(store.store_offsets("someone-else", offsets({{0, 1}})), StateError);
}

class RetriableCommitError : public KafkaMock, public ::testing::WithParamInterface<rd_kafka_resp_err_t> {};

TEST_P(RetriableCommitError, IsRetriedUntilTheCommitSucceeds) {
  KafkaOffsetStore store(standalone_client(), fast_retries());
  store.store_offsets(group_, offsets({{0, 1}}));  // coordinator known
  rd_kafka_mock_push_request_errors(cluster_.get(), kOffsetCommitApiKey, 3, GetParam(), GetParam(),
                                    GetParam());
  store.store_offsets(group_, offsets({{0, 100}, {1, 200}}));
  EXPECT_EQ(store.get_offset(group_, {topic_, 0})->offset, 100);
  EXPECT_EQ(store.get_offset(group_, {topic_, 1})->offset, 200);
}

INSTANTIATE_TEST_SUITE_P(CoordinatorAndTimeouts, RetriableCommitError,
                         ::testing::Values(RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS,
                                           RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE,
                                           RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
                                           RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT),
                         [](const auto& param_info) {
                           return std::string(rd_kafka_err2name(param_info.param));
                         });

class FatalCommitError : public KafkaMock, public ::testing::WithParamInterface<rd_kafka_resp_err_t> {};

TEST_P(FatalCommitError, SurfacesWithTheBrokerCodeAndIsNotRetried) {
  constexpr std::int32_t kCoordinator = 1;
  rd_kafka_mock_coordinator_set(cluster_.get(), "group", group_.c_str(), kCoordinator);
  KafkaOffsetStore store(standalone_client(), fast_retries());
  store.store_offsets(group_, offsets({{0, 1}}));
  // Two errors queued on the coordinator: a retry would take the second one too.
  rd_kafka_mock_broker_push_request_error_rtts(cluster_.get(), kCoordinator, kOffsetCommitApiKey, 2,
                                               GetParam(), 0, GetParam(), 0);
  try {
    store.store_offsets(group_, offsets({{0, 50}}));
    ADD_FAILURE() << "commit succeeded despite " << rd_kafka_err2name(GetParam());
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
    EXPECT_EQ(error.kafka_error_code(), static_cast<int>(GetParam())) << error.what();
    EXPECT_FALSE(error.retriable());
  }
  std::size_t errors_left = 0;
  rd_kafka_mock_broker_error_stack_cnt(cluster_.get(), kCoordinator, kOffsetCommitApiKey, &errors_left);
  EXPECT_EQ(errors_left, 1u) << "the commit was retried";
  // The group never moved (read through a fresh client: a fenced one is dead for good).
  KafkaOffsetStore reader(standalone_client(), fast_retries());
  EXPECT_EQ(reader.get_offset(group_, {topic_, 0})->offset, 1);
}

INSTANTIATE_TEST_SUITE_P(
    GenerationMembershipAndSize, FatalCommitError,
    ::testing::Values(RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID,
                      RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, RD_KAFKA_RESP_ERR_OFFSET_METADATA_TOO_LARGE),
    [](const auto& param_info) { return std::string(rd_kafka_err2name(param_info.param)); });

TEST_F(KafkaMock, AsyncCommitReportsSuccessAndFailureThroughTheCallback) {
  auto client = standalone_client();
  KafkaOffsetStore store(client, fast_retries());
  std::vector<std::optional<StateError>> results;
  auto remember = [&](const std::optional<StateError>& error) { results.push_back(error); };
  store.store_offsets_async(group_, offsets({{0, 11}}), remember);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (results.empty() && std::chrono::steady_clock::now() < deadline)
    client->poll(std::chrono::milliseconds(50));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].has_value());
  EXPECT_EQ(store.get_offset(group_, {topic_, 0})->offset, 11);

  rd_kafka_mock_push_request_errors(cluster_.get(), kOffsetCommitApiKey, 1,
                                    RD_KAFKA_RESP_ERR_OFFSET_METADATA_TOO_LARGE);
  store.store_offsets_async(group_, offsets({{0, 12}}), remember);
  while (results.size() < 2 && std::chrono::steady_clock::now() < deadline)
    client->poll(std::chrono::milliseconds(50));
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[1].has_value());
  EXPECT_EQ(results[1]->kafka_error_code(), RD_KAFKA_RESP_ERR_OFFSET_METADATA_TOO_LARGE);
  EXPECT_EQ(store.get_offset(group_, {topic_, 0})->offset, 11);
}

TEST_F(KafkaMock, FatalCommitErrorKeepsTheManagersOffsetsPending) {
  auto client = standalone_client();
  auto store = std::make_shared<KafkaOffsetStore>(client, fast_retries());
  OffsetManager manager(group_, nullptr, store, OffsetCommitStrategy::manual());
  manager.update_offset(topic_, 0, 10);
  manager.commit();
  manager.update_offset(topic_, 0, 25);
  rd_kafka_mock_push_request_errors(cluster_.get(), kOffsetCommitApiKey, 1,
                                    RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION);
  try {
    manager.commit();
    ADD_FAILURE() << "commit succeeded";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Kafka);
    EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION);
  }
  EXPECT_EQ(manager.get_all_pending().at(TopicPartition(topic_, 0)).offset, 25);
  EXPECT_EQ(manager.stats().failed_commits, 1u);
  EXPECT_EQ(manager.commit(), 1u);
  EXPECT_EQ(store->get_offset(group_, {topic_, 0})->offset, 25);
}

TEST_F(KafkaMock, CommitRidesOutACoordinatorThatGoesDownAndComesBack) {
  KafkaOffsetStore store(standalone_client(), fast_retries());
  store.store_offsets(group_, offsets({{0, 1}}));
  for (int broker = 1; broker <= 3; ++broker) rd_kafka_mock_broker_set_down(cluster_.get(), broker);
  std::thread restore([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    for (int broker = 1; broker <= 3; ++broker) rd_kafka_mock_broker_set_up(cluster_.get(), broker);
  });
  store.store_offsets(group_, offsets({{0, 77}}));
  restore.join();
  EXPECT_EQ(store.get_offset(group_, {topic_, 0})->offset, 77);
}

TEST_F(KafkaMock, SlowCoordinatorIsATimeoutOnceTheDeadlinePasses) {
  auto options = fast_retries();
  options.request_timeout = std::chrono::milliseconds(100);
  options.retry_deadline = std::chrono::milliseconds(400);
  KafkaOffsetStore store(standalone_client(), options);
  store.store_offsets(group_, offsets({{0, 1}}));
  for (int broker = 1; broker <= 3; ++broker) rd_kafka_mock_broker_set_rtt(cluster_.get(), broker, 1000);
  try {
    store.store_offsets(group_, offsets({{0, 2}}));
    ADD_FAILURE() << "commit succeeded against a 1 s round trip with a 100 ms timeout";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Timeout) << error.what();
    EXPECT_TRUE(error.retriable());
  }
  for (int broker = 1; broker <= 3; ++broker) rd_kafka_mock_broker_set_rtt(cluster_.get(), broker, 0);
}

// ---- KafkaConsumer on the mock cluster ----

using Member = testing::GroupMember;

TEST_F(KafkaMock, ConsumerDrainsEveryPartitionAndCommitsTheEnd) {
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 4; ++p) producer.produce(topic_, p, 250);
  Member member(cluster_.bootstrap(), group_, topic_, "range");
  std::set<std::pair<int, std::int64_t>> seen;
  ASSERT_TRUE(poll_until(
      member.consumer, [&](const ConsumedRecord& r) { seen.emplace(r.partition, r.offset); },
      [&] { return seen.size() == 1000; }));
  member.manager.commit();
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(member.store->get_offset(group_, {topic_, p})->offset, 250);
    EXPECT_EQ(member.manager.lag(topic_, p), 0);
  }
  EXPECT_EQ(member.consumer.stats().records, 1000u);
  EXPECT_EQ(member.consumer.stats().assignments, 4u);
}

// The one-call start: bootstrap servers, group, topics and a strategy; the consumer builds and
// owns the client, the Kafka offset store, the broker metadata and the manager. What it commits
// is the group's, as Kafka's tools read it, and its lag is current.
TEST_F(KafkaMock, AOneCallStartConsumesCommitsToTheGroupAndReportsLag) {
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 4; ++p) producer.produce(topic_, p, 25);
  KafkaConsumerOptions options;
  options.poll_timeout = std::chrono::milliseconds(50);
  auto consumer = KafkaConsumer::connect({.bootstrap_servers = cluster_.bootstrap(),
                                          .group = group_,
                                          .topics = {topic_},
                                          .strategy = OffsetCommitStrategy::every_n_events(10),
                                          .properties = {{"session.timeout.ms", "6000"}}},
                                         options);
  std::set<std::pair<int, std::int64_t>> seen;
  ASSERT_TRUE(poll_until(
      *consumer, [&](const ConsumedRecord& r) { seen.emplace(r.partition, r.offset); },
      [&] { return seen.size() == 100; }));
  consumer->manager().commit();
  for (int p = 0; p < 4; ++p) EXPECT_EQ(consumer->manager().lag(topic_, p), 0) << "partition " << p;
  consumer->close();
  consumer.reset();
  // Read back by another client, as an admin tool would.
  KafkaOffsetStore reader(standalone_client(), fast_retries());
  for (int p = 0; p < 4; ++p) {
    const auto committed = reader.get_offset(group_, {topic_, p});
    ASSERT_TRUE(committed.has_value()) << "partition " << p;
    EXPECT_EQ(committed->offset, 25) << "partition " << p;
  }
}

TEST_F(KafkaMock, AOneCallStartRefusesAMissingFieldOrAPropertyThatAFieldSets) {
  const auto refusal = [](const ConsumerSetup& setup) -> std::string {
    try {
      KafkaConsumer::connect(setup);
    } catch (const StateError& error) {
      EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
      return error.what();
    }
    return "no error";
  };
  const ConsumerSetup good{.bootstrap_servers = cluster_.bootstrap(), .group = group_, .topics = {topic_}};
  auto setup = good;
  setup.bootstrap_servers.clear();
  EXPECT_NE(refusal(setup).find("bootstrap_servers"), std::string::npos) << refusal(setup);
  setup = good;
  setup.group.clear();
  EXPECT_NE(refusal(setup).find("group"), std::string::npos) << refusal(setup);
  setup = good;
  setup.topics.clear();
  EXPECT_NE(refusal(setup).find("topic"), std::string::npos) << refusal(setup);
  setup = good;
  setup.properties = {{"group.id", "another"}};
  EXPECT_NE(refusal(setup).find("'group.id'"), std::string::npos) << refusal(setup);
  setup = good;
  setup.properties = {{"session.timeout.ms", "soon"}};
  EXPECT_NE(refusal(setup).find("session.timeout.ms"), std::string::npos) << refusal(setup);
}

// The same start for the parallel consumer, with offsets in a RocksDB-backed store instead of
// the group coordinator.
TEST_F(KafkaMock, AOneCallParallelStartCommitsToTheStoreItIsGiven) {
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 4; ++p) producer.produce(topic_, p, 25);
  const auto dir = std::filesystem::temp_directory_path() / unique_name("connect-state");
  {
    auto store = std::make_shared<StateBackendOffsetStore>(std::make_shared<state::RocksDbStateBackend>(dir));
    ParallelConsumerOptions options;
    options.consumer.poll_timeout = std::chrono::milliseconds(50);
    std::atomic<int> handled{0};
    auto consumer = ParallelConsumer::connect(
        {.bootstrap_servers = cluster_.bootstrap(), .group = group_, .topics = {topic_}, .store = store},
        options, [&](const ConsumedRecord&) { ++handled; });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (handled < 100 && std::chrono::steady_clock::now() < deadline) consumer->poll();
    ASSERT_EQ(handled.load(), 100);
    consumer->close();
    for (int p = 0; p < 4; ++p)
      EXPECT_EQ(store->get_offset(group_, {topic_, p})->offset, 25) << "partition " << p;
  }
  std::filesystem::remove_all(dir);
}

TEST_F(KafkaMock, PeriodicStrategyCommitsTrailingOffsetsAfterTrafficStops) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 1, 30);
  Member member(cluster_.bootstrap(), group_, topic_, "range",
                OffsetCommitStrategy::periodic(std::chrono::milliseconds(200)));
  int handled = 0;
  ASSERT_TRUE(poll_until(
      member.consumer, [&](const ConsumedRecord&) { ++handled; }, [&] { return handled == 30; }));
  // No explicit commit: the loop's poll() commits once the interval has passed.
  ASSERT_TRUE(poll_until(
      member.consumer, [](const ConsumedRecord&) {},
      [&] {
        auto committed = member.store->committed({{topic_, 1}});
        return !committed.empty() && committed.begin()->second.offset == 30;
      },
      std::chrono::seconds(10)));
}

TEST_F(KafkaMock, ResumesFromTheCommittedOffsetAfterARestart) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 100);
  {
    Member first(cluster_.bootstrap(), group_, topic_, "range");
    int handled = 0;
    ASSERT_TRUE(poll_until(
        first.consumer,
        [&](const ConsumedRecord&) {
          if (++handled == 40) first.consumer.stop();
        },
        [&] { return handled >= 40; }));
    first.consumer.close();  // commits what was handled
  }
  Member second(cluster_.bootstrap(), group_, topic_, "range");
  std::int64_t first_offset = -1;
  int handled = 0;
  const std::int64_t committed = second.store->get_offset(group_, {topic_, 0})->offset;
  EXPECT_EQ(committed, 40);
  ASSERT_TRUE(poll_until(
      second.consumer,
      [&](const ConsumedRecord& r) {
        if (first_offset < 0) first_offset = r.offset;
        ++handled;
      },
      [&] { return first_offset >= 0 && committed + handled == 100; }))
      << "committed " << committed << ", first offset " << first_offset << ", handled " << handled;
  EXPECT_EQ(first_offset, committed);
}

// poll() takes records from librdkafka in batches and hands them out one by one: a stop() inside
// the handler ends the poll at that record, and the next poll goes on with the next one. The
// records of a batch the poll did not reach are neither skipped nor handed out twice.
TEST_F(KafkaMock, AStopInsideABatchEndsThePollThereAndTheNextPollGoesOn) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 2, 1000);
  Member member(cluster_.bootstrap(), group_, topic_, "range");
  std::vector<std::int64_t> offsets;
  std::size_t polls_with_records = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (offsets.size() < 1000 && std::chrono::steady_clock::now() < deadline) {
    std::size_t in_this_poll = 0;
    const std::size_t handled = member.consumer.poll([&](const ConsumedRecord& r) {
      offsets.push_back(r.offset);
      if (++in_this_poll == 7) member.consumer.stop();
    });
    EXPECT_LE(handled, 7u);
    if (handled > 0) ++polls_with_records;
  }
  ASSERT_EQ(offsets.size(), 1000u);
  for (std::size_t i = 0; i < offsets.size(); ++i)
    ASSERT_EQ(offsets[i], static_cast<std::int64_t>(i)) << "at " << i;
  EXPECT_GE(polls_with_records, 1000u / 7);
  member.manager.commit();
  EXPECT_EQ(member.store->get_offset(group_, {topic_, 2})->offset, 1000);
}

// Under the skip policy, a record whose handler throws every try is passed over, logged and
// counted; no other record of the batch is lost, and the commit passes the skipped ones.
TEST_F(KafkaMock, UnderTheSkipPolicyAHandlerThatThrowsInsideABatchLosesNoOtherRecord) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 1, 300);
  KafkaConsumerOptions options = Member::options_for(topic_);
  options.failure.action = FailureAction::Skip;
  options.failure.retry = {2, std::chrono::milliseconds(1), std::chrono::milliseconds(1)};
  Member member(cluster_.bootstrap(), group_, options, "range");
  std::vector<std::int64_t> offsets;
  int failures = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (offsets.size() < 294 && std::chrono::steady_clock::now() < deadline) {
    member.consumer.poll([&](const ConsumedRecord& r) {
      if (r.offset % 50 == 10) {
        ++failures;
        throw std::runtime_error("handler failed at " + std::to_string(r.offset));
      }
      offsets.push_back(r.offset);
    });
  }
  EXPECT_EQ(failures, 12);  // two tries each
  ASSERT_EQ(offsets.size(), 294u);
  std::int64_t expected = 0;
  for (const std::int64_t offset : offsets) {
    if (expected % 50 == 10) ++expected;
    ASSERT_EQ(offset, expected++);
  }
  const ConsumerStats stats = member.consumer.stats();
  EXPECT_EQ(stats.failed_attempts, 12u);
  EXPECT_EQ(stats.failed_records.at(TopicPartition(topic_, 1)).skipped, 6u);
  member.manager.commit();
  EXPECT_EQ(member.store->get_offset(group_, {topic_, 1})->offset, 300);
}

// By default a record whose handler throws three times stops the consumer there: poll() throws
// naming it, every later poll() too, and no commit passes it.
TEST_F(KafkaMock, ByDefaultAHandlerThatKeepsThrowingStopsTheConsumerAtItsRecord) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 1, 100);
  KafkaConsumerOptions options = Member::options_for(topic_);
  options.failure.retry.initial_backoff = std::chrono::milliseconds(1);
  Member member(cluster_.bootstrap(), group_, options, "range");
  int calls = 0;
  std::string failure;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (failure.empty() && std::chrono::steady_clock::now() < deadline) {
    try {
      member.consumer.poll([&](const ConsumedRecord& r) {
        ++calls;
        if (r.offset == 40) throw std::runtime_error("cannot parse");
      });
    } catch (const StateError& error) {
      failure = error.what();
    }
  }
  EXPECT_EQ(failure, "record " + topic_ + ":1@40 failed 3 tries: cannot parse");
  EXPECT_EQ(calls, 43);
  EXPECT_THROW(member.consumer.poll([&](const ConsumedRecord&) { ++calls; }), StateError);
  EXPECT_EQ(calls, 43);
  member.manager.commit();
  EXPECT_EQ(member.store->get_offset(group_, {topic_, 1})->offset, 40);
}

// A handler that turns slow inside a batch: the batch's records are handed out over 12 s, twice
// max.poll.interval.ms, and the member stays in its group as if it polled per record.
TEST_F(KafkaMock, AHandlerThatTurnsSlowInsideABatchKeepsTheMemberInItsGroup) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 100);
  Member member(cluster_.bootstrap(), group_, testing::GroupMember::options_for(topic_), "range",
                OffsetCommitStrategy::manual(), {{"max.poll.interval.ms", "6000"}});
  std::vector<std::int64_t> offsets;
  ASSERT_TRUE(poll_until(
      member.consumer,
      [&](const ConsumedRecord& r) {
        offsets.push_back(r.offset);
        if (r.offset >= 40) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      },
      [&] { return offsets.size() >= 100; }))
      << offsets.size() << " handled, " << member.consumer.stats().lost << " lost, "
      << member.consumer.stats().revocations << " revoked";
  // What librdkafka reports when the application polled too late comes with the next poll.
  member.consumer.poll([&](const ConsumedRecord& r) { offsets.push_back(r.offset); });
  EXPECT_EQ(offsets.size(), 100u);
  EXPECT_EQ(member.consumer.stats().revocations, 0u);
  EXPECT_EQ(member.consumer.stats().lost, 0u);
  EXPECT_EQ(member.consumer.stats().assignments, 4u);
}

class RebalanceProtocol : public KafkaMock, public ::testing::WithParamInterface<std::string> {};

// Two members, the second joining mid-way: every partition is handed over and no record is
// skipped. (The mock coordinator refuses commits while a rebalance is pending, unlike a real
// broker, so the zero-duplicate hand-over is asserted against the real broker.)
TEST_P(RebalanceProtocol, HandsPartitionsOverWithoutGaps) {
  const auto run = testing::hand_over(cluster_.bootstrap(), group_, topic_, GetParam());
  ASSERT_TRUE(run.first_started);
  EXPECT_EQ(run.times_seen.size(), 800u);
  EXPECT_GT(run.a.revocations, 0u);
  EXPECT_GT(run.b.assignments, 0u);
}

// A handler that turns slow inside a batch does not hold a rebalance back until the batch is
// handed out: librdkafka's callbacks are served as if the consumer polled per record (within
// FetchBuffer::kBatchBudget), so the revocation comes a few records after the second member
// joins, not after the hundreds of records the batch still holds. Under each protocol.
TEST_P(RebalanceProtocol, ARebalanceIsServedWithinAFewRecordsOfASlowBatch) {
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 4; ++p) producer.produce(topic_, p, 1000);
  int handled = 0;
  int handled_at_revoke = -1;
  auto options = testing::GroupMember::options_for(topic_);
  options.on_revoked = [&](const std::vector<TopicPartition>& revoked) {
    if (!revoked.empty() && handled_at_revoke < 0) handled_at_revoke = handled;
  };
  Member a(cluster_.bootstrap(), group_, options, GetParam());
  // Fast at first, so that the batches grow to their largest (500 records).
  ASSERT_TRUE(poll_until(
      a.consumer,
      [&](const ConsumedRecord&) {
        if (++handled == 600) a.consumer.stop();
      },
      [&] { return handled >= 600; }));

  Member b(cluster_.bootstrap(), group_, topic_, GetParam());
  std::atomic<bool> done{false};
  std::thread b_polls([&] {
    while (!done) b.consumer.poll([](const ConsumedRecord&) {});
  });
  const int handled_at_join = handled;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (handled_at_revoke < 0 && std::chrono::steady_clock::now() < deadline) {
    a.consumer.poll([&](const ConsumedRecord&) {
      ++handled;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (handled_at_revoke >= 0) a.consumer.stop();
    });
  }
  // The rebalance completes before the members leave.
  while (b.consumer.stats().assignments == 0 && std::chrono::steady_clock::now() < deadline) {
    a.consumer.poll([](const ConsumedRecord&) {});
  }
  done = true;
  b_polls.join();
  ASSERT_GE(handled_at_revoke, 0) << "no revocation within 60 s; " << handled - handled_at_join << " handled";
  // 100 records are 10 s at 100 ms each; the rebalance itself takes 1-6 s (the mock coordinator
  // waits up to the session timeout less 1 s for a cooperative group's members to rejoin).
  EXPECT_LT(handled_at_revoke - handled_at_join, 100)
      << "records handled between the join and the revocation";
}

// A rebalance served inside a poll that waits for records: the revocation, the assignment that
// follows it and the first records fetched after it all come within one wait. Each record is
// handed out, once (the revoking member commits what it handled).
TEST_P(RebalanceProtocol, NoRecordIsLostWhenARebalanceIsServedInsideAWaitingPoll) {
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 4; ++p) producer.produce(topic_, p, 5);
  std::mutex seen_mutex;
  std::map<std::pair<int, std::int64_t>, int> seen;
  const auto count = [&](const ConsumedRecord& r) {
    std::lock_guard lock(seen_mutex);
    ++seen[{r.partition, r.offset}];
  };
  const auto seen_size = [&] {
    std::lock_guard lock(seen_mutex);
    return seen.size();
  };
  auto options = testing::GroupMember::options_for(topic_);
  options.poll_timeout = std::chrono::seconds(10);  // the whole rebalance fits in one wait
  bool produced_more = false;
  options.on_revoked = [&](const std::vector<TopicPartition>& revoked) {
    // Records to fetch once the rebalance is over, for the partitions kept and those reassigned.
    if (revoked.empty() || std::exchange(produced_more, true)) return;
    for (int p = 0; p < 4; ++p) producer.produce(topic_, p, 5, 5);
  };
  Member a(cluster_.bootstrap(), group_, options, GetParam());
  ASSERT_TRUE(poll_until(a.consumer, count, [&] { return seen_size() == 20; }));
  // Committed before the rebalance: the mock coordinator refuses a classic group's commits while
  // it rebalances, and the commit on revoke would leave the records handled to be handled again.
  a.manager.commit();

  Member b(cluster_.bootstrap(), group_, topic_, GetParam());
  std::atomic<bool> done{false};
  std::thread b_polls([&] {
    while (!done) b.consumer.poll(count);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen_size() < 40 && std::chrono::steady_clock::now() < deadline) a.consumer.poll(count);
  done = true;
  b_polls.join();
  ASSERT_TRUE(produced_more) << "no revocation within 60 s";
  std::string missing;
  int duplicates = 0;
  for (int p = 0; p < 4; ++p) {
    for (std::int64_t offset = 0; offset < 10; ++offset) {
      const auto found = seen.find({p, offset});
      if (found == seen.end())
        missing += " " + std::to_string(p) + ":" + std::to_string(offset);
      else
        duplicates += found->second - 1;
    }
  }
  EXPECT_EQ(missing, "") << "records never handed out (partition:offset)";
  // A commit on revoke that the mock coordinator refused (it refuses a classic group's commits
  // while it rebalances, and a slow run can rebalance twice) leaves what the member handled since
  // its last commit to the next owner: duplicates of that cause only.
  if (a.consumer.stats().failed_revoke_commits + b.consumer.stats().failed_revoke_commits == 0) {
    EXPECT_EQ(duplicates, 0);
  }
}

// A member closed while an assignment waits in its queue (the group completed a rebalance while
// the member was not polling) is handed that assignment inside rd_kafka_consumer_close. It must
// apply it as it is, without asking the terminating client for start offsets, and close cleanly.
TEST_P(RebalanceProtocol, ACloseWithAnAssignmentWaitingClosesWithoutAnError) {
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 4; ++p) producer.produce(topic_, p, 5);
  Member a(cluster_.bootstrap(), group_, topic_, GetParam());
  ASSERT_TRUE(poll_until(
      a.consumer, [](const ConsumedRecord&) {}, [&] { return a.consumer.stats().assignments > 0; }));
  Member b(cluster_.bootstrap(), group_, topic_, GetParam());
  std::atomic<bool> done{false};
  std::thread b_polls([&] {
    while (!done) b.consumer.poll([](const ConsumedRecord&) {});
  });
  // `a` serves the revocation, then stops polling; the group completes the rebalance without it.
  ASSERT_TRUE(poll_until(
      a.consumer, [](const ConsumedRecord&) {}, [&] { return a.consumer.stats().revocations > 0; },
      std::chrono::seconds(60)));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (b.consumer.stats().assignments == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // `a`'s own SyncGroup answer
  EXPECT_NO_THROW(a.consumer.close());
  done = true;
  b_polls.join();
  EXPECT_GT(b.consumer.stats().assignments, 0u) << "the rebalance never completed";
}

INSTANTIATE_TEST_SUITE_P(EveryProtocol, RebalanceProtocol, ::testing::ValuesIn(testing::group_protocols()),
                         [](const auto& param_info) {
                           return testing::group_protocol_name(param_info.param);
                         });

TEST_F(KafkaMock, MemberRefusesToCommitAPartitionItDoesNotOwn) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 5);
  Member member(cluster_.bootstrap(), group_, topic_, "range");
  ASSERT_TRUE(poll_until(
      member.consumer, [](const ConsumedRecord&) {}, [&] { return !member.consumer.assignment().empty(); }));
  const std::string other_topic = unique_name("not-subscribed");
  cluster_.create_topic(other_topic, 1);
  try {
    member.store->store_offset(group_, {other_topic, 0}, OffsetInfo(3));
    ADD_FAILURE() << "committed a partition the member does not own";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST);
    EXPECT_NE(std::string(error.what()).find("not assigned"), std::string::npos);
  }
  EXPECT_TRUE(member.store->committed({{other_topic, 0}}).empty());
}

// Commits check ownership against a copy of the assignment kept between rebalances: after a
// rebalance takes a partition away, a commit for it must be refused, not let through by the copy.
TEST_F(KafkaMock, OwnershipFollowsRebalances) {
  Producer producer(cluster_.bootstrap());
  for (int partition = 0; partition < 4; ++partition) producer.produce(topic_, partition, 5);
  Member a(cluster_.bootstrap(), group_, topic_, "range");
  ASSERT_TRUE(poll_until(
      a.consumer, [](const ConsumedRecord&) {}, [&] { return a.consumer.assignment().size() == 4; }));
  a.store->store_offset(group_, {topic_, 3}, OffsetInfo(2));  // owned: accepted, and the copy is taken

  Member b(cluster_.bootstrap(), group_, topic_, "range");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((a.consumer.assignment().size() != 2 || b.consumer.assignment().size() != 2) &&
         std::chrono::steady_clock::now() < deadline) {
    a.consumer.poll([](const ConsumedRecord&) {});
    b.consumer.poll([](const ConsumedRecord&) {});
  }
  ASSERT_EQ(a.consumer.assignment().size(), 2u);
  const auto moved = b.consumer.assignment().front();
  const auto kept = a.consumer.assignment().front();
  try {
    a.store->store_offset(group_, moved, OffsetInfo(4));
    ADD_FAILURE() << "committed " << moved.to_key() << " after the rebalance gave it to the other member";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST);
  }
  a.store->store_offset(group_, kept, OffsetInfo(1));
  EXPECT_EQ(a.store->get_offset(group_, kept)->offset, 1);
  const auto moved_committed = a.store->get_offset(group_, moved);
  EXPECT_TRUE(!moved_committed || moved_committed->offset != 4);
}

TEST_F(KafkaMock, LostPartitionsAreDroppedWithoutACommit) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 50);
  Member member(cluster_.bootstrap(), group_, topic_, "cooperative-sticky");
  std::vector<TopicPartition> lost;
  int handled = 0;
  ASSERT_TRUE(poll_until(
      member.consumer, [&](const ConsumedRecord&) { ++handled; }, [&] { return handled == 50; }));
  // The coordinator forgets the member: its next heartbeat learns that the assignment is lost.
  rd_kafka_mock_push_request_errors(cluster_.get(), kHeartbeatApiKey, 5, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID,
                                    RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID,
                                    RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID, RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID);
  ASSERT_TRUE(poll_until(
      member.consumer, [](const ConsumedRecord&) {}, [&] { return member.consumer.stats().lost > 0; },
      std::chrono::seconds(20)));
  EXPECT_TRUE(member.store->committed({{topic_, 0}}).empty()) << "a lost partition was committed";
  EXPECT_TRUE(member.manager.get_all_pending().empty());
}

// Where an assigned partition starts: checkpoint, then the manager's store, then the broker.
TEST_F(KafkaMock, StartPositionPrefersCheckpointThenOffsetStoreThenBroker) {
  Producer producer(cluster_.bootstrap());
  for (int p = 0; p < 3; ++p) producer.produce(topic_, p, 50);
  KafkaOffsetStore(standalone_client(), fast_retries())
      .store_offsets(group_, offsets({{0, 10}, {1, 10}, {2, 10}}));

  auto local = std::make_shared<StateBackendOffsetStore>(std::make_shared<state::MemoryStateBackend>());
  local->store_offset(group_, {topic_, 0}, OffsetInfo(20));
  local->store_offset(group_, {topic_, 1}, OffsetInfo(20));
  auto client = KafkaClient::create(group_properties(cluster_.bootstrap(), group_, "range"));
  OffsetManager manager(group_, nullptr, local, OffsetCommitStrategy::manual());
  auto options = Member::options_for(topic_);
  options.checkpoint_position = [&](const TopicPartition& tp) -> std::optional<std::int64_t> {
    if (tp.partition == 0) return 30;
    return std::nullopt;
  };
  KafkaConsumer consumer(client, manager, options);
  std::map<int, std::int64_t> first_offset;
  ASSERT_TRUE(poll_until(
      consumer, [&](const ConsumedRecord& r) { first_offset.try_emplace(r.partition, r.offset); },
      [&] { return first_offset.size() == 3; }));
  EXPECT_EQ(first_offset[0], 30);  // checkpoint
  EXPECT_EQ(first_offset[1], 20);  // the manager's store
  EXPECT_EQ(first_offset[2], 10);  // the broker's committed offset
}

TEST_F(KafkaMock, OutOfRangePolicyMovesAPositionAboveTheLogEndToTheEnd) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 100);
  KafkaOffsetStore(standalone_client(), fast_retries()).store_offsets(group_, offsets({{0, 500}}));
  Member member(cluster_.bootstrap(), group_, topic_, "range");
  ASSERT_TRUE(poll_until(
      member.consumer, [](const ConsumedRecord&) {},
      [&] { return member.consumer.stats().out_of_range_resets >= 1; }));
  // The committed view is what the store holds until the next commit writes the new start.
  EXPECT_EQ(member.manager.get_offset(topic_, 0), 500);
  EXPECT_EQ(member.manager.get_all_pending().at(TopicPartition(topic_, 0)).offset, 100);
  EXPECT_EQ(member.consumer.stats().records_skipped, 0u);
  member.manager.commit();
  EXPECT_EQ(member.manager.get_offset(topic_, 0), 100);
  EXPECT_EQ(member.store->get_offset(group_, {topic_, 0})->offset, 100);
}

TEST_F(KafkaMock, OutOfRangePolicyForNoOffsetCanStartAtTheEndAndCountsTheSkip) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 2, 60);
  auto options = Member::options_for(topic_);
  options.out_of_range.no_offset = OutOfRangeAction::Latest;
  Member member(cluster_.bootstrap(), group_, options, "range");
  auto& consumer = member.consumer;
  auto& manager = member.manager;
  int handled = 0;
  ASSERT_TRUE(poll_until(
      consumer, [&](const ConsumedRecord&) { ++handled; },
      [&] { return consumer.assignment().size() == 4; }));
  poll_until(
      consumer, [&](const ConsumedRecord&) { ++handled; }, [] { return false; },
      std::chrono::milliseconds(300));
  EXPECT_EQ(handled, 0);
  EXPECT_EQ(consumer.stats().records_skipped, 60u);
  EXPECT_FALSE(manager.get_offset(topic_, 2));  // nothing committed yet: the start is pending
  EXPECT_EQ(manager.get_all_pending().at(TopicPartition(topic_, 2)).offset, 60);
  manager.commit();
  EXPECT_EQ(manager.get_offset(topic_, 2), 60);
}

// A rewind after an aborted transaction, before anything was ever committed, goes back to
// where the partition started, not to a fresh answer of the out-of-range policy: with
// no_offset = Latest that answer is past the aborted records, which would be lost.
TEST_F(KafkaMock, RewindBeforeTheFirstCommitReturnsToTheStartPosition) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 10);
  auto options = Member::options_for(topic_);
  options.out_of_range.no_offset = OutOfRangeAction::Latest;
  Member member(cluster_.bootstrap(), group_, options, "range");
  ASSERT_TRUE(poll_until(
      member.consumer, [](const ConsumedRecord&) {},
      [&] { return member.consumer.assignment().size() == 4; }));
  producer.produce(topic_, 0, 5, 10);
  std::vector<std::int64_t> handled;
  const auto record = [&](const ConsumedRecord& r) { handled.push_back(r.offset); };
  ASSERT_TRUE(poll_until(member.consumer, record, [&] { return handled.size() == 5; }));
  member.consumer.rewind_to_committed();  // the transaction that held records 10-14 aborted
  ASSERT_TRUE(poll_until(member.consumer, record, [&] { return handled.size() == 10; }));
  EXPECT_EQ(handled, (std::vector<std::int64_t>{10, 11, 12, 13, 14, 10, 11, 12, 13, 14}));
}

TEST_F(KafkaMock, OutOfRangePolicyErrorStopsThePoll) {
  Producer producer(cluster_.bootstrap());
  producer.produce(topic_, 0, 10);
  KafkaOffsetStore(standalone_client(), fast_retries()).store_offsets(group_, offsets({{0, 999}}));
  auto options = Member::options_for(topic_);
  options.out_of_range.above_log_end = OutOfRangeAction::Error;
  Member member(cluster_.bootstrap(), group_, options, "range");
  auto& consumer = member.consumer;
  bool thrown = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!thrown && std::chrono::steady_clock::now() < deadline) {
    try {
      consumer.poll([](const ConsumedRecord&) {});
    } catch (const StateError& error) {
      thrown = true;
      EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET);
      EXPECT_NE(std::string(error.what()).find("above the log end"), std::string::npos) << error.what();
    }
  }
  EXPECT_TRUE(thrown);
}

// An unclean leader election under a group: its member read up to offset 15 from a leader whose
// records 10-14 were then lost, and the new leader (the next leader epoch) holds other records at
// offsets 10-19. The stored offset 15 is inside the log again; only its leader epoch, which
// ends at 10, tells that the log diverged there. The offsets are in the manager's own store: the
// mock's OffsetFetch answers with the partition's current epoch, not the committed one (the
// broker's own answer is tested against a real broker, BrokerKill).
class TruncatedLog : public KafkaMock, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    KafkaMock::SetUp();
    Producer producer(cluster_.bootstrap());
    producer.produce(topic_, 0, 10);
    // The epoch the records 0-9 were written in: the mock's OffsetFetch tells the current one.
    KafkaOffsetStore broker(standalone_client(), fast_retries());
    broker.store_offsets(group_, offsets({{0, 10}}));
    const std::int32_t epoch = broker.get_offset(group_, {topic_, 0})->leader_epoch.value_or(-1);
    ASSERT_GE(epoch, 0);
    OffsetInfo read_before_the_election(15);
    read_before_the_election.leader_epoch = epoch;
    store_->store_offset(group_, {topic_, 0}, read_before_the_election);
    // The new leader: the partition's leader epoch moves on, and its log takes offsets 10-19.
    ASSERT_EQ(rd_kafka_mock_partition_set_leader(cluster_.get(), topic_.c_str(), 0, 2),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    producer.produce(topic_, 0, 10, 10);
  }

  std::shared_ptr<StateBackendOffsetStore> store_ =
      std::make_shared<StateBackendOffsetStore>(std::make_shared<state::MemoryStateBackend>());
};

TEST_P(TruncatedLog, IsFoundThroughTheStoredLeaderEpochAndResumesWhereTheLogDiverged) {
  auto client = KafkaClient::create(group_properties(cluster_.bootstrap(), group_, GetParam()));
  OffsetManager manager(group_, nullptr, store_, OffsetCommitStrategy::manual());
  KafkaConsumer consumer(client, manager, Member::options_for(topic_));
  std::vector<std::int64_t> offsets;
  ASSERT_TRUE(poll_until(
      consumer,
      [&](const ConsumedRecord& r) {
        if (r.partition == 0) offsets.push_back(r.offset);
      },
      [&] { return !offsets.empty() && offsets.back() == 19; }))
      << "handled " << offsets.size() << " records of partition 0";
  // Resuming at the stored 15 would skip the five records that took offsets 10-14.
  EXPECT_EQ(offsets, (std::vector<std::int64_t>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  const ConsumerStats stats = consumer.stats();
  EXPECT_EQ(stats.truncated_resets, 1u);
  EXPECT_EQ(stats.records_skipped, 0u);
}

TEST_P(TruncatedLog, UnderTheErrorPolicyStopsThePollBeforeAnyRecordOfThePartition) {
  auto client = KafkaClient::create(group_properties(cluster_.bootstrap(), group_, GetParam()));
  OffsetManager manager(group_, nullptr, store_, OffsetCommitStrategy::manual());
  auto options = Member::options_for(topic_);
  options.out_of_range.truncated = OutOfRangeAction::Error;
  KafkaConsumer consumer(client, manager, options);
  bool thrown = false;
  int handled = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!thrown && std::chrono::steady_clock::now() < deadline) {
    try {
      consumer.poll([&](const ConsumedRecord& r) { handled += r.partition == 0 ? 1 : 0; });
    } catch (const StateError& error) {
      thrown = true;
      EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET);
      EXPECT_NE(std::string(error.what()).find("was truncated below its position (the log diverged at 10"),
                std::string::npos)
          << error.what();
    }
  }
  EXPECT_TRUE(thrown);
  EXPECT_EQ(handled, 0);
}

INSTANTIATE_TEST_SUITE_P(EveryProtocol, TruncatedLog, ::testing::ValuesIn(testing::group_protocols()),
                         [](const auto& param_info) {
                           return testing::group_protocol_name(param_info.param);
                         });

// A user's OffsetStore that fails with its own exception type when read.
class ThrowingReadStore : public InMemoryOffsetStore {
 public:
  std::optional<OffsetInfo> get_offset(std::string_view, const TopicPartition&) override {
    throw std::runtime_error("disk unplugged");
  }
};

// README: exceptions from user-supplied stores come back as StateError. The consumer reads the
// manager's store when partitions are assigned; that call must be wrapped like the manager's.
TEST_F(KafkaMock, AUserStoreFailingDuringAssignmentSurfacesAsStateError) {
  auto client = KafkaClient::create(group_properties(cluster_.bootstrap(), group_, "range"));
  OffsetManager manager(group_, nullptr, std::make_shared<ThrowingReadStore>(),
                        OffsetCommitStrategy::manual());
  KafkaConsumer consumer(client, manager, Member::options_for(topic_));
  std::optional<StateError> raised;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!raised && std::chrono::steady_clock::now() < deadline) {
    try {
      consumer.poll([](const ConsumedRecord&) {});
    } catch (const StateError& error) {
      raised = error;
    }
  }
  ASSERT_TRUE(raised) << "the store's failure never surfaced";
  EXPECT_EQ(raised->kind(), ErrorKind::Storage);
  EXPECT_NE(std::string(raised->what()).find("disk unplugged"), std::string::npos) << raised->what();
  EXPECT_NE(std::string(raised->what()).find(topic_), std::string::npos) << raised->what();
}

}  // namespace
}  // namespace processor::kafka
