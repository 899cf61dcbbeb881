// KafkaConsumer, ParallelConsumer and StreamProcessor on the secured broker (scripts/kafka/broker.sh
// start --secure, KAFKA_SECURE_DIR), with the librdkafka properties the library translates from
// an operator's Java client properties file: they consume and commit under each group protocol
// (StreamProcessor exactly-once: every input's result once in read_committed output); an
// authorization failure (the group, the input topic) and a refused password surface from poll()
// as StateError(Kafka) with Kafka's code and the resource's name, within the session time, with
// no offset committed.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "counting_function.hpp"
#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"
#include "processor/log.hpp"
#include "processor/streams.hpp"
#include "recording_log_sink.hpp"
#include "secure_broker.hpp"
#include "topic_reader.hpp"

namespace processor::kafka {
namespace {

using Clock = std::chrono::steady_clock;
using testing::SecureBroker;
using testing::unique_name;

constexpr int kPartitions = 3;
constexpr int kPerPartition = 20;

class SecureConsumers : public ::testing::TestWithParam<std::string> {
 public:
  void SetUp() override {
    broker_ = SecureBroker::from_env();
    if (!broker_)
      GTEST_SKIP() << "no secured broker (KAFKA_SECURE_DIR): scripts/kafka/broker.sh start --secure";
    admin_ = broker_->properties("admin", "scram-sha-256");
    broker_->grant_alice_everything();
    topic_ = unique_name("secure-input");
    testing::create_topic(bootstrap(), topic_, kPartitions, {}, admin_);
    testing::Producer producer(bootstrap(), admin_);
    for (int p = 0; p < kPartitions; ++p) producer.produce(topic_, p, kPerPartition);
  }

  const std::string& bootstrap() const { return admin_.at("bootstrap.servers"); }

  // alice's properties, as ConsumerSetup takes them (bootstrap.servers is a field of its own),
  // with the test's group protocol.
  KafkaProperties client(const std::string& user = "alice",
                         const std::string& mechanism = "scram-sha-256") const {
    KafkaProperties properties = broker_->properties(user, mechanism);
    for (const auto& [name, value] : testing::group_properties("", "", GetParam())) {
      if (name != "bootstrap.servers" && name != "group.id") properties[name] = value;
    }
    properties.erase("bootstrap.servers");
    return properties;
  }

  ConsumerSetup setup(const std::string& group, KafkaProperties properties) const {
    return ConsumerSetup{.bootstrap_servers = broker_->bootstrap("scram-sha-256"),
                         .group = group,
                         .topics = {topic_},
                         .strategy = OffsetCommitStrategy::manual(),
                         .properties = std::move(properties)};
  }

  // A per-key counting StreamProcessor of the input topic as `user`, over SASL_SSL.
  streams::StreamProcessorOptions streams_options(const std::string& application,
                                                  const std::filesystem::path& state_dir,
                                                  const std::string& user) const {
    streams::StreamProcessorOptions options;
    options.application_id = application;
    options.input_topic = topic_;
    options.stores = {"counts"};
    options.state_dir = state_dir;
    options.properties = client(user);
    options.properties["bootstrap.servers"] = broker_->bootstrap("scram-sha-256");
    options.poll_timeout = std::chrono::milliseconds(20);
    return options;
  }

  std::map<std::string, std::int64_t> committed(const std::string& group) const {
    std::map<std::string, std::int64_t> out;
    for (const auto& offset : GroupAdmin::create(admin_)->committed_offsets(group))
      out[offset.tp.to_key()] = offset.offset;
    return out;
  }

  std::map<std::string, std::int64_t> everything_committed() const {
    std::map<std::string, std::int64_t> out;
    for (int p = 0; p < kPartitions; ++p) out[topic_ + ":" + std::to_string(p)] = kPerPartition;
    return out;
  }

  // poll() until it throws; the error and how long it took. Fails the test after `limit`.
  std::pair<StateError, Clock::duration> first_error(const std::function<void()>& poll,
                                                     std::chrono::seconds limit = std::chrono::seconds(30)) {
    const auto started = Clock::now();
    while (Clock::now() - started < limit) {
      try {
        poll();
      } catch (const StateError& error) {
        return {error, Clock::now() - started};
      }
    }
    ADD_FAILURE() << "poll() did not throw within " << limit.count() << " s";
    return {StateError(ErrorKind::Timeout, "none"), Clock::now() - started};
  }

  std::optional<SecureBroker> broker_;
  KafkaProperties admin_;
  std::string topic_;
};

TEST_P(SecureConsumers, KafkaConsumerConsumesAndCommits) {
  const std::string group = unique_name("secure-kc");
  auto consumer = KafkaConsumer::connect(setup(group, client()));
  std::set<std::pair<int, std::int64_t>> seen;
  ASSERT_TRUE(testing::poll_until(
      *consumer,
      [&](const ConsumedRecord& record) {
        seen.insert({record.partition, record.offset});
      },
      [&] { return seen.size() == kPartitions * kPerPartition; }, std::chrono::seconds(60)))
      << seen.size() << " records";
  consumer->manager().commit();
  EXPECT_EQ(committed(group), everything_committed());
}

TEST_P(SecureConsumers, ParallelConsumerConsumesAndCommits) {
  const std::string group = unique_name("secure-pc");
  std::atomic<int> handled{0};
  auto consumer = ParallelConsumer::connect(setup(group, client()), ParallelConsumerOptions{},
                                            [&](const ConsumedRecord&) { ++handled; });
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (handled < kPartitions * kPerPartition && Clock::now() < deadline) consumer->poll();
  ASSERT_EQ(handled, kPartitions * kPerPartition);
  consumer->close();
  EXPECT_EQ(committed(group), everything_committed());
}

TEST_P(SecureConsumers, StreamProcessorKeepsExactlyOnce) {
  const std::string application = unique_name("secure-streams");
  const std::string output = application + "-output";
  testing::create_topic(bootstrap(), output, kPartitions, {}, admin_);
  const auto state_dir = std::filesystem::temp_directory_path() / unique_name("secure-state");
  const streams::StreamProcessorOptions options = streams_options(application, state_dir, "alice");
  {
    streams::StreamProcessor processor(options, testing::count_per_key(output));
    const auto deadline = Clock::now() + std::chrono::seconds(90);
    while (processor.stats().records < kPartitions * kPerPartition) {
      ASSERT_LT(Clock::now(), deadline) << processor.stats().records << " records processed";
      processor.poll();
    }
    ASSERT_TRUE(processor.commit());
  }
  std::filesystem::remove_all(state_dir);
  // Every input record's result once, and nothing else.
  std::multiset<std::string> results;
  for (const auto& record :
       testing::read_topic(bootstrap(), output, /*read_committed=*/true, std::chrono::seconds(60), admin_)) {
    ASSERT_TRUE(record.value.has_value());
    const std::string value = *record.value;
    results.insert(value.substr(0, value.rfind(':')));  // "<input partition>:<input offset>"
  }
  ASSERT_EQ(results.size(), static_cast<std::size_t>(kPartitions * kPerPartition));
  for (int p = 0; p < kPartitions; ++p) {
    for (int offset = 0; offset < kPerPartition; ++offset) {
      EXPECT_EQ(results.count(std::to_string(p) + ":" + std::to_string(offset)), 1u) << p << "@" << offset;
    }
  }
  EXPECT_EQ(committed(application), everything_committed());
}

// bob's KafkaConsumer of `group`: its first poll() error is StateError(Kafka) with `code`, naming
// `resource`, within the session time, with nothing handled or committed.
void expect_refused_from_poll(SecureConsumers& test, const std::string& group, rd_kafka_resp_err_t code,
                              const std::string& resource);

// bob may read the topic but not use the group.
TEST_P(SecureConsumers, AGroupWithoutAnAclSurfacesFromPollNamingTheGroup) {
  const std::string group = unique_name("secure-no-group-acl");
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, topic_, RD_KAFKA_ACL_OPERATION_READ);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, topic_, RD_KAFKA_ACL_OPERATION_DESCRIBE);
  expect_refused_from_poll(*this, group, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, group);
}

// bob may use his group but not read the topic.
TEST_P(SecureConsumers, AnInputTopicWithoutAnAclSurfacesFromPollNamingTheTopic) {
  const std::string group = unique_name("secure-no-topic-acl");
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_GROUP, group, RD_KAFKA_ACL_OPERATION_ALL);
  expect_refused_from_poll(*this, group, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, topic_);
}

void expect_refused_from_poll(SecureConsumers& test, const std::string& group, rd_kafka_resp_err_t code,
                              const std::string& resource) {
  auto consumer = KafkaConsumer::connect(test.setup(group, test.client("bob")));
  int handled = 0;
  const auto [error, took] =
      test.first_error([&] { consumer->poll([&](const ConsumedRecord&) { ++handled; }); });
  EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
  EXPECT_EQ(error.kafka_error_code(), code) << error.what();
  EXPECT_NE(std::string(error.what()).find(resource), std::string::npos) << error.what();
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_EQ(handled, 0);
  EXPECT_TRUE(test.committed(group).empty());
}

TEST_P(SecureConsumers, AWrongPasswordSurfacesFromPoll) {
  const std::string group = unique_name("secure-wrong-password");
  KafkaProperties properties = client();
  properties["sasl.password"] = "not-the-password";
  std::unique_ptr<KafkaConsumer> consumer;
  const auto [error, took] = first_error([&] {
    if (!consumer) consumer = KafkaConsumer::connect(setup(group, properties));
    consumer->poll([](const ConsumedRecord&) {});
  });
  EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
  EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR__AUTHENTICATION) << error.what();
  EXPECT_NE(std::string(error.what()).find("invalid credentials"), std::string::npos) << error.what();
  EXPECT_EQ(std::string(error.what()).find("not-the-password"), std::string::npos) << error.what();
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_TRUE(committed(group).empty());
}

// bob may consume the input in his group, but not write as a transactional producer: the
// processor refuses to start, naming the missing permission, before it touches its state
// directory.
TEST_P(SecureConsumers, StreamProcessorWithoutATransactionalIdAclRefusesToStart) {
  const std::string application = unique_name("secure-no-txn-acl");
  const std::string output = application + "-output";
  testing::create_topic(bootstrap(), output, kPartitions, {}, admin_);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_GROUP, application, RD_KAFKA_ACL_OPERATION_ALL);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, topic_, RD_KAFKA_ACL_OPERATION_ALL);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, output, RD_KAFKA_ACL_OPERATION_ALL);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, application, RD_KAFKA_ACL_OPERATION_ALL,
                 RD_KAFKA_RESOURCE_PATTERN_PREFIXED);
  const auto state_dir = std::filesystem::temp_directory_path() / unique_name("secure-state");
  const streams::StreamProcessorOptions options = streams_options(application, state_dir, "bob");
  std::unique_ptr<streams::StreamProcessor> processor;
  const auto [error, took] = first_error([&] {
    if (!processor)
      processor = std::make_unique<streams::StreamProcessor>(options, testing::count_per_key(output));
    processor->poll();
  });
  EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
  EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
      << error.what();
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_FALSE(std::filesystem::exists(state_dir)) << "the state directory was touched";
  EXPECT_TRUE(committed(application).empty());
  std::filesystem::remove_all(state_dir);
}

// bob may do all the processor needs but write its output topic: the refused records surface
// from poll() naming the topic and Kafka's code, and nothing is committed.
TEST_P(SecureConsumers, StreamProcessorWithoutWriteOnItsOutputSurfacesFromPoll) {
  const std::string application = unique_name("secure-no-output-acl");
  const std::string output = application + "-output";
  const std::string forbidden = unique_name("secure-forbidden-output");
  testing::create_topic(bootstrap(), forbidden, kPartitions, {}, admin_);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_GROUP, application, RD_KAFKA_ACL_OPERATION_ALL);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, topic_, RD_KAFKA_ACL_OPERATION_ALL);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, application, RD_KAFKA_ACL_OPERATION_ALL,
                 RD_KAFKA_RESOURCE_PATTERN_PREFIXED);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, forbidden, RD_KAFKA_ACL_OPERATION_DESCRIBE);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TRANSACTIONAL_ID, application, RD_KAFKA_ACL_OPERATION_ALL,
                 RD_KAFKA_RESOURCE_PATTERN_PREFIXED);
  const auto state_dir = std::filesystem::temp_directory_path() / unique_name("secure-state");
  const streams::StreamProcessorOptions options = streams_options(application, state_dir, "bob");
  streams::StreamProcessor processor(options, testing::count_per_key(forbidden));
  const auto [error, took] = first_error([&] {
    processor.poll();
    processor.commit();
  });
  EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
  EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) << error.what();
  EXPECT_NE(std::string(error.what()).find(forbidden), std::string::npos) << error.what();
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_TRUE(committed(application).empty());
  std::filesystem::remove_all(state_dir);
}

// Every log line of the library, librdkafka's with debug=all included, while a consumer connects,
// consumes and commits, and while one is refused its password: none holds a password of the run.
TEST_P(SecureConsumers, NoSecretInTheLibrarysLogWithDebuggingOn) {
  testing::RecordingSink sink;
  set_log_sink(sink.sink());
  set_log_level(LogLevel::Debug);
  {
    KafkaProperties properties = client();
    properties["debug"] = "all";
    auto consumer = KafkaConsumer::connect(setup(unique_name("secure-debug"), properties));
    int handled = 0;
    testing::poll_until(
        *consumer, [&](const ConsumedRecord&) { ++handled; },
        [&] { return handled == kPartitions * kPerPartition; }, std::chrono::seconds(60));
    consumer->manager().commit();
    properties["sasl.password"] = "Wr0ng-Passw0rd-42";
    auto refused = KafkaConsumer::connect(setup(unique_name("secure-debug-refused"), properties));
    first_error([&] { refused->poll([](const ConsumedRecord&) {}); });
  }
  set_log_level(LogLevel::Info);
  set_log_sink(nullptr);
  std::vector<std::string> secrets = broker_->secrets();
  secrets.push_back("Wr0ng-Passw0rd-42");
  const auto records = sink.records();
  ASSERT_GT(records.size(), 500u) << "librdkafka's debugging logged little: the check would prove nothing";
  for (const auto& record : records) {
    for (const auto& secret : secrets) {
      ASSERT_EQ(record.message.find(secret), std::string::npos)
          << "a password was logged: " << record.message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryProtocol, SecureConsumers, ::testing::ValuesIn(testing::group_protocols()),
                         [](const auto& param_info) {
                           return testing::group_protocol_name(param_info.param);
                         });

}  // namespace
}  // namespace processor::kafka
