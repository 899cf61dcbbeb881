#pragma once
// Kafka's protocol errors as its Java tools print them: the exception class
// (org.apache.kafka.common.errors.*) and message of org.apache.kafka.common.protocol.Errors,
// for the broker error codes offsetctl's group commands meet.

#include <optional>
#include <string>
#include <string_view>

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

// The broker error code whose librdkafka text (rd_kafka_err2str) is `text`; nullopt if none.
std::optional<int> error_code_of_text(std::string_view text);

}  // namespace processor::offsetctl
