#include "reset/java_errors.hpp"

#include <librdkafka/rdkafka.h>

#include <array>

namespace processor::offsetctl {

JavaError java_error(int code) {
  struct Known {
    int code;
    const char* name;
    const char* exception;
    const char* message;
  };
  static constexpr std::array<Known, 9> kKnown{{
      {3, "UNKNOWN_TOPIC_OR_PARTITION", "UnknownTopicOrPartitionException",
       "This server does not host this topic-partition."},
      {15, "COORDINATOR_NOT_AVAILABLE", "CoordinatorNotAvailableException",
       "The coordinator is not available."},
      {16, "NOT_COORDINATOR", "NotCoordinatorException", "This is not the correct coordinator."},
      {24, "INVALID_GROUP_ID", "InvalidGroupIdException", "The configured groupId is invalid."},
      {29, "TOPIC_AUTHORIZATION_FAILED", "TopicAuthorizationException", "Topic authorization failed."},
      {30, "GROUP_AUTHORIZATION_FAILED", "GroupAuthorizationException", "Group authorization failed."},
      {68, "NON_EMPTY_GROUP", "GroupNotEmptyException", "The group is not empty."},
      {69, "GROUP_ID_NOT_FOUND", "GroupIdNotFoundException", "The group id does not exist."},
      {86, "GROUP_SUBSCRIBED_TO_TOPIC", "GroupSubscribedToTopicException",
       "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."},
  }};
  for (const auto& known : kKnown) {
    if (known.code == code) {
      return {known.name, std::string("org.apache.kafka.common.errors.") + known.exception, known.message};
    }
  }
  const auto error = static_cast<rd_kafka_resp_err_t>(code);
  return {rd_kafka_err2name(error), "org.apache.kafka.common.KafkaException", rd_kafka_err2str(error)};
}

std::string java_cause(const StateError& error) {
  const auto code = error.kafka_error_code();
  const std::string text = error.what();
  if (code == RD_KAFKA_RESP_ERR__AUTHENTICATION) {
    // librdkafka's "<broker>: SASL authentication error: <the broker's reason> (after 5ms in state
    // AUTH_REQ...)": the broker's reason is what Kafka's tools print.
    std::string reason = text;
    constexpr std::string_view kPrefix = "SASL authentication error: ";
    if (const auto at = reason.find(kPrefix); at != std::string::npos)
      reason = reason.substr(at + kPrefix.size());
    if (const auto after = reason.rfind(" (after "); after != std::string::npos) reason.resize(after);
    return "org.apache.kafka.common.errors.SaslAuthenticationException: " + reason;
  }
  if (code == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
    // Kafka's Admin client fails the group's FindCoordinator; GroupAdmin's messages name the
    // group as ('<group>') or group '<group>'.
    for (const std::string_view opening : {"('", "group '"}) {
      const auto open = text.find(opening);
      const auto close = open == std::string::npos ? open : text.find('\'', open + opening.size());
      if (close == std::string::npos) continue;
      const std::string group = text.substr(open + opening.size(), close - open - opening.size());
      return "org.apache.kafka.common.errors.GroupAuthorizationException: FindCoordinator request for "
             "groupId "
             "`CoordinatorKey(idValue='" +
             group + "', type=GROUP)` failed due to authorization failure";
    }
    return java_error(*code).to_string();
  }
  if (code == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) return java_error(*code).to_string();
  if (code == RD_KAFKA_RESP_ERR__SSL)
    return "org.apache.kafka.common.errors.SslAuthenticationException: SSL handshake failed";
  return text;
}

std::optional<int> error_code_of_text(std::string_view text) {
  const rd_kafka_err_desc* descriptions = nullptr;
  size_t count = 0;
  rd_kafka_get_err_descs(&descriptions, &count);
  for (size_t i = 0; i < count; ++i) {
    if (descriptions[i].desc == nullptr) continue;
    const auto code = descriptions[i].code;
    if (text == rd_kafka_err2str(code)) return static_cast<int>(code);
  }
  return std::nullopt;
}

}  // namespace processor::offsetctl
