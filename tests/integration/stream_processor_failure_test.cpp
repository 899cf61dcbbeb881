// StreamProcessor's failure policy on the real broker: an input `a b X c d` on one partition where
// X cannot be processed (the function throws) or cannot be written (its output is over the
// producer's size limit, refused as it is sent; or over the output topic's, refused by the broker
// in the transaction's delivery reports), under each action (fail, skip, dead-letter) and group protocol. What a user sees is
// read back with Kafka's own tools: the group's committed offset (kafka-consumer-groups) and the
// dead-letter topic (kafka-console-consumer, read_committed).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dead_letter_reader.hpp"
#include "failing_input.hpp"
#include "kafka_test_support.hpp"
#include "processor/streams.hpp"
#include "topic_reader.hpp"

namespace processor::streams {
namespace {

using kafka::FailureAction;
using testing::read_topic;
using testing::unique_name;

enum class Cause { Throws, OversizedOutput, RefusedByBroker };

struct FailureCase {
  std::string assignment;  // testing::group_protocols()
  FailureAction action;
  Cause cause;
};

const char* cause_name(Cause cause) {
  switch (cause) {
    case Cause::Throws:
      return "Throws";
    case Cause::OversizedOutput:
      return "OversizedOutput";
    case Cause::RefusedByBroker:
      return "RefusedByBroker";
  }
  return "?";
}

void PrintTo(const FailureCase& c, std::ostream* out) {
  *out << c.assignment << "/" << kafka::to_string(c.action) << "/" << cause_name(c.cause);
}

std::string case_name(const ::testing::TestParamInfo<FailureCase>& info) {
  const FailureCase& c = info.param;
  return std::string(cause_name(c.cause)) + "_" + testing::action_name(c.action) + "_" +
         testing::group_protocol_name(c.assignment);
}

const std::vector<std::string>& kValues = testing::kFailingInput;
constexpr std::int64_t kBadOffset = testing::kFailingOffset;

class StreamProcessorFailure : public ::testing::TestWithParam<FailureCase> {
 protected:
  void SetUp() override {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty()) GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: no real broker";
    application_ = unique_name("failing");
    input_ = application_ + "-input";
    output_ = application_ + "-output";
    dead_letters_ = application_ + "-dlq";
    for (const auto& topic : {input_, dead_letters_}) testing::create_topic(bootstrap_, topic, 1);
    // The broker refuses a record of more than 20,000 bytes there; librdkafka's own limit is 1 MB.
    testing::create_topic(bootstrap_, output_, 1, {{"max.message.bytes", "20000"}});
    state_dir_ = std::filesystem::temp_directory_path() / unique_name("failing-state");
    testing::produce_failing_input(bootstrap_, input_);
  }
  void TearDown() override { std::filesystem::remove_all(state_dir_); }

  StreamProcessorOptions options() const {
    StreamProcessorOptions o;
    o.application_id = application_;
    o.input_topic = input_;
    o.stores = {"seen"};
    o.state_dir = state_dir_;
    o.properties = {{"bootstrap.servers", bootstrap_}, {"log_level", "3"}};
    if (GetParam().assignment == "consumer") {
      o.consumer_properties = {{"group.protocol", "consumer"}};
    } else {
      o.consumer_properties = {{"partition.assignment.strategy", GetParam().assignment},
                               {"session.timeout.ms", "6000"}};
    }
    o.poll_timeout = std::chrono::milliseconds(20);
    o.failure.retry = {3, std::chrono::milliseconds(20), std::chrono::milliseconds(100)};
    o.failure.action = GetParam().action;
    if (GetParam().action == FailureAction::DeadLetter) o.failure.dead_letter_topic = dead_letters_;
    return o;
  }

  // Writes the record's value to the store first (partial work that must not stay), then fails
  // for X as the case says, else sends the value on.
  RecordFunction function() {
    return [this](const kafka::ConsumedRecord& record, RecordContext& context) {
      const std::string value(record.value);
      if (++calls_[value] == 1 && value == "X") first_failure_ = std::chrono::steady_clock::now();
      context.store(std::size_t{0}).put(record.key, value);
      if (value != "X") {
        context.output().send(output_, record.key, value, 0);
      } else if (GetParam().cause == Cause::Throws) {
        throw std::runtime_error("cannot parse X");
      } else {
        const std::size_t size = GetParam().cause == Cause::OversizedOutput ? 2'000'000 : 100'000;
        context.output().send(output_, record.key, std::string(size, 'x'), 0);
      }
    };
  }

  std::vector<std::string> committed_output() const {
    std::vector<std::string> values;
    for (const auto& record : read_topic(bootstrap_, output_))
      values.push_back(record.value.value_or("<null>"));
    return values;
  }
  std::int64_t committed_offset() const {
    return testing::described_committed_offset(bootstrap_, application_, input_);
  }

  // Polls until the last input record's output is committed, failing on any exception.
  void drain(StreamProcessor& processor) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto next_look = std::chrono::steady_clock::now();
    for (;;) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "processed " << processor.stats().records;
      processor.poll();
      if (calls_["d"] == 0 || std::chrono::steady_clock::now() < next_look) continue;
      next_look = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
      if (!processor.commit()) continue;  // nothing open is left: a read_committed reader sees it all
      const auto output = committed_output();
      if (!output.empty() && output.back() == "d") return;
    }
  }

  std::string bootstrap_;
  std::string application_;
  std::string input_;
  std::string output_;
  std::string dead_letters_;
  std::filesystem::path state_dir_;
  std::map<std::string, int> calls_;
  std::chrono::steady_clock::time_point first_failure_;
};

TEST_P(StreamProcessorFailure, TheRecordMeetsItsActionAfterItsLastTryAndNothingElseIsLostOrRepeated) {
  StreamProcessor processor(options(), function());
  if (GetParam().action == FailureAction::Fail) {
    // Loud and cheap: poll() throws naming the record after its three tries, and keeps throwing
    // without processing anything again.
    const auto started = std::chrono::steady_clock::now();
    std::string message;
    std::optional<int> code;
    std::string nested;
    while (message.empty()) {
      ASSERT_LT(std::chrono::steady_clock::now(), started + std::chrono::seconds(60));
      try {
        processor.poll();
      } catch (const StateError& error) {
        message = error.what();
        code = error.kafka_error_code();
        try {
          std::rethrow_if_nested(error);
        } catch (const std::exception& cause) {
          nested = cause.what();
        }
      }
    }
    const auto took = std::chrono::steady_clock::now() - first_failure_;
    std::cout << "[ failure  ] poll() threw "
              << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
              << " ms after X's first try: " << message << "\n";
    EXPECT_NE(message.find(input_ + ":0@2"), std::string::npos) << message;
    EXPECT_NE(message.find("3 tries"), std::string::npos) << message;
    if (GetParam().cause == Cause::Throws) {
      EXPECT_EQ(nested, "cannot parse X");
    } else {
      EXPECT_EQ(code, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE) << message;
    }
    EXPECT_GE(calls_["X"], 3);
    const auto calls = calls_;
    for (int i = 0; i < 3; ++i) {
      try {
        processor.poll();
        ADD_FAILURE() << "poll() returned after the failure";
      } catch (const StateError& error) {
        EXPECT_EQ(std::string(error.what()), message);
      }
    }
    EXPECT_EQ(calls_, calls) << "records were processed again after the failure";
    EXPECT_EQ(processor.stats().failed_attempts, 3u);
    processor.close();
    EXPECT_EQ(committed_output(), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(committed_offset(), kBadOffset);
    return;
  }
  drain(processor);
  const StreamProcessorStats stats = processor.stats();
  processor.close();
  // A refusal in the delivery reports names no record: X's first call was in a transaction of
  // five, which then ran one record per transaction; its three tries came after (and a
  // transaction aborted for the producer's sequence gap after a refusal may call it once more).
  if (GetParam().cause == Cause::RefusedByBroker) {
    EXPECT_GE(calls_["X"], 4);
  } else {
    EXPECT_EQ(calls_["X"], 3);
  }
  EXPECT_EQ(stats.failed_attempts, 3u);
  const auto counted = stats.failed_records.find(kafka::TopicPartition(input_, 0));
  const kafka::FailedRecordCounts counts =
      counted == stats.failed_records.end() ? kafka::FailedRecordCounts{} : counted->second;
  EXPECT_EQ(counts.skipped, GetParam().action == FailureAction::Skip ? 1u : 0u);
  EXPECT_EQ(counts.dead_lettered, GetParam().action == FailureAction::DeadLetter ? 1u : 0u);
  // Every other record exactly once, in order; nothing of X's partial work.
  EXPECT_EQ(committed_output(), (std::vector<std::string>{"a", "b", "c", "d"}));
  std::vector<std::string> changelog_keys;
  for (const auto& record : read_topic(bootstrap_, changelog_topic(application_, "seen")))
    changelog_keys.push_back(record.key);
  std::sort(changelog_keys.begin(), changelog_keys.end());  // the changelog's order is the store's
  EXPECT_EQ(changelog_keys, (std::vector<std::string>{"k0", "k1", "k3", "k4"}));
  EXPECT_EQ(committed_offset(), static_cast<std::int64_t>(kValues.size()));

  const auto dead = read_topic(bootstrap_, dead_letters_);
  if (GetParam().action == FailureAction::Skip) {
    EXPECT_TRUE(dead.empty());
    return;
  }
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].key, "k2");
  EXPECT_EQ(dead[0].value, "X");
  // As a downstream team reads it: Kafka's console consumer, read_committed, with headers.
  testing::expect_one_dead_letter(
      testing::console_read_dead_letters(bootstrap_, dead_letters_),
      {input_, 0, kBadOffset, 3,
       GetParam().cause == Cause::Throws ? "std::runtime_error" : "processor::StateError",
       GetParam().cause == Cause::Throws            ? "cannot parse X"
       : GetParam().cause == Cause::OversizedOutput ? "producing to " + output_
                                                    : "delivering to " + output_,
       "k2", "X"});
}

std::vector<FailureCase> cases() {
  std::vector<FailureCase> all;
  for (const auto& assignment : testing::group_protocols()) {
    for (const FailureAction action : {FailureAction::Fail, FailureAction::Skip, FailureAction::DeadLetter}) {
      for (const Cause cause : {Cause::Throws, Cause::OversizedOutput, Cause::RefusedByBroker})
        all.push_back({assignment, action, cause});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(EveryActionAndProtocol, StreamProcessorFailure, ::testing::ValuesIn(cases()),
                         case_name);

}  // namespace
}  // namespace processor::streams
