#include "state/state_broker.hpp"

#include <librdkafka/rdkafka.h>

#include <chrono>

#include "cluster_config.hpp"
#include "processor/error.hpp"

namespace processor::offsetctl {
namespace {

constexpr std::chrono::seconds kRequestTimeout{10};

kafka::KafkaOffsetStoreOptions store_options() {
  kafka::KafkaOffsetStoreOptions options;
  options.request_timeout = kRequestTimeout;
  options.retry_deadline = std::chrono::seconds(20);
  return options;
}

}  // namespace

StateBroker::StateBroker(const std::string& bootstrap_servers, const std::string& command_config,
                         const std::string& group)
    : client_(kafka::KafkaClient::create(
          cluster_properties(bootstrap_servers, command_config, {{"group.id", group}}))),
      store_(client_, store_options()),
      metadata_(client_, kRequestTimeout) {}

std::optional<kafka::LogRange> StateBroker::log_range(const kafka::TopicPartition& tp) {
  try {
    return metadata_.log_range(tp);
  } catch (const StateError& error) {
    const auto code = error.kafka_error_code();
    if (code &&
        (*code == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || *code == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
         *code == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC)) {
      return std::nullopt;
    }
    throw;
  }
}

}  // namespace processor::offsetctl
