// librdkafka's own log lines reach processor's log sink, from every client the library creates,
// against librdkafka's mock cluster.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"
#include "processor/log.hpp"
#include "recording_log_sink.hpp"

namespace processor::kafka {
namespace {

using testing::GroupMember;
using testing::MockCluster;
using testing::unique_name;

using testing::LogRecord;
using testing::RecordingSink;

class LogSinkMock : public ::testing::Test {
 protected:
  void SetUp() override {
    topic_ = unique_name("logged");
    group_ = unique_name("group");
    client_id_ = unique_name("log-sink-test");
    cluster_.create_topic(topic_, 2);
    set_log_sink(recording_.sink());
  }
  void TearDown() override {
    set_log_sink({});
    set_log_level(LogLevel::Info);
  }

  MockCluster cluster_;
  RecordingSink recording_;
  std::string topic_;
  std::string group_;
  std::string client_id_;
};

TEST_F(LogSinkMock, ConsumerDebugLinesFromLibrdkafkaThreadsReachTheSinkAndNotStderr) {
  set_log_level(LogLevel::Debug);
  ::testing::internal::CaptureStderr();
  bool joined = false;
  {
    GroupMember member(cluster_.bootstrap(), group_, topic_, "cooperative-sticky",
                       OffsetCommitStrategy::manual(), {{"client.id", client_id_}, {"debug", "cgrp"}});
    joined = testing::poll_until(
        member.consumer, [](const ConsumedRecord&) {}, [&] { return !member.client->assignment().empty(); });
  }  // closing and destroying the client logs as well
  const std::string stderr_output = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(joined);

  const auto records = recording_.rdkafka_records_of(client_id_);
  ASSERT_FALSE(records.empty());
  bool debug_from_an_internal_thread = false;
  for (const auto& record : records) {
    // "[thrd:app]" is the application's thread; the group coordinator logs from "[thrd:main]".
    if (record.level == LogLevel::Debug && record.message.find("[thrd:main]") != std::string::npos) {
      debug_from_an_internal_thread = true;
    }
  }
  EXPECT_TRUE(debug_from_an_internal_thread) << records.front().message;
  EXPECT_EQ(stderr_output.find(client_id_), std::string::npos) << stderr_output;
}

TEST_F(LogSinkMock, AtTheDefaultLevelLibrdkafkaWarningsArriveAndDebugLinesAreDropped) {
  ::testing::internal::CaptureStderr();
  {
    // A producer property: librdkafka warns (CONFWARN) that a consumer ignores it.
    auto client = KafkaClient::create({{"bootstrap.servers", cluster_.bootstrap()},
                                       {"group.id", group_},
                                       {"client.id", client_id_},
                                       {"queue.buffering.max.ms", "5"},
                                       {"debug", "generic,broker"}});
    client->poll(std::chrono::milliseconds(200));
  }
  const std::string stderr_output = ::testing::internal::GetCapturedStderr();

  const auto records = recording_.rdkafka_records_of(client_id_);
  bool warned = false;
  for (const auto& record : records) {
    EXPECT_NE(record.level, LogLevel::Debug) << record.message;
    if (record.level == LogLevel::Warning && record.message.find("CONFWARN") != std::string::npos &&
        record.message.find("queue.buffering.max.ms") != std::string::npos) {
      warned = true;
    }
  }
  EXPECT_TRUE(warned);
  EXPECT_EQ(stderr_output.find(client_id_), std::string::npos) << stderr_output;
}

TEST_F(LogSinkMock, TransactionalProducerLogsReachTheSink) {
  ::testing::internal::CaptureStderr();
  {
    // A consumer property: librdkafka warns (CONFWARN) that a producer ignores it.
    TransactionalProducer producer({{"bootstrap.servers", cluster_.bootstrap()},
                                    {"transactional.id", unique_name("txn")},
                                    {"client.id", client_id_},
                                    {"fetch.wait.max.ms", "100"}},
                                   std::chrono::seconds(30));
  }
  const std::string stderr_output = ::testing::internal::GetCapturedStderr();

  bool warned = false;
  for (const auto& record : recording_.rdkafka_records_of(client_id_)) {
    if (record.level == LogLevel::Warning && record.message.find("fetch.wait.max.ms") != std::string::npos) {
      warned = true;
    }
  }
  EXPECT_TRUE(warned);
  EXPECT_EQ(stderr_output.find(client_id_), std::string::npos) << stderr_output;
}

}  // namespace
}  // namespace processor::kafka
