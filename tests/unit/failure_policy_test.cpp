// The failure policy's parts every consumer shares: its validation, the retry backoff, and how a
// failed record is described (the error poll() throws, and the class a dead letter names).

#include "processor/kafka/failure_policy.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "kafka/failure/record_failure.hpp"
#include "processor/error.hpp"

namespace processor::kafka {
namespace {

std::string refusal_of(const FailurePolicy& policy) {
  try {
    validate(policy, "Options::failure");
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    return error.what();
  }
  return "";
}

TEST(FailurePolicy, TheDefaultIsThreeTriesThenFailAndIsValid) {
  const FailurePolicy policy;
  EXPECT_EQ(policy.retry.max_attempts, 3);
  EXPECT_EQ(policy.action, FailureAction::Fail);
  EXPECT_EQ(refusal_of(policy), "");
}

TEST(FailurePolicy, RefusesEachBadValueNamingIt) {
  FailurePolicy policy;
  policy.retry.max_attempts = 0;
  EXPECT_EQ(refusal_of(policy), "Options::failure: retry.max_attempts must be at least 1, got 0");

  policy = {};
  policy.retry.initial_backoff = std::chrono::milliseconds(-5);
  EXPECT_NE(refusal_of(policy).find("-5 ms"), std::string::npos);

  policy = {};
  policy.retry.initial_backoff = std::chrono::milliseconds(500);
  policy.retry.max_backoff = std::chrono::milliseconds(100);
  EXPECT_NE(refusal_of(policy).find("retry.max_backoff (100 ms) is below retry.initial_backoff (500 ms)"),
            std::string::npos);

  policy = {};
  policy.action = FailureAction::DeadLetter;
  EXPECT_EQ(refusal_of(policy), "Options::failure: the dead-letter action needs a dead_letter_topic");
  policy.dead_letter_topic = "bad topic";
  EXPECT_NE(refusal_of(policy).find("bad topic"), std::string::npos);
  policy.dead_letter_topic = "orders-dlq";
  EXPECT_EQ(refusal_of(policy), "");

  policy.action = FailureAction::Skip;
  EXPECT_EQ(
      refusal_of(policy),
      "Options::failure: dead_letter_topic 'orders-dlq' is set but the action is skip, not dead-letter");
}

TEST(FailurePolicy, BackoffDoublesFromTheInitialWaitUpToTheLongest) {
  const RetryPolicy retry{10, std::chrono::milliseconds(100), std::chrono::milliseconds(1'000)};
  EXPECT_EQ(internal::backoff(retry, 1), std::chrono::milliseconds(100));
  EXPECT_EQ(internal::backoff(retry, 2), std::chrono::milliseconds(200));
  EXPECT_EQ(internal::backoff(retry, 4), std::chrono::milliseconds(800));
  EXPECT_EQ(internal::backoff(retry, 5), std::chrono::milliseconds(1'000));
  EXPECT_EQ(internal::backoff(retry, 9), std::chrono::milliseconds(1'000));
}

TEST(FailurePolicy, ARecordThatFailedIsNamedWithItsTriesAndItsCauseStaysReachable) {
  internal::RecordFailure failure;
  failure.topic = "orders";
  failure.partition = 3;
  failure.offset = 42;
  failure.attempts = 3;
  failure.error = std::make_exception_ptr(std::invalid_argument("cannot parse"));
  EXPECT_EQ(internal::class_of(failure.error), "std::invalid_argument");
  try {
    internal::throw_record_failed(failure);
  } catch (const StateError& error) {
    EXPECT_STREQ(error.what(), "record orders:3@42 failed 3 tries: cannot parse");
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_THROW(std::rethrow_if_nested(error), std::invalid_argument);
  }

  // A Kafka refusal keeps its kind and code.
  failure.attempts = 1;
  failure.error = std::make_exception_ptr(
      StateError(ErrorKind::Kafka, "producing to out: MSG_SIZE_TOO_LARGE", 10, false));
  EXPECT_EQ(internal::class_of(failure.error), "processor::StateError");
  try {
    internal::throw_record_failed(failure);
  } catch (const StateError& error) {
    EXPECT_STREQ(error.what(), "record orders:3@42 failed 1 try: producing to out: MSG_SIZE_TOO_LARGE");
    EXPECT_EQ(error.kind(), ErrorKind::Kafka);
    EXPECT_EQ(error.kafka_error_code(), 10);
  }
}

TEST(FailurePolicy, OnlyRefusalsThatRepeatForTheSameRecordAreTheRecordsFailure) {
  EXPECT_TRUE(internal::refused_for_good(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE));
  EXPECT_TRUE(internal::refused_for_good(RD_KAFKA_RESP_ERR_INVALID_RECORD));
  EXPECT_TRUE(internal::refused_for_good(RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE));
  EXPECT_FALSE(internal::refused_for_good(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION));
  EXPECT_FALSE(internal::refused_for_good(RD_KAFKA_RESP_ERR__QUEUE_FULL));
  EXPECT_FALSE(internal::refused_for_good(RD_KAFKA_RESP_ERR__FENCED));
}

}  // namespace
}  // namespace processor::kafka
