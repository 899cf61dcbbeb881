#include "processor/error.hpp"

namespace processor {

std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::InvalidArgument:
      return "InvalidArgument";
    case ErrorKind::NotFound:
      return "NotFound";
    case ErrorKind::Storage:
      return "Storage";
    case ErrorKind::Corruption:
      return "Corruption";
    case ErrorKind::CommitFailed:
      return "CommitFailed";
    case ErrorKind::Kafka:
      return "Kafka";
    case ErrorKind::Timeout:
      return "Timeout";
    case ErrorKind::Unavailable:
      return "Unavailable";
  }
  return "Unknown";
}

StateError::StateError(ErrorKind kind, const std::string& message)
    : std::runtime_error(message), kind_(kind) {}

StateError::StateError(ErrorKind kind, const std::string& message, int kafka_error_code, bool retriable)
    : std::runtime_error(message), kind_(kind), kafka_error_code_(kafka_error_code), retriable_(retriable) {}

}  // namespace processor
