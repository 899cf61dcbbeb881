#pragma once
// processor::StateError, the one exception type of the library.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace processor {

// What went wrong, coarse enough to act on: retry, fix the input, or give up.
enum class ErrorKind {
  InvalidArgument,  // the caller's input is bad; nothing was changed
  NotFound,         // something the call needs does not exist
  Storage,          // a state backend or offset store failed outside a commit
  Corruption,       // a stored value failed its checksum or could not be decoded
  CommitFailed,     // a commit failed; its offsets stay pending and are retried
  Kafka,            // the broker or librdkafka reported an error (see kafka_error_code())
  Timeout,          // an operation did not finish in time
  Unavailable,      // information that is needed is not known (no high watermark, no broker)
};

// Returns the enumerator's name, e.g. "InvalidArgument".
std::string_view to_string(ErrorKind kind) noexcept;

// StateError is thrown by every fallible call of the library. what() names the bad value or
// the failing component; kind() says which class of failure it is. Kafka errors also carry
// librdkafka's error code (rd_kafka_resp_err_t, which equals the broker's error code for
// broker errors) and whether retrying can help.
//
// Immutable after construction; safe to share between threads.
class StateError : public std::runtime_error {
 public:
  StateError(ErrorKind kind, const std::string& message);
  StateError(ErrorKind kind, const std::string& message, int kafka_error_code, bool retriable);

  ErrorKind kind() const noexcept { return kind_; }

  // The librdkafka/broker error code, for kind() == Kafka (and CommitFailed caused by Kafka).
  std::optional<int> kafka_error_code() const noexcept { return kafka_error_code_; }

  // True when the same call may succeed if repeated (a moving coordinator, a timeout).
  bool retriable() const noexcept { return retriable_; }

 private:
  ErrorKind kind_;
  std::optional<int> kafka_error_code_;
  bool retriable_ = false;
};

}  // namespace processor
