#pragma once
// The cluster, as the `state` verbs that take --bootstrap-server see it: a KafkaClient of the
// group (which never joins it), its committed offsets through a KafkaOffsetStore, and partition
// log ranges through KafkaBrokerMetadata.

#include <memory>
#include <optional>
#include <string>

#include "processor/kafka/kafka_broker_metadata.hpp"
#include "processor/kafka/kafka_offset_store.hpp"

namespace processor::offsetctl {

// Not safe for concurrent use; one command uses it from one thread.
class StateBroker {
 public:
  // `command_config`: a Java client properties file for the cluster ("" for none).
  // Throws StateError(InvalidArgument) for a bootstrap list librdkafka rejects or a client
  // properties file that cannot be honoured, StateError(NotFound) for one that cannot be read.
  StateBroker(const std::string& bootstrap_servers, const std::string& command_config,
              const std::string& group);

  // The partition's log range, or nullopt when the broker does not know the partition (a
  // deleted topic, a partition beyond its count). Throws StateError(Timeout or Kafka) when the
  // broker cannot answer.
  std::optional<kafka::LogRange> log_range(const kafka::TopicPartition& tp);

  // The group's committed offsets in the cluster.
  kafka::KafkaOffsetStore& committed() noexcept { return store_; }

 private:
  std::shared_ptr<kafka::KafkaClient> client_;
  kafka::KafkaOffsetStore store_;
  kafka::KafkaBrokerMetadata metadata_;
};

}  // namespace processor::offsetctl
