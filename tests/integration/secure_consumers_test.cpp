// KafkaConsumer, ParallelConsumer and StreamProcessor on the secured broker (scripts/kafka/broker.sh
// start --secure, KAFKA_SECURE_DIR), with the librdkafka properties the library translates from
// an operator's Java client properties file: they consume and commit under each group protocol
// (StreamProcessor exactly-once: every input's result once in read_committed output). An
// authorization failure (the group or the input topic for both consumers; the output topic and
// IdempotentWrite for StreamProcessor) and a refused password surface from poll() as
// StateError(Kafka) with Kafka's code and the resource's name, within the session time, with no
// offset committed; StreamProcessor refuses to start, before it touches its state directory,
// without its group, its input topic, its transactional id or its changelog. Every test's log lines (and its errors'
// messages) hold no password of the run.

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
    set_log_sink(sink_.sink());
    broker_->grant_alice_everything();
    topic_ = unique_name("secure-input");
    testing::create_topic(bootstrap(), topic_, kPartitions, {}, admin_);
    testing::Producer producer(bootstrap(), admin_);
    for (int p = 0; p < kPartitions; ++p) producer.produce(topic_, p, kPerPartition);
  }

  // No line the library logged, and no error message a test saw, holds a password of the run.
  void TearDown() override {
    set_log_sink(nullptr);
    if (!broker_) return;
    std::vector<std::string> texts = errors_seen_;
    for (const auto& record : sink_.records()) texts.push_back(record.message);
    std::vector<std::string> secrets = broker_->secrets();
    secrets.push_back(kWrongPassword);
    for (const auto& text : texts) {
      for (const auto& secret : secrets) {
        ASSERT_EQ(text.find(secret), std::string::npos) << "a password was logged: " << text;
      }
    }
  }

  static constexpr const char* kWrongPassword = "Wr0ng-Passw0rd-42";

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

  // poll() until it throws; the error. Fails the test after `limit` (a refusal retried until some
  // time-out). The callers assert Kafka's own code, which a time-out would have replaced; no tighter
  // wall-clock bound, as sanitizer builds under a loaded CI run several times slower.
  StateError first_error(const std::function<void()>& poll,
                         std::chrono::seconds limit = std::chrono::seconds(30)) {
    const auto started = Clock::now();
    while (Clock::now() - started < limit) {
      try {
        poll();
      } catch (const StateError& error) {
        errors_seen_.push_back(error.what());
        return error;
      }
    }
    ADD_FAILURE() << "poll() did not throw within " << limit.count() << " s";
    return StateError(ErrorKind::Timeout, "none");
  }

  std::optional<SecureBroker> broker_;
  KafkaProperties admin_;
  std::string topic_;
  testing::RecordingSink sink_;
  std::vector<std::string> errors_seen_;
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

// bob's KafkaConsumer of `group`, then his ParallelConsumer: the first poll() error of each is
// StateError(Kafka) with `code`, naming `resource`, within the session time, with nothing handled
// or committed.
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
  std::atomic<int> handled{0};
  const auto count = [&](const ConsumedRecord&) { ++handled; };
  const auto expect_refused = [&](const std::function<void()>& poll) {
    const StateError error = test.first_error(poll);
    EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
    EXPECT_EQ(error.kafka_error_code(), code) << error.what();
    EXPECT_NE(std::string(error.what()).find(resource), std::string::npos) << error.what();
    EXPECT_EQ(handled, 0);
    EXPECT_TRUE(test.committed(group).empty());
  };
  {
    SCOPED_TRACE("KafkaConsumer");
    auto consumer = KafkaConsumer::connect(test.setup(group, test.client("bob")));
    expect_refused([&] { consumer->poll(count); });
  }
  {
    SCOPED_TRACE("ParallelConsumer");
    auto consumer =
        ParallelConsumer::connect(test.setup(group, test.client("bob")), ParallelConsumerOptions{}, count);
    expect_refused([&] { consumer->poll(); });
  }
}

TEST_P(SecureConsumers, AWrongPasswordSurfacesFromPoll) {
  const std::string group = unique_name("secure-wrong-password");
  KafkaProperties properties = client();
  properties["sasl.password"] = kWrongPassword;
  std::unique_ptr<KafkaConsumer> consumer;
  const StateError error = first_error([&] {
    if (!consumer) consumer = KafkaConsumer::connect(setup(group, properties));
    consumer->poll([](const ConsumedRecord&) {});
  });
  EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
  EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR__AUTHENTICATION) << error.what();
  EXPECT_NE(std::string(error.what()).find("invalid credentials"), std::string::npos) << error.what();
  EXPECT_TRUE(committed(group).empty());
}

// What bob's per-key counting StreamProcessor of `application` needs, as ACLs: its group, its
// input, its output (`<application>-output`), its transactional ids and its changelog, but for
// the ones named in `leave_out`.
void grant_bob_a_processor(SecureConsumers& test, const std::string& application,
                           const std::set<std::string>& leave_out);

// bob's processor of `application`, with the grants the test gave him, refuses to start: Kafka's
// `code` naming `missing`, within the session time, before it touches its state directory, with
// nothing committed.
void expect_refuses_to_start(SecureConsumers& test, const std::string& application, rd_kafka_resp_err_t code,
                             const std::string& missing);

TEST_P(SecureConsumers, StreamProcessorWithoutATransactionalIdAclRefusesToStart) {
  const std::string application = unique_name("secure-no-txn-acl");
  grant_bob_a_processor(*this, application, {"transactional id"});
  expect_refuses_to_start(*this, application, RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                          application);
}

TEST_P(SecureConsumers, StreamProcessorWithoutAGroupAclRefusesToStart) {
  const std::string application = unique_name("secure-no-group-acl");
  grant_bob_a_processor(*this, application, {"group"});
  expect_refuses_to_start(*this, application, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED,
                          "group '" + application + "'");
}

TEST_P(SecureConsumers, StreamProcessorWithoutAnInputTopicAclRefusesToStart) {
  const std::string application = unique_name("secure-no-input-acl");
  grant_bob_a_processor(*this, application, {"input"});
  expect_refuses_to_start(*this, application, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                          "topic '" + topic_ + "'");
}

// A changelog that does not exist yet and that bob may neither describe nor create.
TEST_P(SecureConsumers, StreamProcessorWithoutAChangelogAclRefusesToStart) {
  const std::string application = unique_name("secure-no-changelog-acl");
  grant_bob_a_processor(*this, application, {"changelog"});
  expect_refuses_to_start(*this, application, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                          "topic '" + application + "-counts-changelog'");
}

// A changelog that exists and that bob may read (to restore) but not write.
TEST_P(SecureConsumers, StreamProcessorWithoutWriteOnItsChangelogRefusesToStart) {
  const std::string application = unique_name("secure-read-only-changelog");
  const std::string changelog = application + "-counts-changelog";
  testing::create_topic(bootstrap(), changelog, kPartitions, {{"cleanup.policy", "compact"}}, admin_);
  grant_bob_a_processor(*this, application, {"changelog"});
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, changelog, RD_KAFKA_ACL_OPERATION_READ);
  broker_->grant("User:bob", RD_KAFKA_RESOURCE_TOPIC, changelog, RD_KAFKA_ACL_OPERATION_DESCRIBE);
  expect_refuses_to_start(*this, application, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                          "WRITE on topic '" + changelog + "'");
}

void grant_bob_a_processor(SecureConsumers& test, const std::string& application,
                           const std::set<std::string>& leave_out) {
  const auto grant = [&](const std::string& what, rd_kafka_ResourceType_t type, const std::string& name,
                         rd_kafka_ResourcePatternType_t pattern = RD_KAFKA_RESOURCE_PATTERN_LITERAL) {
    if (!leave_out.contains(what))
      test.broker_->grant("User:bob", type, name, RD_KAFKA_ACL_OPERATION_ALL, pattern);
  };
  grant("group", RD_KAFKA_RESOURCE_GROUP, application);
  grant("input", RD_KAFKA_RESOURCE_TOPIC, test.topic_);
  grant("output", RD_KAFKA_RESOURCE_TOPIC, application + "-output");
  grant("changelog", RD_KAFKA_RESOURCE_TOPIC, application + "-counts-changelog");
  grant("transactional id", RD_KAFKA_RESOURCE_TRANSACTIONAL_ID, application,
        RD_KAFKA_RESOURCE_PATTERN_PREFIXED);
}

void expect_refuses_to_start(SecureConsumers& test, const std::string& application, rd_kafka_resp_err_t code,
                             const std::string& missing) {
  const std::string output = application + "-output";
  testing::create_topic(test.bootstrap(), output, kPartitions, {}, test.admin_);
  const auto state_dir = std::filesystem::temp_directory_path() / unique_name("secure-state");
  const streams::StreamProcessorOptions options = test.streams_options(application, state_dir, "bob");
  std::unique_ptr<streams::StreamProcessor> processor;
  const StateError error = test.first_error([&] {
    if (!processor)
      processor = std::make_unique<streams::StreamProcessor>(options, testing::count_per_key(output));
    processor->poll();
  });
  EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
  EXPECT_EQ(error.kafka_error_code(), code) << error.what();
  EXPECT_NE(std::string(error.what()).find(missing), std::string::npos) << error.what();
  EXPECT_FALSE(std::filesystem::exists(state_dir)) << "the state directory was touched";
  EXPECT_TRUE(test.committed(application).empty());
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
  const StateError error = first_error([&] {
    processor.poll();
    processor.commit();
  });
  EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
  EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) << error.what();
  EXPECT_NE(std::string(error.what()).find(forbidden), std::string::npos) << error.what();
  EXPECT_TRUE(committed(application).empty());
  std::filesystem::remove_all(state_dir);
}

// An at-least-once processor (an idempotent producer, no store) whose principal may write no topic
// at all: since Kafka 3.0 (KIP-679) that is the only principal the cluster refuses IdempotentWrite
// (it is implied by Write on any topic). The refusal surfaces from poll(), and nothing is committed.
TEST_P(SecureConsumers, AtLeastOnceStreamProcessorWithoutIdempotentWriteSurfacesFromPoll) {
  const std::string application = unique_name("secure-no-idempotent-write");
  const std::string output = application + "-output";
  testing::create_topic(bootstrap(), output, kPartitions, {}, admin_);
  const std::string user = unique_name("carol");
  const KafkaProperties carol = broker_->new_user(user);
  broker_->grant("User:" + user, RD_KAFKA_RESOURCE_GROUP, application, RD_KAFKA_ACL_OPERATION_ALL);
  broker_->grant("User:" + user, RD_KAFKA_RESOURCE_TOPIC, topic_, RD_KAFKA_ACL_OPERATION_READ);
  broker_->grant("User:" + user, RD_KAFKA_RESOURCE_TOPIC, topic_, RD_KAFKA_ACL_OPERATION_DESCRIBE);
  broker_->grant("User:" + user, RD_KAFKA_RESOURCE_TOPIC, output, RD_KAFKA_ACL_OPERATION_DESCRIBE);
  const auto state_dir = std::filesystem::temp_directory_path() / unique_name("secure-state");
  streams::StreamProcessorOptions options = streams_options(application, state_dir, "bob");
  options.properties["sasl.username"] = carol.at("sasl.username");
  options.properties["sasl.password"] = carol.at("sasl.password");
  options.guarantee = streams::ProcessingGuarantee::AtLeastOnce;
  options.stores = {};
  const auto forward = [&](const ConsumedRecord& record, streams::RecordContext& context) {
    context.output().send(output, record.key, record.value, record.partition);
  };
  std::unique_ptr<streams::StreamProcessor> processor;
  const StateError error = first_error([&] {
    if (!processor) processor = std::make_unique<streams::StreamProcessor>(options, forward);
    processor->poll();
    processor->commit();
  });
  EXPECT_EQ(error.kind(), ErrorKind::Kafka) << error.what();
  EXPECT_EQ(error.kafka_error_code(), RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED) << error.what();
  EXPECT_TRUE(committed(application).empty());
  std::filesystem::remove_all(state_dir);
}

// Every log line of the library, librdkafka's with debug=all included, while a consumer connects,
// consumes and commits, and while one is refused its password: none holds a password of the run
// (TearDown checks them).
TEST_P(SecureConsumers, NoSecretInTheLibrarysLogWithDebuggingOn) {
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
    properties["sasl.password"] = kWrongPassword;
    auto refused = KafkaConsumer::connect(setup(unique_name("secure-debug-refused"), properties));
    first_error([&] { refused->poll([](const ConsumedRecord&) {}); });
  }
  set_log_level(LogLevel::Info);
  EXPECT_GT(sink_.records().size(), 500u)
      << "librdkafka's debugging logged little: the check would prove nothing";
}

INSTANTIATE_TEST_SUITE_P(EveryProtocol, SecureConsumers, ::testing::ValuesIn(testing::group_protocols()),
                         [](const auto& param_info) {
                           return testing::group_protocol_name(param_info.param);
                         });

}  // namespace
}  // namespace processor::kafka
