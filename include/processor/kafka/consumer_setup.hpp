#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "processor/kafka/commit_strategy.hpp"
#include "processor/kafka/kafka_properties.hpp"
#include "processor/kafka/offset_store.hpp"
#include "processor/state/state_backend.hpp"

namespace processor::kafka {

// The common start of a consumer in one call (KafkaConsumer::connect, ParallelConsumer::connect):
// a client for the cluster and group, an OffsetManager with broker metadata (for lag and resets)
// and, unless another store is given, offsets in the group coordinator (KafkaOffsetStore: what
// kafka-consumer-groups shows). The consumer owns all of them. For anything else, build the
// parts yourself and use the constructors. Every field has a default, so that designated
// initializers may name only those they set (GCC's -Wmissing-field-initializers stays quiet).
struct ConsumerSetup {
  std::string bootstrap_servers{};    // required, e.g. "broker1:9092,broker2:9092"
  std::string group{};                // required: the consumer group (group.id)
  std::vector<std::string> topics{};  // required: the topics to subscribe to
  // Default: every 5 s, as Kafka's own consumer commits.
  OffsetCommitStrategy strategy = OffsetCommitStrategy::periodic(std::chrono::seconds(5));
  // More librdkafka properties (security.protocol, sasl.*, partition.assignment.strategy,
  // group.protocol, session.timeout.ms, ...). bootstrap.servers and group.id come from the fields
  // above and are refused here. Default: none.
  KafkaProperties properties{};
  // Where offsets are committed. Default: null, the group coordinator (KafkaOffsetStore).
  std::shared_ptr<OffsetStore> store{};
  // The manager's state backend, for checkpoints (e.g. a RocksDbStateBackend). Default: none.
  std::shared_ptr<state::StateBackend> backend{};
};

}  // namespace processor::kafka
