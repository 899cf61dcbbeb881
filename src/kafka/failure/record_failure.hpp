#pragma once
// A record that cannot be processed or written: the one place where the consumers' failure
// policy (processor/kafka/failure_policy.hpp) is told apart, described and dead-lettered. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "processor/kafka/failure_policy.hpp"

namespace processor::kafka::internal {

// The wait before try number attempts + 1: initial_backoff, doubled per try, at most max_backoff.
std::chrono::milliseconds backoff(const processor::kafka::RetryPolicy& retry, int attempts);

// The exception's message; "an exception not derived from std::exception" for others.
std::string what_of(const std::exception_ptr& error);
// The exception's class, as C++ names it: "std::runtime_error", "processor::StateError".
std::string class_of(const std::exception_ptr& error);

// Whether Kafka refused a record for good: written again, it is refused again (too large, not
// a valid record). Such a refusal is the record's failure, handed to the failure policy.
bool refused_for_good(int kafka_error_code) noexcept;

// Where a failed record came from, and why it failed.
struct RecordFailure {
  std::string_view topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = -1;
  std::string_view key;
  std::string_view value;
  const rd_kafka_headers_t* headers = nullptr;  // the record's own, copied into a dead letter
  std::exception_ptr error;                     // the last try's
  int attempts = 0;
};

// "<topic>:<partition>@<offset>".
std::string record_name(const RecordFailure& failure);

// The error poll() throws for FailureAction::Fail: StateError naming the record, its tries and
// the cause; a Kafka cause keeps its code (kind Kafka), and the cause stays reachable through
// std::rethrow_if_nested.
[[noreturn]] void throw_record_failed(const RecordFailure& failure);
// The same error, to be thrown later (on another thread).
std::exception_ptr record_failed_error(const RecordFailure& failure);

// Produces the dead letter of `failure` to `topic` through `producer` (in its open transaction,
// when it has one): the record's key, value, headers and timestamp, with the kDeadLetter*
// headers. Throws as produce_copy().
void produce_dead_letter(rd_kafka_t* producer, const std::string& topic, const RecordFailure& failure,
                         void* opaque = nullptr);

}  // namespace processor::kafka::internal
