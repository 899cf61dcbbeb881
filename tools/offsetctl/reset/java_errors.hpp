#pragma once
// Kafka's protocol errors as its Java tools print them: the exception class
// (org.apache.kafka.common.errors.*) and message of org.apache.kafka.common.protocol.Errors,
// for the broker error codes offsetctl's group commands meet.

#include <optional>
#include <string>
#include <string_view>

#include "processor/error.hpp"

namespace processor::offsetctl {

struct JavaError {
  std::string name;       // the Errors enum name, e.g. "GROUP_ID_NOT_FOUND"
  std::string exception;  // e.g. "org.apache.kafka.common.errors.GroupIdNotFoundException"
  std::string message;    // e.g. "The group id does not exist."
  // Throwable.toString(): "<exception>: <message>".
  std::string to_string() const { return exception + ": " + message; }
};

// The Java view of a broker error code; a code not in the table keeps librdkafka's name.
JavaError java_error(int code);

// What Kafka's tools print after "failed due to " for `error`: a broker's refusal of the client
// (a wrong password: org.apache.kafka.common.errors.SaslAuthenticationException and the broker's
// reason; a certificate that cannot be trusted: SslAuthenticationException) and an authorization
// failure in Java's form; anything else as error.what().
std::string java_cause(const StateError& error);

// The broker error code whose librdkafka text (rd_kafka_err2str) is `text`; nullopt if none.
std::optional<int> error_code_of_text(std::string_view text);

}  // namespace processor::offsetctl
