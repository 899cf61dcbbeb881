#include "kafka/failure/record_failure.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <typeinfo>

#include "kafka/producer/produce.hpp"
#include "processor/error.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka {

const char* to_string(FailureAction action) noexcept {
  switch (action) {
    case FailureAction::Fail:
      return "fail";
    case FailureAction::Skip:
      return "skip";
    case FailureAction::DeadLetter:
      return "dead-letter";
  }
  return "unknown";
}

void validate(const FailurePolicy& policy, const char* owner) {
  const std::string name(owner);
  auto refuse = [&](const std::string& what) {
    throw StateError(ErrorKind::InvalidArgument, name + ": " + what);
  };
  if (policy.retry.max_attempts < 1) {
    refuse("retry.max_attempts must be at least 1, got " + std::to_string(policy.retry.max_attempts));
  }
  if (policy.retry.initial_backoff.count() < 0) {
    refuse("retry.initial_backoff must not be negative, got " +
           std::to_string(policy.retry.initial_backoff.count()) + " ms");
  }
  if (policy.retry.max_backoff < policy.retry.initial_backoff) {
    refuse("retry.max_backoff (" + std::to_string(policy.retry.max_backoff.count()) +
           " ms) is below retry.initial_backoff (" + std::to_string(policy.retry.initial_backoff.count()) +
           " ms)");
  }
  if (policy.action == FailureAction::DeadLetter) {
    if (policy.dead_letter_topic.empty()) refuse("the dead-letter action needs a dead_letter_topic");
    try {
      validate_topic(policy.dead_letter_topic);
    } catch (const StateError& error) {
      refuse(std::string("dead_letter_topic: ") + error.what());
    }
  } else if (!policy.dead_letter_topic.empty()) {
    refuse("dead_letter_topic '" + policy.dead_letter_topic + "' is set but the action is " +
           to_string(policy.action) + ", not dead-letter");
  }
}

}  // namespace processor::kafka

namespace processor::kafka::internal {

std::chrono::milliseconds backoff(const processor::kafka::RetryPolicy& retry, int attempts) {
  std::chrono::milliseconds wait = retry.initial_backoff;
  for (int i = 1; i < attempts && wait < retry.max_backoff; ++i) wait *= 2;
  return std::min(wait, retry.max_backoff);
}

std::string what_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& exception) {
    return exception.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

std::string class_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (...) {
    const std::type_info* type = abi::__cxa_current_exception_type();
    if (type == nullptr) return "unknown";
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(
        abi::__cxa_demangle(type->name(), nullptr, nullptr, &status), std::free);
    return status == 0 && demangled ? std::string(demangled.get()) : std::string(type->name());
  }
}

bool refused_for_good(int kafka_error_code) noexcept {
  switch (kafka_error_code) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
      return true;
    default:
      return false;
  }
}

std::string record_name(const RecordFailure& failure) {
  return partition_key(failure.topic, failure.partition) + "@" + std::to_string(failure.offset);
}

void throw_record_failed(const RecordFailure& failure) {
  const std::string message = "record " + record_name(failure) + " failed " +
                              std::to_string(failure.attempts) + (failure.attempts == 1 ? " try" : " tries") +
                              ": " + what_of(failure.error);
  try {
    std::rethrow_exception(failure.error);
  } catch (const StateError& cause) {
    std::throw_with_nested(cause.kafka_error_code()
                               ? StateError(cause.kind(), message, *cause.kafka_error_code(), false)
                               : StateError(cause.kind(), message));
  } catch (...) {
    std::throw_with_nested(StateError(ErrorKind::InvalidArgument, message));
  }
}

std::exception_ptr record_failed_error(const RecordFailure& failure) {
  try {
    throw_record_failed(failure);
  } catch (...) {
    return std::current_exception();
  }
}

void produce_dead_letter(rd_kafka_t* producer, const std::string& topic, const RecordFailure& failure,
                         void* opaque) {
  rd_kafka_headers_t* headers =
      failure.headers != nullptr ? rd_kafka_headers_copy(failure.headers) : rd_kafka_headers_new(7);
  auto add = [&](const char* name, const std::string& value) {
    rd_kafka_header_add(headers, name, -1, value.data(), static_cast<ssize_t>(value.size()));
  };
  add(kDeadLetterException, class_of(failure.error));
  add(kDeadLetterMessage, what_of(failure.error));
  add(kDeadLetterTopic, std::string(failure.topic));
  add(kDeadLetterPartition, std::to_string(failure.partition));
  add(kDeadLetterOffset, std::to_string(failure.offset));
  add(kDeadLetterTimestamp, std::to_string(failure.timestamp_ms));
  add(kDeadLetterAttempts, std::to_string(failure.attempts));
  produce_copy(producer, topic, RD_KAFKA_PARTITION_UA, failure.key, failure.value.data(),
               failure.value.size(), opaque, headers, std::max<std::int64_t>(failure.timestamp_ms, 0));
}

}  // namespace processor::kafka::internal
