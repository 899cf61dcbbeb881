// The failure policy of KafkaConsumer and ParallelConsumer on the real broker: an input
// `a b X c d` on one partition whose handler throws for X, under each action (fail, skip,
// dead-letter) and group protocol. The
// committed offset is read back with kafka-consumer-groups, the dead letter with
// kafka-console-consumer.

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "dead_letter_reader.hpp"
#include "failing_input.hpp"
#include "kafka_test_support.hpp"
#include "parallel_consumer_support.hpp"
#include "processor/kafka.hpp"

namespace processor::kafka {
namespace {

using testing::unique_name;

struct FailureCase {
  std::string assignment;  // testing::group_protocols()
  FailureAction action;
};

void PrintTo(const FailureCase& c, std::ostream* out) { *out << c.assignment << "/" << to_string(c.action); }

const std::vector<std::string>& kValues = testing::kFailingInput;
constexpr std::int64_t kBadOffset = testing::kFailingOffset;

class KafkaConsumerFailure : public ::testing::TestWithParam<FailureCase> {
 protected:
  void SetUp() override {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty()) GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: no real broker";
    group_ = unique_name("consumer-failure");
    topic_ = group_ + "-input";
    dead_letters_ = group_ + "-dlq";
    testing::create_topic(bootstrap_, topic_, 1);
    testing::create_topic(bootstrap_, dead_letters_, 1);
    testing::produce_failing_input(bootstrap_, topic_);
  }

  KafkaConsumerOptions options() const {
    KafkaConsumerOptions o = testing::GroupMember::options_for(topic_);
    o.failure.retry = {3, std::chrono::milliseconds(20), std::chrono::milliseconds(100)};
    o.failure.action = GetParam().action;
    if (GetParam().action == FailureAction::DeadLetter) o.failure.dead_letter_topic = dead_letters_;
    return o;
  }

  std::int64_t committed_offset() const {
    return testing::described_committed_offset(bootstrap_, group_, topic_);
  }

  std::string bootstrap_, group_, topic_, dead_letters_;
};

TEST_P(KafkaConsumerFailure, TheRecordMeetsItsActionAfterItsLastTryAndNoOtherIsLost) {
  testing::GroupMember member(bootstrap_, group_, options(), GetParam().assignment);
  std::map<std::string, int> calls;
  std::vector<std::string> handled;
  auto handler = [&](const ConsumedRecord& record) {
    const std::string value(record.value);
    ++calls[value];
    if (value == "X") throw std::runtime_error("cannot parse X");
    handled.push_back(value);
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  if (GetParam().action == FailureAction::Fail) {
    std::string message;
    std::string nested;
    while (message.empty()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
      try {
        member.consumer.poll(handler);
      } catch (const StateError& error) {
        message = error.what();
        try {
          std::rethrow_if_nested(error);
        } catch (const std::exception& cause) {
          nested = cause.what();
        }
      }
    }
    EXPECT_EQ(message, "record " + topic_ + ":0@2 failed 3 tries: cannot parse X");
    EXPECT_EQ(nested, "cannot parse X");
    EXPECT_EQ(calls["X"], 3);
    for (int i = 0; i < 3; ++i) {
      try {
        member.consumer.poll(handler);
        ADD_FAILURE() << "poll() returned after the failure";
      } catch (const StateError& error) {
        EXPECT_EQ(std::string(error.what()), message);
      }
    }
    EXPECT_EQ(calls["X"], 3) << "the record was handled again after the failure";
    EXPECT_EQ(handled, (std::vector<std::string>{"a", "b"}));
    member.manager.commit();
    EXPECT_EQ(committed_offset(), kBadOffset);
    EXPECT_EQ(member.consumer.stats().failed_attempts, 3u);
    return;
  }
  while (handled.empty() || handled.back() != "d") {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    member.consumer.poll(handler);
  }
  member.manager.commit();
  EXPECT_EQ(handled, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(calls["X"], 3);
  const ConsumerStats stats = member.consumer.stats();
  EXPECT_EQ(stats.failed_attempts, 3u);
  const auto counted = stats.failed_records.find(TopicPartition(topic_, 0));
  ASSERT_NE(counted, stats.failed_records.end());
  EXPECT_EQ(counted->second.skipped, GetParam().action == FailureAction::Skip ? 1u : 0u);
  EXPECT_EQ(counted->second.dead_lettered, GetParam().action == FailureAction::DeadLetter ? 1u : 0u);
  EXPECT_EQ(committed_offset(), static_cast<std::int64_t>(kValues.size()));
  if (GetParam().action == FailureAction::DeadLetter) {
    testing::expect_one_dead_letter(
        testing::console_read_dead_letters(bootstrap_, dead_letters_),
        {topic_, 0, kBadOffset, 3, "std::runtime_error", "cannot parse X", "k2", "X"});
  }
}

// ParallelConsumer applies the same policy on its workers. Under Fail it does not stop: poll()
// throws naming the record each time its tries run out, the record is tried again every
// max_backoff, and the records of other keys go on, never committed past it.
TEST_P(KafkaConsumerFailure, AParallelConsumersRecordMeetsItsActionAndNoOtherIsLost) {
  ParallelConsumerOptions parallel = testing::parallel_options(topic_);
  parallel.consumer.failure = options().failure;
  parallel.consumer.failure.retry.max_backoff = std::chrono::milliseconds(100);
  std::mutex mutex;
  std::map<std::string, int> calls;
  std::set<std::string> handled;
  testing::ParallelMember member(
      bootstrap_, group_, parallel,
      [&](const ConsumedRecord& record) {
        const std::string value(record.value);
        std::lock_guard lock(mutex);
        ++calls[value];
        if (value == "X") throw std::runtime_error("cannot parse X");
        handled.insert(value);
      },
      {}, GetParam().assignment);
  auto count = [&](const std::string& value) {
    std::lock_guard lock(mutex);
    return calls[value];
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  if (GetParam().action == FailureAction::Fail) {
    std::string message;
    while (message.empty() || count("X") < 6) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
      try {
        member.consumer.poll();
      } catch (const StateError& error) {
        message = error.what();
      }
    }
    EXPECT_EQ(message, "record " + topic_ + ":0@2 failed 3 tries: cannot parse X");
    member.manager.commit();
    EXPECT_EQ(committed_offset(), kBadOffset);
    std::lock_guard lock(mutex);
    EXPECT_EQ(handled, (std::set<std::string>{"a", "b", "c", "d"}));
    return;
  }
  for (;;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    member.consumer.poll();
    const auto acks = testing::pending_acks(member.manager, topic_, 0);
    if (acks && acks->committable == static_cast<std::int64_t>(kValues.size())) break;
  }
  member.manager.commit();
  EXPECT_EQ(count("X"), 3);
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(handled, (std::set<std::string>{"a", "b", "c", "d"}));
    for (const auto& value : {"a", "b", "c", "d"}) EXPECT_EQ(calls[value], 1) << value;
  }
  const ParallelConsumerStats stats = member.consumer.stats();
  EXPECT_EQ(stats.failed_attempts, 3u);
  const auto counted = stats.consumer.failed_records.find(TopicPartition(topic_, 0));
  ASSERT_NE(counted, stats.consumer.failed_records.end());
  EXPECT_EQ(counted->second.skipped, GetParam().action == FailureAction::Skip ? 1u : 0u);
  EXPECT_EQ(counted->second.dead_lettered, GetParam().action == FailureAction::DeadLetter ? 1u : 0u);
  EXPECT_EQ(committed_offset(), static_cast<std::int64_t>(kValues.size()));
  if (GetParam().action == FailureAction::DeadLetter) {
    // The record's own headers are not kept past the fetch: no origin:test here.
    const std::string printed = testing::console_read_dead_letters(bootstrap_, dead_letters_);
    EXPECT_EQ(printed.find("origin:test"), std::string::npos) << printed;
    for (const std::string& part :
         {std::string(kDeadLetterTopic) + ":" + topic_, std::string(kDeadLetterOffset) + ":2",
          std::string(kDeadLetterMessage) + ":cannot parse X", std::string("\tk2\tX")}) {
      EXPECT_NE(printed.find(part), std::string::npos) << "missing '" << part << "' in:\n" << printed;
    }
  }
}

std::vector<FailureCase> cases() {
  std::vector<FailureCase> all;
  for (const auto& assignment : testing::group_protocols()) {
    for (const FailureAction action : {FailureAction::Fail, FailureAction::Skip, FailureAction::DeadLetter})
      all.push_back({assignment, action});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(EveryActionAndProtocol, KafkaConsumerFailure, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<FailureCase>& param_info) {
                           return std::string(testing::action_name(param_info.param.action)) + "_" +
                                  testing::group_protocol_name(param_info.param.assignment);
                         });

}  // namespace
}  // namespace processor::kafka
